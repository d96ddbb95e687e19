package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcluster"
)

// startFunc starts a cluster of n nodes with testArgs and extra.
type startFunc func(t *testing.T, n int, extra ...string) *testcluster.Cluster

// forEachEngine runs test once per engine, as subtests named after it.
func forEachEngine(t *testing.T, test func(*testing.T, startFunc)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, func(t *testing.T, n int, extra ...string) *testcluster.Cluster {
			return testcluster.Start(t, n, append(extra, testArgs...)...)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		test(t, func(t *testing.T, n int, extra ...string) *testcluster.Cluster {
			return startPostgresCluster(t, n, append(extra, testArgs...)...)
		})
	})
}

// startPostgresCluster starts n nodes with --engine postgres: each runs a
// PostgreSQL server in its data directory (as the postgres user when the
// test runs as root, so the directories above must let it through).
func startPostgresCluster(t *testing.T, n int, args ...string) *testcluster.Cluster {
	t.Helper()
	letPostgresIn(t)
	if len(args) == 0 {
		args = testArgs
	}
	return testcluster.Start(t, n, append([]string{"--engine", "postgres"}, args...)...)
}

// letPostgresIn lets the postgres user through the directories above the
// test's temporary directories, when the test runs as root (the nodes
// then run their servers as postgres).
func letPostgresIn(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	// The test's own directory (t.TempDir's parent), never one above: a
	// shared /tmp must keep its mode.
	if err := os.Chmod(filepath.Dir(t.TempDir()), 0o711); err != nil {
		t.Fatal(err)
	}
}

// A cluster over real PostgreSQL servers, used as a client would: DDL,
// writes on every node seen on every node with PostgreSQL's own types,
// casts and catalogs, a conflicting transaction across nodes refused with
// 40001, and every node's tables the same.
func TestPostgresEngineCluster(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE acct (id bigint PRIMARY KEY, owner text NOT NULL, balance numeric(12,2), tags text[])")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		tag := mustExec(t, conn, "INSERT INTO acct VALUES ($1, $2, 10.05, '{a,b}'::text[])", i+1, fmt.Sprintf("owner %d", i+1))
		if tag != "INSERT 0 1" {
			t.Fatalf("tag %q", tag)
		}
	}
	for i := range c.Nodes {
		got := values(t, syncConn(t, c, i), "SELECT id, owner || ' ' || balance::text || ' ' || tags::text FROM acct ORDER BY id")
		if want := "1=owner 1 10.05 {a,b},2=owner 2 10.05 {a,b},3=owner 3 10.05 {a,b}"; got != want {
			t.Fatalf("node %d sees %q, want %q", i+1, got, want)
		}
	}
	// PostgreSQL's own catalogs and types.
	if typ, err := syncConn(t, c, 2).QueryString(ctxT(t), "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attname = 'balance'"); err != nil || typ != "numeric(12,2)" {
		t.Fatalf("balance column type %q, %v", typ, err)
	}

	// First committer wins across nodes.
	a, b := syncConn(t, c, 0), syncConn(t, c, 1)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE acct SET balance = balance + 1 WHERE id = 1")
	mustExec(t, b, "UPDATE acct SET balance = balance + 100 WHERE id = 1")
	mustFail(t, a, "40001", "COMMIT")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, balance::text FROM acct WHERE id = 1"); got != "1=110.05" {
			t.Fatalf("node %d: %s, want 1=110.05", i+1, got)
		}
	}
	// TRUNCATE and COMMENT run in total order, on their own or in a block.
	mustExec(t, a, "COMMENT ON TABLE acct IS 'accounts'")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "TRUNCATE acct")
	mustExec(t, a, "INSERT INTO acct VALUES (7, 'after truncate', 1, '{}')")
	mustExec(t, a, "COMMIT")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT id, owner FROM acct"); got != "7=after truncate" {
			t.Fatalf("node %d after TRUNCATE: %s", i+1, got)
		}
		if got, err := conn.QueryString(ctxT(t), "SELECT obj_description('acct'::regclass, 'pg_class')"); err != nil || got != "accounts" {
			t.Fatalf("node %d: comment %q, %v", i+1, got, err)
		}
	}
	// A transaction of another node that wrote the table meanwhile loses.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE acct SET balance = 2 WHERE id = 7")
	mustExec(t, a, "TRUNCATE acct")
	mustFail(t, b, "40001", "COMMIT")
	// A table without a primary key replicates by whole rows.
	mustExec(t, a, "CREATE TABLE nokey (v int, w text)")
	mustExec(t, a, "INSERT INTO nokey VALUES (1, 'a'), (1, 'a'), (2, 'b')")
	mustExec(t, syncConn(t, c, 1), "DELETE FROM nokey WHERE ctid = (SELECT min(ctid) FROM nokey WHERE v = 1)")
	mustExec(t, syncConn(t, c, 2), "UPDATE nokey SET w = 'c' WHERE v = 2")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT v, w FROM nokey ORDER BY v"); got != "1=a,2=c" {
			t.Fatalf("node %d: table without a key holds %s", i+1, got)
		}
	}
	// What would reach past replication is refused.
	mustFail(t, a, "42501", "DELETE FROM certa.capture")
	c.WaitConverged(20 * time.Second)
}

// SERIAL and identity columns hand out values on every node at once
// without two nodes ever giving the same one, from blocks of each node's
// own, the sequences staying as the client made them.
func TestPostgresEngineSequences(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE s (id serial PRIMARY KEY, node int)")
	mustExec(t, c.Conn(0), "CREATE TABLE g (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, node int)")
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				for _, table := range []string{"s", "g"} {
					if _, err := conn.Exec(ctxT(t), "INSERT INTO "+table+" (node) VALUES ($1)", i); err != nil {
						errs <- fmt.Errorf("node %d, table %s: %w", i+1, table, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, table := range []string{"s", "g"} {
		got := values(t, syncConn(t, c, 1), "SELECT count(*), count(DISTINCT id) FROM "+table)
		if got != "90=90" {
			t.Fatalf("%s: rows=distinct ids %s, want 90=90", table, got)
		}
		// Each node's values lie in blocks of its own (a 128th of the
		// range: 16777215 values of an integer, at most 2^32), and
		// the founder's are those of a lone PostgreSQL: 1 to 30.
		block := map[string]string{"s": "16777215", "g": "4294967296"}[table]
		if n, err := syncConn(t, c, 2).QueryInt(ctxT(t), "SELECT count(DISTINCT (node, (id - 1) / "+block+" % 128)) FROM "+table); err != nil || n != 3 {
			t.Fatalf("%s: %d (node, block owner) pairs, %v; want 3", table, n, err)
		}
		if got := values(t, syncConn(t, c, 2), "SELECT min(id), max(id) FROM "+table+" WHERE node = 0"); got != "1=30" {
			t.Fatalf("%s: the founder's values %s, want 1 to 30", table, got)
		}
	}
	// The sequences are as the client made them, on every node.
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT sequencename, increment_by FROM pg_sequences ORDER BY 1"); got != "g_id_seq=1,s_id_seq=1" {
			t.Fatalf("node %d: sequences %s", i+1, got)
		}
	}
	c.WaitConverged(20 * time.Second)
}

// Schema changes inside transaction blocks, as migration tools make them:
// the block's DDL and rows commit together at its position on every node;
// a transaction of another node that read the old schema is refused
// (40001); what cannot be replicated inside a block is refused (0A000);
// and a migration of a table other nodes are writing either commits or
// fails with 40001, the nodes staying alike.
func TestPostgresEngineSchemaInBlock(t *testing.T) {
	c := startPostgresCluster(t, 3)
	a := c.Conn(0)
	for _, s := range []string{
		"BEGIN",
		"CREATE TABLE author (id serial PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO author (name) VALUES ('ann'), ('bob')",
		"ALTER TABLE author ADD COLUMN born int DEFAULT 1970",
		"CREATE TABLE book (id bigserial PRIMARY KEY, author_id int, title text)",
		"ALTER TABLE book ADD CONSTRAINT book_author FOREIGN KEY (author_id) REFERENCES author (id) DEFERRABLE INITIALLY DEFERRED",
		"CREATE INDEX book_title ON book (title)",
		"INSERT INTO book (author_id, title) SELECT id, name || ' book' FROM author",
		"SAVEPOINT s",
		"CREATE TABLE gone (id int PRIMARY KEY)",
		"INSERT INTO gone VALUES (1)",
		"ALTER TABLE author DROP COLUMN born",
		"ROLLBACK TO SAVEPOINT s",
		"UPDATE author SET born = 1980 WHERE name = 'bob'",
		"COMMIT",
	} {
		mustExec(t, a, s)
	}
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT a.name, a.born || ' ' || b.title FROM author a JOIN book b ON b.author_id = a.id ORDER BY 1"); got != "ann=1970 ann book,bob=1980 bob book" {
			t.Fatalf("node %d: %s", i+1, got)
		}
		if n, err := conn.QueryInt(ctxT(t), "SELECT count(*) FROM pg_indexes WHERE indexname = 'book_title'"); err != nil || n != 1 {
			t.Fatalf("node %d: index book_title: %d, %v", i+1, n, err)
		}
		mustFail(t, conn, "42P01", "SELECT * FROM gone")
	}
	// The new tables' sequences hand out values on other nodes too.
	mustExec(t, syncConn(t, c, 2), "INSERT INTO author (name) VALUES ('cy')")
	mustExec(t, syncConn(t, c, 1), "INSERT INTO book (author_id, title) SELECT id, 'cy book' FROM author WHERE name = 'cy'")

	// A block of node 2 that read the old schema loses to the migration.
	// The migration must begin on node 1 after the rows above are there
	// (a is not a sync connection): else it is the one refused, for
	// writing the table at a snapshot older than those rows.
	c.WaitConverged(20 * time.Second)
	b := syncConn(t, c, 1)
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE author SET born = 1990 WHERE name = 'ann'")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER TABLE author ADD COLUMN country text")
	mustExec(t, a, "UPDATE author SET country = 'nz'")
	mustExec(t, a, "COMMIT")
	mustFail(t, b, "40001", "COMMIT")

	// Inside a block too: its rows travel as the block's.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE copy AS SELECT * FROM author")
	mustExec(t, a, "COMMIT")
	if n, err := syncConn(t, c, 1).QueryInt(ctxT(t), "SELECT count(*) FROM (SELECT * FROM copy EXCEPT ALL SELECT * FROM author) d"); err != nil || n != 0 {
		t.Fatalf("rows of copy on another node that author lacks: %d, %v; want none", n, err)
	}
	if n, err := syncConn(t, c, 1).QueryInt(ctxT(t), "SELECT count(*) FROM copy"); err != nil || n == 0 {
		t.Fatalf("rows of copy on another node: %d, %v; want those of author", n, err)
	}

	// A migration of a table another node is writing.
	migrateUnderLoad(t, c, "ALTER TABLE book ADD COLUMN pages int NOT NULL DEFAULT 0")
	if n, err := syncConn(t, c, 1).QueryInt(ctxT(t), "SELECT count(*) FROM book WHERE pages = 100"); err != nil || n != 3 {
		t.Fatalf("books with 100 pages: %d, %v; want 3", n, err)
	}
	c.WaitConverged(30 * time.Second)
}

// Clients get PostgreSQL's own values and types, also of types certa has
// none of (arrays, intervals, network addresses, ranges): pgx over the
// extended protocol (binary where it asks for it, parameters included) and
// over the simple protocol (text) decodes them as against PostgreSQL, read
// through another node than the one written.
func TestPostgresEngineTypesPassThrough(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), `CREATE TABLE typed (id int PRIMARY KEY, tags text[], nums int[], span interval,
		addr inet, r int4range, m money, v varchar(5), n numeric(6,2))`)
	mustExec(t, c.Conn(0), `INSERT INTO typed VALUES (1, '{a,"b c"}', '{1,2,3}', '1 day 02:03:04', '10.0.0.1/24',
		'[1,5)', 12.5, 'abc', 3.1)`)
	// As pgx decodes them (a range and a numeric as its own structs).
	const want = "[a b c] [1 2 3] {7384000000 1 0 true} 10.0.0.1/24 {1 5 i e true} $12.50 abc {310 -2 false finite true}"
	ctx := ctxT(t)
	ext, err := pgclient.ConnectExtended(ctx, "postgres://certa@"+c.Nodes[2].PGAddr+"/certa?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	mustExec(t, ext, "SET certa.consistency = 'sync'")
	for _, conn := range []*pgclient.Conn{ext, syncConn(t, c, 1)} {
		rows, err := conn.Query(ctx, "SELECT tags, nums, span, addr, r, m, v, n FROM typed WHERE id = $1", 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("%d rows", len(rows))
		}
		var got []string
		for _, v := range rows[0] {
			got = append(got, fmt.Sprint(v))
		}
		if s := strings.Join(got, " "); s != want {
			t.Fatalf("got  %s\nwant %s", s, want)
		}
	}
	// An array parameter in binary, and the typed result of an expression.
	rows, err := ext.Query(ctx, "SELECT array_length($1::int[], 1), $1::int[] || 4", []int32{7, 8})
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(rows[0]); got != "[2 [7 8 4]]" {
		t.Fatalf("array parameter: %s", got)
	}
}

// COPY to and from the client, as pgx (binary), psql's \copy (text) and
// a COPY inside a transaction block send it: the rows replicate like any
// insert; a COPY that fails (a duplicate key) leaves the connection usable
// and copies nothing.
func TestPostgresEngineCopy(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx := ctxT(t)
	mustExec(t, c.Conn(0), "CREATE TABLE items (id int PRIMARY KEY, name text, price numeric(8,2), tags text[])")
	ext, err := pgclient.ConnectExtended(ctx, "postgres://certa@"+c.Nodes[0].PGAddr+"/certa?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	var rows [][]any
	for i := range 1000 {
		rows = append(rows, []any{i, fmt.Sprint("item ", i), fmt.Sprint(i, ".50"), []string{"a", "b"}})
	}
	if n, err := ext.CopyFrom(ctx, "items", []string{"id", "name", "price", "tags"}, rows); err != nil || n != 1000 {
		t.Fatalf("binary COPY FROM: %d rows, %v", n, err)
	}
	// A duplicate key: nothing copied, the connection goes on.
	if _, err := ext.CopyFrom(ctx, "items", []string{"id", "name"}, [][]any{{5000, "new"}, {1, "dup"}}); pgclient.SQLState(err) != "23505" {
		t.Fatalf("COPY of a duplicate key: %v", err)
	}
	if n, err := ext.QueryInt(ctx, "SELECT count(*) FROM items"); err != nil || n != 1000 {
		t.Fatalf("after the failed COPY: %d rows, %v", n, err)
	}

	// psql: \copy from a file inside a transaction block, and out again
	// through another node.
	file := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(file, []byte("2000,from psql,1.25,\"{x}\"\n2001,\"with, comma\",2.5,{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conninfo := func(i int) string {
		host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
		return fmt.Sprintf("host=%s port=%s user=certa dbname=certa sslmode=disable", host, port)
	}
	psql := func(i int, cmds ...string) string {
		args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", conninfo(i)}
		for _, cmd := range cmds {
			args = append(args, "-c", cmd)
		}
		out, err := exec.Command("psql", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %q: %v\n%s", cmds, err, out)
		}
		return string(out)
	}
	psql(0, "BEGIN", `\copy items from '`+file+`' with (format csv)`, "UPDATE items SET price = 9 WHERE id = 0", "COMMIT")
	out := psql(2, "SET certa.consistency = 'sync'", `\copy (SELECT id, name, price FROM items WHERE id >= 2000 OR id = 0 ORDER BY id) to stdout with (format csv)`)
	if want := "0,item 0,9.00\n2000,from psql,1.25\n2001,\"with, comma\",2.50\n"; out != want {
		t.Fatalf("COPY TO through another node:\n%s\nwant\n%s", out, want)
	}
	c.WaitConverged(30 * time.Second)
}

// Run-time parameters are PostgreSQL's own: SET (checked by PostgreSQL,
// kept across the session's transactions, undone with its block, LOCAL
// to its block), SHOW, and a search path that schema changes replicate
// with. And pg_dump of a node (leaving out certa's schema and its
// triggers) restores into a plain PostgreSQL with the same rows.
func TestPostgresEngineSettingsAndDump(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx := ctxT(t)
	a := c.Conn(0)
	mustExec(t, a, "SET TIME ZONE 'Asia/Tokyo'")
	if got, err := a.QueryString(ctx, "SELECT current_setting('TimeZone')"); err != nil || got != "Asia/Tokyo" {
		t.Fatalf("TimeZone after SET: %q, %v", got, err)
	}
	mustFail(t, a, "22023", "SET TimeZone = 'Mars/Base'")
	mustFail(t, a, "42704", "SET nosuch = 1")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "SET LOCAL DateStyle = 'German'")
	if got, err := a.QueryString(ctx, "SELECT '2024-01-02'::date::text"); err != nil || got != "02.01.2024" {
		t.Fatalf("date under SET LOCAL DateStyle: %q, %v", got, err)
	}
	mustExec(t, a, "SET application_name = 'in block'")
	mustExec(t, a, "ROLLBACK")
	if got, err := a.QueryString(ctx, "SELECT '2024-01-02'::date::text || ' ' || current_setting('application_name') || ' ' || current_setting('TimeZone')"); err != nil || got != "2024-01-02  Asia/Tokyo" {
		t.Fatalf("after the block: %q, %v", got, err)
	}
	if got, err := a.QueryString(ctx, "SHOW TimeZone"); err != nil || got != "Asia/Tokyo" {
		t.Fatalf("SHOW TimeZone: %q, %v", got, err)
	}
	mustExec(t, a, "CREATE SCHEMA app")
	mustExec(t, a, "SET search_path = app, public")
	mustExec(t, a, "CREATE TABLE t (id serial PRIMARY KEY, at timestamptz, tags text[])")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE u (id int PRIMARY KEY, t_id int REFERENCES t (id))")
	mustExec(t, a, "INSERT INTO t (at, tags) SELECT '2024-01-01 10:00+00', ARRAY['x', g::text] FROM generate_series(1, 50) g")
	mustExec(t, a, "INSERT INTO u SELECT id, id FROM t")
	mustExec(t, a, "COMMIT")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT count(*), string_agg(DISTINCT schemaname, ',') FROM pg_tables WHERE tablename IN ('t', 'u')"); got != "2=app" {
			t.Fatalf("node %d: tables t and u: %s, want both in schema app", i+1, got)
		}
	}

	// A session's own output settings change neither the values other
	// nodes store nor the keys certified: a timestamptz key written
	// under another TimeZone conflicts as the same row.
	mustExec(t, a, "SET extra_float_digits = 0")
	mustExec(t, a, "SET IntervalStyle = 'sql_standard'")
	mustExec(t, a, "CREATE TABLE k (at timestamptz PRIMARY KEY, f float8, iv interval)")
	mustExec(t, a, "INSERT INTO k VALUES ('2024-01-01 10:00+00', 0.1::float8 + 0.2::float8, '1 day 2 hours')")
	b := syncConn(t, c, 1)
	if got, err := b.QueryString(ctx, "SELECT (f = 0.1::float8 + 0.2::float8 AND iv = '1 day 2 hours')::text FROM app.k"); err != nil || got != "true" {
		t.Fatalf("values written under other output settings: %q, %v", got, err)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE k SET f = 1 WHERE at = '2024-01-01 10:00+00'")
	mustExec(t, b, "UPDATE app.k SET f = 2 WHERE at = '2024-01-01 10:00+00'")
	mustFail(t, a, "40001", "COMMIT")

	// pg_dump through node 3, restored into a plain PostgreSQL.
	host, port, _ := strings.Cut(c.Nodes[2].PGAddr, ":")
	file := filepath.Join(t.TempDir(), "dump")
	if out, err := exec.Command("pg_dump", "-Fc", "--exclude-schema=certa", "-f", file,
		fmt.Sprintf("host=%s port=%s user=certa dbname=certa sslmode=disable", host, port)).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	toc, err := exec.Command("pg_restore", "-l", file).Output()
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, line := range strings.Split(string(toc), "\n") {
		if !strings.Contains(line, " TRIGGER ") || !strings.Contains(line, " certa_") {
			keep = append(keep, line)
		}
	}
	list := filepath.Join(t.TempDir(), "toc")
	if err := os.WriteFile(list, []byte(strings.Join(keep, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := pgserver.Start(t)
	if out, err := exec.Command("pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "-L", list, "-d", ref.DSN, file).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore into PostgreSQL: %v\n%s", err, out)
	}
	plain, err := pgclient.ConnectString(ctx, ref.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	const sum = "SELECT count(*), md5(string_agg(t::text || u::text, ',' ORDER BY t.id)) FROM app.t JOIN app.u ON u.t_id = t.id"
	want := values(t, syncConn(t, c, 0), sum)
	if got := values(t, plain, sum); got != want {
		t.Fatalf("restored rows %s, cluster %s", got, want)
	}
}

// EXPLAIN ANALYZE runs CREATE TABLE AS and SELECT INTO in the executor,
// where no event trigger fires (and PostgreSQL allows it in a read-only
// transaction): the table and its rows stayed on the node that ran it,
// acknowledged. Every such form is now refused on its own, in a block and
// in a DO block, no node keeps a table, and the temporary form (which is
// the session's own) still runs.
func TestExplainAnalyzeMakesNoLoneTable(t *testing.T) {
	c := startPostgresCluster(t, 3)
	a := c.Conn(0)
	for _, sql := range []string{
		"EXPLAIN ANALYZE CREATE TABLE lone1 AS SELECT 1 AS a",
		"EXPLAIN (ANALYZE, COSTS OFF) SELECT 1 AS a INTO lone2",
		"DO $$ BEGIN EXECUTE 'EXPLAIN ANALYZE CREATE TABLE lone3 AS SELECT 1 AS a'; END $$",
		"EXPLAIN ANALYZE CREATE MATERIALIZED VIEW lone5 AS SELECT 1 AS a",
	} {
		mustFail(t, a, "0A000", sql)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "EXPLAIN ANALYZE CREATE TABLE lone4 AS SELECT 1 AS a")
	mustFail(t, a, "0A000", "COMMIT")
	mustExec(t, a, "EXPLAIN ANALYZE CREATE TEMP TABLE own AS SELECT 1 AS a")
	if got := values(t, a, "SELECT a, a FROM own"); got != "1=1" {
		t.Fatalf("temporary table made by EXPLAIN ANALYZE holds %q", got)
	}
	mustExec(t, a, "CREATE TABLE shared1 AS SELECT 1 AS a")
	mustExec(t, a, "CREATE MATERIALIZED VIEW shared2 AS SELECT 1 AS a")
	for i := range 3 {
		if got := values(t, syncConn(t, c, i), "SELECT relname, relkind::text FROM pg_class WHERE relname LIKE 'lone%' OR relname LIKE 'shared%' ORDER BY 1"); got != "shared1=r,shared2=m" {
			t.Errorf("node %d has tables %q, want shared1 and shared2 alone", i+1, got)
		}
	}
	c.WaitConverged(20 * time.Second)
}

// Migration tools build indexes CONCURRENTLY (Django's
// AddIndexConcurrently, Rails' algorithm: :concurrently): on its own such
// a statement runs on every node, without the word (in a transaction, as
// certa runs schema changes), and in a transaction block PostgreSQL's own
// refusal stands.
func TestConcurrentlyOutsideBlocks(t *testing.T) {
	c := startPostgresCluster(t, 3)
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE ci (id int PRIMARY KEY, v text, w int)")
	mustExec(t, a, "INSERT INTO ci VALUES (1, 'a', 1), (2, 'a', 2)")
	mustExec(t, a, "CREATE INDEX CONCURRENTLY ci_v ON ci (v)")
	mustExec(t, a, "CREATE INDEX CONCURRENTLY IF NOT EXISTS ci_v ON ci (v)")
	mustFail(t, a, "23505", "CREATE UNIQUE INDEX CONCURRENTLY ci_u ON ci (v)")
	mustExec(t, a, "CREATE UNIQUE INDEX CONCURRENTLY ci_w ON ci (w)")
	mustExec(t, a, "DROP INDEX CONCURRENTLY ci_v")
	mustExec(t, a, "BEGIN")
	mustFail(t, a, "25001", "CREATE INDEX CONCURRENTLY ci_x ON ci (v)")
	mustExec(t, a, "ROLLBACK")
	for i := range 3 {
		if got := values(t, syncConn(t, c, i), "SELECT indexrelid::regclass::text, indisvalid::text FROM pg_index WHERE indrelid = 'ci'::regclass ORDER BY 1"); got != "ci_pkey=true,ci_w=true" {
			t.Errorf("node %d has indexes %q", i+1, got)
		}
	}
	c.WaitConverged(20 * time.Second)
}
