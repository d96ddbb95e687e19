const knexLib = require('knex');
const conn = (db) => knexLib({ client: 'pg', connection: { host: '127.0.0.1', port: 55432, user: 'certa', database: db }, migrations: { directory: __dirname + '/knexmig' } });
(async () => {
  const s = conn('knexscratch');
  console.log(await s.migrate.latest());
  console.log(await s.migrate.status(), await s.migrate.currentVersion(), await s.migrate.list());
  console.log(await s.schema.hasTable('widget'), await s.schema.hasColumn('widget', 'qty'), await s('widget').columnInfo());
  await s.schema.alterTable('widget', (t) => { t.string('note'); t.index(['qty']); });
  console.log(await s.migrate.rollback());
  await s.destroy();
  const c = conn('certa');
  for (const t of ['author', 'book', 'tag']) {
    console.log(t, await c.schema.hasTable(t), await c.schema.hasColumn(t, 'title'), JSON.stringify(await c(t).columnInfo()));
  }
  console.log(await c('book').columnInfo('price'));
  console.log(await c.schema.hasTable('nosuch'));
  await c.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
