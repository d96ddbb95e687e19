package memlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"certa/orderlog"
)

// recorder is a state machine that keeps what it is given: the indexes of
// each Apply call and the data of every entry, in order. Its snapshot is
// that data. It reports calls that overlap.
type recorder struct {
	busy    atomic.Bool
	overlap atomic.Bool

	mu       sync.Mutex
	calls    [][]uint64
	data     []string
	restored []string // what Restore read, if it was called

	// entered, if set, is told of each Apply call, which then waits for
	// proceed.
	entered, proceed chan struct{}
}

func (r *recorder) enter() {
	if r.busy.Swap(true) {
		r.overlap.Store(true)
	}
}

func (r *recorder) leave() { r.busy.Store(false) }

func (r *recorder) Apply(entries []orderlog.Entry) {
	r.enter()
	defer r.leave()
	if r.entered != nil {
		r.entered <- struct{}{}
		<-r.proceed
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var idx []uint64
	for _, e := range entries {
		idx = append(idx, e.Index)
		r.data = append(r.data, string(e.Data))
	}
	r.calls = append(r.calls, idx)
}

func (r *recorder) Snapshot() (orderlog.Snapshot, error) {
	r.enter()
	defer r.leave()
	r.mu.Lock()
	defer r.mu.Unlock()
	return snapshot(strings.Join(r.data, ",")), nil
}

func (r *recorder) Restore(rd io.Reader) error {
	r.enter()
	defer r.leave()
	b, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.data = strings.Split(string(b), ",")
	r.restored = append([]string{}, r.data...)
	return nil
}

func (r *recorder) applied() (calls [][]uint64, data []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]uint64{}, r.calls...), append([]string{}, r.data...)
}

type snapshot string

func (s snapshot) WriteTo(w io.Writer) (int64, error) {
	n, err := io.WriteString(w, string(s))
	return int64(n), err
}

func (snapshot) Release() {}

func open(t *testing.T, cfg Config, sm orderlog.StateMachine) *Log {
	t.Helper()
	if cfg.ID == "" {
		cfg.ID = "n1"
	}
	l, err := Open(cfg, sm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Entries are applied in log order, numbered without gaps, by one caller
// at a time, before Append returns; AppendAll's entries come in one call.
func TestAppendAppliesInLogOrder(t *testing.T) {
	sm := &recorder{}
	l := open(t, Config{}, sm)
	if err := l.Append([]byte("a"), 0); err != nil {
		t.Fatal(err)
	}
	if _, data := sm.applied(); len(data) != 1 {
		t.Fatalf("Append returned before its entry was applied: %v", data)
	}
	if err := l.AppendAll([]byte("b"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	if calls, _ := sm.applied(); !reflect.DeepEqual(calls, [][]uint64{{1}, {2, 3}}) {
		t.Fatalf("apply calls %v, want [[1] [2 3]]", calls)
	}

	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if err := l.Append(fmt.Appendf(nil, "g%d-%d", g, i), 0); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	calls, data := sm.applied()
	next := uint64(1)
	for _, c := range calls {
		for _, idx := range c {
			if idx != next {
				t.Fatalf("apply calls %v: index %d where %d was next", calls, idx, next)
			}
			next++
		}
	}
	if next != 104 || len(data) != 103 {
		t.Fatalf("%d entries applied, want 103", next-1)
	}
	nextOf := map[int]int{} // each writer's next entry
	for _, d := range data[3:] {
		var g, i int
		if _, err := fmt.Sscanf(d, "g%d-%d", &g, &i); err != nil || nextOf[g] != i {
			t.Fatalf("entry %q applied where writer %d's entry %d was next", d, g, nextOf[g])
		}
		nextOf[g]++
	}
	if sm.overlap.Load() {
		t.Fatal("state machine methods ran concurrently")
	}
	if st := l.Stats(); st.LastIndex != 103 || st.CommitIndex != 103 || st.AppliedIndex != 103 {
		t.Fatalf("stats %+v", st)
	}
}

// The errors the contract names, each where it says so, and nothing
// appended when an append is refused.
func TestErrors(t *testing.T) {
	l := open(t, Config{}, &recorder{})
	big := make([]byte, orderlog.MaxEntryBytes+1)
	if err := l.AppendAll([]byte("small"), big); !errors.Is(err, orderlog.ErrTooLarge) {
		t.Fatalf("append of a large entry: %v, want ErrTooLarge", err)
	}
	if n := l.CommitIndex(); n != 0 {
		t.Fatalf("%d entries appended by a refused AppendAll", n)
	}

	term := l.Term()
	l.SetLeader("n2")
	if l.Term() <= term || l.IsLeader() || l.State() != "follower" || l.Leader() != "n2" {
		t.Fatalf("after SetLeader(n2): term %d (was %d), leader %q, state %s", l.Term(), term, l.Leader(), l.State())
	}
	for name, err := range map[string]error{
		"Append":       l.Append([]byte("x"), 0),
		"Barrier":      l.Barrier(0),
		"AddVoter":     l.AddVoter("n3", "addr", 0),
		"RemoveServer": l.RemoveServer("n1", 0),
	} {
		if !errors.Is(err, orderlog.ErrNotLeader) {
			t.Errorf("%s on a follower: %v, want ErrNotLeader", name, err)
		}
	}
	if n := l.CommitIndex(); n != 0 {
		t.Fatalf("%d entries appended on a follower", n)
	}

	l.SetLeader("n1")
	if err := l.AddVoter("n2", "addr2", 0); err != nil {
		t.Fatal(err)
	}
	if err := l.RemoveServer("n1", 0); err != nil {
		t.Fatal(err)
	}
	if servers, _ := l.Servers(); !reflect.DeepEqual(servers, []orderlog.Server{{ID: "n2", Address: "addr2", Voter: true}}) || l.Leader() != "" {
		t.Fatalf("after removing itself: servers %v, leader %q", servers, l.Leader())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.WaitApplied(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("WaitApplied with a cancelled context: %v", err)
	}
	l.Close()
	if err := l.Append([]byte("x"), 0); !errors.Is(err, orderlog.ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := l.WaitApplied(context.Background(), 1); !errors.Is(err, orderlog.ErrClosed) {
		t.Fatalf("WaitApplied after Close: %v, want ErrClosed", err)
	}
	if _, err := l.Snapshot(); !errors.Is(err, orderlog.ErrClosed) {
		t.Fatalf("Snapshot after Close: %v, want ErrClosed", err)
	}
	if l.State() != "shutdown" {
		t.Fatalf("state %s after Close", l.State())
	}
}

// An append whose entry is in the log when the log closes, before the
// state machine has applied it, has an unknown outcome.
func TestCloseDuringApplyLeavesOutcomeUnknown(t *testing.T) {
	sm := &recorder{entered: make(chan struct{}), proceed: make(chan struct{})}
	l := open(t, Config{}, sm)
	appended := make(chan error)
	go func() { appended <- l.Append([]byte("a"), 0) }()
	<-sm.entered
	closed := make(chan struct{})
	go func() {
		l.Close()
		close(closed)
	}()
	if err := <-appended; !errors.Is(err, orderlog.ErrUnknownOutcome) {
		t.Fatalf("append cut short by Close: %v, want ErrUnknownOutcome", err)
	}
	close(sm.proceed)
	<-closed
}

// A snapshot replaces the entries it covers; a log opened again on the
// store restores it and replays only the entries after it. A store serves
// one open log at a time; a copy serves another.
func TestSnapshotAndReopen(t *testing.T) {
	store := NewStore()
	l := open(t, Config{Store: store}, &recorder{})
	if err := l.AppendAll([]byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if idx, err := l.Snapshot(); err != nil || idx != 2 {
		t.Fatalf("snapshot: index %d, %v; want 2", idx, err)
	}
	if err := l.Append([]byte("c"), 0); err != nil {
		t.Fatal(err)
	}
	if st := l.Stats(); st.SnapshotIndex != 2 || st.LastIndex != 3 {
		t.Fatalf("stats %+v", st)
	}
	if len(store.entries) != 1 {
		t.Fatalf("the store keeps %d entries, want 1 after the snapshot", len(store.entries))
	}
	if _, err := Open(Config{ID: "n1", Store: store}, &recorder{}); err == nil {
		t.Fatal("a store in use opened again")
	}
	other := &recorder{}
	open(t, Config{ID: "n2", Store: store.Copy()}, other)
	l.Close()

	sm := &recorder{}
	l = open(t, Config{Store: store}, sm)
	calls, data := sm.applied()
	if !reflect.DeepEqual(sm.restored, []string{"a", "b"}) || !reflect.DeepEqual(calls, [][]uint64{{3}}) || !reflect.DeepEqual(data, []string{"a", "b", "c"}) {
		t.Fatalf("reopened: restored %q, apply calls %v, data %q", sm.restored, calls, data)
	}
	if _, data := other.applied(); !reflect.DeepEqual(data, []string{"a", "b", "c"}) {
		t.Fatalf("copy of the store: data %q", data)
	}
	if err := l.Append([]byte("d"), 0); err != nil {
		t.Fatal(err)
	}
	if calls, _ := sm.applied(); !reflect.DeepEqual(calls, [][]uint64{{3}, {4}}) {
		t.Fatalf("apply calls %v after reopening", calls)
	}
}

// MaxApplyEntries bounds every Apply call, the replay's included.
func TestMaxApplyEntries(t *testing.T) {
	sm := &recorder{}
	l := open(t, Config{Store: NewStore([]byte("1"), []byte("2"), []byte("3")), MaxApplyEntries: 2}, sm)
	if calls, _ := sm.applied(); !reflect.DeepEqual(calls, [][]uint64{{1, 2}, {3}}) {
		t.Fatalf("replay: apply calls %v", calls)
	}
	if err := l.AppendAll([]byte("4"), []byte("5"), []byte("6")); err != nil {
		t.Fatal(err)
	}
	if calls, _ := sm.applied(); !reflect.DeepEqual(calls, [][]uint64{{1, 2}, {3}, {4, 5}, {6}}) {
		t.Fatalf("apply calls %v", calls)
	}
}
