// The Knex scenario: migrations (tables with a foreign key, an index and a
// unique constraint, then a column added and filled, each migration in a
// transaction as Knex runs them, its knex_migrations tables alongside),
// queries and a transaction through NODE_A, reads through NODE_B
// (host:port each), and a rollback of the last migration. Exits non-zero
// on failure.
const assert = require('assert');
const knexlib = require('knex');

function open(addr) {
  const [host, port] = addr.split(':');
  return knexlib({ client: 'pg', connection: { host, port: Number(port), user: 'certa', database: 'certa' }, pool: { min: 0, max: 2 } });
}

const migrations = {
  '001_authors': {
    up: (k) => k.schema
      .createTable('authors', (t) => { t.increments('id'); t.string('name', 50).notNullable().unique(); t.timestamps(true, true); })
      .createTable('books', (t) => {
        t.bigIncrements('id'); t.string('title').notNullable(); t.decimal('price', 8, 2);
        t.integer('author_id').unsigned().references('id').inTable('authors').onDelete('CASCADE'); t.index(['title']);
      }),
    down: (k) => k.schema.dropTable('books').dropTable('authors'),
  },
  '002_pages': {
    up: async (k) => {
      await k.schema.alterTable('books', (t) => { t.integer('pages').defaultTo(0); });
      await k('books').update({ pages: 100 });
    },
    down: (k) => k.schema.alterTable('books', (t) => { t.dropColumn('pages'); }),
  },
};

const source = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (m) => m,
  getMigration: async (m) => migrations[m],
};

async function main(addrA, addrB) {
  const a = open(addrA), b = open(addrB);
  await a.migrate.latest({ migrationSource: source });
  const [ann] = await a('authors').insert({ name: 'Ann' }).returning('*');
  assert.ok(ann.created_at instanceof Date);
  await a.transaction(async (trx) => {
    await trx('books').insert([{ title: 'Dune', price: '12.50', author_id: ann.id }, { title: 'Children', price: 9, author_id: ann.id }]);
    await trx('books').where({ title: 'Dune' }).update({ price: '13.00' });
  });
  await assert.rejects(a('authors').insert({ name: 'Ann' }), (e) => e.code === '23505');

  await b.raw("SET certa.consistency = 'sync'");
  const rows = await b('books').join('authors', 'books.author_id', 'authors.id')
    .select('books.title', 'books.price', 'authors.name').orderBy('books.title');
  assert.deepStrictEqual(rows.map((r) => [r.title, r.price, r.name]), [['Children', '9.00', 'Ann'], ['Dune', '13.00', 'Ann']]);
  const [{ count }] = await b('books').count('* as count');
  assert.strictEqual(Number(count), 2);
  assert.strictEqual(await b.schema.hasColumn('books', 'pages'), true);

  // The second migration was applied once, and goes back.
  const done = await b('knex_migrations').pluck('name');
  assert.deepStrictEqual(done, ['001_authors', '002_pages']);
  await a.migrate.down({ migrationSource: source });
  await b.raw("SET certa.consistency = 'sync'");
  assert.strictEqual(await b.schema.hasColumn('books', 'pages'), false);
  await a('authors').where({ name: 'Ann' }).del();
  const [{ n }] = await b('books').count('* as n');
  assert.strictEqual(Number(n), 0); // ON DELETE CASCADE
  await a.destroy(); await b.destroy();
  console.log('knex scenario passed');
}

main(process.env.NODE_A, process.env.NODE_B).catch((e) => { console.error(e); process.exit(1); });
