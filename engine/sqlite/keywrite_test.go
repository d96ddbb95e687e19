package sqlite

import (
	"testing"
	"time"

	"certa/sqlerr"
)

func TestKeyWrite(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER, c TEXT)")
	e.ddl("CREATE TABLE u (a INTEGER, b TEXT, n INTEGER, PRIMARY KEY (a, b))")
	e.ddl("CREATE TABLE log (id INTEGER PRIMARY KEY, n INTEGER)")
	for _, c := range []struct {
		sql  string
		want bool
	}{
		{"UPDATE t SET n = n + 1 WHERE id = $1", true},
		{"update t set c = $2, n = n * 2 where t.id = 7;", true},
		{"DELETE FROM t WHERE id = $1", true},
		{"INSERT INTO t (id, n, c) VALUES ($1, $2, $3), (5, 6, 'x')", true},
		{"INSERT INTO t VALUES ($1, random(), 'x')", true},
		{"UPDATE u SET n = 1 WHERE b = 'x' AND a = $1", true},
		{"UPDATE u SET n = 1 WHERE a = $1", false},                       // part of the key
		{"UPDATE t SET n = 1 WHERE id = $1 OR id = $2", false},           // two keys
		{"UPDATE t SET n = 1 WHERE id > $1", false},                      // a range
		{"UPDATE t SET n = 1 WHERE n = $1", false},                       // not the key
		{"UPDATE t SET n = 1 WHERE id = $1 AND n = 2", false},            // more than the key
		{"UPDATE t SET n = (SELECT max(n) FROM t) WHERE id = $1", false}, // a subquery
		{"UPDATE t SET n = (SELECT n FROM log WHERE id = 1) WHERE id = 1", false},
		{"UPDATE t SET n = 1 WHERE id = $1 RETURNING n", false}, // returns what it read
		{"INSERT INTO t SELECT * FROM t WHERE id = 1", false},   // reads other rows
		{"INSERT INTO t VALUES (1, 1, 'x') ON CONFLICT (id) DO NOTHING", false},
		{"INSERT OR REPLACE INTO t VALUES (1, 1, 'x')", false},
		{"SELECT n FROM t WHERE id = $1", false},
	} {
		tx := e.begin()
		kw := tx.(*Tx).isKeyWrite(c.sql)
		tx.Rollback()
		if kw != c.want {
			t.Errorf("%s: key write %v, want %v", c.sql, kw, c.want)
		}
	}
}

// A transaction that read, then writes by key after concurrent commits,
// writes without its reads being checked: snapshot isolation does not ask
// for it, and certification from its first snapshot still refuses it if a
// row it writes changed. A later statement that is not a key write checks
// what it read first.
func TestKeyWriteAfterStaleReads(t *testing.T) {
	for _, tc := range []struct {
		name     string
		change   string // committed after the read
		thenFail bool   // the read checked at the next SELECT fails
	}{
		{"read row changed", "UPDATE t SET n = 21 WHERE id = 2", true},
		{"other row changed", "UPDATE t SET n = 31 WHERE id = 3", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openTest(t, Config{ApplyGrace: time.Hour})
			e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
			e.commit("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
			tx := e.begin()
			snap := tx.Snapshot()
			wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 2").rows, row(int64(20)))
			e.apply(e.capture(tc.change))
			exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1") // moves forward, unchecked
			ws, err := tx.WriteSet()
			if err != nil {
				t.Fatal(err)
			}
			if ws.Snapshot != snap || len(ws.Keys) != 1 {
				t.Fatalf("write set %+v, want 1 key at the first snapshot %d", ws, snap)
			}
			code, err := execErr(tx, "SELECT n FROM t WHERE id = 1")
			if tc.thenFail {
				if code != sqlerr.SerializationFailure {
					t.Fatalf("a read after the key write, its earlier read changed: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantRows(t, exec(t, tx, "SELECT id, n FROM t ORDER BY id").rows,
				row(int64(1), int64(11)), row(int64(2), int64(20)), row(int64(3), int64(31)))
			tx.Rollback()
		})
	}
}

// A key write after stale reads that fails a constraint because of a commit
// since the snapshot (the key was free there) is a write conflict: 40001,
// as certification would have said, not a unique violation.
func TestKeyWriteConstraintAfterConcurrentCommitIsAConflict(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
	e.ddl("CREATE TABLE o (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1, 10)")
	tx := e.begin()
	wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 1").rows, row(int64(10)))
	e.apply(e.capture("UPDATE t SET n = 11 WHERE id = 1", "INSERT INTO o VALUES (10)"))
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1") // moves forward, unchecked
	code, err := execErr(tx, "INSERT INTO o VALUES (10)")
	if code != sqlerr.SerializationFailure {
		t.Fatalf("insert of a key taken since the snapshot: %v", err)
	}
	tx.Rollback()

	// An update of a row deleted since the snapshot finds nothing to
	// change, and certification would see no key: a conflict too.
	e.commit("INSERT INTO o VALUES (20)")
	tx = e.begin()
	wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 1").rows, row(int64(11)))
	e.apply(e.capture("UPDATE t SET n = 12 WHERE id = 1", "DELETE FROM o WHERE id = 20"))
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1") // moves forward, unchecked
	code, err = execErr(tx, "DELETE FROM o WHERE id = 20")
	if code != sqlerr.SerializationFailure {
		t.Fatalf("delete of a row deleted since the snapshot: %v", err)
	}
	tx.Rollback()
}

// A key write that sets a row to the values it already has changes
// nothing SQLite records, yet the row may have changed since the snapshot
// (a lost update, P4): the row still joins the certification keys.
func TestKeyWriteOfUnchangedValuesIsCertified(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER)")
	e.commit("INSERT INTO counter VALUES (1, 0)")
	t1, t2 := e.begin(), e.begin()
	snap := t2.Snapshot()
	exec(t, t1, "SELECT n FROM counter WHERE id = 1")
	exec(t, t2, "SELECT n FROM counter WHERE id = 1")
	exec(t, t1, "UPDATE counter SET n = 1 WHERE id = 1")
	ws1, err := t1.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	t1.Rollback()
	e.apply(ws1)
	// Moves forward: n is 1 already. A comment that says WHERE is no WHERE.
	exec(t, t2, "UPDATE counter SET n = 1 /* where id = 2 */ WHERE id = 1")
	ws2, err := t2.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws2 == nil || ws2.Snapshot != snap || len(ws2.Keys) != 1 || ws2.Keys[0] != ws1.Keys[0] {
		t.Fatalf("write set %+v, want key %v at snapshot %d", ws2, ws1.Keys, snap)
	}
	t2.Rollback()
}

// A transaction whose reads are unchecked, parked after its key writes,
// goes on with its changes re-applied whatever else changed meanwhile; its
// reads are still checked at its next statement that is not a key write.
func TestUncheckedHolderParksAndGoesOn(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
	e.commit("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	tx := e.begin()
	wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 2").rows, row(int64(20)))
	e.apply(e.capture("UPDATE t SET n = 31 WHERE id = 3"))
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1")     // unchecked
	e.apply(e.capture("UPDATE t SET n = 21 WHERE id = 2")) // parks tx; changes what it read
	exec(t, tx, "DELETE FROM t WHERE id = 3")              // unparks: a key write, goes on
	ws, err := tx.WriteSet()
	if err != nil || len(ws.Keys) != 2 {
		t.Fatalf("write set %+v, %v; want 2 keys", ws, err)
	}
	if code, err := execErr(tx, "SELECT n FROM t WHERE id = 1"); code != sqlerr.SerializationFailure {
		t.Fatalf("a read after its earlier read changed: %v", err)
	}
	tx.Rollback()
}
