package sqlite

import (
	"slices"
	"testing"

	"certa/engine"
	"certa/writeset"
)

// The touch triggers follow schema changes table by table: an UPDATE
// that leaves a row as it was still names the row in its write set after
// the table was altered, dropped and made again with another key, and
// after another table changed.
func TestTouchTriggersFollowSchema(t *testing.T) {
	e := openTest(t, Config{})
	hasKey := func(k writeset.Key, stmts ...string) {
		t.Helper()
		ws := e.capture(stmts...)
		if ws == nil || !slices.Contains(ws.Keys, k) {
			t.Fatalf("%v: write set %v, want the key %q", stmts, ws, k)
		}
	}
	e.ddl("CREATE TABLE t (id int PRIMARY KEY, v int)")
	e.commit("INSERT INTO t VALUES (1, 1)")
	hasKey(writeset.EncodeKey("t", int64(1)), "UPDATE t SET v = v WHERE id = 1")
	e.ddl("ALTER TABLE t ADD COLUMN w int")
	hasKey(writeset.EncodeKey("t", int64(1)), "UPDATE t SET v = v WHERE id = 1")
	e.ddl("CREATE TABLE u (id int PRIMARY KEY)")
	hasKey(writeset.EncodeKey("t", int64(1)), "UPDATE t SET v = v WHERE id = 1")
	e.ddl("DROP TABLE t")
	e.ddl("CREATE TABLE t (k text PRIMARY KEY, v int)")
	e.commit("INSERT INTO t VALUES ('a', 1)")
	hasKey(writeset.EncodeKey("t", "a"), "UPDATE t SET v = v WHERE k = 'a'")
	e.ddl("ALTER TABLE t RENAME TO t2")
	hasKey(writeset.EncodeKey("t2", "a"), "UPDATE t2 SET v = v WHERE k = 'a'")
}

// A touch trigger of a table dropped or renamed through another
// connection lingers on the connections that had made it, where SQLite's
// next rename of any table or column failed on it ("error in trigger
// ...: no such table"); such a connection is renewed instead.
func TestRenameAfterATableWentElsewhere(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE x (id int PRIMARY KEY, v int)")
	e.ddl("CREATE TABLE y (id int PRIMARY KEY, v int)")
	e.ddl("CREATE TABLE z (id int PRIMARY KEY, v int)")
	e.commit("INSERT INTO x VALUES (1, 1)", "UPDATE x SET v = 2")
	e.ddl("DROP TABLE x")
	e.ddl("ALTER TABLE y RENAME COLUMN v TO w")
	e.ddl("ALTER TABLE z RENAME TO z2")
	e.ddl("ALTER TABLE y RENAME TO y2")
	e.ddl("ALTER TABLE z2 RENAME COLUMN v TO w")
	e.commit("INSERT INTO y2 VALUES (1, 1)", "UPDATE y2 SET w = 2", "UPDATE z2 SET w = 2")
}

// Every idle connection may hold a trigger of a table dropped elsewhere:
// the next schema statement and transaction renew as many as they meet,
// and the client sees none of it.
func TestManyConnectionsRenewed(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE x (id int PRIMARY KEY, v int)")
	var txs []engine.Tx
	for range 12 { // each on a connection of its own, which makes x's trigger
		txs = append(txs, e.begin())
	}
	for _, tx := range txs {
		tx.Rollback()
	}
	e.ddl("DROP TABLE x")
	e.ddl("CREATE TABLE y (id int PRIMARY KEY, v int)")
	e.ddl("ALTER TABLE y RENAME COLUMN v TO w")
	e.commit("INSERT INTO y VALUES (1, 1)")
	for range 12 {
		e.commit("UPDATE y SET w = w + 1")
	}
	wantRows(t, e.query("SELECT w FROM y"), row(int64(13)))
}
