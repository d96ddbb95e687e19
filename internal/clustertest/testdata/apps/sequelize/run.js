// The Sequelize scenario: sync (tables, a foreign key, a many-to-many
// join table), CRUD and a managed transaction through NODE_A, reads
// through NODE_B (host:port each), then sync({ alter: true }) adding a
// column. Exits non-zero on failure.
const assert = require('assert');
const { Sequelize, DataTypes } = require('sequelize');

function open(addr) {
  const [host, port] = addr.split(':');
  return new Sequelize('certa', 'certa', null, { host, port: Number(port), dialect: 'postgres', logging: false });
}

function define(db, extra) {
  const Author = db.define('Author', { name: { type: DataTypes.STRING(50), allowNull: false }, ...extra });
  const Book = db.define('Book', { title: DataTypes.STRING, price: DataTypes.DECIMAL(8, 2), tags: DataTypes.ARRAY(DataTypes.TEXT) });
  const Genre = db.define('Genre', { name: { type: DataTypes.STRING, unique: true } });
  Author.hasMany(Book);
  Book.belongsTo(Author);
  Book.belongsToMany(Genre, { through: 'BookGenres' });
  Genre.belongsToMany(Book, { through: 'BookGenres' });
  return { Author, Book, Genre };
}

async function main(addrA, addrB) {
  const a = open(addrA), b = open(addrB);
  const A = define(a, {}), B = define(b, {});
  await a.sync();
  const ann = await A.Author.create({ name: 'Ann' });
  const sf = await A.Genre.create({ name: 'sf' });
  await a.transaction(async (t) => {
    const dune = await A.Book.create({ title: 'Dune', price: '12.50', tags: ['classic', 'desert'], AuthorId: ann.id }, { transaction: t });
    await dune.addGenre(sf, { transaction: t });
    await A.Book.create({ title: 'Children', price: '9.00', AuthorId: ann.id }, { transaction: t });
  });
  await A.Book.update({ price: '13.00' }, { where: { title: 'Dune' } });

  await b.query("SET certa.consistency = 'sync'");
  const got = await B.Author.findOne({ where: { name: 'Ann' }, include: [{ model: B.Book, include: [B.Genre] }], order: [[B.Book, 'title', 'ASC']] });
  assert.strictEqual(got.Books.length, 2);
  const dune = got.Books.find((x) => x.title === 'Dune');
  assert.strictEqual(dune.price, '13.00');
  assert.deepStrictEqual(dune.tags, ['classic', 'desert']);
  assert.deepStrictEqual(dune.Genres.map((g) => g.name), ['sf']);

  await A.Book.destroy({ where: { title: 'Children' } });
  assert.strictEqual(await B.Book.count(), 1);

  // A later version of the program adds a column.
  const a2 = open(addrA);
  const A2 = define(a2, { country: { type: DataTypes.STRING(30), defaultValue: 'nz' } });
  await A2.Author.sync({ alter: true });
  const [rows] = await b.query('SELECT country FROM "Authors"');
  assert.deepStrictEqual(rows.map((r) => r.country), ['nz']);
  await a.close(); await a2.close(); await b.close();
  console.log('sequelize scenario passed');
}

main(process.env.NODE_A, process.env.NODE_B).catch((e) => { console.error(e); process.exit(1); });
