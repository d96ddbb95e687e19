require('reflect-metadata');
const { DataSource, EntitySchema } = require('typeorm');
const Author = new EntitySchema({ name: 'Author', tableName: 'author', columns: {
  id: { type: 'bigint', primary: true, generated: 'identity', generatedIdentity: 'BY DEFAULT' },
  name: { type: 'varchar', length: 100, unique: true }, born: { type: 'date', nullable: true },
  rating: { type: 'numeric', precision: 5, scale: 2, default: 0, nullable: true }, bio: { type: 'text', nullable: true },
  email: { type: 'varchar', length: 200, nullable: true } } });
const Book = new EntitySchema({ name: 'Book', tableName: 'book', columns: {
  id: { type: 'int', primary: true, generated: 'increment' }, title: { type: 'varchar', length: 200 },
  price: { type: 'numeric', precision: 10, scale: 2, nullable: true }, published: { type: 'boolean', default: false, nullable: true },
  meta: { type: 'jsonb', nullable: true }, status: { type: 'enum', enum: ['draft', 'live'], default: 'draft' },
  created_at: { type: 'timestamptz', createDate: true } },
  relations: { author: { type: 'many-to-one', target: 'Author', joinColumn: { name: 'author_id' }, onDelete: 'CASCADE' } },
  indices: [{ name: 'book_title_idx', columns: ['title'] }] });
function ds(db, sync) {
  return new DataSource({ type: 'postgres', host: '127.0.0.1', port: 55432, username: 'certa', database: db, entities: [Author, Book], synchronize: sync, logging: false });
}
(async () => {
  // scratch: synchronize twice (create, then compare/no-op), then schema:log
  for (let i = 0; i < 2; i++) { const d = ds('typeormscratch', true); await d.initialize(); await d.destroy(); }
  // certa: schema:log equivalent (computes the diff against the existing schema, executes nothing)
  const c = ds('certa', false); await c.initialize();
  const log = await c.driver.createSchemaBuilder().log();
  console.log(log.upQueries.map((q) => q.query).join('\n'));
  const qr = c.createQueryRunner();
  console.log(await qr.hasTable('book'), await qr.hasColumn('book', 'title'), await qr.hasSchema('public'), await qr.hasDatabase('certa'));
  const t = await qr.getTable('book'); console.log(t.columns.map((x) => x.name), t.indices.map((x) => x.name), t.foreignKeys.map((x) => x.name), t.checks.map((x) => x.expression));
  console.log((await qr.getTables()).map((x) => x.name), await qr.getViews(), await qr.getCurrentSchema(), await qr.getCurrentDatabase());
  await qr.release(); await c.destroy();
})().catch((e) => { console.error(e); process.exit(1); });
