package replica

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"certa/engine"
	"certa/orderlog/memlog"
	"certa/writeset"
)

// A node whose engine recorded applied seqno N when it stopped replays its
// log from the start: it certifies the write sets up to N again without
// applying them, applies those after N, and decides everything as the
// node did before the restart (the certifier ends with the same window).
// Every case of TestApplyOrder, for every N, replayed in one Apply call
// and one entry per Apply call: with N = 0, a new node, which must decide
// and apply alike however the log is grouped into Apply calls.
func TestReplayAfterRestart(t *testing.T) {
	for _, c := range applyOrderCases {
		t.Run(c.name, func(t *testing.T) {
			l := parseLog(t, c.log)
			before := runCore(t, c.horizon, l, 0, nil, 0)
			last := uint64(len(l.writeSets))
			for n := uint64(0); n <= last; n++ {
				for _, maxApply := range []int{0, 1} {
					where := fmt.Sprintf("engine at %d, replayed in one Apply call", n)
					if maxApply == 1 {
						where = fmt.Sprintf("engine at %d, replayed an entry an Apply call", n)
					}
					after := runCore(t, c.horizon, l, n, memlog.NewStore(l.entries()...), maxApply)
					checkReplay(t, where, n, last, before, after)
				}
			}
		})
	}
}

func checkReplay(t *testing.T, where string, n, last uint64, before, after coreRun) {
	t.Helper()
	var want []uint64
	for _, s := range before.appliedSeqnos() {
		if s > n {
			want = append(want, s)
		}
	}
	if got := after.appliedSeqnos(); !slices.Equal(got, want) {
		t.Errorf("%s: seqnos applied %v, want %v (those applied before, after %d)", where, got, want, n)
	}
	switch k := len(after.calls); {
	case last <= n && k > 0:
		t.Errorf("%s: the engine, already at the end of the log, got Apply calls %q", where, formatCalls(after.calls))
	case last > n && (k == 0 || after.calls[k-1].upTo != last):
		t.Errorf("%s: Apply calls %q do not end at seqno %d", where, formatCalls(after.calls), last)
	}
	// Up to N nobody waits in earnest (TxIDs are new in each run); a
	// decision told must still be the one made before.
	for i, d := range after.decisions {
		if d != before.decisions[i] && (uint64(i) >= n || d != fmt.Sprintf("%d -", i+1)) {
			t.Errorf("%s: write set %d: decision %q, before the restart %q", where, i+1, d, before.decisions[i])
		}
	}
	if !bytes.Equal(after.cert, before.cert) {
		t.Errorf("%s: the certifier's window differs from before the restart", where)
	}
	if got := after.node.sm.applied.get(); got != last {
		t.Errorf("%s: applied seqno %d, want %d", where, got, last)
	}
	if got, want := after.node.sm.committed.Load(), before.node.sm.committed.Load(); got != want {
		t.Errorf("%s: last committed seqno %d, want %d", where, got, want)
	}
}

// sqliteLog is a log made by a node on a real SQLite engine, and what the
// node decided and held at its end (seqno 6):
//
//	1 CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER UNIQUE)
//	2 INSERT (1, 10)  snapshot 1
//	3 INSERT (2, 10)  snapshot 1: passes certification, fails at apply (23505)
//	4 INSERT (1, 12)  snapshot 1: conflicts with 2
//	--- snapshot
//	5 INSERT (3, 30)  snapshot 4
//	6 CREATE TABLE u (id INTEGER PRIMARY KEY)
type sqliteLog struct {
	path      string        // the node's database, closed
	entries   [][]byte      // the whole log
	snapshot  *memlog.Store // the log, compacted by a snapshot after entry 3 (seqno 4)
	decisions []string
	cert      []byte
	sums      engine.Checksums
}

// checkHeld checks that eng holds what the node held at the end of the
// log: its data and its failed seqnos.
func (orig sqliteLog) checkHeld(t *testing.T, eng engine.Engine) {
	t.Helper()
	sums, err := eng.Checksums(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sums, orig.sums) {
		t.Errorf("checksums\n got %+v\nwant %+v", sums, orig.sums)
	}
	if failed, err := eng.FailedSeqnos(1, 6); err != nil || !reflect.DeepEqual(failed, map[uint64]bool{3: true}) {
		t.Errorf("failed seqnos %v, %v; want 3", failed, err)
	}
}

var sqliteLogDecisions = []string{"1 pass", "2 pass", "3 23505", "4 conflict t@2", "5 pass", "6 pass"}

func makeSQLiteLog(t *testing.T) sqliteLog {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data.db")
	eng := openSQLite(t, path)
	store := memlog.NewStore()
	node, l, waits := openCore(t, &applyRecorder{Engine: eng}, 0, store, 0, 6)
	entries := appendWriteSets(t, l, ddlWriteSet(t, eng, 1, "CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER UNIQUE)"))
	// All three read seqno 1.
	a := capture(t, eng, 2, "INSERT INTO t VALUES (1, 10)")
	b := capture(t, eng, 3, "INSERT INTO t VALUES (2, 10)")
	c := capture(t, eng, 4, "INSERT INTO t VALUES (1, 12)")
	ab := writeset.EncodeBatch([]*writeset.WriteSet{a, b})
	if err := l.AppendAll(ab); err != nil {
		t.Fatal(err)
	}
	entries = append(entries, ab)
	entries = append(entries, appendWriteSets(t, l, c)...)
	if _, err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	entries = append(entries, appendWriteSets(t, l,
		capture(t, eng, 5, "INSERT INTO t VALUES (3, 30)"),
		ddlWriteSet(t, eng, 6, "CREATE TABLE u (id INTEGER PRIMARY KEY)"))...)

	run := sqliteLog{path: path, entries: entries, decisions: decisions(waits), cert: saveCert(t, node)}
	if !slices.Equal(run.decisions, sqliteLogDecisions) {
		t.Fatalf("decisions before the restart:\n got %q\nwant %q", run.decisions, sqliteLogDecisions)
	}
	var err error
	if run.sums, err = eng.Checksums(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.Close()
	eng.Close()
	run.snapshot = store.Copy()
	return run
}

// A node on SQLite restarts in each of the ways a node comes back: it
// replays its log, certifying again what its engine holds and applying
// only the rest, restores a snapshot when its engine is behind it, and
// ends with the data, the failed seqnos and the certification window the
// node had; commits then go on at the next seqnos.
func TestRestartOnSQLite(t *testing.T) {
	sameDB := func(t *testing.T, orig sqliteLog) string { return orig.path }
	newDB := func(t *testing.T, orig sqliteLog) string { return filepath.Join(t.TempDir(), "new.db") }
	// behindDB is a database that applied the log up to entry 3 (seqno 4).
	behindDB := func(t *testing.T, orig sqliteLog) string {
		path := newDB(t, orig)
		eng := openSQLite(t, path)
		_, l, _ := openCore(t, &applyRecorder{Engine: eng}, 0, memlog.NewStore(orig.entries[:3]...), 0, 0)
		l.Close()
		if s, _ := eng.AppliedSeqno(); s != 4 {
			t.Fatalf("database behind the log at seqno %d, want 4", s)
		}
		eng.Close()
		return path
	}
	wholeLog := func(orig sqliteLog) *memlog.Store { return memlog.NewStore(orig.entries...) }
	compacted := func(orig sqliteLog) *memlog.Store { return orig.snapshot.Copy() }

	for _, c := range []struct {
		name      string
		db        func(*testing.T, sqliteLog) string
		log       func(sqliteLog) *memlog.Store
		applies   []string // the engine's Apply calls while the log is replayed
		transfers uint64   // snapshots restored into the engine
	}{
		{"engine at the end of the log: all certified again, nothing applied", sameDB, wholeLog, nil, 0},
		{"engine at the end, log compacted by a snapshot: the engine is kept", sameDB, compacted, nil, 0},
		{"engine stopped behind the log: only the rest is applied", behindDB, wholeLog, []string{"[5 6] up to 6"}, 0},
		{"new node, log compacted: the snapshot is restored, the rest applied", newDB, compacted, []string{"[5 6] up to 6"}, 1},
		{"new node, whole log: all applied, failing what failed before", newDB, wholeLog, []string{"[1 2 3!23505 5 6] up to 6"}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := makeSQLiteLog(t)
			eng := openSQLite(t, c.db(t, orig))
			rec := &applyRecorder{Engine: eng}
			node, l, waits := openCore(t, rec, 0, c.log(orig), 0, 8)

			if got := formatCalls(rec.calls); !slices.Equal(got, c.applies) {
				t.Errorf("Apply calls during the replay:\n got %q\nwant %q", got, c.applies)
			}
			if got := node.sm.transfers.Load(); got != c.transfers {
				t.Errorf("%d snapshots restored into the engine, want %d", got, c.transfers)
			}
			if !bytes.Equal(saveCert(t, node), orig.cert) {
				t.Errorf("the certifier's window differs from before the restart")
			}
			orig.checkHeld(t, eng)

			rec.calls = nil
			p1 := capture(t, eng, 7, "INSERT INTO t VALUES (4, 40)")
			p2 := capture(t, eng, 8, "UPDATE t SET v = 99 WHERE id = 1")
			p2.Snapshot = 1 // read before 2 wrote row 1
			appendWriteSets(t, l, p1, p2)
			if got, want := decisions(waits)[6:], []string{"7 pass", "8 conflict t@2"}; !slices.Equal(got, want) {
				t.Errorf("decisions after the restart: %q, want %q", got, want)
			}
			if got, want := formatCalls(rec.calls), []string{"[7] up to 8"}; !slices.Equal(got, want) {
				t.Errorf("Apply calls after the restart: %q, want %q", got, want)
			}
		})
	}
}
