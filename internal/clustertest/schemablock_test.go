package clustertest

import (
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// Schema changes inside transaction blocks on the embedded SQLite engine,
// as migration tools make them: the block's DDL and rows commit together
// at its position on every node; a ROLLBACK TO undoes the schema changes
// after its savepoint; a refused statement fails the block; a block of
// another node that read the old schema loses (40001); and a migration of
// a table another node is writing commits (or fails with 40001), the
// nodes staying alike.
func TestSchemaInBlock(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE migrations (id bigserial PRIMARY KEY, name text NOT NULL)")
	for _, s := range []string{
		"BEGIN",
		"CREATE TABLE author (id integer PRIMARY KEY, name text NOT NULL)",
		"INSERT INTO author VALUES (1, 'ann'), (2, 'bob')",
		"ALTER TABLE author ADD COLUMN born integer DEFAULT 1970",
		"CREATE TABLE book (id bigserial PRIMARY KEY, author_id integer REFERENCES author (id), title text)",
		"CREATE INDEX book_title ON book (title)",
		// Ids of the client's own, past the sequence's first values (taking
		// 1 and 2 would make a later nextval collide, in PostgreSQL too).
		"INSERT INTO book (id, author_id, title) SELECT id + 100000, id, name || ' book' FROM author",
		"SAVEPOINT s",
		"CREATE TABLE gone (id integer PRIMARY KEY)",
		"INSERT INTO gone VALUES (1)",
		"ALTER TABLE author DROP COLUMN born",
		"ROLLBACK TO SAVEPOINT s",
		"UPDATE author SET born = 1980 WHERE name = 'bob'",
		"INSERT INTO migrations (name) VALUES ('0001_initial')",
		"COMMIT",
	} {
		mustExec(t, a, s)
	}
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT a.name, a.born || ' ' || b.title FROM author a JOIN book b ON b.author_id = a.id ORDER BY 1"); got != "ann=1970 ann book,bob=1980 bob book" {
			t.Fatalf("node %d: %s", i+1, got)
		}
		if got := values(t, conn, "SELECT id, name FROM migrations"); got != "1=0001_initial" {
			t.Fatalf("node %d: migrations %s", i+1, got)
		}
		mustFail(t, conn, "42P01", "SELECT * FROM gone")
	}
	// The new tables' sequences hand out values on other nodes once
	// committed, and in the block that made them.
	mustExec(t, syncConn(t, c, 2), "INSERT INTO book (author_id, title) VALUES (1, 'second')")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE tag (id serial PRIMARY KEY, name text)")
	mustExec(t, a, "INSERT INTO tag (name) VALUES ('x'), ('y')")
	mustExec(t, a, "COMMIT")
	mustExec(t, syncConn(t, c, 1), "INSERT INTO tag (name) VALUES ('z')")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT name, id FROM tag ORDER BY name"); !strings.HasPrefix(got, "x=1,y=2,z=") || got == "x=1,y=2,z=1" || got == "x=1,y=2,z=2" {
			t.Fatalf("node %d: tags %s", i+1, got)
		}
	}

	// A refused statement fails the block, which then commits nothing.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE TABLE u (id integer PRIMARY KEY)")
	mustFail(t, a, "0A000", "CREATE TABLE ai (id money PRIMARY KEY)")
	mustFail(t, a, "25P02", "SELECT 1")
	mustExec(t, a, "ROLLBACK")
	mustFail(t, syncConn(t, c, 1), "42P01", "SELECT * FROM u")
	mustExec(t, a, "BEGIN")
	mustFail(t, a, "0A000", "CREATE TABLE copy AS SELECT * FROM author")
	mustExec(t, a, "ROLLBACK")

	// A block of node 2 that read the old schema loses to the migration.
	b := syncConn(t, c, 1)
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE author SET born = 1990 WHERE name = 'ann'")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "ALTER TABLE author ADD COLUMN country text")
	mustExec(t, a, "UPDATE author SET country = 'nz'")
	mustExec(t, a, "COMMIT")
	mustFail(t, b, "40001", "COMMIT")

	// A migration of a table another node is writing.
	migrateUnderLoad(t, c, "ALTER TABLE book ADD COLUMN pages integer NOT NULL DEFAULT 0")
	if n, err := syncConn(t, c, 1).QueryInt(ctxT(t), "SELECT count(*) FROM book WHERE pages = 100"); err != nil || n != 2 {
		t.Fatalf("books with 100 pages: %d, %v; want 2", n, err)
	}
	c.WaitConverged(30 * time.Second)
}

// A block that makes a table, writes rows into it and drops it again
// (a test suite's fixture, a migration that rebuilds a table) commits on
// both engines, and every node ends as the origin did.
func TestSchemaBlockDropsWhatItMade(t *testing.T) {
	forEachEngine(t, func(t *testing.T, start startFunc) {
		c := start(t, 3)
		a := c.Conn(0)
		for _, s := range []string{
			"BEGIN",
			"CREATE TABLE scratch (id integer PRIMARY KEY, v text)",
			"INSERT INTO scratch VALUES (1, 'a'), (2, 'b')",
			"CREATE TABLE kept (id integer PRIMARY KEY, n bigint)",
			"INSERT INTO kept SELECT 1, count(*) FROM scratch",
			"UPDATE scratch SET v = 'c' WHERE id = 1",
			"DROP TABLE scratch",
			"COMMIT",
		} {
			mustExec(t, a, s)
		}
		for i := range c.Nodes {
			conn := syncConn(t, c, i)
			if got := values(t, conn, "SELECT id, n FROM kept"); got != "1=2" {
				t.Fatalf("node %d: kept %s", i+1, got)
			}
			mustFail(t, conn, "42P01", "SELECT * FROM scratch")
		}
		c.WaitConverged(20 * time.Second)
	})
}

// Statements whose text holds semicolons of its own, a function with a
// BEGIN ATOMIC body and a rule of several actions, reach PostgreSQL
// whole (psql sends each as one query) and replicate.
func TestStatementsWithInnerSemicolons(t *testing.T) {
	c := startPostgresCluster(t, 3)
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE t (id integer PRIMARY KEY)")
	mustExec(t, a, "CREATE TABLE audit (id integer, what text)")
	mustExec(t, a, `CREATE FUNCTION twice(n integer) RETURNS integer LANGUAGE sql
		BEGIN ATOMIC SELECT n; SELECT CASE WHEN n IS NULL THEN 0 ELSE n * 2 END; END`)
	mustExec(t, a, `CREATE RULE t_audit AS ON INSERT TO t DO ALSO
		(INSERT INTO audit VALUES (NEW.id, 'one'); INSERT INTO audit VALUES (NEW.id, 'two'))`)
	mustExec(t, a, "INSERT INTO t VALUES (twice(3))")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT id, what FROM audit ORDER BY what"); got != "6=one,6=two" {
			t.Fatalf("node %d: audit %s", i+1, got)
		}
	}
	c.WaitConverged(20 * time.Second)
}
