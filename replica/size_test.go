package replica

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"certa/engine"
	"certa/orderlog"
	"certa/sqlerr"
	"certa/writeset"
)

// emptyEngine is a new engine with no sequences; only AppliedSeqno is
// used by these tests.
type emptyEngine struct{ engine.Engine }

func (emptyEngine) AppliedSeqno() (uint64, error)         { return 0, nil }
func (emptyEngine) SequencesWanted() <-chan string        { return nil }
func (emptyEngine) CheckChanges(*writeset.WriteSet) error { return nil }

// recordingLog is a log whose leader is node n1. It records the entries
// appended and answers each with refuse(entry) (nil: committed).
type recordingLog struct {
	orderlog.Log
	mu      sync.Mutex
	entries [][]byte
	refuse  func(entry []byte) error
}

func (l *recordingLog) Leader() string { return "n1" }

func (l *recordingLog) Append(entry []byte, timeout time.Duration) error {
	l.mu.Lock()
	l.entries = append(l.entries, entry)
	l.mu.Unlock()
	if l.refuse != nil {
		return l.refuse(entry)
	}
	return nil
}

func (l *recordingLog) appended() [][]byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]byte(nil), l.entries...)
}

func newTestNode(t *testing.T, cfg Config) *Node {
	t.Helper()
	cfg.Self.ID = "n1"
	n, err := New(cfg, emptyEngine{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n
}

// writeSetOf returns a write set whose encoding is about size bytes.
func writeSetOf(size int) *writeset.WriteSet {
	return &writeset.WriteSet{Keys: []writeset.Key{writeset.EncodeKey("t", int64(size))}, Tables: []string{"t"}, Changes: make([]byte, size)}
}

func TestMaxWriteSetBytesConfig(t *testing.T) {
	cfg := Config{Self: writeset.Member{ID: "n1"}}
	cfg.setDefaults()
	if cfg.MaxWriteSetBytes != DefaultMaxWriteSetBytes {
		t.Fatalf("default %d, want %d", cfg.MaxWriteSetBytes, DefaultMaxWriteSetBytes)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []int{-1, MaxWriteSetBytesLimit + 1, orderlog.MaxEntryBytes} {
		cfg.MaxWriteSetBytes = bad
		if err := cfg.Validate(); err == nil {
			t.Errorf("MaxWriteSetBytes %d accepted", bad)
		}
	}
	cfg.MaxWriteSetBytes = MaxWriteSetBytesLimit
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// The largest write set allowed, alone in an entry, fits in the log.
	if e := len(writeset.EncodeBatch([]*writeset.WriteSet{writeSetOf(MaxWriteSetBytesLimit - 64)})); e > orderlog.MaxEntryBytes {
		t.Fatalf("an entry of one write set under the limit has %d bytes, over the log's %d", e, orderlog.MaxEntryBytes)
	}
}

// A write set over the limit is refused at COMMIT with 54000 before
// anything is appended; one at the limit is appended.
func TestCommitRefusesWriteSetOverTheLimit(t *testing.T) {
	const limit = 100 << 10
	n := newTestNode(t, Config{MaxWriteSetBytes: limit, CommitTimeout: 200 * time.Millisecond})
	log := &recordingLog{}
	n.Start(log, nil)

	_, err := n.Commit(context.Background(), writeSetOf(limit))
	e := sqlerr.As(err)
	if e.Code != sqlerr.ProgramLimitExceeded || !strings.Contains(e.Message, "too large") || !strings.Contains(e.Hint, "--max-writeset-size") {
		t.Fatalf("commit over the limit: %v (hint %q), want 54000 saying it is too large and how to raise the limit", err, e.Hint)
	}
	if got := log.appended(); len(got) != 0 {
		t.Fatalf("%d entries appended for a refused write set", len(got))
	}
	// Just under the limit it is appended (and, as nothing applies it
	// here, its outcome is unknown).
	ws := writeSetOf(limit - 200)
	if size := ws.Size(); size > limit {
		t.Fatalf("test write set is %d bytes, over the limit", size)
	}
	if _, err := n.Commit(context.Background(), ws); sqlerr.Code(err) != sqlerr.StatementCompletionUnknown {
		t.Fatalf("commit under the limit: %v, want 40003 from this log that never applies", err)
	}
	if got := log.appended(); len(got) != 1 {
		t.Fatalf("%d entries appended, want 1", len(got))
	}
}

// However write sets queue up, no entry grows past maxBatchBytes unless it
// holds a single write set, and every write set is appended once, in order.
func TestBatchesStopGrowingBeforeTheLimit(t *testing.T) {
	n := newTestNode(t, Config{MaxWriteSetBytes: 8 << 20})
	sizes := []int{100, 3 << 20, 900 << 10, 200, 5 << 20, 10, 4<<20 - 100, 4 << 20, 7 << 20, 50, 60}
	for i := 0; i < 2000; i++ {
		sizes = append(sizes, 1000+i)
	}
	for i, size := range sizes {
		ws := writeSetOf(size)
		ws.TxID = uint64(i)
		n.queue <- ws // queued before the submitter starts: it finds them all waiting
	}
	log := &recordingLog{}
	n.Start(log, nil)
	var got []*writeset.WriteSet
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < len(sizes) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d write sets appended", len(got), len(sizes))
		}
		got = got[:0]
		for _, e := range log.appended() {
			dec, err := writeset.DecodeEntry(e)
			if err != nil {
				t.Fatal(err)
			}
			if len(dec.Batch) > 1 && len(e) > maxBatchBytes+writeset.MaxBatchOverhead {
				t.Fatalf("a batch of %d write sets has %d bytes, over %d", len(dec.Batch), len(e), maxBatchBytes)
			}
			if len(dec.Batch) > maxBatchWriteSets {
				t.Fatalf("a batch of %d write sets", len(dec.Batch))
			}
			for i := range dec.Batch {
				got = append(got, &dec.Batch[i])
			}
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	if len(got) != len(sizes) {
		t.Fatalf("%d write sets appended, want %d", len(got), len(sizes))
	}
	// Entries go out concurrently, so their order in the log may differ;
	// each write set must be there once.
	seen := map[uint64]bool{}
	for _, ws := range got {
		if seen[ws.TxID] {
			t.Fatalf("write set %d appended twice", ws.TxID)
		}
		seen[ws.TxID] = true
		if len(ws.Changes) != sizes[ws.TxID] {
			t.Fatalf("write set %d has %d bytes of changes, want %d", ws.TxID, len(ws.Changes), sizes[ws.TxID])
		}
	}
}

// The leader refuses a forwarded entry holding a write set over its limit
// before appending it.
func TestAppendForwardedRefusesWriteSetsOverTheLimit(t *testing.T) {
	n := newTestNode(t, Config{MaxWriteSetBytes: 1 << 20})
	log := &recordingLog{}
	n.Start(log, nil)
	entry := writeset.EncodeBatch([]*writeset.WriteSet{writeSetOf(10), writeSetOf(1<<20 + 1)})
	if err := n.AppendForwarded(entry); !errors.Is(err, orderlog.ErrTooLarge) {
		t.Fatalf("forwarded write set over the limit: %v, want ErrTooLarge", err)
	}
	if err := n.AppendForwarded(make([]byte, maxEntryBytes(1<<20)+1)); !errors.Is(err, orderlog.ErrTooLarge) {
		t.Fatalf("forwarded entry over the limit: %v, want ErrTooLarge", err)
	}
	if got := log.appended(); len(got) != 0 {
		t.Fatalf("%d entries appended", len(got))
	}
	if err := n.AppendForwarded(writeset.EncodeBatch([]*writeset.WriteSet{writeSetOf(1 << 19)})); err != nil {
		t.Fatal(err)
	}
}

// When the leader refuses a batch as too large (its limit is lower), the
// write sets are sent again one by one: only the one over the leader's
// limit gets 54000.
func TestLeaderRefusalOfABatchRefusesOnlyTheLargeWriteSet(t *testing.T) {
	n := newTestNode(t, Config{MaxWriteSetBytes: 1 << 20})
	log := &recordingLog{refuse: func(entry []byte) error {
		dec, _ := writeset.DecodeEntry(entry)
		for _, ws := range dec.Batch {
			if len(ws.Changes) > 1000 {
				return fmt.Errorf("%w: over the leader's limit", orderlog.ErrTooLarge)
			}
		}
		return nil
	}}
	n.log = log
	small, large := writeSetOf(10), writeSetOf(2000)
	small.TxID, large.TxID = 1, 2
	chSmall, chLarge := n.waiters.add(1), n.waiters.add(2)
	n.dispatch([]*writeset.WriteSet{small, large})
	select {
	case o := <-chSmall:
		t.Fatalf("the small write set was told %v", o.err)
	default:
	}
	select {
	case o := <-chLarge:
		if sqlerr.Code(o.err) != sqlerr.ProgramLimitExceeded {
			t.Fatalf("the large write set: %v, want 54000", o.err)
		}
	default:
		t.Fatal("the large write set was not told it was refused")
	}
	if got := len(log.appended()); got != 3 {
		t.Fatalf("%d appends, want 3 (the batch, then each write set)", got)
	}
}

// Time this node spends applying does not count against a COMMIT's wait
// (a commit queued behind a large write set is not told 40003 while that
// applies), up to maxApplyExtension; a stalled applier (full disk) does
// not extend it.
func TestCommitWaitExtendsWhileApplying(t *testing.T) {
	const timeout = 200 * time.Millisecond
	commit := func(busy bool, stalled string) time.Duration {
		n := newTestNode(t, Config{CommitTimeout: timeout})
		n.Start(&recordingLog{}, nil) // appends, never applies
		if busy {
			n.sm.applyStart.Store(time.Now().UnixNano()) // an Apply under way, for good
		}
		n.sm.stalled.Store(stalled)
		start := time.Now()
		_, err := n.Commit(context.Background(), writeSetOf(10))
		if sqlerr.Code(err) != sqlerr.StatementCompletionUnknown {
			t.Fatalf("commit never applied: %v, want 40003", err)
		}
		return time.Since(start)
	}
	if d := commit(false, ""); d > 3*timeout {
		t.Errorf("idle applier: 40003 after %s, want about %s", d, timeout)
	}
	d := commit(true, "")
	if max := timeout + 4*timeout; d < max-timeout/2 || d > max+2*timeout {
		t.Errorf("busy applier: 40003 after %s, want about %s (the timeout and the bounded extension)", d, max)
	}
	if d := commit(true, "disk full"); d > 3*timeout {
		t.Errorf("stalled applier: 40003 after %s, want about %s", d, timeout)
	}
}
