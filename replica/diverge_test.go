package replica

import (
	"bytes"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"certa/engine"
	"certa/orderlog/memlog"
)

// A node whose data differs from the cluster's (a row written into its
// database behind its back) replays the log of makeSQLiteLog. Write set 5
// inserts that row's key and fails there; its comparison (a fake: no
// sockets) says another member applied it, and hands over that member's
// state, taken at seqno 5 or 6. The node takes it, applies what the state
// does not hold, and ends with the cluster's data, failed seqnos and
// decisions. Write set 3, which failed alike everywhere, stays failed.
func TestDivergedCoreTakesAMembersState(t *testing.T) {
	orig := makeSQLiteLog(t)
	for _, c := range []struct {
		name        string
		maxApply    int    // entries per Apply call (0: all in one)
		memberSeqno uint64 // the seqno of the member's state
	}{
		{"one Apply call, the member's state at its end", 0, 6},
		{"one Apply call, the member's state behind its end", 0, 5},
		{"an Apply call per entry, the member's state ahead", 1, 6},
		{"an Apply call per entry, the member's state at the failed one", 1, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			member := memberSnapshot(t, orig, c.memberSeqno)

			path := divergedDB(t, orig)
			eng := openSQLite(t, path)
			var compared []uint64
			compare := func(seqno uint64, origin string) (io.ReadCloser, string, error) {
				compared = append(compared, seqno)
				if seqno == 3 {
					return nil, "", nil // failed on the member too
				}
				return io.NopCloser(bytes.NewReader(member)), "n2", nil
			}
			node, waits := openComparingCore(t, eng, memlog.NewStore(orig.entries...), c.maxApply, compare)

			if want := []uint64{3, 5}; !slices.Equal(compared, want) {
				t.Errorf("compared seqnos %v, want %v", compared, want)
			}
			if got := node.sm.resyncs.Load(); got != 1 {
				t.Errorf("%d states taken, want 1", got)
			}
			orig.checkHeld(t, eng)
			want := append([]string{"1 -"}, sqliteLogDecisions[1:]...)
			if got := decisions(waits); !slices.Equal(got, want) {
				t.Errorf("decisions\n got %q\nwant %q", got, want)
			}
			if got, err := eng.AppliedSeqno(); err != nil || got != 6 {
				t.Errorf("engine at seqno %d, %v; want 6", got, err)
			}
		})
	}
}

// A node stopped while it compared write set 5, which failed there
// (TestDivergedCoreTakesAMembersState), had recorded the failure with its
// batch. Restarted, it replays its log, compares what its engine recorded
// as failed again, and takes the member's state.
func TestRestartedCoreComparesWhatFailedBefore(t *testing.T) {
	orig := makeSQLiteLog(t)
	member := memberSnapshot(t, orig, 6)
	path := divergedDB(t, orig)
	eng := openSQLite(t, path)
	alike := func(uint64, string) (io.ReadCloser, string, error) { return nil, "", nil }
	_, _ = openComparingCore(t, eng, memlog.NewStore(orig.entries...), 0, alike) // as if stopped while comparing
	if failed, err := eng.FailedSeqnos(1, 6); err != nil || !reflect.DeepEqual(failed, map[uint64]bool{3: true, 5: true}) {
		t.Fatalf("failed seqnos before the restart %v, %v; want 3 and 5", failed, err)
	}

	var compared []uint64
	compare := func(seqno uint64, origin string) (io.ReadCloser, string, error) {
		compared = append(compared, seqno)
		if seqno == 3 {
			return nil, "", nil
		}
		return io.NopCloser(bytes.NewReader(member)), "n2", nil
	}
	node, _ := openComparingCore(t, eng, memlog.NewStore(orig.entries...), 0, compare)
	if want := []uint64{3, 5}; !slices.Equal(compared, want) {
		t.Errorf("compared seqnos %v, want %v", compared, want)
	}
	if got := node.sm.resyncs.Load(); got != 1 {
		t.Errorf("%d states taken, want 1", got)
	}
	orig.checkHeld(t, eng)
}

// divergedDB returns a database that applied seqno 1 of orig's log, with
// a row of key 3 written into it behind certa's back.
func divergedDB(t *testing.T, orig sqliteLog) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "diverged.db")
	eng := openSQLite(t, path)
	_, l, _ := openCore(t, &applyRecorder{Engine: eng}, 0, memlog.NewStore(orig.entries[:1]...), 0, 0)
	l.Close()
	eng.Close()
	if out, err := exec.Command("sqlite3", path, "INSERT INTO t VALUES (3, 99)").CombinedOutput(); err != nil {
		t.Fatalf("sqlite3: %v\n%s", err, out)
	}
	return path
}

// memberSnapshot returns the state of a member that applied the log of
// orig up to seqno, as its log would send it.
func memberSnapshot(t *testing.T, orig sqliteLog, seqno uint64) []byte {
	t.Helper()
	entries := orig.entries
	if seqno == 5 {
		entries = entries[:4]
	}
	eng := openSQLite(t, filepath.Join(t.TempDir(), "member.db"))
	_, l, _ := openCore(t, &applyRecorder{Engine: eng}, 0, memlog.NewStore(entries...), 0, 0)
	rc, err := l.OpenSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	eng.Close()
	return b
}

// openComparingCore is openCore whose comparisons of failed write sets go
// to compare, with waiters for TxIDs 1 to 6.
func openComparingCore(t *testing.T, eng engine.Engine, store *memlog.Store, maxApply int,
	compare func(uint64, string) (io.ReadCloser, string, error)) (*Node, []chan outcome) {
	t.Helper()
	node, _, waits := openCoreWith(t, eng, 0, store, maxApply, 6, func(n *Node) { n.sm.compare = compare })
	return node, waits
}
