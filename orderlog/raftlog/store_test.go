package raftlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/types"
)

const testSegment = 32 << 10

// storeWithRoom opens a store in dir holding entries 1..n, whose room for a
// new segment is the returned flag (set).
func storeWithRoom(t *testing.T, dir string, n uint64) (*store, *atomic.Bool) {
	t.Helper()
	s, err := openStore(dir, testSegment, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	room := new(atomic.Bool)
	room.Store(true)
	s.roomFor = room.Load
	for i := uint64(1); i <= n; i++ {
		if err := s.StoreLogs([]*raft.Log{entry(i)}); err != nil {
			t.Fatal(err)
		}
	}
	return s, room
}

// While less than a segment is free, appends are refused before raft-wal
// is asked (it could not rotate), and accepted again once there is room.
func TestStoreRefusesAppendsWhenNearlyFull(t *testing.T) {
	s, room := storeWithRoom(t, t.TempDir(), 0)
	defer s.Close()
	room.Store(false)
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

// metaFull is the WAL's metadata store on a disk that is full while full is set.
type metaFull struct {
	*metadb.BoltMetaDB
	full *atomic.Bool
}

func (m metaFull) CommitState(st types.PersistentState) error {
	if m.full.Load() {
		return fmt.Errorf("commit wal metadata: %w", syscall.ENOSPC)
	}
	return m.BoltMetaDB.CommitState(st)
}

// storeOnFullableDisk opens a store in dir whose metadata writes fail while full is set.
func storeOnFullableDisk(t *testing.T, dir string, full *atomic.Bool) *store {
	t.Helper()
	s := newStore(dir, testSegment, hclog.NewNullLogger())
	s.newMeta = func() types.MetaStore { return metaFull{&metadb.BoltMetaDB{}, full} }
	s.roomFor = func() bool { return true }
	if err := s.open(); err != nil {
		t.Fatal(err)
	}
	return s
}

// entry is log entry i of the tests, about 1 KiB.
func entry(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: 1, Data: bytes.Repeat([]byte{byte(i)}, 1000)}
}

// appendUntilRefused appends entries from next on while the disk is full
// and returns the first index refused; a segment fills after some 30.
func appendUntilRefused(t *testing.T, s *store, next uint64) uint64 {
	t.Helper()
	for ; next < 1000; next++ {
		if err := s.StoreLogs([]*raft.Log{entry(next)}); err != nil {
			return next
		}
	}
	t.Fatal("no append failed on a full disk over many segments")
	return 0
}

// appendEventually appends entry i, retrying until the store takes it.
func appendEventually(t *testing.T, s *store, i uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.StoreLogs([]*raft.Log{entry(i)})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("append %d still fails after the disk was freed: %v", i, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkEntries fails unless s holds exactly entries 1..last, intact.
func checkEntries(t *testing.T, s *store, last uint64) {
	t.Helper()
	if got, err := s.LastIndex(); err != nil || got != last {
		t.Fatalf("last index %d (%v), want %d", got, err, last)
	}
	for i := uint64(1); i <= last; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d: %v", i, err)
		}
		if !bytes.Equal(l.Data, entry(i).Data) {
			t.Fatalf("entry %d holds other data", i)
		}
	}
}

// A segment rotation that fails because the disk is full sealed raft-wal's
// WAL for good: every later append failed with "segment is sealed", even
// after the disk was freed and the WAL reopened. Found by `certa chaos
// --long --scenarios disk`. The store finishes the rotation itself once
// there is room, without a restart, and no entry is lost.
func TestStoreRecoversFromRotationOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	var full atomic.Bool
	s := storeOnFullableDisk(t, dir, &full)
	defer s.Close()

	full.Store(true)
	refused := appendUntilRefused(t, s, 1)
	var l raft.Log
	if err := s.GetLog(refused-1, &l); err != nil {
		t.Fatalf("the log must stay readable while it cannot take appends: %v", err)
	}
	full.Store(false)
	appendEventually(t, s, refused)
	for i := refused + 1; i < refused+100; i++ { // over several more rotations
		if err := s.StoreLogs([]*raft.Log{entry(i)}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	checkEntries(t, s, refused+99)
}

// A node stopped while its WAL was left sealed by such a rotation starts
// with a WAL that takes appends.
func TestStoreOpensWALLeftSealedByRotationOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	var full atomic.Bool
	s := storeOnFullableDisk(t, dir, &full)
	full.Store(true)
	refused := appendUntilRefused(t, s, 1)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	full.Store(false)
	s = storeOnFullableDisk(t, dir, &full)
	defer s.Close()
	if err := s.StoreLogs([]*raft.Log{entry(refused)}); err != nil {
		t.Fatalf("append after reopening: %v", err)
	}
	checkEntries(t, s, refused)
}

// A truncation records the new state in the metadata, then creates the new
// tail segment's file. When creating it failed (a full disk: the
// preallocation failed and left the file), raft-wal's memory still had the
// old segments, and every later truncation failed with "file exists";
// reopening the WAL completed the truncation behind Raft's back (it went on
// believing the entries were there, or, after a snapshot, that they were
// gone: "non-monotonic log entries"). Found by `certa chaos --long
// --scenarios disk`. The store reopens the WAL and retries, so the
// truncation succeeds, with no free space needed: the reopened WAL deletes
// the dropped segments.
func TestStoreTruncatesAfterFailedSegmentCreation(t *testing.T) {
	for _, tc := range []struct {
		name        string
		min, max    uint64 // the range deleted from entries 1..10
		first, last uint64 // what remains
		next        uint64 // the next entry, the first of the new segment
	}{
		{"tail", 8, 10, 1, 7, 8},        // a new leader's entries conflict
		{"everything", 1, 10, 0, 0, 11}, // a snapshot was installed
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, room := storeWithRoom(t, dir, 10)
			defer func() { s.Close() }()
			// The file the truncation's new tail segment would be created as.
			names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
			if err != nil || len(names) != 1 {
				t.Fatalf("want one segment file, have %v (%v)", names, err)
			}
			var base, id uint64
			if _, err := fmt.Sscanf(filepath.Base(names[0]), "%020d-%016x.wal", &base, &id); err != nil {
				t.Fatal(err)
			}
			next := filepath.Join(dir, fmt.Sprintf("%020d-%016x.wal", tc.next, id+1))
			if err := os.WriteFile(next, nil, 0o644); err != nil {
				t.Fatal(err)
			}

			room.Store(false)
			if err := s.DeleteRange(tc.min, tc.max); err != nil {
				t.Fatalf("truncation: %v", err)
			}
			if first, _ := s.FirstIndex(); first != tc.first {
				t.Fatalf("first index %d, want %d", first, tc.first)
			}
			checkEntries(t, s, tc.last)
			room.Store(true)
			if err := s.StoreLogs([]*raft.Log{entry(tc.next)}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if s, err = openStore(dir, testSegment, hclog.NewNullLogger()); err != nil {
				t.Fatal(err)
			}
			if last, _ := s.LastIndex(); last != tc.next {
				t.Fatalf("last index %d after reopening, want %d", last, tc.next)
			}
		})
	}
}

// The append that follows a suffix truncation is taken even while the disk
// is nearly full: refused, hashicorp/raft would go on counting the truncated
// entries. Found by `certa chaos --long --scenarios disk`: a follower sat
// with Raft's last index two entries past its log's until the run ended.
func TestStoreTakesTheAppendAfterASuffixTruncation(t *testing.T) {
	s, room := storeWithRoom(t, t.TempDir(), 10)
	defer s.Close()
	room.Store(false)
	if err := s.DeleteRange(1, 3); err != nil { // compaction: not a suffix
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{entry(11)}); !errors.Is(err, errNoRoom) {
		t.Fatalf("append after a compaction on a nearly full disk: %v, want errNoRoom", err)
	}
	if err := s.DeleteRange(9, 10); err != nil { // a new leader's entries conflict
		t.Fatal(err)
	}
	if err := s.StoreLogs([]*raft.Log{entry(9), entry(10)}); err != nil {
		t.Fatalf("append after a suffix truncation: %v", err)
	}
	if err := s.StoreLogs([]*raft.Log{entry(11)}); !errors.Is(err, errNoRoom) {
		t.Fatalf("the next append on a nearly full disk: %v, want errNoRoom", err)
	}
}
