package raftlog

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// While less than a segment is free, appends are refused before raft-wal
// is asked (it could not rotate), and accepted again once there is room.
func TestStoreRefusesAppendsWhenNearlyFull(t *testing.T) {
	dir := t.TempDir()
	w, err := wal.Open(dir, wal.WithSegmentSize(32<<10))
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(dir, 32<<10, w)
	defer s.Close()
	var room atomic.Bool
	s.roomFor = room.Load
	if err := s.StoreLogs([]*raft.Log{{Index: 1, Term: 1}}); !errors.Is(err, errNoRoom) {
		t.Fatalf("got %v, want errNoRoom", err)
	}
	room.Store(true)
	if err := s.StoreLogs([]*raft.Log{{Index: 1, Term: 1}}); err != nil {
		t.Fatal(err)
	}
	if last, _ := s.LastIndex(); last != 1 {
		t.Fatalf("last index %d, want 1", last)
	}
	if !s.IsMonotonic() {
		t.Fatal("the store must tell Raft the log is monotonic, as raft-wal does")
	}
}
