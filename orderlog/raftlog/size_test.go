package raftlog

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"certa/orderlog"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/segment"
)

// raft-wal writes an entry of any size but refuses to read back one over
// segment.MaxEntrySize. This is what made a node that had stored a 64 MiB
// write set unable to restart; if raft-wal changes it, the limits here
// may change with it.
func TestWALCannotReadBackEntriesOverItsLimit(t *testing.T) {
	dir := t.TempDir()
	w, err := wal.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	big := make([]byte, segment.MaxEntrySize+1)
	if err := w.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Data: big}}); err != nil {
		t.Fatalf("raft-wal refused to write an oversized entry (it did not when this test was written): %v", err)
	}
	var l raft.Log
	if err := w.GetLog(1, &l); err == nil {
		t.Fatal("raft-wal read back an entry over MaxEntrySize: the limits in raftlog may be raised")
	}
}

// The store refuses to write an entry it could not read back, stores one
// of orderlog.MaxEntryBytes and reads it back, and names the cause of an
// oversized entry already in the log (written by an older version).
func TestStoreKeepsEntriesReadable(t *testing.T) {
	dir := t.TempDir()
	s, err := openStore(dir, 1<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.roomFor = func() bool { return true }
	defer s.Close()
	err = s.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Data: make([]byte, maxStoredBytes+1)}})
	if !errors.Is(err, errEntryTooLarge) {
		t.Fatalf("storing an entry over the WAL's read limit: %v, want errEntryTooLarge", err)
	}
	if err := s.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Data: make([]byte, orderlog.MaxEntryBytes)}}); err != nil {
		t.Fatal(err)
	}
	var l raft.Log
	if err := s.GetLog(1, &l); err != nil || len(l.Data) != orderlog.MaxEntryBytes {
		t.Fatalf("reading back an entry of MaxEntryBytes: %d bytes, %v", len(l.Data), err)
	}

	// An oversized entry written behind the store's back, as an older
	// version did.
	if err := s.with(func(w *wal.WAL) error {
		return w.StoreLogs([]*raft.Log{{Index: 2, Term: 1, Data: make([]byte, segment.MaxEntrySize+1)}})
	}); err != nil {
		t.Fatal(err)
	}
	err = s.GetLog(2, &l)
	if err == nil || !strings.Contains(err.Error(), "log entry 2 is larger than 64 MiB") {
		t.Fatalf("reading an oversized entry: %v, want an error naming the cause", err)
	}
}

// Append refuses an entry over orderlog.MaxEntryBytes before anything is
// appended.
func TestAppendRefusesEntriesOverTheLimit(t *testing.T) {
	var largest atomic.Int64 // the largest entry stored
	hooks := testHooks{wrapStore: func(s raft.LogStore) raft.LogStore { return &sizeRecorder{LogStore: s, largest: &largest} }}
	l, err := open(Config{ID: "n1", Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: true,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond}, &countingSM{}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eventually(t, 10*time.Second, "n1 leads", l.IsLeader)
	if err := l.Append(make([]byte, orderlog.MaxEntryBytes+1), time.Second); !errors.Is(err, orderlog.ErrTooLarge) {
		t.Fatalf("append over the limit: %v, want ErrTooLarge", err)
	}
	if err := l.Append([]byte("small"), time.Second); err != nil {
		t.Fatal(err)
	}
	if n := largest.Load(); n > 1<<10 {
		t.Fatalf("an entry of %d bytes was stored", n)
	}
}

// sizeRecorder records the size of the largest entry stored.
type sizeRecorder struct {
	raft.LogStore
	largest *atomic.Int64
}

func (s *sizeRecorder) StoreLogs(logs []*raft.Log) error {
	for _, l := range logs {
		if n := int64(len(l.Data)); n > s.largest.Load() {
			s.largest.Store(n)
		}
	}
	return s.LogStore.StoreLogs(logs)
}

func (s *sizeRecorder) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// countingStore counts the reads that reach the store behind the cache.
type countingStore struct {
	raft.LogStore
	reads int
}

func (s *countingStore) GetLog(i uint64, l *raft.Log) error {
	s.reads++
	return s.LogStore.GetLog(i, l)
}

// The log cache keeps small entries in memory and, of the large ones,
// only the newest.
func TestLogCacheKeepsOnlySmallEntries(t *testing.T) {
	s, err := openStore(t.TempDir(), 1<<20, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	s.roomFor = func() bool { return true }
	defer s.Close()
	counting := &countingStore{LogStore: s}
	cache, err := raft.NewLogCache(logCacheSize, counting)
	if err != nil {
		t.Fatal(err)
	}
	c := &smallEntryCache{LogCache: cache, store: counting}
	if err := c.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Data: []byte("small")}}); err != nil {
		t.Fatal(err)
	}
	large := func(i uint64) *raft.Log {
		return &raft.Log{Index: i, Term: 1, Data: make([]byte, maxCachedEntryBytes+1)}
	}
	if err := c.StoreLogs([]*raft.Log{{Index: 2, Term: 1, Data: []byte("small")}, large(3)}); err != nil {
		t.Fatal(err)
	}
	if err := c.StoreLogs([]*raft.Log{large(4)}); err != nil {
		t.Fatal(err)
	}
	for i, wantReads := range map[uint64]int{1: 0, 2: 1, 3: 1, 4: 0} {
		counting.reads = 0
		var l raft.Log
		if err := c.GetLog(i, &l); err != nil || l.Index != i {
			t.Fatalf("entry %d: %v", i, err)
		}
		if counting.reads != wantReads {
			t.Errorf("entry %d: %d reads from the store, want %d", i, counting.reads, wantReads)
		}
	}
}

// bytesSM adds up the bytes of the entries applied.
type bytesSM struct{ countingSM }

func (b *bytesSM) Apply(entries []orderlog.Entry) {
	for _, e := range entries {
		b.n.Add(uint64(len(e.Data)))
	}
}

// A large entry reaches the followers (through the bulk transport), with
// small ones before and after it.
func TestLargeEntryReplicates(t *testing.T) {
	var nodes []*Log
	var sms []*bytesSM
	for i := range 3 {
		sm := &bytesSM{}
		l, err := Open(Config{ID: fmt.Sprintf("n%d", i+1), Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: i == 0,
			HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond}, sm)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		nodes, sms = append(nodes, l), append(sms, sm)
	}
	leader := nodes[0]
	eventually(t, 10*time.Second, "n1 leads", leader.IsLeader)
	for i, l := range nodes[1:] {
		if err := leader.AddVoter(fmt.Sprintf("n%d", i+2), string(l.transport.LocalAddr()), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	want := uint64(0)
	for _, size := range []int{10, 20 << 20, 10} {
		done := make(chan error, 1)
		go func() { done <- leader.Append(make([]byte, size), 30*time.Second) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("an entry of %d bytes did not commit within 60s", size)
		}
		want += uint64(size)
	}
	for i, sm := range sms {
		eventually(t, 30*time.Second, fmt.Sprintf("n%d applies every entry", i+1), func() bool { return sm.n.Load() == want })
	}
}
