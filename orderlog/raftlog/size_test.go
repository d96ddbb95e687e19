package raftlog

import (
	"errors"
	"strings"
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
	l, err := Open(Config{ID: "n1", Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: true,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond}, &countingSM{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eventually(t, 10*time.Second, "n1 leads", l.IsLeader)
	before := l.Stats().LastIndex
	if err := l.Append(make([]byte, orderlog.MaxEntryBytes+1), time.Second); !errors.Is(err, orderlog.ErrTooLarge) {
		t.Fatalf("append over the limit: %v, want ErrTooLarge", err)
	}
	if after := l.Stats().LastIndex; after != before {
		t.Fatalf("the log grew from %d to %d entries", before, after)
	}
}
