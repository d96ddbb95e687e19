package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/sqlerr"
)

// Issue 16: a PRIMARY KEY column other than an INTEGER PRIMARY KEY can hold
// NULL in SQLite, and the session extension ignores such rows: they were
// acknowledged and never replicated. PostgreSQL's primary keys are NOT NULL.
func TestPrimaryKeyColumnsAreNotNull(t *testing.T) {
	e := openTest(t, Config{})
	for _, ddl := range []string{
		"CREATE TABLE t1 (id bigint PRIMARY KEY, k integer)",
		"CREATE TABLE t2 (id int, k integer, PRIMARY KEY (id))",
		"CREATE TABLE t3 (a text, b int, k int, CONSTRAINT t3_pk PRIMARY KEY (a, b))",
		"CREATE TABLE t4 (id numeric /* , */ PRIMARY KEY, k int)",
	} {
		e.ddl(ddl)
	}
	for _, stmt := range []string{
		"INSERT INTO t1(k) VALUES (5), (6)",
		"INSERT INTO t1 VALUES (NULL, 5)",
		"INSERT INTO t2(k) VALUES (5)",
		"INSERT INTO t2(k) SELECT 1",
		"INSERT INTO t3(a, k) VALUES ('x', 1)",
		"INSERT INTO t3(b, k) VALUES (1, 1)",
		"INSERT INTO t4(k) VALUES (1) RETURNING *",
	} {
		tx := e.begin()
		code, err := execErr(tx, stmt)
		if code != sqlerr.NotNullViolation || !strings.Contains(err.Error(), `null value in column "`) {
			t.Errorf("%s: %s %v, want 23502", stmt, code, err)
		}
		tx.Rollback()
	}
	e.commit("INSERT INTO t1 VALUES (1, 1)")
	tx := e.begin()
	if code, err := execErr(tx, "UPDATE t1 SET id = NULL WHERE id = 1"); code != sqlerr.NotNullViolation {
		t.Errorf("update key to NULL: %s %v", code, err)
	}
	tx.Rollback()
	// An upsert whose key is NULL is refused as well.
	tx = e.begin()
	if code, err := execErr(tx, "INSERT INTO t1 VALUES (NULL, 2) ON CONFLICT (id) DO UPDATE SET k = 3"); code != sqlerr.NotNullViolation {
		t.Errorf("upsert: %s %v", code, err)
	}
	tx.Rollback()
}

// A key compared with a collation other than BINARY is one row to SQLite
// and two keys to certification ('KEY3' and 'key3' under NOCASE): refused.
func TestKeyCollationRefused(t *testing.T) {
	e := openTest(t, Config{})
	for _, ddl := range []string{
		"CREATE TABLE c1 (k TEXT COLLATE NOCASE PRIMARY KEY)",
		"CREATE TABLE c3 (a int, k TEXT COLLATE NOCASE, PRIMARY KEY (a, k))",
	} {
		_, err := e.CheckDDL(context.Background(), ddl)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "collation") {
			t.Errorf("%s: %v", ddl, err)
		}
	}
	// Other columns may use any collation.
	e.ddl("CREATE TABLE c4 (k TEXT PRIMARY KEY, name TEXT COLLATE NOCASE UNIQUE)")
}

// PostgreSQL's "C" and "POSIX" collations are byte order, SQLite's
// BINARY: keys may use them, and they sort as PostgreSQL sorts with them.
func TestByteOrderCollations(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE c5 (k text COLLATE "C" PRIMARY KEY, v text COLLATE "POSIX")`)
	e.commit("INSERT INTO c5 VALUES ('b', 'B'), ('B', 'b'), ('a', 'é'), ('é', 'a')")
	wantRows(t, e.query(`SELECT k FROM c5 ORDER BY k`), row("B"), row("a"), row("b"), row("é"))
	wantRows(t, e.query(`SELECT v FROM c5 ORDER BY v COLLATE "C" DESC`), row("é"), row("b"), row("a"), row("B"))
	a, b := e.capture("UPDATE c5 SET v = 'x' WHERE k = 'b'"), e.capture("DELETE FROM c5 WHERE k = 'b'")
	if len(a.Keys) != 1 || len(b.Keys) != 1 || a.Keys[0] != b.Keys[0] {
		t.Fatalf("keys %q and %q", a.Keys, b.Keys)
	}
}

// Values SQLite finds equal in a key column are one certification key: 1
// and 1.0 in a column without a type conflicted in the unique index on
// every node after both passed certification.
func TestKeysEqualAsSQLiteDoes(t *testing.T) {
	e := openTest(t, Config{})
	e.legacyDDL("CREATE TABLE u (k NOT NULL PRIMARY KEY, v TEXT)") // no type, blob affinity
	a := e.capture("INSERT INTO u VALUES (1, 'a')")
	b := e.capture("INSERT INTO u VALUES (1.0, 'b')")
	if len(a.Keys) != 1 || len(b.Keys) != 1 || a.Keys[0] != b.Keys[0] {
		t.Fatalf("keys %q and %q differ", a.Keys, b.Keys)
	}
}

// reserve reserves and grants a block of sequence name, as replica does.
func (e *testEngine) reserve(name string) engine.SequenceBlock {
	e.t.Helper()
	ws, b, err := e.ReserveSequence(context.Background(), name)
	if err != nil || ws == nil {
		e.t.Fatalf("reserve %s: %v %v", name, ws, err)
	}
	if items := e.apply(ws); items[0].Err != nil {
		e.t.Fatal(items[0].Err)
	}
	e.GrantSequence(b)
	return b
}

// SERIAL and identity columns get their values from blocks the node
// reserved through the log (in SQLite alone they were NULL, and the rows
// were lost).
func TestGeneratedColumns(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE s1 (id SERIAL, k INTEGER, PRIMARY KEY (id))")
	e.ddl("CREATE TABLE s2 (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, n smallserial, v text)")
	tx := e.begin()
	code, err := execErr(tx, "INSERT INTO s1 (k) VALUES (1)")
	if code != sqlerr.SerializationFailure || !errors.Is(err, engine.ErrNoSequenceValues) {
		t.Fatalf("insert before any reservation: %v", err)
	}
	tx.Rollback()
	if b := e.reserve("s1_id_seq"); b.First != 1 || b.Count != sequenceBlock {
		t.Fatalf("first block %+v", b)
	}
	if b := e.reserve("s1_id_seq"); b.First != 1+sequenceBlock {
		t.Fatalf("second block %+v", b)
	}
	e.reserve("s2_id_seq")
	e.reserve("s2_n_seq")
	// nextval takes values: never a read-only statement.
	if err := e.Read(context.Background(), "select NextVal('s1_id_seq')", &recorder{}); !errors.Is(err, engine.ErrNotReadOnly) {
		t.Fatalf("Read of nextval: %v", err)
	}
	e.commit("INSERT INTO s1 (k) VALUES (10), (20)")
	tx = e.begin()
	wantRows(t, exec(t, tx, "INSERT INTO s2 (v) VALUES ('a') RETURNING id, n, v").rows, row(int64(1), int64(1), "a"))
	tx.Rollback() // values are not given back, as in PostgreSQL
	e.commit("INSERT INTO s2 (v) VALUES ('b')")
	wantRows(t, e.query("SELECT id, k FROM s1 ORDER BY id"), row(int64(1), int64(10)), row(int64(2), int64(20)))
	wantRows(t, e.query("SELECT id, n, v FROM s2"), row(int64(2), int64(2), "b"))
	// Two nodes reserving at once write the same row: certification lets
	// one through.
	w1, _, _ := e.ReserveSequence(context.Background(), "s1_id_seq")
	w2, _, _ := e.ReserveSequence(context.Background(), "s1_id_seq")
	if len(w1.Keys) != 1 || w1.Keys[0] != w2.Keys[0] || w1.Snapshot != w2.Snapshot {
		t.Fatalf("reservations %v and %v do not conflict", fmtKeys(w1.Keys), fmtKeys(w2.Keys))
	}
	// Dropping the table drops its sequence; making it again starts over.
	e.ddl("DROP TABLE s1")
	if ws, _, err := e.ReserveSequence(context.Background(), "s1_id_seq"); ws != nil || err != nil {
		t.Fatalf("reserve of a dropped sequence: %v %v", ws, err)
	}
	e.ddl("CREATE TABLE s1 (id SERIAL PRIMARY KEY)")
	if b := e.reserve("s1_id_seq"); b.First != 1 {
		t.Fatalf("block of the new sequence %+v", b)
	}
	// An explicit NULL is refused, as in PostgreSQL.
	tx = e.begin()
	if code, err := execErr(tx, "INSERT INTO s1 VALUES (NULL)"); code != sqlerr.NotNullViolation {
		t.Fatalf("explicit NULL: %v", err)
	}
	tx.Rollback()
}

// A transaction parked and re-run takes the values it took the first time,
// so what INSERT ... RETURNING told the client stays true.
func TestGeneratedValuesSurviveRerun(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE s (id SERIAL PRIMARY KEY, v text)")
	e.reserve("s_id_seq")
	tx := e.begin()
	wantRows(t, exec(t, tx, "INSERT INTO s (v) VALUES ('a') RETURNING id").rows, row(int64(1)))
	e.apply(e.capture("INSERT INTO s VALUES (500, 'other')")) // parks tx; its table changed: re-run
	wantRows(t, exec(t, tx, "INSERT INTO s (v) VALUES ('b') RETURNING id").rows, row(int64(2)))
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, v FROM s ORDER BY id"), row(int64(1), "a"), row(int64(2), "b"), row(int64(500), "other"))
}

// A table an older version created with a key that can hold NULL is not
// written: its rows would not be replicated.
func TestLegacyNullableKeyTableNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	if err := execScript(c, "CREATE TABLE old (id bigint PRIMARY KEY, k int)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e := openTest(t, Config{Path: path})
	tx := e.begin()
	code, err := execErr(tx, "INSERT INTO old VALUES (1, 1)")
	if code != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "can hold NULL") {
		t.Errorf("insert into legacy table: %s %v", code, err)
	}
	tx.Rollback()
	wantRows(t, e.query("SELECT count(*) FROM old"), row(int64(0)))
}

// A block reserved before a schema change dropped its sequence, or made
// it anew, applies as nothing on every node: it is not a failure to
// apply (every node's row is gone, or another).
func TestReservationOfDroppedSequence(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE g (id SERIAL PRIMARY KEY, v text)")
	ws, _, err := e.ReserveSequence(context.Background(), "g_id_seq")
	if err != nil || ws == nil {
		t.Fatalf("reserve: %v %v", ws, err)
	}
	again, _, err := e.ReserveSequence(context.Background(), "g_id_seq")
	if err != nil || again == nil {
		t.Fatalf("reserve: %v %v", again, err)
	}
	e.ddl("DROP TABLE g")
	if items := e.apply(ws); items[0].Err != nil {
		t.Fatalf("reservation of a dropped sequence: %v", items[0].Err)
	}
	e.ddl("CREATE TABLE g (id SERIAL PRIMARY KEY, v text)")
	if items := e.apply(again); items[0].Err != nil {
		t.Fatalf("reservation of a sequence made anew: %v", items[0].Err)
	}
	b := e.reserve("g_id_seq") // the new sequence's first block
	if b.First != 1 {
		t.Fatalf("new sequence's first block starts at %d", b.First)
	}
}
