package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// openEngine opens an engine of node n1 on a new database of srv's.
func openEngine(t *testing.T) *Engine {
	t.Helper()
	f := &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}}
	return f.Open(t).(*Engine)
}

// query runs sql in a new local transaction and returns its rows.
func query(t *testing.T, e *Engine, sql string) [][]result.Value {
	t.Helper()
	var buf result.Buffer
	if err := e.Read(context.Background(), sql, &buf); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.Rows
}

// inspect runs sql on a backend of e's as e itself does, outside a
// client's statements: certa's own objects are in sight (query, as a
// client, does not see them: certaRows).
func inspect(t *testing.T, e *Engine, sql string) [][]result.Value {
	t.Helper()
	ctx := context.Background()
	c, err := e.acquire(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf result.Buffer
	err = run(ctx, c, sql, &buf, nil)
	e.finish(nil, c, err != nil, false, tempState{})
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.Rows
}

// handOver runs stmts in a local transaction and hands it over as a
// write set of this node with txid; it returns the transaction, its
// write set and its PostgreSQL transaction id.
func handOver(t *testing.T, e *Engine, txid uint64, stmts ...string) (engine.Tx, *writeset.WriteSet, string) {
	t.Helper()
	ctx := context.Background()
	tx, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	var xid result.Buffer
	if err := tx.Exec(ctx, "SELECT pg_current_xact_id()::text", &xid); err != nil {
		t.Fatal(err)
	}
	for _, s := range stmts {
		if err := tx.Exec(ctx, s, result.Discard); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	ws, err := tx.WriteSet()
	if err != nil || ws == nil {
		t.Fatalf("write set %v, %v", ws, err)
	}
	ws.Origin, ws.TxID = "n1", txid
	tx.HandOver(txid)
	return tx, ws, xid.Rows[0][0].(string)
}

// The origin's transaction commits at its write set's position, after the
// write sets before it and before those after it, and is not applied a
// second time; one its session gave up is applied as rows; one that blocks
// the applier is aborted (40001) and its rows applied at its position.
func TestCommitAtPosition(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	items := []engine.ApplyItem{{Seqno: 1, WS: &writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY, v text)")}}}
	if err := e.Apply(ctx, items, 1); err != nil || items[0].Err != nil {
		t.Fatal(err, items[0].Err)
	}
	_, other, _ := handOver(t, e, 100, "INSERT INTO t VALUES (2, 'other node')")
	e.takeHeld(other) // as if it came from another node
	other.Origin = "n2"

	tx, own, xid := handOver(t, e, 1, "INSERT INTO t VALUES (1, 'origin')")
	if rows := query(t, e, "SELECT count(*) FROM t"); rows[0][0] != int64(0) {
		t.Fatalf("a handed-over transaction is visible before its position: %v rows", rows[0][0])
	}
	items = []engine.ApplyItem{{Seqno: 2, WS: other}, {Seqno: 3, WS: own}}
	if err := e.Apply(ctx, items, 4); err != nil || items[0].Err != nil || items[1].Err != nil {
		t.Fatal(err, items[0].Err, items[1].Err)
	}
	rows := query(t, e, "SELECT id, xmin::text FROM t ORDER BY id")
	if len(rows) != 2 || rows[0][1] != xid {
		t.Fatalf("rows %v: want row 1 written by the origin's own transaction %s", rows, xid)
	}
	if n, err := e.AppliedSeqno(); err != nil || n != 4 {
		t.Fatalf("applied seqno %d, %v; want 4", n, err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	// Given up before its position (the session's commit timed out): its
	// rows are applied there.
	tx, gaveUp, xid := handOver(t, e, 2, "INSERT INTO t VALUES (3, 'gave up')")
	tx.Rollback()
	items = []engine.ApplyItem{{Seqno: 5, WS: gaveUp}}
	if err := e.Apply(ctx, items, 5); err != nil || items[0].Err != nil {
		t.Fatal(err, items[0].Err)
	}
	if rows := query(t, e, "SELECT xmin::text FROM t WHERE id = 3"); len(rows) != 1 || rows[0][0] == xid {
		t.Fatalf("row 3: %v; want it applied from the write set", rows)
	}

	// Held, later in the log, and holding a row an earlier write set needs.
	otherTx, earlier, _ := handOver(t, e, 101, "UPDATE t SET v = 'earlier' WHERE id = 1")
	e.takeHeld(earlier)
	earlier.Origin = "n2"
	otherTx.Rollback()
	tx, blocker, _ := handOver(t, e, 3, "UPDATE t SET v = 'held' WHERE id = 1")
	done := make(chan error, 1)
	items = []engine.ApplyItem{{Seqno: 6, WS: earlier}, {Seqno: 7, WS: blocker}}
	go func() { done <- e.Apply(ctx, items, 7) }()
	select {
	case err := <-done:
		if err != nil || items[0].Err != nil || items[1].Err != nil {
			t.Fatal(err, items[0].Err, items[1].Err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Apply waited behind a held transaction")
	}
	// (Certification would refuse the held write set: it wrote row 1 after
	// the earlier one. Applied here without it, it applies as rows.)
	if rows := query(t, e, "SELECT v FROM t ORDER BY id"); rows[0][0] != "held" {
		t.Fatalf("rows %v", rows)
	}
	if err := tx.Exec(ctx, "SELECT 1", result.Discard); sqlerr.Code(err) != sqlerr.SerializationFailure || !errors.Is(err, engine.ErrAbortedForApply) {
		t.Fatalf("the aborted transaction's next statement: %v, want 40001", err)
	}
}

// certa's own frames leave an error's CONTEXT; the client's stay.
func TestWithoutCertaContext(t *testing.T) {
	for _, c := range []struct{ where, want string }{
		{"", ""},
		{"PL/pgSQL function certa.refuse_uncaptured() line 6 at RAISE", ""},
		{"PL/pgSQL function certa.refuse_fault(text,text,regclass,name) line 7 at RAISE\nSQL statement \"SELECT certa.refuse_fault(tag, f.fault, f.rel, f.trg)\"\nPL/pgSQL function certa.equip_tables(text,oid[],oid[]) line 11 at PERFORM\nSQL statement \"SELECT certa.equip_tables(tg_tag, touched,\n\t\tSELECT 1\n\t\tUNION ALL SELECT 2)\"\nPL/pgSQL function certa.verify_capture() line 66 at PERFORM\nSQL statement \"CREATE UNLOGGED TABLE t (a int)\"\nPL/pgSQL function run_ddl(text) line 3 at EXECUTE",
			"SQL statement \"CREATE UNLOGGED TABLE t (a int)\"\nPL/pgSQL function run_ddl(text) line 3 at EXECUTE"},
		{"PL/pgSQL function f() line 2 at RAISE\nPL/pgSQL function certa.x() line 1 at PERFORM", "PL/pgSQL function f() line 2 at RAISE\nPL/pgSQL function certa.x() line 1 at PERFORM"},
	} {
		if got := withoutCertaContext(c.where); got != c.want {
			t.Errorf("withoutCertaContext(%q) = %q, want %q", c.where, got, c.want)
		}
	}
}
