package enginetest

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Apply against local transactions holding what it needs (brute-force
// abort). How an engine gets past a local transaction is its own (SQLite
// parks an idle one; PostgreSQL terminates its backend); what the contract
// guarantees is checked here: Apply does not wait long, and the local
// transaction can no longer commit what conflicts with the applied write
// set.
var abortTests = []subtest{
	{"IdleHolder", testAbortIdleHolder},
	{"IdleHolderOfOtherRows", testAbortIdleHolderOfOtherRows},
	{"BusyHolder", testAbortBusyHolder},
}

// applyBound is how long Apply may take next to a local transaction that
// holds what it needs. The contract says the engine's configured grace
// (100ms by default on SQLite); the bound leaves room for a loaded machine
// and still fails an Apply that waits for the local transaction to end.
const applyBound = 5 * time.Second

// applyWithin applies items, which must apply, up to the last one's seqno,
// and fails the test if Apply does not return within applyBound.
func (n *node) applyWithin(items []engine.ApplyItem) {
	n.t.Helper()
	upTo := items[len(items)-1].Seqno
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- n.e.Apply(ctx, items, upTo) }()
	select {
	case err := <-done:
		if err != nil {
			n.t.Fatalf("Apply up to %d: %v", upTo, err)
		}
	case <-time.After(applyBound):
		n.t.Fatalf("Apply waited more than %v behind a local transaction", applyBound)
	}
	n.t.Logf("Apply took %v", time.Since(start).Round(time.Millisecond))
	n.seqno = upTo
	wantApplied(n.t, items...)
}

// A local Tx that wrote a row and sits idle (its client thinking) does not
// hold up Apply of a write set changing the same row, and afterwards it
// cannot commit its change over the applied one (wantCannotCommitOver).
func testAbortIdleHolder(t *testing.T, f Factory) {
	n, local, remote := holder(t, f, 1)
	n.applyWithin(remote)
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"), row(int64(1), "remote"), row(int64(2), "b"))
	wantCannotCommitOver(t, local, "SELECT v FROM t WHERE id = 2", remote[0].Seqno, key("t", int64(1)))
}

// holder returns an engine with rows 1 and 2 in t, a local Tx that updated
// row id and holds it, and the item that updates row 1 at the next seqno
// (captured before the Tx began).
func holder(t *testing.T, f Factory, id int64) (*node, engine.Tx, []engine.ApplyItem) {
	t.Helper()
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)")
	remote := n.capture("UPDATE t SET v = 'remote' WHERE id = 1")
	local := n.begin()
	exec(t, local, "UPDATE t SET v = 'local' WHERE id = $1", id)
	return n, local, n.items(remote)
}

// wantCannotCommitOver checks that tx, which wrote or read row k before
// the write set at seqno changed it, cannot commit over that change:
// running next (a statement) fails with 40001 and then WriteSet fails too;
// or WriteSet fails with 40001; or the write set names k and has a
// snapshot before seqno, so that certification refuses it.
func wantCannotCommitOver(t *testing.T, tx engine.Tx, next string, seqno uint64, k writeset.Key) {
	t.Helper()
	if err := execErr(tx, next); err != nil {
		wantCode(t, next, err, sqlerr.SerializationFailure)
		_, wsErr := tx.WriteSet()
		wantSQLErr(t, "WriteSet after the statement failed", wsErr)
		t.Logf("the transaction failed at its next statement: %v", err)
		return
	}
	ws, err := tx.WriteSet()
	if err != nil {
		wantCode(t, "WriteSet", err, sqlerr.SerializationFailure)
		t.Logf("the transaction failed at WriteSet: %v", err)
		return
	}
	if ws == nil || ws.Snapshot >= seqno || !slices.Contains(ws.Keys, k) {
		t.Fatalf("write set %+v would pass certification after seqno %d changed row %q", ws, seqno, string(k))
	}
	t.Logf("the transaction's write set (snapshot %d < %d, with the row) fails certification", ws.Snapshot, seqno)
}

// An idle local Tx that wrote other rows than the applied write set does
// not hold Apply up either, and it goes on: nothing it touched changed.
func testAbortIdleHolderOfOtherRows(t *testing.T, f Factory) {
	n, local, remote := holder(t, f, 2)
	n.applyWithin(remote)
	exec(t, local, "INSERT INTO t VALUES (3, 'local', 3)")
	ws := writeSet(t, local)
	wantKeys(t, ws, key("t", int64(2)), key("t", int64(3)))
	local.Rollback()
	wantApplied(t, n.apply(ws)...)
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"),
		row(int64(1), "remote"), row(int64(2), "local"), row(int64(3), "local"))
}

// endless is a query that streams rows until it is stopped (or, on
// PostgreSQL, until x passes 2^31 after minutes); endlessCount one that
// counts them and returns no row.
const (
	endless      = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
	endlessCount = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)

// rowsStarted is a result.Writer that drops rows and tells when the first
// one came.
type rowsStarted struct {
	once    sync.Once
	started chan struct{}
}

func (w *rowsStarted) Columns([]result.Column) error { return nil }
func (w *rowsStarted) Row([]result.Value) error {
	w.once.Do(func() { close(w.started) })
	return nil
}
func (w *rowsStarted) Complete(string) error { return nil }
func (w *rowsStarted) Empty() error          { return nil }

// A local Tx that wrote a row and is busy in a statement does not hold up
// Apply of a write set changing that row beyond the engine's grace: it is
// brute-force aborted. Its statement fails, and its next statement and
// its WriteSet fail with 40001 wrapping engine.ErrAbortedForApply.
func testAbortBusyHolder(t *testing.T, f Factory) {
	n, local, remote := holder(t, f, 1)

	stmtCtx, stop := context.WithCancel(ctx)
	defer stop() // ends the statement if the engine did not
	w := &rowsStarted{started: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- local.Exec(stmtCtx, endless, w) }()
	select {
	case <-w.started:
	case err := <-done:
		t.Fatalf("the endless statement ended: %v", err)
	case <-time.After(applyBound):
		t.Fatal("the endless statement sent no row")
	}
	n.applyWithin(remote)
	select {
	case err := <-done:
		wantSQLErr(t, "the statement running while Apply needed its row", err)
	case <-time.After(applyBound):
		t.Fatal("the statement ran on after Apply")
	}
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"), row(int64(1), "remote"), row(int64(2), "b"))

	err := execErr(local, "SELECT v FROM t")
	wantCode(t, "the next statement after a brute-force abort", err, sqlerr.SerializationFailure)
	if !errors.Is(err, engine.ErrAbortedForApply) {
		t.Errorf("the next statement's error %v does not wrap engine.ErrAbortedForApply", err)
	}
	_, err = local.WriteSet()
	wantCode(t, "WriteSet after a brute-force abort", err, sqlerr.SerializationFailure)
}
