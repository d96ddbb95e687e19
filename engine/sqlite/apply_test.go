package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Two engines: write sets captured on one reproduce its rows on the other.
func TestApplyOnSecondEngineReproduces(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	schema := "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, n DOUBLE PRECISION, z BYTEA)"
	a.ddl(schema)
	b.ddl(schema)
	var wss []*writeset.WriteSet
	for _, stmts := range [][]string{
		{"INSERT INTO t VALUES (1, 'a', 1.5, x'00ff'), (2, 'b', NULL, NULL), (3, 'c', 3, x'')"},
		{"UPDATE t SET v = v || '!' WHERE id < 3", "DELETE FROM t WHERE id = 3"},
		{"UPDATE t SET id = 7 WHERE id = 1"},
	} {
		wss = append(wss, a.commit(stmts...))
	}
	b.apply(wss...) // one batch
	const q = "SELECT id, v, n, z FROM t ORDER BY id"
	wantRows(t, b.query(q), a.query(q)...)
	wantRows(t, b.query(q), row(int64(2), "b!", nil, nil), row(int64(7), "a!", 1.5, []byte{0, 0xff}))
	if s, _ := b.AppliedSeqno(); s != b.seqno {
		t.Fatalf("applied seqno %d, want %d", s, b.seqno)
	}
}

// Write sets on the same row apply in log order; an out-of-order or repeated
// seqno is refused.
func TestApplyInOrder(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{a, b} {
		e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)")
	}
	var wss []*writeset.WriteSet
	wss = append(wss, a.commit("INSERT INTO t VALUES (1, 0)"))
	for i := 0; i < 5; i++ {
		wss = append(wss, a.commit("UPDATE t SET v = v + 1 WHERE id = 1"))
	}
	for _, ws := range wss {
		b.apply(ws) // one batch each
	}
	wantRows(t, b.query("SELECT v FROM t"), row(int64(5)))

	ws := a.commit("UPDATE t SET v = 100")
	for _, seq := range []uint64{b.seqno, b.seqno - 1} {
		err := b.Apply(context.Background(), []engine.ApplyItem{{Seqno: seq, WS: ws}}, seq)
		if err == nil {
			t.Fatalf("seqno %d applied again", seq)
		}
	}
	err := b.Apply(context.Background(), []engine.ApplyItem{{Seqno: b.seqno + 2, WS: ws}, {Seqno: b.seqno + 1, WS: ws}}, b.seqno+2)
	if err == nil {
		t.Fatal("out-of-order batch applied")
	}
	wantRows(t, b.query("SELECT v FROM t"), row(int64(5)))
}

// The applied seqno is committed with the batch: it survives a restart, an
// empty batch may advance it, and a batch that fails as a whole leaves both
// data and seqno as they were.
func TestAppliedSeqnoAtomicWithBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	a, b := openTest(t, Config{}), openTest(t, Config{Path: path})
	for _, e := range []*testEngine{a, b} {
		e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	}
	ins := a.commit("INSERT INTO t VALUES (1, 'a')")
	b.apply(ins)

	// upTo beyond the last item (the log had entries without write sets).
	ws2 := a.commit("INSERT INTO t VALUES (2, 'b')")
	if err := b.Apply(context.Background(), []engine.ApplyItem{{Seqno: b.seqno + 1, WS: ws2}}, b.seqno+5); err != nil {
		t.Fatal(err)
	}
	b.seqno += 5
	if err := b.Apply(context.Background(), nil, b.seqno+1); err != nil {
		t.Fatal(err)
	}
	b.seqno++
	if s, _ := b.AppliedSeqno(); s != b.seqno {
		t.Fatalf("applied seqno %d, want %d", s, b.seqno)
	}

	// A batch whose second item does not match local data (deleting a row
	// that is not there: certification let through what SQLite finds a
	// conflict) fails that item alone, as it would on every node holding
	// the same rows; the rest of the batch applies and the node goes on.
	good := a.commit("INSERT INTO t VALUES (3, 'c')")
	a.commit("INSERT INTO t VALUES (9, 'z')")
	bad := a.commit("DELETE FROM t WHERE id = 9") // row 9 never reached b
	garbage := &writeset.WriteSet{Tables: []string{"t"}, Changes: []byte("T\x02\x01\x00t\x00\x17garbage")}
	before := b.seqno
	items := []engine.ApplyItem{{Seqno: before + 1, WS: bad}, {Seqno: before + 2, WS: garbage}, {Seqno: before + 3, WS: good}}
	if err := b.Apply(context.Background(), items, before+3); err != nil {
		t.Fatal(err)
	}
	if sqlerr.Code(items[0].Err) != sqlerr.SerializationFailure || sqlerr.Code(items[1].Err) != sqlerr.DataCorrupted || items[2].Err != nil {
		t.Fatalf("item errors %v, %v, %v", items[0].Err, items[1].Err, items[2].Err)
	}
	if f, _ := b.FailedSeqnos(before+1, before+3); !f[before+1] || !f[before+2] || len(f) != 2 {
		t.Fatalf("failed seqnos %v", f)
	}
	b.seqno = before + 3
	wantRows(t, b.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(2)), row(int64(3)))

	// The engine still works, and everything survives a restart.
	want := b.seqno
	b.Close()
	b2 := openTest(t, Config{Path: path})
	if s, _ := b2.AppliedSeqno(); s != want {
		t.Fatalf("applied seqno after reopen %d, want %d", s, want)
	}
	wantRows(t, b2.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(2)), row(int64(3)))
	tx := b2.begin()
	if tx.Snapshot() != want {
		t.Fatalf("tx snapshot %d, want %d", tx.Snapshot(), want)
	}
}

// An item that fails deterministically (a secondary UNIQUE index) is rolled
// back alone, gets its Err, and is listed by FailedSeqnos; the rest of the
// batch applies.
func TestApplyItemFailureRollsBackOnlyThatItem(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	e := openTest(t, Config{Path: path})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, email TEXT)")
	e.ddl("CREATE UNIQUE INDEX t_email ON t (email)")
	// Both captured on the same snapshot: different keys, so both pass
	// certification, but the second violates the unique index.
	first := e.capture("INSERT INTO t VALUES (1, 'x@example.com')")
	second := e.capture("INSERT INTO t VALUES (2, 'x@example.com')", "INSERT INTO t VALUES (3, 'y@example.com')")
	third := e.capture("INSERT INTO t VALUES (4, 'z@example.com')")
	badDDL := &writeset.WriteSet{DDL: "CREATE TABLE t (id INTEGER PRIMARY KEY)", Tables: []string{"t"}}
	items := e.apply(first, second, badDDL, third)
	if items[0].Err != nil || items[3].Err != nil {
		t.Fatalf("unexpected item errors: %v, %v", items[0].Err, items[3].Err)
	}
	wantCode(t, items[1].Err, sqlerr.UniqueViolation)
	wantCode(t, items[2].Err, sqlerr.DuplicateTable)
	t.Logf("item errors: %v; %v", items[1].Err, items[2].Err)
	wantRows(t, e.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(4)))

	failed, err := e.FailedSeqnos(1, e.seqno)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]bool{items[1].Seqno: true, items[2].Seqno: true}
	if len(failed) != 2 || !failed[items[1].Seqno] || !failed[items[2].Seqno] {
		t.Fatalf("failed seqnos %v, want %v", failed, want)
	}
	if f, _ := e.FailedSeqnos(items[3].Seqno, items[3].Seqno+10); len(f) != 0 {
		t.Fatalf("failed seqnos outside range: %v", f)
	}
	e.Close()
	e2 := openTest(t, Config{Path: path})
	if f, _ := e2.FailedSeqnos(0, 100); len(f) != 2 {
		t.Fatalf("failed seqnos after reopen: %v", f)
	}
}

// A write set for a table that does not exist fails as an item (every node
// has the same schema at that position) instead of being skipped silently.
func TestApplyMissingTableIsItemError(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	a.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	ws := a.commit("INSERT INTO t VALUES (1)")
	items := b.apply(ws)
	wantCode(t, items[0].Err, sqlerr.UndefinedTable)
}

func TestApplyDDLTouchesAllWhenNoTables(t *testing.T) {
	e := openTest(t, Config{})
	items := e.apply(&writeset.WriteSet{DDL: "CREATE TABLE t (id INTEGER PRIMARY KEY)"})
	if items[0].Err != nil {
		t.Fatal(items[0].Err)
	}
	if !e.hist.changed(0, map[string]struct{}{"anything": {}}) {
		t.Fatal("a DDL without tables did not count as changing every table")
	}
}

// Apply's DDL goes through the same checks as CheckDDL.
func TestApplyDDLRefusalIsItemError(t *testing.T) {
	e := openTest(t, Config{})
	items := e.apply(&writeset.WriteSet{DDL: "CREATE TABLE ai (id INTEGER PRIMARY KEY AUTOINCREMENT)"})
	wantCode(t, items[0].Err, sqlerr.FeatureNotSupported)
	if rows := e.query("SELECT name FROM sqlite_schema WHERE name = 'ai'"); len(rows) != 0 {
		t.Fatal("refused table exists")
	}
}

// Row write sets before and after a DDL in one batch: the fast path applies
// the rows around the schema change in order.
func TestApplyBatchAcrossDDL(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{a, b} {
		e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	}
	first := a.commit("INSERT INTO t VALUES (1), (2)")
	const createU = "CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)"
	a.ddl(createU)
	second := a.commit("INSERT INTO u VALUES (5, 'five')", "DELETE FROM t WHERE id = 1")
	items := b.apply(first, &writeset.WriteSet{DDL: createU, Tables: []string{"u"}}, second)
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("seqno %d: %v", it.Seqno, it.Err)
		}
	}
	wantRows(t, b.query("SELECT id FROM t"), row(int64(2)))
	wantRows(t, b.query("SELECT id, v FROM u"), row(int64(5), "five"))
}

// A batch that runs out of disk space (here: SQLite's page limit, which
// fails the same way, SQLITE_FULL) fails whole with engine.ErrNoSpace and
// leaves nothing behind, so the same batch applies once space is freed.
func TestApplyOutOfSpaceFailsWholeAndCanBeRetried(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{a, b} {
		e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v BYTEA)")
	}
	small := a.commit("INSERT INTO t VALUES (1, x'01')")
	big := a.commit("INSERT INTO t VALUES (2, x'" + strings.Repeat("00", 200000) + "')")
	pragma := func(sql string) {
		t.Helper()
		if err := sqlitex.ExecuteTransient(b.applier.c, sql, nil); err != nil {
			t.Fatal(err)
		}
	}
	var pages int64
	if err := sqlitex.ExecuteTransient(b.applier.c, "PRAGMA page_count", &sqlitex.ExecOptions{
		ResultFunc: func(s *sqlite.Stmt) error { pages = s.ColumnInt64(0); return nil },
	}); err != nil {
		t.Fatal(err)
	}
	pragma(fmt.Sprintf("PRAGMA max_page_count = %d", pages+2))
	before := b.seqno
	items := []engine.ApplyItem{{Seqno: before + 1, WS: small}, {Seqno: before + 2, WS: big}}
	err := b.Apply(context.Background(), items, before+2)
	if !errors.Is(err, engine.ErrNoSpace) {
		t.Fatalf("got %v, want engine.ErrNoSpace", err)
	}
	if s, _ := b.AppliedSeqno(); s != before {
		t.Fatalf("applied seqno %d after the failed batch, want %d", s, before)
	}
	wantRows(t, b.query("SELECT count(*) FROM t"), row(int64(0)))

	pragma("PRAGMA max_page_count = 1073741823")
	for i := range items {
		items[i].Err = nil
	}
	if err := b.Apply(context.Background(), items, before+2); err != nil {
		t.Fatalf("retry after space was freed: %v", err)
	}
	b.seqno = before + 2
	wantRows(t, b.query("SELECT id, length(v) FROM t ORDER BY id"), row(int64(1), int64(1)), row(int64(2), int64(200000)))
}
