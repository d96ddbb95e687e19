package sqlite

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
	"certa/writeset"
)

func TestSnapshotRestoreRoundTrip(t *testing.T) {
	a := openTest(t, Config{})
	a.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, b BYTEA)")
	a.ddl("CREATE UNIQUE INDEX t_v ON t (v)")
	good := a.capture("INSERT INTO t VALUES (1, 'a', x'01'), (2, 'b', NULL)")
	bad := a.capture("INSERT INTO t VALUES (3, 'a', NULL)")
	items := a.apply(good, bad)[1:] // bad fails on the unique index: recorded as failed
	if items[0].Err == nil {
		t.Fatal("expected the item to fail")
	}

	snap, err := a.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Apply may continue while the snapshot is written out.
	a.commit("INSERT INTO t VALUES (4, 'd', NULL)")
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	snap.Release()

	b := openTest(t, Config{ApplyGrace: 20 * time.Millisecond})
	b.ddl("CREATE TABLE old (id INTEGER PRIMARY KEY)")
	b.commit("INSERT INTO old VALUES (1)")
	open := b.begin()                             // a reader open across the restore
	holder := b.begin()                           // a writer holding the lock
	exec(t, holder, "INSERT INTO old VALUES (2)") // (brute-force aborted)
	if err := b.Restore(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	b.seqno = items[0].Seqno
	if s, _ := b.AppliedSeqno(); s != b.seqno {
		t.Fatalf("restored applied seqno %d, want %d", s, b.seqno)
	}
	wantRows(t, b.query("SELECT id, v, b FROM t ORDER BY id"), row(int64(1), "a", []byte{1}), row(int64(2), "b", nil))
	if rows := b.query("SELECT name FROM sqlite_schema WHERE name = 'old'"); len(rows) != 0 {
		t.Fatal("old table survived the restore")
	}
	if f, _ := b.FailedSeqnos(0, 100); !f[items[0].Seqno] || len(f) != 1 {
		t.Fatalf("failed seqnos %v", f)
	}
	if code, _ := execErr(open, "SELECT 1"); code != sqlerr.SerializationFailure {
		t.Fatalf("transaction open across restore: %q", code)
	}
	if code, _ := execErr(holder, "SELECT 1"); code != sqlerr.SerializationFailure {
		t.Fatalf("lock holder across restore: %q", code)
	}
	// The restored engine keeps working: applies continue from the
	// restored seqno, in WAL mode, and local transactions see the new state.
	b.commit("INSERT INTO t VALUES (5, 'e', NULL)")
	tx := b.begin()
	if tx.Snapshot() != b.seqno {
		t.Fatalf("snapshot %d, want %d", tx.Snapshot(), b.seqno)
	}
	wantRows(t, exec(t, tx, "SELECT count(*) FROM t").rows, row(int64(3)))
	var mode string
	b.applier.execResult("PRAGMA journal_mode", func(s *sqlite.Stmt) { mode = s.ColumnText(0) })
	if mode != "wal" {
		t.Fatalf("journal mode after restore %q", mode)
	}

	// No temporary files are left next to the databases.
	for _, e := range []*testEngine{a, b} {
		files, _ := filepath.Glob(filepath.Join(filepath.Dir(e.cfg.Path), "*"))
		for _, f := range files {
			if strings.Contains(f, ".snapshot-") || strings.Contains(f, ".restore-") {
				t.Errorf("left behind: %s", f)
			}
		}
	}
}

// Restoring something that is not a certa snapshot fails and changes nothing.
func TestRestoreGarbage(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1)")
	if err := e.Restore(context.Background(), strings.NewReader("not a database at all, not even close to one")); err == nil {
		t.Fatal("restored garbage")
	}
	// A valid SQLite database without certa's tables.
	other := filepath.Join(t.TempDir(), "other.sqlite")
	bl, err := OpenBaseline(other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bl.Exec("CREATE TABLE x (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	bl.Close()
	data, _ := os.ReadFile(other)
	if err := e.Restore(context.Background(), bytes.NewReader(data)); err == nil {
		t.Fatal("restored a database without certa's tables")
	}
	wantRows(t, e.query("SELECT id FROM t"), row(int64(1)))
	if s, _ := e.AppliedSeqno(); s != e.seqno {
		t.Fatalf("applied seqno %d, want %d", s, e.seqno)
	}
	e.apply(&writeset.WriteSet{DDL: "CREATE TABLE u (id INTEGER PRIMARY KEY)"})
}
