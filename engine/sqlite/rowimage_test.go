package sqlite

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
	"time"

	"certa/sqlerr"
	"certa/writeset"
)

// imageStmts exercise every net change image mode records: inserts,
// updates, deletes, a delete and re-insert, an insert deleted again, an
// update that changes nothing, a primary-key change, every value type.
var imageStmts = []string{
	"INSERT INTO t VALUES (10, 'ten', 1.5, x'0a0b', NULL)",
	"UPDATE t SET a = 'one!', d = d + 1 WHERE id = 1",
	"DELETE FROM t WHERE id = 2",
	"DELETE FROM t WHERE id = 3",
	"INSERT INTO t VALUES (3, 'three again', 3.5, NULL, 33)",
	"INSERT INTO t VALUES (11, 'gone', NULL, NULL, NULL)",
	"DELETE FROM t WHERE id = 11",
	"UPDATE t SET a = a WHERE id = 4",
	"UPDATE t SET b = 2.25 WHERE id = 1",
	"UPDATE u SET x = 'k2' WHERE x = 'k1' AND y = 1",
	"UPDATE u SET v = 'changed' WHERE x = 'k3' AND y = 3",
	"INSERT INTO u VALUES ('k4', 4, 'new')",
	"UPDATE t SET a = 'none' WHERE id = 99",
}

func imageTestEngine(t *testing.T) *testEngine {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT, b DOUBLE PRECISION, c BYTEA, d INTEGER)")
	e.ddl("CREATE INDEX t_d ON t (d)")
	e.ddl("CREATE TABLE u (x TEXT, y INTEGER, v TEXT, PRIMARY KEY (x, y))")
	e.commit("INSERT INTO t VALUES (1, 'one', 1.0, x'01', 1), (2, 'two', 2.0, NULL, 2), (3, 'three', 3.0, x'03', 3), (4, 'four', NULL, NULL, 4)")
	e.commit("INSERT INTO u VALUES ('k1', 1, 'a'), ('k3', 3, 'c')")
	return e
}

// changeRecords decodes a changeset into one line per change, sorted, with
// each table's header.
func changeRecords(t *testing.T, changeset []byte) []string {
	var out []string
	err := forEachChange(changeset, func(ch *rowChange) error {
		s := fmt.Sprintf("%s pk=%v op=%d", ch.table, ch.pk, ch.op)
		for _, vals := range [][]rowValue{ch.old, ch.new} {
			s += " |"
			for _, v := range vals {
				s += fmt.Sprintf(" %d:%d:%g:%q", v.kind, v.i, v.f, v.bytes)
			}
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// A transaction of key writes builds the same changeset from its row images
// as a SQLite session records, with the same keys, and it applies.
func TestImageChangesetMatchesSession(t *testing.T) {
	e := imageTestEngine(t)

	imaged := e.begin()
	for _, s := range imageStmts {
		exec(t, imaged, s)
	}
	if imaged.(*Tx).img == nil {
		t.Fatal("the transaction is not in image mode")
	}
	got, err := imaged.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	imaged.Rollback()

	session := e.begin()
	exec(t, session, "UPDATE t SET a = a WHERE d = 4") // not a key write: no image mode
	for _, s := range imageStmts {
		exec(t, session, s)
	}
	if session.(*Tx).img != nil {
		t.Fatal("the reference transaction is in image mode")
	}
	want, err := session.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	session.Rollback()

	if g, w := changeRecords(t, got.Changes), changeRecords(t, want.Changes); !slices.Equal(g, w) {
		t.Fatalf("image changeset:\n%q\nsession changeset:\n%q", g, w)
	}
	// SQLite's table headers: the primary-key columns by their position.
	for _, h := range [][]byte{{'T', 5, 1, 0, 0, 0, 0, 't', 0}, {'T', 3, 1, 2, 0, 'u', 0}} {
		if !bytes.Contains(want.Changes, h) || !bytes.Contains(got.Changes, h) {
			t.Fatalf("table header %q: in the session's changeset %v, in the images' %v",
				h, bytes.Contains(want.Changes, h), bytes.Contains(got.Changes, h))
		}
	}
	// The no-op update of row 4 certifies too (certifyKeyRows does so in
	// the usual path only for a moved snapshot).
	wantKeys := append(fmtKeys(want.Keys), fmtKeys([]writeset.Key{writeset.EncodeKey("t", int64(4))})...)
	slices.Sort(wantKeys)
	wantKeys = slices.Compact(wantKeys)
	g := fmtKeys(got.Keys)
	slices.Sort(g)
	if !slices.Equal(g, wantKeys) {
		t.Fatalf("keys %q, want %q", g, wantKeys)
	}
	e.apply(got)
	wantRows(t, e.query("SELECT id, a, b, d FROM t ORDER BY id"),
		row(int64(1), "one!", 2.25, int64(2)), row(int64(3), "three again", 3.5, int64(33)),
		row(int64(4), "four", nil, int64(4)), row(int64(10), "ten", 1.5, nil))
	wantRows(t, e.query("SELECT x, y, v FROM u ORDER BY x"),
		row("k2", int64(1), "a"), row("k3", int64(3), "changed"), row("k4", int64(4), "new"))
}

// A transaction in image mode that is parked between its statements writes
// its rows back when it goes on and takes its write set without the lock.
// When a row it wrote changed meanwhile, it is re-run as any parked
// transaction, and its write set still certifies that row from its first
// snapshot (certification refuses it).
func TestImagedHolderParks(t *testing.T) {
	e := imageTestEngine(t)
	tx := e.begin()
	exec(t, tx, "UPDATE t SET d = d + 10 WHERE id = 1")
	e.apply(e.capture("UPDATE t SET d = 20 WHERE id = 2")) // parks tx
	if !tx.(*Tx).parked {
		t.Fatal("the applier did not park the transaction")
	}
	exec(t, tx, "UPDATE t SET d = d + 10 WHERE id = 1") // sees its own write
	exec(t, tx, "DELETE FROM t WHERE id = 3")
	e.apply(e.capture("INSERT INTO t VALUES (5, 'five', NULL, NULL, 5)")) // parks tx again
	if r := exec(t, tx, "INSERT INTO t VALUES (3, 'back', NULL, NULL, 3)"); r.tag != "INSERT 0 1" {
		t.Fatalf("re-insert of a row the transaction deleted: %q", r.tag)
	}
	if tx.(*Tx).img == nil {
		t.Fatal("the transaction left image mode")
	}
	e.apply(e.capture("UPDATE t SET d = 40 WHERE id = 4")) // parks tx
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, d FROM t ORDER BY id"),
		row(int64(1), int64(21)), row(int64(2), int64(20)), row(int64(3), int64(3)),
		row(int64(4), int64(40)), row(int64(5), int64(5)))

	tx = e.begin()
	exec(t, tx, "UPDATE t SET d = d + 1 WHERE id = 1")
	snap := tx.Snapshot()
	e.apply(e.capture("UPDATE t SET d = 99 WHERE id = 1")) // parks tx; changes its row
	exec(t, tx, "UPDATE t SET d = d + 1 WHERE id = 2")
	if tx.(*Tx).img != nil {
		t.Fatal("still in image mode after its row changed")
	}
	if ws, err = tx.WriteSet(); err != nil {
		t.Fatal(err)
	}
	if ws.Snapshot != snap || !slices.Contains(fmtKeys(ws.Keys), fmtKeys([]writeset.Key{writeset.EncodeKey("t", int64(1))})[0]) {
		t.Fatalf("write set at snapshot %d with keys %q, want snapshot %d and row 1", ws.Snapshot, fmtKeys(ws.Keys), snap)
	}
}

// A statement that is not a key write ends image mode: the transaction
// re-runs its statements with a session and goes on as usual.
func TestImageModeEndsAtARead(t *testing.T) {
	e := imageTestEngine(t)
	tx := e.begin()
	exec(t, tx, "UPDATE t SET d = d + 10 WHERE id = 1")
	e.apply(e.capture("UPDATE t SET d = 20 WHERE id = 2")) // parks tx
	r := exec(t, tx, "SELECT d FROM t WHERE id IN (1, 2) ORDER BY id")
	if tx.(*Tx).img != nil {
		t.Fatal("still in image mode after a read")
	}
	wantRows(t, r.rows, row(int64(11)), row(int64(20)))
	exec(t, tx, "UPDATE t SET d = d + 1 WHERE id = 2")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, d FROM t WHERE id <= 2 ORDER BY id"), row(int64(1), int64(11)), row(int64(2), int64(21)))
}

// A key write the images cannot follow (a multi-row INSERT) ends image mode
// before it runs, and the transaction goes on with a session, through
// parking and a long statement its log cannot hold.
func TestImageModeEndsAtMultiRowInsert(t *testing.T) {
	e := imageTestEngine(t)
	tx := e.begin()
	exec(t, tx, "INSERT INTO t VALUES (20, 'a', NULL, NULL, 20)")
	if tx.(*Tx).img == nil {
		t.Fatal("a one-row INSERT did not start image mode")
	}
	long := "INSERT INTO t (id, a) VALUES (21, 'b')"
	for i := 22; i < 4000; i++ {
		long += fmt.Sprintf(", (%d, 'padding padding padding')", i)
	}
	exec(t, tx, long)
	if tx.(*Tx).img != nil {
		t.Fatal("still in image mode after a multi-row INSERT")
	}
	// Parks tx; a commit to its own table would fail it (its log is off:
	// it cannot be re-run), as without image mode.
	e.apply(e.capture("UPDATE u SET v = 'z' WHERE x = 'k3' AND y = 3"))
	exec(t, tx, "INSERT INTO t VALUES (5000, 'c', NULL, NULL, 5000)")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT count(*) FROM t WHERE id >= 20"), row(int64(3981)))
}

// A transaction in image mode that resumes on a newer state than its
// snapshot must not report what only that state holds: an INSERT of a key
// taken since, or an UPDATE or DELETE of a row deleted since, is a write
// conflict (40001), as in the usual path, not a unique violation or a
// statement that found nothing.
func TestImagedKeyWriteAfterConcurrentCommitIsAConflict(t *testing.T) {
	for _, c := range []struct{ concurrent, stmt string }{
		{"INSERT INTO t VALUES (7, 'theirs', NULL, NULL, 7)", "INSERT INTO t VALUES (7, 'ours', NULL, NULL, 7)"},
		{"DELETE FROM t WHERE id = 2", "UPDATE t SET d = 5 WHERE id = 2"},
		{"DELETE FROM t WHERE id = 2", "DELETE FROM t WHERE id = 2"},
	} {
		e := imageTestEngine(t)
		tx := e.begin()
		exec(t, tx, "UPDATE t SET d = d + 10 WHERE id = 1")
		e.apply(e.capture(c.concurrent)) // parks tx
		code, err := execErr(tx, c.stmt)
		if code != sqlerr.SerializationFailure {
			t.Fatalf("%s after %s committed since the snapshot: %v", c.stmt, c.concurrent, err)
		}
		tx.Rollback()
	}
}

// A transaction that has read enters image mode at its first key write. Its
// snapshot moves to the latest state when no table it read changed since,
// and stays otherwise, with the check of its reads put off: a later read
// that returns what the client saw goes on (its rows set aside and written
// back, a row it left unchanged still certified); one that would return
// something else fails with 40001.
func TestImageModeAfterReads(t *testing.T) {
	read := "SELECT v FROM u WHERE x = 'k1' AND y = 1"
	for _, c := range []struct {
		name       string
		concurrent string // committed between the read and the first write
		moves      bool   // the snapshot moves to the latest state
		fails      bool   // the read after the writes fails with 40001
	}{
		{"other table changed", "UPDATE t SET d = 20 WHERE id = 2", true, false},
		{"other row of the table read changed", "UPDATE u SET v = 'cc' WHERE x = 'k3' AND y = 3", false, false},
		{"row read changed", "UPDATE u SET v = 'z' WHERE x = 'k1' AND y = 1", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := imageTestEngine(t)
			tx := e.begin()
			wantRows(t, exec(t, tx, read).rows, row("a"))
			snap := tx.Snapshot()
			e.apply(e.capture(c.concurrent))
			exec(t, tx, "UPDATE t SET d = d + 10 WHERE id = 1")
			exec(t, tx, "UPDATE t SET a = a WHERE id = 4")
			if tx.(*Tx).img == nil {
				t.Fatal("a key write after reads did not start image mode")
			}
			if moved := tx.Snapshot() > snap; moved != c.moves {
				t.Fatalf("snapshot %d after %d: moved %v, want %v", tx.Snapshot(), snap, moved, c.moves)
			}
			e.apply(e.capture("INSERT INTO t VALUES (5, 'five', NULL, NULL, 5)")) // parks tx
			code, err := execErr(tx, read)
			if tx.(*Tx).img != nil {
				t.Fatal("still in image mode after a read")
			}
			if c.fails {
				if code != sqlerr.SerializationFailure {
					t.Fatalf("a read that now returns something else: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			exec(t, tx, "UPDATE t SET d = d + 1 WHERE id = 1") // sees its own write
			ws, err := tx.WriteSet()
			if err != nil {
				t.Fatal(err)
			}
			tx.Rollback()
			if !slices.Contains(fmtKeys(ws.Keys), fmtKeys([]writeset.Key{writeset.EncodeKey("t", int64(4))})[0]) {
				t.Fatalf("keys %q: the row updated to its own values is not certified", fmtKeys(ws.Keys))
			}
			e.apply(ws)
			wantRows(t, e.query("SELECT d FROM t WHERE id = 1"), row(int64(12)))
		})
	}
}
