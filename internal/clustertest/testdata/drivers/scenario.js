// The driver scenario for node-postgres (pg): node scenario.js A B, A and B
// being host:port of two certa nodes. Exits non-zero on failure.
const { Client } = require('pg');
const assert = require('assert');

function client(addr) {
  const [host, port] = addr.split(':');
  return new Client({ host, port: Number(port), user: 'certa', password: process.env.CERTA_PASSWORD, database: 'certa', ssl: false });
}

const FOREVER = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

// Runs a statement that never ends and cancels it (node-postgres sends
// the CancelRequest from a second client); a cancel that arrives before
// the statement starts does nothing, so it is repeated.
async function cancelForever(c, addr) {
  let outcome = null;
  const q = c.query(FOREVER).then(() => { outcome = 'returned'; }, (e) => { outcome = e; });
  while (outcome === null) {
    if (c.activeQuery) client(addr).cancel(c, c.activeQuery);
    await new Promise((r) => setTimeout(r, 50));
  }
  await q;
  assert.ok(outcome !== 'returned', 'the endless statement returned');
  assert.strictEqual(outcome.code, '57014');
}

async function main(addrA, addrB) {
  const a = client(addrA), b = client(addrB);
  await a.connect();
  await b.connect();
  await a.query(`CREATE TABLE js_typed (id bigint PRIMARY KEY, i integer, f double precision, b boolean, s text,
    by bytea, n numeric(10,2), d date, ts timestamp, tz timestamptz, u uuid, j json, jb jsonb)`);
  const tz = new Date(Date.UTC(2026, 10, 21, 10, 11, 12, 345));
  const insert = `INSERT INTO js_typed (id, i, f, b, s, by, n, d, ts, tz, u, j, jb)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`;
  await a.query(insert, [1, 42, 1.5, true, 'text', Buffer.from([0, 1, 255]), '12.50', '2026-11-21',
    '2026-11-21 10:11:12', tz, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', JSON.stringify({ a: 1 }), { b: [1, 2] }]);
  await a.query(insert, [2, null, null, null, null, null, null, null, null, null, null, null, null]);

  await b.query("SET certa.consistency = 'sync'");
  let r = await b.query('SELECT id, i, f, b, s, by, n, d, ts, tz, u, j, jb FROM js_typed WHERE id = $1', [1]);
  const row = r.rows[0];
  assert.strictEqual(row.id, '1'); // int8 comes back as a string in node-postgres
  assert.strictEqual(row.i, 42);
  assert.strictEqual(row.f, 1.5);
  assert.strictEqual(row.b, true);
  assert.strictEqual(row.s, 'text');
  assert.deepStrictEqual([...row.by], [0, 1, 255]);
  assert.strictEqual(Number(row.n), 12.5);
  assert.strictEqual(row.tz.getTime(), tz.getTime());
  assert.strictEqual(row.u, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
  assert.deepStrictEqual(row.j, { a: 1 });
  assert.deepStrictEqual(row.jb, { b: [1, 2] });
  r = await b.query('SELECT i, f, b, s, by, n, d, ts, tz, u, j, jb FROM js_typed WHERE id = $1', [2]);
  for (const [k, v] of Object.entries(r.rows[0])) assert.strictEqual(v, null, `NULL row: ${k} = ${v}`);

  // A named prepared statement reused many times.
  for (let k = 10; k < 60; k++) {
    await a.query({ name: 'ins', text: 'INSERT INTO js_typed (id, s) VALUES ($1, $2)', values: [k, `row ${k}`] });
  }
  r = await a.query('SELECT count(*) AS c FROM js_typed WHERE id >= $1', [10]);
  assert.strictEqual(r.rows[0].c, '50');

  // A transaction that loses to a concurrent commit: 40001, then a retry.
  await a.query('BEGIN');
  await a.query('UPDATE js_typed SET i = i + $1 WHERE id = $2', [1, 1]);
  await b.query('UPDATE js_typed SET i = i + $1 WHERE id = $2', [100, 1]);
  await assert.rejects(a.query('COMMIT'), (e) => e.code === '40001');
  await a.query('BEGIN');
  await a.query('UPDATE js_typed SET i = i + $1 WHERE id = $2', [1, 1]);
  await a.query('COMMIT');
  r = await b.query('SELECT i FROM js_typed WHERE id = $1', [1]);
  assert.strictEqual(r.rows[0].i, 143);

  if (process.env.CERTA_ENGINE === 'postgres') {
    // Over the PostgreSQL engine, types certa has none of come back as
    // node-postgres makes them from PostgreSQL's: arrays as arrays.
    await a.query('CREATE TABLE js_pg (id int PRIMARY KEY, tags text[], nums int[], span interval)');
    await a.query('INSERT INTO js_pg VALUES ($1, $2, $3, $4)', [1, ['a', 'b c', null], [1, 2, 3], '1 day 02:03:04']);
    r = await b.query('SELECT tags, nums, span FROM js_pg WHERE id = $1', [1]);
    assert.deepStrictEqual(r.rows[0].tags, ['a', 'b c', null]);
    assert.deepStrictEqual(r.rows[0].nums, [1, 2, 3]);
    assert.strictEqual(r.rows[0].span.days, 1);
    assert.strictEqual(r.rows[0].span.hours, 2);
  }

  await cancelForever(a, addrA);
  r = await a.query('SELECT count(*) AS c FROM js_typed');
  assert.strictEqual(r.rows[0].c, '52');
  await a.end();
  await b.end();
  console.log('node-postgres scenario passed');
}

main(process.argv[2], process.argv[3]).catch((e) => { console.error(e); process.exit(1); });
