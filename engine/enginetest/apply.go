package enginetest

import (
	"reflect"
	"testing"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Engine.Apply, AppliedSeqno, FailedSeqnos and CheckChanges.
var applyTests = []subtest{
	{"ReproducesWriteSets", testApplyReproduces},
	{"RecordsUpTo", testApplyRecordsUpTo},
	{"FailedItemAlone", testApplyFailedItemAlone},
	{"DuplicateKeyFails", testApplyDuplicateKey},
	{"CheckChanges", testCheckChanges},
	{"WholeTableWrites", testWholeTableWrites},
}

// Write sets captured on one engine, applied in one batch on another,
// reproduce its rows; each item's position becomes visible in log order.
func testApplyReproduces(t *testing.T, f Factory) {
	a, b := open(t, f), open(t, f)
	a.ddl(tableT)
	b.ddl(tableT)
	var wss []*writeset.WriteSet
	for _, stmts := range [][]string{
		{"INSERT INTO t VALUES (1, 'a', 1099511627776), (2, 'b', NULL), (3, NULL, 3)"},
		{"UPDATE t SET v = v || '!' WHERE id < 3", "DELETE FROM t WHERE id = 3"},
		{"UPDATE t SET id = 7 WHERE id = 1"},
		{"UPDATE t SET n = n + 1 WHERE id = 7", "INSERT INTO t VALUES (3, 'again', 3)"},
	} {
		wss = append(wss, a.commit(stmts...))
	}
	wantApplied(t, b.apply(wss...)...)
	const q = "SELECT id, v, n FROM t ORDER BY id"
	wantRows(t, b.query(q), row(int64(2), "b!", nil), row(int64(3), "again", int64(3)), row(int64(7), "a!", int64(1)<<40+1))
	wantRows(t, a.query(q), b.query(q)...)
	if f, err := b.e.FailedSeqnos(0, b.seqno); err != nil || len(f) != 0 {
		t.Fatalf("FailedSeqnos %v, %v; want none", f, err)
	}
}

// Statements without WHERE change every row, and their write sets say
// so: applied on another engine (and on the origin, as its commit does),
// each leaves the table as the origin's transaction saw it, with a primary
// key or without (where the engine takes rows there). Each runs in
// several transactions, so that one runs it as the engine may have kept
// it prepared from an earlier one (SQLite's truncate optimization, chosen
// when a statement is prepared, empties a table without recording a row).
func testWholeTableWrites(t *testing.T, f Factory) {
	a, b := open(t, f), open(t, f)
	const nopk = "CREATE TABLE nopk (id integer, v text, n bigint)"
	for _, n := range []*node{a, b} {
		n.ddl(tableT, nopk)
	}
	tx := a.begin()
	nopkTakesRows := execErr(tx, "INSERT INTO nopk VALUES (1, 'a', 1)") == nil
	tx.Rollback()
	for _, table := range []string{"t", "nopk"} {
		if table == "nopk" && !nopkTakesRows {
			continue // refused (testNoPrimaryKey)
		}
		q := "SELECT id, v, n FROM " + table + " ORDER BY id"
		for round := range 3 {
			for _, stmt := range []string{
				"INSERT INTO " + table + " VALUES (1, 'a', 1), (2, 'b', NULL), (3, NULL, 3)",
				"UPDATE " + table + " SET v = 'all'",
				"DELETE FROM " + table,
			} {
				tx := a.begin()
				exec(t, tx, stmt)
				want := exec(t, tx, q).Rows
				ws := writeSet(t, tx)
				tx.Rollback()
				if ws == nil {
					t.Fatalf("round %d, %s: no write set", round, stmt)
				}
				wantApplied(t, a.apply(ws)...)
				wantApplied(t, b.apply(ws)...)
				for name, n := range map[string]*node{"origin": a, "other": b} {
					if got := n.query(q); !sameRows(got, want) {
						t.Fatalf("round %d, %s: %s has %v, the transaction saw %v", round, stmt, name, got, want)
					}
				}
			}
		}
	}
}

// Apply records upTo as the applied seqno: beyond the last item, and with
// no items at all (log entries without write sets).
func testApplyRecordsUpTo(t *testing.T, f Factory) {
	n := open(t, f)
	n.applyItems(nil, 5)
	n.applyItems([]engine.ApplyItem{}, 6)
	n.applyItems(n.items(n.ddlWriteSet(tableT)), 10)
	ws := n.capture("INSERT INTO t VALUES (1, 'a', 1)")
	if ws.Snapshot != 10 {
		t.Fatalf("write set snapshot %d, want 10", ws.Snapshot)
	}
	n.applyItems(n.items(ws), 20)
	wantRows(t, n.query("SELECT id FROM t"), row(int64(1)))
	tx := n.begin()
	if s := tx.Snapshot(); s != 20 {
		t.Fatalf("Tx snapshot %d, want 20", s)
	}
}

// An item that fails deterministically (here a unique index its row
// violates; certification let it through: its key differs) gets Err, a
// *sqlerr.Error with PostgreSQL's SQLSTATE, and leaves nothing behind; the
// other items of the batch apply; FailedSeqnos reports it.
func testApplyFailedItemAlone(t *testing.T, f Factory) {
	n := open(t, f)
	n.ddl("CREATE TABLE t (id integer PRIMARY KEY, email text UNIQUE)")
	// All captured at the same snapshot.
	first := n.capture("INSERT INTO t VALUES (1, 'x@example.com')")
	second := n.capture("INSERT INTO t VALUES (2, 'x@example.com')", "INSERT INTO t VALUES (3, 'y@example.com')")
	third := n.capture("INSERT INTO t VALUES (4, 'z@example.com')")
	items := n.apply(first, second, third)
	if items[0].Err != nil || items[2].Err != nil {
		t.Fatalf("items that should apply failed: %v, %v", items[0].Err, items[2].Err)
	}
	wantCode(t, "the item violating a unique index", items[1].Err, sqlerr.UniqueViolation)
	wantRows(t, n.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(4)))
	failed, err := n.e.FailedSeqnos(1, n.seqno)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[uint64]bool{items[1].Seqno: true}; !reflect.DeepEqual(failed, want) {
		t.Fatalf("FailedSeqnos(1, %d) = %v, want %v", n.seqno, failed, want)
	}
	for _, r := range [][2]uint64{{items[2].Seqno, items[2].Seqno + 10}, {0, items[0].Seqno}} {
		if f, err := n.e.FailedSeqnos(r[0], r[1]); err != nil || len(f) != 0 {
			t.Fatalf("FailedSeqnos(%d, %d) = %v, %v; want none", r[0], r[1], f, err)
		}
	}
}

// A write set inserting a row whose key exists by then (two inserts of one
// key captured at the same snapshot: certification refuses the second, but
// Apply must not count on it) fails as an item, and the row keeps the first
// insert's values.
func testApplyDuplicateKey(t *testing.T, f Factory) {
	n := openT(t, f)
	first := n.capture("INSERT INTO t VALUES (1, 'first', 1)")
	second := n.capture("INSERT INTO t VALUES (1, 'second', 2)")
	other := n.capture("INSERT INTO t VALUES (2, 'other', 3)")
	items := n.apply(first, second, other)
	if items[0].Err != nil || items[2].Err != nil {
		t.Fatalf("items that should apply failed: %v, %v", items[0].Err, items[2].Err)
	}
	wantSQLErr(t, "the second insert of a key", items[1].Err)
	t.Logf("the second insert of a key failed with %v", items[1].Err)
	wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"), row(int64(1), "first"), row(int64(2), "other"))
	if f, err := n.e.FailedSeqnos(items[1].Seqno, items[1].Seqno); err != nil || !f[items[1].Seqno] {
		t.Fatalf("FailedSeqnos %v, %v; want %d", f, err, items[1].Seqno)
	}
}

// CheckChanges accepts the write sets the engine captures and refuses row
// changes that are not in its format.
func testCheckChanges(t *testing.T, f Factory) {
	n := openT(t, f)
	ws := n.capture("INSERT INTO t VALUES (1, 'a', 1)")
	if err := n.e.CheckChanges(ws); err != nil {
		t.Fatalf("CheckChanges of a captured write set: %v", err)
	}
	bad := *ws
	bad.Changes = []byte("\xffthese are not row changes in any engine's format\x00\x01")
	if err := n.e.CheckChanges(&bad); err == nil {
		t.Fatal("CheckChanges accepted garbage")
	}
}
