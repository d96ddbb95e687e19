package sqlite

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"certa/certify"
	"certa/sqlerr"
	"certa/writeset"
)

// fkSchema is a parent with three kinds of children.
var fkSchema = []string{
	"CREATE TABLE p (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE)",
	"CREATE TABLE cascade_c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE CASCADE ON UPDATE CASCADE)",
	"CREATE TABLE null_c (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) ON DELETE SET NULL ON UPDATE SET NULL)",
	"CREATE TABLE restrict_c (id INTEGER PRIMARY KEY, pcode TEXT REFERENCES p(code))",
}

func openFK(t *testing.T) *testEngine {
	e := openTest(t, Config{})
	for _, s := range fkSchema {
		e.ddl(s)
	}
	return e
}

func hasKey(ws *writeset.WriteSet, k writeset.Key) bool {
	return slices.Contains(ws.Keys, k) || slices.Contains(ws.SharedKeys, k)
}

// hasSharedKey reports whether ws relies on the row of key k without
// writing it (a foreign key's parent).
func hasSharedKey(ws *writeset.WriteSet, k writeset.Key) bool {
	return slices.Contains(ws.SharedKeys, k) && !slices.Contains(ws.Keys, k)
}

// An orphan is refused with 23503, and so is deleting or re-keying a
// parent that a NO ACTION key still references; nothing was written.
func TestFKEnforced(t *testing.T) {
	e := openFK(t)
	e.commit("INSERT INTO p VALUES (1, 'a')", "INSERT INTO restrict_c VALUES (1, 'a')")

	tx := e.begin()
	_, err := execErr(tx, "INSERT INTO cascade_c VALUES (1, 99)")
	wantCode(t, err, sqlerr.ForeignKeyViolation)
	if !strings.Contains(err.Error(), `insert or update on table "cascade_c"`) {
		t.Fatalf("message: %v", err)
	}
	tx.Rollback()

	for _, stmt := range []string{
		"DELETE FROM p WHERE id = 1",
		"UPDATE p SET code = 'b' WHERE id = 1",
		"UPDATE restrict_c SET pcode = 'zz' WHERE id = 1",
	} {
		tx := e.begin()
		_, err := execErr(tx, stmt)
		wantCode(t, err, sqlerr.ForeignKeyViolation)
		tx.Rollback()
	}
	wantRows(t, e.query("SELECT id, code FROM p"), row(int64(1), "a"))
}

// ON DELETE CASCADE, SET NULL and ON UPDATE CASCADE run once, at the
// origin: the write set holds every row they changed, and another engine
// applies it exactly (an action run again there would find the rows gone
// and fail the item).
func TestFKActionsReplicateOnce(t *testing.T) {
	a, b := openFK(t), openFK(t)
	b.apply(a.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b')",
		"INSERT INTO cascade_c VALUES (10, 1), (11, 1), (12, 2)",
		"INSERT INTO null_c VALUES (20, 1), (21, 2)"))

	ws := a.commit("DELETE FROM p WHERE id = 1")
	for _, k := range []writeset.Key{
		writeset.EncodeKey("p", int64(1)),
		writeset.EncodeKey("cascade_c", int64(10)),
		writeset.EncodeKey("cascade_c", int64(11)),
		writeset.EncodeKey("null_c", int64(20)),
	} {
		if !hasKey(ws, k) {
			t.Fatalf("write set keys %v lack %q", fmtKeys(ws.Keys), k)
		}
	}
	items := b.apply(ws)
	if items[0].Err != nil {
		t.Fatalf("apply: %v", items[0].Err)
	}
	ws = a.commit("UPDATE p SET id = 3 WHERE id = 2")
	if items := b.apply(ws); items[0].Err != nil {
		t.Fatalf("apply: %v", items[0].Err)
	}
	for _, q := range []string{
		"SELECT id, code FROM p ORDER BY id",
		"SELECT id, pid FROM cascade_c ORDER BY id",
		"SELECT id, pid FROM null_c ORDER BY id",
	} {
		wantRows(t, b.query(q), a.query(q)...)
	}
	wantRows(t, b.query("SELECT id, pid FROM cascade_c"), row(int64(12), int64(3)))
	wantRows(t, b.query("SELECT id, pid FROM null_c ORDER BY id"), row(int64(20), nil), row(int64(21), nil))
}

// A child row's write set carries its parent's key, the parent's primary
// key even when the foreign key references a UNIQUE column; a NULL
// reference or an update that leaves the reference alone carries none.
func TestFKParentKey(t *testing.T) {
	e := openFK(t)
	e.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b')")
	p1, p2 := writeset.EncodeKey("p", int64(1)), writeset.EncodeKey("p", int64(2))

	ws := e.capture("INSERT INTO cascade_c VALUES (1, 1)")
	if !hasSharedKey(ws, p1) {
		t.Fatalf("child insert keys %v, shared %v, lack the parent's", fmtKeys(ws.Keys), fmtKeys(ws.SharedKeys))
	}
	ws = e.capture("INSERT INTO restrict_c VALUES (1, 'b')")
	if !hasSharedKey(ws, p2) || !hasTable(ws, "p") {
		t.Fatalf("child insert by UNIQUE column: keys %v tables %v lack the parent's", fmtKeys(ws.Keys), ws.Tables)
	}
	ws = e.capture("INSERT INTO null_c VALUES (1, NULL)")
	if hasKey(ws, p1) || hasKey(ws, p2) || len(ws.Keys) != 1 {
		t.Fatalf("NULL reference: keys %v", fmtKeys(ws.Keys))
	}
	e.commit("INSERT INTO cascade_c VALUES (5, 1)")
	ws = e.capture("UPDATE cascade_c SET pid = 2 WHERE id = 5")
	if !hasSharedKey(ws, p2) {
		t.Fatalf("re-pointed child: keys %v lack the new parent's", fmtKeys(ws.Keys))
	}
}

func hasTable(ws *writeset.WriteSet, t string) bool {
	for _, have := range ws.Tables {
		if have == t {
			return true
		}
	}
	return false
}

// A child insert and a delete of its parent made on the same snapshot (two
// nodes at once) conflict in certification, whichever comes first.
func TestFKChildInsertConflictsWithParentDelete(t *testing.T) {
	e := openFK(t)
	e.commit("INSERT INTO p VALUES (1, 'a')")
	child := e.capture("INSERT INTO null_c VALUES (1, 1)")
	del := e.capture("DELETE FROM p WHERE id = 1")
	if child.Snapshot != del.Snapshot {
		t.Fatal("not on one snapshot")
	}
	for _, order := range [][2]*writeset.WriteSet{{child, del}, {del, child}} {
		c := certify.New(1000)
		s := child.Snapshot
		if r := c.Certify(order[0], s+1); !r.OK() {
			t.Fatalf("first: %v", r)
		}
		c.Commit(order[0], s+1)
		if r := c.Certify(order[1], s+2); r.OK() {
			t.Fatalf("second passed: both would commit, leaving an orphan")
		}
	}
}

// DEFERRABLE INITIALLY DEFERRED keys are checked when the write set is
// captured (COMMIT): an orphan left at the end fails with 23503 and gives
// no write set; one fixed before the end passes.
func TestFKDeferred(t *testing.T) {
	e := openFK(t)
	e.ddl("CREATE TABLE d (id INTEGER PRIMARY KEY, pid INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED)")
	e.commit("INSERT INTO p VALUES (1, 'a')", "INSERT INTO d VALUES (1, 1)")

	for _, stmts := range [][]string{
		{"INSERT INTO d VALUES (2, 7)"},
		{"DELETE FROM p WHERE id = 1"},
		{"UPDATE p SET id = 5 WHERE id = 1"},
		{"INSERT INTO p VALUES (7, 'x')", "INSERT INTO d VALUES (2, 7)", "DELETE FROM p WHERE id = 7"},
	} {
		tx := e.begin()
		for _, s := range stmts {
			exec(t, tx, s) // deferred: each statement passes
		}
		ws, err := tx.WriteSet()
		wantCode(t, err, sqlerr.ForeignKeyViolation)
		if ws != nil {
			t.Fatalf("%v: a write set despite the violation", stmts)
		}
		tx.Rollback()
	}
	ws := e.commit("INSERT INTO d VALUES (2, 7)", "INSERT INTO p VALUES (7, 'x')")
	if !hasKey(ws, writeset.EncodeKey("p", int64(7))) {
		t.Fatalf("keys %v", fmtKeys(ws.Keys))
	}
	e.commit("DELETE FROM p WHERE id = 1", "DELETE FROM d WHERE id = 1")
	wantRows(t, e.query("SELECT id, pid FROM d"), row(int64(2), int64(7)))
}

// A transaction whose foreign-key actions ran is parked by the applier (it
// is idle) and re-run at COMMIT, never re-applied with its actions running
// again: its write set holds each row once and applies cleanly elsewhere.
// Also after reads (which otherwise park with the changes set aside).
func TestFKParkedTxReRuns(t *testing.T) {
	for _, read := range []bool{false, true} {
		a, b := openFK(t), openFK(t)
		a.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
		b.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
		b.apply(a.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b')",
			"INSERT INTO cascade_c VALUES (10, 1), (11, 1)", "INSERT INTO null_c VALUES (20, 1)"))
		other := a.capture("INSERT INTO other VALUES (1)")

		tx := a.begin().(*Tx)
		if read {
			exec(t, tx, "SELECT count(*) FROM cascade_c")
		}
		exec(t, tx, "DELETE FROM p WHERE id = 1")
		exec(t, tx, "INSERT INTO cascade_c VALUES (12, 2)")
		a.apply(other) // the applier parks the idle tx
		tx.mu.Lock()
		parked := tx.parked
		tx.mu.Unlock()
		if !parked {
			t.Fatal("the transaction was not parked")
		}
		wantRows(t, exec(t, tx, "SELECT id FROM cascade_c ORDER BY id").rows, row(int64(12)))
		a.apply(other) // parked again
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		b.apply(other)
		if items := b.apply(ws); items[0].Err != nil {
			t.Fatalf("read %v: apply: %v", read, items[0].Err)
		}
		wantRows(t, b.query("SELECT id, pid FROM cascade_c ORDER BY id"), row(int64(12), int64(2)))
		wantRows(t, b.query("SELECT id, pid FROM null_c"), row(int64(20), nil))
		if !hasSharedKey(ws, writeset.EncodeKey("p", int64(2))) {
			t.Fatalf("keys %v lack the parent of the new child", fmtKeys(ws.Keys))
		}
	}
}

// A table that references itself: a key write there may cascade to other
// rows of the same table, so it is not written in image mode, and the
// cascaded rows are in the write set.
func TestFKSelfReferenceCascade(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{a, b} {
		e.ddl("CREATE TABLE tree (id INTEGER PRIMARY KEY, up INTEGER REFERENCES tree(id) ON DELETE CASCADE)")
	}
	b.apply(a.commit("INSERT INTO tree VALUES (1, NULL)", "INSERT INTO tree VALUES (2, 1)", "INSERT INTO tree VALUES (3, 2)"))
	for _, stmts := range [][]string{
		{"DELETE FROM tree WHERE id = 1"},
		{"SELECT count(*) FROM tree", "DELETE FROM tree WHERE id = 1"},
	} {
		tx := a.begin()
		for _, s := range stmts {
			exec(t, tx, s)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		if len(ws.Keys) != 3 {
			t.Fatalf("%v: keys %v, want the three rows", stmts, fmtKeys(ws.Keys))
		}
	}
	ws := a.commit("DELETE FROM tree WHERE id = 2")
	if items := b.apply(ws); items[0].Err != nil {
		t.Fatal(items[0].Err)
	}
	wantRows(t, b.query("SELECT id FROM tree"), row(int64(1)))
}

// A child insert whose parent was deleted by a commit after the
// transaction's snapshot fails with 40001, as in PostgreSQL: the insert runs
// on the latest state, where the parent is gone, while the transaction
// certifies from its snapshot (it wrote before, so its snapshot stays). One
// that has not written yet moves its snapshot forward first (nothing it
// read changed: moveforward.go), and there the parent is simply absent:
// 23503, as for a transaction begun after the delete.
func TestFKParentDeletedSinceSnapshot(t *testing.T) {
	e := openFK(t)
	e.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO p VALUES (1, 'a')")
	tx := e.begin()
	exec(t, tx, "INSERT INTO other VALUES (1)")
	e.commit("DELETE FROM p WHERE id = 1") // parks tx, then applies
	_, err := execErr(tx, "INSERT INTO cascade_c VALUES (1, 1)")
	wantCode(t, err, sqlerr.SerializationFailure)
	tx.Rollback()

	e.commit("INSERT INTO p VALUES (1, 'a')")
	tx = e.begin()
	exec(t, tx, "SELECT count(*) FROM other")
	e.commit("DELETE FROM p WHERE id = 1")
	_, err = execErr(tx, "INSERT INTO cascade_c VALUES (1, 1)")
	wantCode(t, err, sqlerr.ForeignKeyViolation)
}

// A parked transaction is re-run on the latest state with its foreign keys
// checked as the first time: a child whose parent a commit deleted
// meanwhile fails the re-run, and the transaction with it (40001).
func TestFKReRunAfterParentDeleted(t *testing.T) {
	e := openFK(t)
	e.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b')")
	tx := e.begin()
	exec(t, tx, "INSERT INTO cascade_c VALUES (1, 1)")
	e.commit("DELETE FROM p WHERE id = 1") // parks tx, then applies
	_, err := execErr(tx, "INSERT INTO cascade_c VALUES (2, 2)")
	wantCode(t, err, sqlerr.SerializationFailure)
	wantRows(t, e.query("SELECT id FROM cascade_c"))
}

// DROP TABLE of a referenced table is refused (2BP01), as in PostgreSQL
// without CASCADE; once its children are gone it is not.
func TestFKDropReferencedTable(t *testing.T) {
	e := openFK(t)
	for _, s := range []string{"DROP TABLE p", "DROP TABLE IF EXISTS p"} {
		_, err := e.CheckDDL(context.Background(), s)
		wantCode(t, err, sqlerr.DependentObjectsStillExist)
	}
	for _, s := range []string{"DROP TABLE cascade_c", "DROP TABLE null_c", "DROP TABLE restrict_c", "DROP TABLE p"} {
		e.ddl(s)
	}
}

// A transaction that only wrote child rows (no actions can run) and has
// read parks with its changes set aside, as any such transaction does; at
// COMMIT they are restored to look its parents up, and its write set still
// carries their keys.
func TestFKChildOnlyTxSpills(t *testing.T) {
	e := openFK(t)
	e.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b')")
	other := e.capture("INSERT INTO other VALUES (1)")
	tx := e.begin().(*Tx)
	exec(t, tx, "SELECT count(*) FROM p")
	exec(t, tx, "INSERT INTO restrict_c VALUES (1, 'b')")
	e.apply(other) // parks tx
	tx.mu.Lock()
	spilled := tx.parked && tx.spill != nil
	tx.mu.Unlock()
	if !spilled {
		t.Fatal("the transaction did not park with its changes set aside")
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if !hasSharedKey(ws, writeset.EncodeKey("p", int64(2))) {
		t.Fatalf("keys %v lack the parent's", fmtKeys(ws.Keys))
	}
}

// Savepoints with actions, parked after every step (with and without a read
// first): what the actions did inside a savepoint rolled back is in no write
// set, and what survives applies exactly on another engine. After an error
// (the statement log stops: the Tx can no longer be re-run) its changes are
// re-applied when it parks, and the actions running again must make that
// fail (40001) rather than change anything.
func TestFKSavepointsParked(t *testing.T) {
	for _, tc := range []struct{ read, fail bool }{{false, false}, {true, false}, {false, true}} {
		a, b := openFK(t), openFK(t)
		a.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
		b.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
		b.apply(a.commit("INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c')",
			"INSERT INTO cascade_c VALUES (10, 1), (11, 2), (12, 3)", "INSERT INTO null_c VALUES (20, 1), (21, 2)"))
		n := 0
		park := func() {
			n++
			a.apply(a.capture("INSERT INTO other VALUES (" + strconv.Itoa(n) + ")"))
		}
		tx := a.begin()
		steps := []string{"SAVEPOINT", "DELETE FROM p WHERE id = 1", "ROLLBACK TO 1", "DELETE FROM p WHERE id = 2",
			"SAVEPOINT", "DELETE FROM p WHERE id = 3", "RELEASE 2"}
		if tc.read {
			steps = append([]string{"SELECT count(*) FROM null_c"}, steps...)
		}
		spScenario(t, a, tx, steps, park)
		var ws *writeset.WriteSet
		var err error
		if tc.fail {
			ctx := context.Background()
			err = tx.Savepoint(ctx)
			if err == nil {
				_, err = execErr(tx, "INSERT INTO cascade_c VALUES (13, 3)")
				wantCode(t, err, sqlerr.ForeignKeyViolation)
				err = tx.RollbackTo(ctx, 2)
			}
			if err == nil {
				park()
				_, err = execErr(tx, "SELECT 1")
			}
		}
		if err == nil {
			ws, err = tx.WriteSet()
		}
		tx.Rollback()
		if tc.fail && sqlerr.Code(err) == sqlerr.SerializationFailure {
			continue
		}
		if err != nil {
			t.Fatalf("%+v: %v", tc, err)
		}
		for _, k := range []writeset.Key{writeset.EncodeKey("p", int64(1)), writeset.EncodeKey("cascade_c", int64(10)), writeset.EncodeKey("null_c", int64(20))} {
			if hasKey(ws, k) {
				t.Fatalf("%+v: key %q of a rolled-back action in %v", tc, k, fmtKeys(ws.Keys))
			}
		}
		for i := 1; i <= n; i++ {
			b.apply(b.capture("INSERT INTO other VALUES (" + strconv.Itoa(i) + ")"))
		}
		if items := b.apply(ws); items[0].Err != nil {
			t.Fatalf("%+v: apply: %v", tc, items[0].Err)
		}
		wantRows(t, b.query("SELECT id FROM p"), row(int64(1)))
		wantRows(t, b.query("SELECT id, pid FROM cascade_c"), row(int64(10), int64(1)))
		wantRows(t, b.query("SELECT id, coalesce(pid, -1) FROM null_c ORDER BY id"), row(int64(20), int64(1)), row(int64(21), int64(-1)))
	}
}
