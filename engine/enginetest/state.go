package enginetest

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// The engine's state as a whole: Snapshot and Restore, Checksums, a
// restart, Close.
var stateTests = []subtest{
	{"SnapshotRestore", testSnapshotRestore},
	{"RestoreGarbage", testRestoreGarbage},
	{"Checksums", testChecksums},
	{"Restart", testRestart},
	{"Close", testClose},
}

// checksums returns the engine's checksums, failing the test on error.
func (n *node) checksums() engine.Checksums {
	n.t.Helper()
	c, err := n.e.Checksums(ctx)
	if err != nil {
		n.t.Fatalf("Checksums: %v", err)
	}
	return c
}

// A snapshot of engine A restored into engine B gives B A's rows, applied
// seqno, failed seqnos and checksums as they were when the snapshot was
// taken, even if A applied more before it was written out. B's Tx open
// across the Restore fails; B applies on from the restored seqno.
func testSnapshotRestore(t *testing.T, f Factory) {
	a, b := open(t, f), open(t, f)
	a.ddl(tableT, "CREATE TABLE u (k text PRIMARY KEY, v text UNIQUE)")
	good := a.capture("INSERT INTO t VALUES (1, 'a', 1), (2, NULL, 1099511627776)", "INSERT INTO u VALUES ('x', 'one')")
	bad := a.capture("INSERT INTO u VALUES ('y', 'one')") // fails on the unique column
	items := a.apply(good, bad)
	if items[1].Err == nil {
		t.Fatal("the item violating a unique column applied")
	}
	a.applyItems(nil, a.seqno+2)
	want := a.checksums()
	snap, err := a.e.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.commit("INSERT INTO t VALUES (3, 'after the snapshot', 3)")
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatalf("WriteTo: %v", err)
	}
	snap.Release()
	snap.Release()

	b.ddl("CREATE TABLE old (id integer PRIMARY KEY)")
	b.commit("INSERT INTO old VALUES (1)")
	across := b.begin()
	exec(t, across, "SELECT id FROM old")
	if err := b.e.Restore(ctx, &buf); err != nil {
		t.Fatalf("Restore: %v", err)
	}
	b.seqno = want.Seqno
	b.wantApplied(want.Seqno)
	if got := b.checksums(); !reflect.DeepEqual(got, want) {
		t.Fatalf("checksums after Restore:\n got %+v\nwant %+v", got, want)
	}
	wantRows(t, b.query("SELECT id, v, n FROM t ORDER BY id"), row(int64(1), "a", int64(1)), row(int64(2), nil, int64(1)<<40))
	wantRows(t, b.query("SELECT k, v FROM u"), row("x", "one"))
	if f, err := b.e.FailedSeqnos(0, b.seqno); err != nil || !reflect.DeepEqual(f, map[uint64]bool{items[1].Seqno: true}) {
		t.Fatalf("FailedSeqnos after Restore %v, %v; want %d", f, err, items[1].Seqno)
	}
	wantSQLErr(t, "a Tx open across Restore", execErr(across, "SELECT id FROM old"))
	tx := b.begin()
	if s := tx.Snapshot(); s != want.Seqno {
		t.Fatalf("Tx snapshot after Restore %d, want %d", s, want.Seqno)
	}
	wantCode(t, "the table Restore replaced", execErr(tx, "SELECT id FROM old"), sqlerr.UndefinedTable)
	tx.Rollback()
	b.commit("INSERT INTO t VALUES (4, 'd', 4)")
	wantRows(t, b.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(2)), row(int64(4)))
}

// Restoring what no Snapshot wrote fails and changes nothing.
func testRestoreGarbage(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1)")
	want := n.checksums()
	for _, garbage := range []string{"", "not a snapshot of any engine, not even close to one"} {
		if err := n.e.Restore(ctx, strings.NewReader(garbage)); err == nil {
			t.Fatalf("Restore of %q succeeded", garbage)
		}
	}
	n.wantApplied(want.Seqno)
	if got := n.checksums(); !reflect.DeepEqual(got, want) {
		t.Fatalf("checksums after a failed Restore:\n got %+v\nwant %+v", got, want)
	}
	n.commit("INSERT INTO t VALUES (2, 'b', 2)")
}

// Two engines that applied the same write sets report equal checksums at
// the same seqno, one per user table with its row count (first, before
// what else the engine sums); a difference in one value changes its
// table's checksum and no other.
func testChecksums(t *testing.T, f Factory) {
	a, b := open(t, f), open(t, f)
	for _, n := range []*node{a, b} {
		n.ddl(tableT, "CREATE TABLE u (k text PRIMARY KEY)")
	}
	wss := []*writeset.WriteSet{
		a.commit("INSERT INTO t VALUES (1, 'x', 1), (2, NULL, 2), (3, 'z', NULL)"),
		a.commit("INSERT INTO u VALUES ('k')"),
	}
	wantApplied(t, b.apply(wss...)...)
	sa, sb := a.checksums(), b.checksums()
	if sa.Seqno != a.seqno || len(sa.Tables) < 2 || sa.Tables[0].Table != "t" || sa.Tables[0].Rows != 3 ||
		sa.Tables[1].Table != "u" || sa.Tables[1].Rows != 1 {
		t.Fatalf("checksums %+v: want seqno %d, t with 3 rows, u with 1", sa, a.seqno)
	}
	if !reflect.DeepEqual(sa, sb) {
		t.Fatalf("same write sets, different checksums:\n%+v\n%+v", sa, sb)
	}
	// The same position, different contents.
	wantApplied(t, a.apply(a.capture("UPDATE t SET v = 'y' WHERE id = 2"))...)
	wantApplied(t, b.apply(b.capture("UPDATE t SET v = 'Y' WHERE id = 2"))...)
	sa, sb = a.checksums(), b.checksums()
	if sa.Seqno != sb.Seqno || sa.Tables[0].Sum == sb.Tables[0].Sum || sa.Tables[1] != sb.Tables[1] {
		t.Fatalf("different values in t, at the same seqno:\n%+v\n%+v", sa, sb)
	}
}

// What Apply recorded survives a restart: rows, applied seqno, failed
// seqnos, and the snapshot new transactions read.
func testRestart(t *testing.T, f Factory) {
	n := open(t, f)
	n.ddl("CREATE TABLE t (id integer PRIMARY KEY, email text UNIQUE)")
	ok := n.capture("INSERT INTO t VALUES (1, 'x')")
	dup := n.capture("INSERT INTO t VALUES (2, 'x')")
	items := n.apply(ok, dup)
	if items[1].Err == nil {
		t.Fatal("the item violating a unique column applied")
	}
	n.applyItems(nil, n.seqno+3)
	want := n.checksums()
	n.reopen()
	n.wantApplied(want.Seqno)
	if got := n.checksums(); !reflect.DeepEqual(got, want) {
		t.Fatalf("checksums after restart:\n got %+v\nwant %+v", got, want)
	}
	if f, err := n.e.FailedSeqnos(0, n.seqno); err != nil || !reflect.DeepEqual(f, map[uint64]bool{items[1].Seqno: true}) {
		t.Fatalf("FailedSeqnos after restart %v, %v; want %d", f, err, items[1].Seqno)
	}
	tx := n.begin()
	if s := tx.Snapshot(); s != n.seqno {
		t.Fatalf("Tx snapshot after restart %d, want %d", s, n.seqno)
	}
	tx.Rollback()
	n.commit("INSERT INTO t VALUES (3, 'y')")
	wantRows(t, n.query("SELECT id, email FROM t ORDER BY id"), row(int64(1), "x"), row(int64(3), "y"))
}

// Close makes open transactions fail, and Begin and Apply after it.
func testClose(t *testing.T, f Factory) {
	n := openT(t, f)
	reader, writer := n.begin(), n.begin()
	exec(t, reader, "SELECT id FROM t")
	exec(t, writer, "INSERT INTO t VALUES (1, 'a', 1)")
	if err := n.e.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantSQLErr(t, "a reading Tx after Close", execErr(reader, "SELECT id FROM t"))
	wantSQLErr(t, "a writing Tx after Close", execErr(writer, "SELECT id FROM t"))
	if _, err := writer.WriteSet(); err == nil {
		t.Fatal("WriteSet after Close succeeded")
	}
	if tx, err := n.e.Begin(ctx); err == nil {
		tx.Rollback()
		t.Fatal("Begin after Close succeeded")
	}
	if err := n.e.Apply(ctx, nil, n.seqno+1); err == nil {
		t.Fatal("Apply after Close succeeded")
	}
	reader.Rollback()
	writer.Rollback()
}
