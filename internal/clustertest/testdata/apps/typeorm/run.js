// The TypeORM scenario: synchronize (tables from entity schemas, with a
// many-to-one foreign key, a many-to-many join table and a unique
// column), CRUD, a transaction and the query builder through NODE_A,
// reads through NODE_B (host:port each), then synchronize again with a
// column added. Exits non-zero on failure.
require('reflect-metadata');
const assert = require('assert');
const { DataSource, EntitySchema } = require('typeorm');

function entities(extra) {
  const Author = new EntitySchema({
    name: 'Author', tableName: 'author',
    columns: { id: { type: 'int', primary: true, generated: true }, name: { type: 'varchar', length: 50, unique: true }, ...extra },
    relations: { books: { type: 'one-to-many', target: 'Book', inverseSide: 'author' } },
  });
  const Book = new EntitySchema({
    name: 'Book', tableName: 'book',
    columns: {
      id: { type: 'int', primary: true, generated: true }, title: { type: 'varchar' },
      price: { type: 'numeric', precision: 8, scale: 2 }, published: { type: 'timestamptz', nullable: true },
    },
    relations: {
      author: { type: 'many-to-one', target: 'Author', inverseSide: 'books', onDelete: 'CASCADE' },
      genres: { type: 'many-to-many', target: 'Genre', joinTable: true },
    },
  });
  const Genre = new EntitySchema({
    name: 'Genre', tableName: 'genre',
    columns: { id: { type: 'int', primary: true, generated: true }, name: { type: 'varchar', unique: true } },
  });
  return [Author, Book, Genre];
}

// open connects to addr; sync: the schema is synchronized with the
// entities (done through NODE_A only: NODE_B's reads come after).
function open(addr, extra, sync) {
  const [host, port] = addr.split(':');
  return new DataSource({ type: 'postgres', host, port: Number(port), username: 'certa', database: 'certa',
    entities: entities(extra), synchronize: sync, logging: false });
}

async function main(addrA, addrB) {
  const a = await open(addrA, {}, true).initialize();
  const b = await open(addrB, {}, false).initialize();
  const authors = a.getRepository('Author'), books = a.getRepository('Book'), genres = a.getRepository('Genre');
  const ann = await authors.save({ name: 'Ann' });
  const sf = await genres.save({ name: 'sf' });
  await a.transaction(async (m) => {
    await m.save('Book', { title: 'Dune', price: '12.50', published: new Date('1965-08-01T00:00:00Z'), author: ann, genres: [sf] });
    await m.save('Book', { title: 'Children', price: '9.00', author: ann });
  });
  await a.createQueryBuilder().update('Book').set({ price: '13.00' }).where('title = :t', { t: 'Dune' }).execute();
  await assert.rejects(authors.insert({ name: 'Ann' }), (e) => e.code === '23505');

  await b.query("SET certa.consistency = 'sync'");
  const got = await b.getRepository('Author').findOne({ where: { name: 'Ann' }, relations: { books: { genres: true } }, order: { books: { title: 'ASC' } } });
  assert.deepStrictEqual(got.books.map((x) => [x.title, x.price]), [['Children', '9.00'], ['Dune', '13.00']]);
  assert.deepStrictEqual(got.books[1].genres.map((g) => g.name), ['sf']);
  assert.strictEqual(got.books[1].published.toISOString(), '1965-08-01T00:00:00.000Z');
  const n = await b.getRepository('Book').createQueryBuilder('b').where('b.price > :p', { p: 10 }).getCount();
  assert.strictEqual(n, 1);
  await books.delete({ title: 'Children' });

  // A later version of the program adds a column.
  const a2 = await open(addrA, { country: { type: 'varchar', length: 30, default: 'nz' } }, true).initialize();
  await b.query("SET certa.consistency = 'sync'");
  const rows = await b.query('SELECT country FROM author');
  assert.deepStrictEqual(rows.map((r) => r.country), ['nz']);
  assert.strictEqual(await b.getRepository('Book').count(), 1);
  await a.destroy(); await a2.destroy(); await b.destroy();
  console.log('typeorm scenario passed');
}

main(process.env.NODE_A, process.env.NODE_B).catch((e) => { console.error(e); process.exit(1); });
