package enginetest

import (
	"reflect"
	"slices"
	"testing"

	"certa/writeset"
)

// engine.Tx: its snapshot and what it sees.
var txTests = []subtest{
	{"SnapshotIsAppliedSeqno", testSnapshotIsAppliedSeqno},
	{"ReadsItsSnapshot", testReadsItsSnapshot},
	{"SeesOwnChanges", testSeesOwnChanges},
	{"ChangesInvisibleUntilApplied", testChangesInvisibleUntilApplied},
	{"NoLostUpdate", testNoLostUpdate},
	{"Rollback", testRollback},
	{"ReadOnly", testReadOnly},
	{"Reads", testReads},
	{"ReadsCoverSelectedRows", testReadsCoverSelectedRows},
}

// Reads covers the rows a transaction read since TrackReads, also through
// a view, by their tables' names in keys (at the grain of rows or of
// tables), with its write set's keys those it wrote; not the tables it did
// not touch, nor those read before TrackReads on the same engine.
func testReads(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10)")
	n.ddl("CREATE TABLE u (id INTEGER PRIMARY KEY)")
	n.ddl("CREATE TABLE w (id INTEGER PRIMARY KEY)")
	n.ddl("CREATE TABLE x (id INTEGER PRIMARY KEY)")
	n.ddl("CREATE VIEW xv AS SELECT id FROM x")
	n.query("SELECT * FROM u") // before: not this transaction's
	tx := n.begin()
	if err := tx.TrackReads(ctx); err != nil {
		t.Fatalf("TrackReads: %v", err)
	}
	exec(t, tx, "SELECT v FROM t WHERE id = 1")
	exec(t, tx, "SELECT count(*) FROM xv")
	exec(t, tx, "INSERT INTO w VALUES (1)")
	ws := writeSet(t, tx)
	got, err := tx.Reads(ctx)
	if err != nil {
		t.Fatalf("Reads: %v", err)
	}
	covers := func(k writeset.Key) bool {
		return slices.Contains(got.Tables, k.Table()) || slices.Contains(got.Keys, k) || slices.Contains(ws.Keys, k) ||
			slices.ContainsFunc(got.Ranges, func(r writeset.KeyRange) bool { return r.Contains(k) })
	}
	for _, k := range []writeset.Key{writeset.EncodeKey("t", int64(1)), writeset.EncodeKey("w", int64(1))} {
		if !covers(k) {
			t.Errorf("Reads %+v do not cover %q", got, k)
		}
	}
	if !slices.Contains(got.Tables, "x") { // a count of every row of the view's table
		t.Errorf("Reads %+v: table x is not read whole", got)
	}
	named := slices.Clone(got.Tables)
	for _, k := range got.Keys {
		named = append(named, k.Table())
	}
	for _, r := range got.Ranges {
		named = append(named, r.Table())
	}
	if slices.Contains(named, "u") {
		t.Errorf("Reads %+v name table u, read before TrackReads", got)
	}
}

// After SetReadOnly a Tx refuses writes and row locks with 25006 and
// writes nothing; it still reads, and what it wrote before stays in its
// write set.
func testReadOnly(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10)")
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (2, 'b', 20)")
	if err := tx.SetReadOnly(ctx); err != nil {
		t.Fatalf("SetReadOnly: %v", err)
	}
	wantRows(t, exec(t, tx, "SELECT id FROM t ORDER BY id").Rows, row(int64(1)), row(int64(2)))
	for _, sql := range []string{"UPDATE t SET v = 'x' WHERE id = 1", "DELETE FROM t", "INSERT INTO t VALUES (3, 'c', 30)", "SELECT id FROM t WHERE id = 1 FOR UPDATE"} {
		if err := tx.Savepoint(ctx); err != nil {
			t.Fatal(err)
		}
		wantCode(t, sql, execErr(tx, sql), "25006")
		if err := tx.RollbackTo(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	ws := writeSet(t, tx)
	if want := []writeset.Key{writeset.EncodeKey("t", int64(2))}; !reflect.DeepEqual(ws.Keys, want) {
		t.Fatalf("write set keys %q, want %q", ws.Keys, want)
	}
}

// A Tx reads the state applied when it began, and its Snapshot says which;
// its write set carries the same snapshot.
func testSnapshotIsAppliedSeqno(t *testing.T, f Factory) {
	n := open(t, f)
	tx := n.begin()
	if s := tx.Snapshot(); s != 0 {
		t.Fatalf("Snapshot of a new engine's Tx: %d, want 0", s)
	}
	tx.Rollback()
	n.ddl(tableT)
	n.commit("INSERT INTO t VALUES (1, 'a', 10)")
	n.applyItems(nil, n.seqno+3) // log entries without write sets
	tx = n.begin()
	if s := tx.Snapshot(); s != n.seqno {
		t.Fatalf("Snapshot %d, want the applied seqno %d", s, n.seqno)
	}
	exec(t, tx, "UPDATE t SET v = 'b' WHERE id = 1")
	ws := writeSet(t, tx)
	if ws.Snapshot != tx.Snapshot() || ws.Snapshot != n.seqno {
		t.Fatalf("write set snapshot %d, Tx snapshot %d, want %d", ws.Snapshot, tx.Snapshot(), n.seqno)
	}
}

// A Tx keeps reading its snapshot while write sets are applied (snapshot
// isolation); a Tx begun later reads them.
func testReadsItsSnapshot(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)")
	old := n.begin()
	snap := old.Snapshot()
	const q = "SELECT id, v FROM t ORDER BY id"
	wantRows(t, exec(t, old, q).Rows, row(int64(1), "a"), row(int64(2), "b"))
	n.commit("UPDATE t SET v = 'changed' WHERE id = 1", "DELETE FROM t WHERE id = 2", "INSERT INTO t VALUES (3, 'c', 30)")
	wantRows(t, exec(t, old, q).Rows, row(int64(1), "a"), row(int64(2), "b"))
	if old.Snapshot() != snap {
		t.Fatalf("Snapshot moved from %d to %d", snap, old.Snapshot())
	}
	wantRows(t, n.query(q), row(int64(1), "changed"), row(int64(3), "c"))
}

// A Tx sees its own inserts, updates and deletes.
func testSeesOwnChanges(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)")
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (3, 'c', 30)")
	exec(t, tx, "UPDATE t SET v = 'changed' WHERE id = 1")
	exec(t, tx, "DELETE FROM t WHERE id = 2")
	exec(t, tx, "UPDATE t SET id = 4 WHERE id = 3")
	wantRows(t, exec(t, tx, "SELECT id, v FROM t ORDER BY id").Rows, row(int64(1), "changed"), row(int64(4), "c"))
}

// A Tx's changes are seen by no other Tx, before or after its write set is
// taken and it is rolled back, until the write set is applied.
func testChangesInvisibleUntilApplied(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10)")
	const q = "SELECT id, v FROM t ORDER BY id"
	before := n.begin()
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (2, 'b', 20)")
	exec(t, tx, "UPDATE t SET v = 'changed' WHERE id = 1")
	during := n.begin()
	for name, rows := range map[string]func() [][]any{
		"a Tx begun before": func() [][]any { return exec(t, before, q).Rows },
		"a Tx begun during": func() [][]any { return exec(t, during, q).Rows },
		"a Tx begun after":  func() [][]any { return n.query(q) },
		"Read":              func() [][]any { return n.read(q) },
	} {
		if got, want := rows(), [][]any{row(int64(1), "a")}; !sameRows(got, want) {
			t.Fatalf("%s sees %v while the Tx runs, want %v", name, got, want)
		}
	}
	ws := writeSet(t, tx)
	tx.Rollback()
	wantRows(t, n.query(q), row(int64(1), "a"))
	wantRows(t, n.read(q), row(int64(1), "a"))
	wantApplied(t, n.apply(ws)...)
	wantRows(t, n.query(q), row(int64(1), "changed"), row(int64(2), "b"))
	wantRows(t, exec(t, before, q).Rows, row(int64(1), "a"))
}

// A Tx that read a row and then updates it after a write set changed the
// row cannot commit over that change (no lost update under snapshot
// isolation): the update fails with 40001, or the write set fails
// certification.
func testNoLostUpdate(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1)")
	tx := n.begin()
	wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 1").Rows, row(int64(1)))
	n.commit("UPDATE t SET n = n + 10 WHERE id = 1")
	wantCannotCommitOver(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1", n.seqno, key("t", int64(1)))
}

// Rollback is safe to call twice; a Tx used after it fails.
func testRollback(t *testing.T, f Factory) {
	n := openT(t, f)
	tx := n.begin()
	exec(t, tx, "INSERT INTO t VALUES (1, 'a', 10)")
	for i := 0; i < 2; i++ {
		if err := tx.Rollback(); err != nil {
			t.Fatalf("Rollback %d: %v", i+1, err)
		}
	}
	wantSQLErr(t, "Exec after Rollback", execErr(tx, "SELECT 1"))
	wantRows(t, n.query("SELECT id FROM t"))
}

// Tx.WriteSet: what a transaction changed.
var writeSetTests = []subtest{
	{"NilWhenNothingChanged", testWriteSetNil},
	{"KeysAndTables", testWriteSetKeys},
	{"LockedRows", testWriteSetLockedRows},
	{"SameValueUpdateByKey", testWriteSetSameValueByKey},
	{"SameValueUpdate", testWriteSetSameValue},
}

// A Tx that changed nothing has no write set.
func testWriteSetNil(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10)")
	for _, stmts := range [][]string{
		nil,
		{"SELECT id, v FROM t"},
		{"UPDATE t SET v = 'x' WHERE id = 99", "DELETE FROM t WHERE id = 99"},
	} {
		if ws := n.capture(stmts...); ws != nil {
			t.Errorf("%q: write set %+v, want nil", stmts, ws)
		}
	}
}

// A write set names every row the Tx inserted, updated or deleted (a key
// update: the old key and the new), in writeset.EncodeKey's encoding, and
// the tables written; it carries the Tx's snapshot and row changes, and
// leaves Origin and TxID to the caller.
func testWriteSetKeys(t *testing.T, f Factory) {
	for _, c := range []struct {
		name   string
		stmts  []string
		keys   []writeset.Key
		tables []string
	}{
		{"insert", []string{"INSERT INTO t VALUES (4, 'd', 40)"},
			[]writeset.Key{key("t", int64(4))}, []string{"t"}},
		{"update", []string{"UPDATE t SET v = 'x' WHERE id IN (1, 2)"},
			[]writeset.Key{key("t", int64(1)), key("t", int64(2))}, []string{"t"}},
		{"delete", []string{"DELETE FROM t WHERE id = 3"},
			[]writeset.Key{key("t", int64(3))}, []string{"t"}},
		{"key update", []string{"UPDATE t SET id = 10 WHERE id = 1"},
			[]writeset.Key{key("t", int64(1)), key("t", int64(10))}, []string{"t"}},
		{"composite key", []string{"INSERT INTO k VALUES ('x', 5000000000, 'v')"},
			[]writeset.Key{writeset.EncodeKey("k", "x", int64(5000000000))}, []string{"k"}},
		{"two tables", []string{"INSERT INTO t VALUES (5, 'e', 50)", "DELETE FROM t WHERE id = 2",
			"UPDATE k SET v = 'w' WHERE a = 'p' AND b = 1"},
			[]writeset.Key{key("t", int64(5)), key("t", int64(2)), writeset.EncodeKey("k", "p", int64(1))}, []string{"k", "t"}},
		{"a row changed twice", []string{"INSERT INTO t VALUES (6, 'f', 60)", "UPDATE t SET v = 'g' WHERE id = 6"},
			[]writeset.Key{key("t", int64(6))}, []string{"t"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := open(t, f)
			n.ddl(tableT, "CREATE TABLE k (a text, b bigint, v text, PRIMARY KEY (a, b))")
			n.commit("INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)", "INSERT INTO k VALUES ('p', 1, 'v')")
			ws := n.capture(c.stmts...)
			if ws == nil {
				t.Fatal("no write set")
			}
			wantKeys(t, ws, c.keys...)
			if !reflect.DeepEqual(ws.Tables, c.tables) {
				t.Errorf("tables %q, want %q", ws.Tables, c.tables)
			}
			if ws.Snapshot != n.seqno {
				t.Errorf("snapshot %d, want %d", ws.Snapshot, n.seqno)
			}
			if len(ws.Changes) == 0 || ws.DDL != "" || ws.Origin != "" || ws.TxID != 0 {
				t.Errorf("write set %+v: want Changes, and no DDL, Origin or TxID", ws)
			}
		})
	}
}

// sameKeys captures each list of statements in a new Tx and compares its
// write set's keys.
func sameKeys(t *testing.T, n *node, cases []keysCase) {
	t.Helper()
	for _, c := range cases {
		ws := n.capture(c.stmts...)
		if ws == nil {
			t.Errorf("%q: no write set, want keys %s", c.stmts, fmtKeys(c.keys))
			continue
		}
		wantKeys(t, ws, c.keys...)
	}
}

type keysCase struct {
	stmts []string
	keys  []writeset.Key
}

// Rows a Tx locked (SELECT ... FOR UPDATE) are keys of its write set, as
// PostgreSQL's REPEATABLE READ counts them as written: a concurrent commit
// to one of them makes the Tx fail, first committer wins. (Changes may
// hold nothing for them.)
func testWriteSetLockedRows(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3)")
	sameKeys(t, n, []keysCase{
		{[]string{"SELECT v FROM t WHERE id = 1 FOR UPDATE"}, []writeset.Key{key("t", int64(1))}},
		{[]string{"SELECT v FROM t WHERE n >= 2 FOR UPDATE"}, []writeset.Key{key("t", int64(2)), key("t", int64(3))}},
		{[]string{"INSERT INTO t VALUES (4, 'd', 4)", "SELECT v FROM t WHERE id = 1 FOR UPDATE"},
			[]writeset.Key{key("t", int64(1)), key("t", int64(4))}},
	})
}

// A row an UPDATE set to the values it had was updated ("UPDATE 1") and is
// a key of the write set, as locked rows are: PostgreSQL fails it on a
// concurrent update of the row, and a no-op UPDATE is the usual way to make
// two transactions conflict under snapshot isolation. Here the UPDATE
// names one row by its key and is the Tx's first write.
func testWriteSetSameValueByKey(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)")
	sameKeys(t, n, []keysCase{
		{[]string{"UPDATE t SET v = 'a' WHERE id = 1"}, []writeset.Key{key("t", int64(1))}},
		{[]string{"SELECT count(*) FROM t", "UPDATE t SET v = v WHERE id = 2"}, []writeset.Key{key("t", int64(2))}},
	})
}

// The same as testWriteSetSameValueByKey, for an UPDATE that finds its rows
// by a predicate, or follows a write that is not by key.
func testWriteSetSameValue(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1), (2, 'b', 2)")
	tx := n.begin()
	if b := exec(t, tx, "UPDATE t SET v = v WHERE v = 'a'"); b.Tag != "UPDATE 1" {
		t.Fatalf("tag %q, want UPDATE 1", b.Tag)
	}
	tx.Rollback()
	sameKeys(t, n, []keysCase{
		{[]string{"UPDATE t SET v = v WHERE v = 'a'"}, []writeset.Key{key("t", int64(1))}},
		{[]string{"UPDATE t SET n = n WHERE id IN (1, 2)"}, []writeset.Key{key("t", int64(1)), key("t", int64(2))}},
		{[]string{"INSERT INTO t SELECT 3, 'c', 3", "UPDATE t SET v = v WHERE id = 1"},
			[]writeset.Key{key("t", int64(1)), key("t", int64(3))}},
	})
}
