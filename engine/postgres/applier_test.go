package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// captureTx runs stmts in a capturing transaction on c and returns its
// write set (rows and keys); commit says whether the transaction commits
// on c (the origin) or rolls back (its write set then only travels).
func captureTx(t *testing.T, c *pgconn.PgConn, ts *tables, commit bool, stmts ...string) *writeset.WriteSet {
	t.Helper()
	mustExec(t, c, "BEGIN ISOLATION LEVEL REPEATABLE READ")
	for _, s := range stmts {
		mustExec(t, c, s)
	}
	cap, err := capture(context.Background(), c, ts)
	if err != nil {
		t.Fatal(err)
	}
	if commit {
		mustExec(t, c, "COMMIT")
	} else {
		mustExec(t, c, "ROLLBACK")
	}
	ws := &writeset.WriteSet{Keys: cap.keys, Tables: cap.tables, Changes: appendRows(nil, cap.rows), Schema: cap.schema}
	ws.Normalize()
	return ws
}

// A batch applies in one transaction and records its seqno; an item that
// fails deterministically (a duplicate key, rows that no longer match, a
// DDL statement PostgreSQL refuses) fails alone with PostgreSQL's
// SQLSTATE and the others apply; DDL applied by the applier gives new
// tables their capture trigger.
func TestApplyItems(t *testing.T) {
	o, r := startServer(t)
	origin, replica := o.client, r.applier
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE t (id int PRIMARY KEY, v text UNIQUE)"))
	}
	var ts, tsr tables
	if n, err := appliedSeqno(ctx, replica); err != nil || n != 0 {
		t.Fatalf("applied seqno of a new database: %d %v", n, err)
	}
	w1 := captureTx(t, origin, &ts, false, "INSERT INTO t VALUES (1, 'a')")
	w2 := captureTx(t, origin, &ts, false, "INSERT INTO t VALUES (2, 'a')") // same unique v
	w3 := captureTx(t, origin, &ts, false, "INSERT INTO t VALUES (3, 'c')")
	items := []engine.ApplyItem{{Seqno: 1, WS: w1}, {Seqno: 2, WS: w2}, {Seqno: 3, WS: w3}}
	if err := applyItems(ctx, replica, &tsr, items, 3, testToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	if items[0].Err != nil || sqlerr.Code(items[1].Err) != sqlerr.UniqueViolation || items[2].Err != nil {
		t.Fatalf("item errors %v, %v, %v; want only the second, 23505", items[0].Err, items[1].Err, items[2].Err)
	}
	if got := rowsOf(t, replica, "t"); !slices.Equal(got, []string{"(1,a)", "(3,c)"}) {
		t.Fatalf("rows %q", got)
	}
	if n, err := appliedSeqno(ctx, replica); err != nil || n != 3 {
		t.Fatalf("applied seqno %d %v, want 3", n, err)
	}

	// An update of a row the replica does not have, and DDL that fails
	// and that succeeds; an empty batch moves the seqno.
	mustExec(t, origin, "INSERT INTO t VALUES (9, 'z')")
	w4 := captureTx(t, origin, &ts, false, "UPDATE t SET v = 'y' WHERE id = 9")
	items = []engine.ApplyItem{
		{Seqno: 4, WS: w4},
		{Seqno: 5, WS: &writeset.WriteSet{DDL: ddlText("CREATE TABLE t (x int)")}},
		{Seqno: 6, WS: &writeset.WriteSet{DDL: ddlText("CREATE TABLE u (id bigint PRIMARY KEY)")}},
	}
	if err := applyItems(ctx, replica, &tsr, items, 6, testToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	if sqlerr.Code(items[0].Err) != sqlerr.SerializationFailure || sqlerr.Code(items[1].Err) != "42P07" || items[2].Err != nil {
		t.Fatalf("item errors %v, %v, %v; want 40001, 42P07, none", items[0].Err, items[1].Err, items[2].Err)
	}
	if n := mustExec(t, replica, "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'u'::regclass AND tgname = ' certa_capture'")[0].Rows[0][0]; string(n) != "1" {
		t.Fatalf("table made by the applier has %s capture triggers", n)
	}
	if err := applyItems(ctx, replica, &tsr, nil, 8, testToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n, _ := appliedSeqno(ctx, replica); n != 8 {
		t.Fatalf("applied seqno %d, want 8", n)
	}
	// The clean-up keeps only the largest applied seqno.
	if err := gcCapture(ctx, r.admin); err != nil {
		t.Fatal(err)
	}
	if rows := mustExec(t, replica, "SELECT count(*), max(seqno) FROM certa.applied")[0].Rows[0]; string(rows[0]) != "1" || string(rows[1]) != "8" {
		t.Fatalf("certa.applied after the clean-up: %s rows, max %s", rows[0], rows[1])
	}
	// A write set captured on the replica's new table applies on the origin.
	mustExec(t, o.admin, asClient("CREATE TABLE u (id bigint PRIMARY KEY)"))
	var tsc tables
	w := captureTx(t, r.client, &tsc, true, "INSERT INTO u VALUES (1), (2)")
	if err := applyItems(ctx, o.applier, &ts, []engine.ApplyItem{{Seqno: 1, WS: w}}, 1, testToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := rowsOf(t, o.admin, "u"); !slices.Equal(got, []string{"(1)", "(2)"}) {
		t.Fatalf("rows of u %q", got)
	}

	// Rows only (the pipelined path): an update of a row the replica
	// does not have changes nothing, which is no error to PostgreSQL; it
	// must fail alone with 40001, not commit with the batch.
	mustExec(t, origin, "INSERT INTO t VALUES (20, 'p'), (30, 'r')")
	mustExec(t, replica, "INSERT INTO t VALUES (30, 'r')")
	w10 := captureTx(t, origin, &ts, true, "INSERT INTO t VALUES (10, 'k')")
	w11 := captureTx(t, origin, &ts, false, "UPDATE t SET v = 'q' WHERE id = 20")
	w12 := captureTx(t, origin, &ts, true, "INSERT INTO t VALUES (12, 'm')", "DELETE FROM t WHERE id = 30")
	items = []engine.ApplyItem{{Seqno: 10, WS: w10}, {Seqno: 11, WS: w11}, {Seqno: 12, WS: w12}}
	if err := applyItems(ctx, replica, &tsr, items, 12, testToken, nil, nil); err != nil {
		t.Fatal(err)
	}
	if items[0].Err != nil || sqlerr.Code(items[1].Err) != sqlerr.SerializationFailure || items[2].Err != nil {
		t.Fatalf("item errors %v, %v, %v; want only the second, 40001", items[0].Err, items[1].Err, items[2].Err)
	}
	if got := rowsOf(t, replica, "t"); !slices.Equal(got, []string{"(1,a)", "(10,k)", "(12,m)", "(3,c)"}) {
		t.Fatalf("rows %q", got)
	}
	if failed, err := failedSeqnos(ctx, replica, 10, 12); err != nil || len(failed) != 1 || !failed[11] {
		t.Fatalf("failed seqnos %v %v, want 11", failed, err)
	}
	// And without a failure, the batch applies whole.
	w13 := captureTx(t, origin, &ts, false, "UPDATE t SET v = 'n' WHERE id = 10", "DELETE FROM t WHERE id = 12", "INSERT INTO t VALUES (13, 'o')")
	items = []engine.ApplyItem{{Seqno: 13, WS: w13}}
	if err := applyItems(ctx, replica, &tsr, items, 14, testToken, nil, nil); err != nil || items[0].Err != nil {
		t.Fatalf("apply: %v, item: %v", err, items[0].Err)
	}
	if got := rowsOf(t, replica, "t"); !slices.Equal(got, []string{"(1,a)", "(10,n)", "(13,o)", "(3,c)"}) {
		t.Fatalf("rows %q", got)
	}
	if n, _ := appliedSeqno(ctx, replica); n != 14 {
		t.Fatalf("applied seqno %d, want 14", n)
	}
}

// A table without a primary key replicates by whole rows: a row's key is
// its values (identical rows share it), and the replica updates or
// deletes one row with the old values, so both hold the same rows, also
// with duplicates and values whose text depends on the session's
// settings.
func TestWholeRowTables(t *testing.T) {
	o, r := startServer(t)
	origin, replica := o.client, r.applier
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE h (v int, at timestamptz, f float8, j json)"))
		mustExec(t, c, asClient("CREATE TABLE n (x numeric, s text)"))
	}
	mustExec(t, origin, "SET TimeZone = 'Asia/Tokyo'; SET extra_float_digits = 0")
	var ts, tsr tables
	for _, stmts := range [][]string{
		{"INSERT INTO h VALUES (1, '2024-01-01 10:00+00', 0.1::float8 + 0.2::float8, '{\"a\": 1}'), (1, '2024-01-01 10:00+00', 0.1::float8 + 0.2::float8, '{\"a\": 1}'), (2, NULL, NULL, NULL)"},
		{"UPDATE h SET v = 3 WHERE ctid = (SELECT min(ctid) FROM h WHERE v = 1)"},
		{"DELETE FROM h WHERE v = 2", "INSERT INTO h (v) VALUES (4)"},
		{"UPDATE h SET f = f * 2"},
		{"DELETE FROM h WHERE v = 1"},
		// Values equal for jsonb's = but not alike: numeric's scale.
		{"INSERT INTO n VALUES (1.00, 'a'), (1.00, 'a'), (1.0, 'a')"},
		{"DELETE FROM n WHERE x::text = '1.0'"},
		// A row changed twice, one put in and taken out, in one transaction.
		{"INSERT INTO n VALUES (5, 'b')", "UPDATE n SET x = x + 1", "UPDATE n SET x = x + 1", "INSERT INTO n VALUES (9, 'gone')", "DELETE FROM n WHERE s = 'gone'"},
		// Many rows, duplicates among them, changed in bulk.
		{"INSERT INTO n SELECT g % 700, 'many' FROM generate_series(1, 2500) g"},
		{"UPDATE n SET s = 'more' WHERE s = 'many' AND x < 300", "DELETE FROM n WHERE s = 'many' AND x::int % 3 = 0"},
		{"DELETE FROM n WHERE s IN ('many', 'more')"},
	} {
		ws := captureTx(t, origin, &ts, true, stmts...)
		mustExec(t, replica, "BEGIN; SET LOCAL session_replication_role = replica")
		rows, err := decodeRows(ws.Changes)
		if err != nil {
			t.Fatal(err)
		}
		if err := applyRows(ctx, replica, &tsr, rows, "", nil); err != nil {
			t.Fatalf("%q: %v", stmts, err)
		}
		mustExec(t, replica, "COMMIT")
		for _, table := range []string{"h", "n"} {
			if o, r := rowsOf(t, o.admin, table), rowsOf(t, replica, table); !slices.Equal(o, r) {
				t.Fatalf("after %q: %s\norigin  %q\nreplica %q", stmts, table, o, r)
			}
		}
	}
	// Identical rows share a key; the update of one writes its old key.
	ws := captureTx(t, origin, &ts, false, "INSERT INTO h (v) VALUES (7), (7)", "UPDATE h SET v = 8 WHERE v = 3")
	if len(ws.Keys) != 3 || ws.Tables[0] != "h" {
		t.Fatalf("keys %q tables %q: want the key of (7), and the old and new keys of the update", ws.Keys, ws.Tables)
	}
}
