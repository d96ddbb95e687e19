package enginetest

import (
	"testing"
)

// Tx.Savepoint, RollbackTo and Release (SQL SAVEPOINT, ROLLBACK TO
// SAVEPOINT, RELEASE SAVEPOINT).
var savepointTests = []subtest{
	{"Stack", testSavepointStack},
	{"AfterFailedExec", testSavepointAfterFailedExec},
	{"WriteSetKeepsWhatSurvives", testSavepointWriteSet},
}

// spStep is one step of a savepoint scenario: a savepoint command or a
// statement, then the ids the Tx sees.
type spStep struct {
	op   string // "savepoint", "rollback to", "release", or "" for sql
	mark int
	sql  string
	ids  []int64 // the ids of t the Tx sees afterwards
}

func runSavepointSteps(t *testing.T, n *node, steps []spStep) {
	t.Helper()
	tx := n.begin()
	for i, s := range steps {
		var err error
		switch s.op {
		case "savepoint":
			err = tx.Savepoint(ctx)
		case "rollback to":
			err = tx.RollbackTo(ctx, s.mark)
		case "release":
			err = tx.Release(ctx, s.mark)
		default:
			exec(t, tx, s.sql)
		}
		if err != nil {
			t.Fatalf("step %d (%s %d): %v", i, s.op, s.mark, err)
		}
		var want [][]any
		for _, id := range s.ids {
			want = append(want, row(id))
		}
		got := exec(t, tx, "SELECT id FROM t ORDER BY id").Rows
		if !sameRows(got, want) {
			t.Fatalf("step %d (%s %d %s): ids %v, want %v", i, s.op, s.mark, s.sql, got, want)
		}
	}
}

// Marks form a stack numbered from 1: RollbackTo(n) undoes what came after
// mark n, keeps mark n and drops the later ones; Release(n) drops mark n and
// the later ones and keeps the changes.
func testSavepointStack(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (10, 'x', 0)")
	runSavepointSteps(t, n, []spStep{
		{sql: "INSERT INTO t VALUES (1, 'a', 1)", ids: []int64{1, 10}},
		{op: "savepoint", ids: []int64{1, 10}}, // 1
		{sql: "INSERT INTO t VALUES (2, 'b', 2)", ids: []int64{1, 2, 10}},
		{op: "savepoint", ids: []int64{1, 2, 10}}, // 2
		{sql: "DELETE FROM t WHERE id = 10", ids: []int64{1, 2}},
		{op: "savepoint", ids: []int64{1, 2}}, // 3
		{sql: "INSERT INTO t VALUES (3, 'c', 3)", ids: []int64{1, 2, 3}},
		{op: "rollback to", mark: 2, ids: []int64{1, 2, 10}}, // drops 3
		{sql: "INSERT INTO t VALUES (4, 'd', 4)", ids: []int64{1, 2, 4, 10}},
		{op: "rollback to", mark: 2, ids: []int64{1, 2, 10}}, // 2 stayed
		{op: "release", mark: 2, ids: []int64{1, 2, 10}},
		{sql: "UPDATE t SET id = 5 WHERE id = 1", ids: []int64{2, 5, 10}},
		{op: "rollback to", mark: 1, ids: []int64{1, 10}},
		{op: "savepoint", ids: []int64{1, 10}}, // 2 again
		{sql: "INSERT INTO t VALUES (6, 'f', 6)", ids: []int64{1, 6, 10}},
		{op: "release", mark: 1, ids: []int64{1, 6, 10}}, // drops 1 and 2
	})
}

// RollbackTo may follow a failed Exec, and the Tx goes on.
func testSavepointAfterFailedExec(t *testing.T, f Factory) {
	n := openT(t, f)
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (1, 'a', 1)")
	if err := tx.Savepoint(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO t VALUES (2, 'b', 2)")
	if err := execErr(tx, "INSERT INTO t VALUES (1, 'dup', 0)"); err == nil {
		t.Fatal("duplicate key inserted")
	}
	if err := tx.RollbackTo(ctx, 1); err != nil {
		t.Fatalf("RollbackTo after a failed statement: %v", err)
	}
	exec(t, tx, "INSERT INTO t VALUES (3, 'c', 3)")
	wantRows(t, exec(t, tx, "SELECT id, v FROM t ORDER BY id").Rows, row(int64(1), "a"), row(int64(3), "c"))
	ws := writeSet(t, tx)
	tx.Rollback()
	wantKeys(t, ws, key("t", int64(1)), key("t", int64(3)))
	wantApplied(t, n.apply(ws)...)
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"), row(int64(1), "a"), row(int64(3), "c"))
}

// The write set holds exactly the changes that survive: rows changed only
// after a mark the Tx rolled back to are in none of it, released changes
// are.
func testSavepointWriteSet(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (10, 'x', 0), (11, 'y', 0)")
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (1, 'a', 1)")
	for _, step := range []func() error{
		func() error { return tx.Savepoint(ctx) },
		func() error { return execErr(tx, "UPDATE t SET v = 'gone' WHERE id = 10") },
		func() error { return execErr(tx, "INSERT INTO t VALUES (2, 'gone', 2)") },
		func() error { return tx.RollbackTo(ctx, 1) },
		func() error { return tx.Savepoint(ctx) }, // 2
		func() error { return execErr(tx, "UPDATE t SET v = 'kept' WHERE id = 11") },
		func() error { return tx.Release(ctx, 2) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	ws := writeSet(t, tx)
	tx.Rollback()
	wantKeys(t, ws, key("t", int64(1)), key("t", int64(11)))
	wantApplied(t, n.apply(ws)...)
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"),
		row(int64(1), "a"), row(int64(10), "x"), row(int64(11), "kept"))
}
