package raftlog

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Writing a snapshot on a full disk left its temporary directory behind,
// partial data and all, in raft's file snapshot store: the node's disk
// stayed full after the space was freed, and it never caught up. Found by
// `certa chaos --long --scenarios disk`. Needs root, for a small tmpfs.
func TestFailedSnapshotsLeaveNothingBehind(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=4m"); err != nil {
		t.Fatalf("mount a tmpfs (needs root): %v", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	s, err := openSnapshots(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	create := func() (raft.SnapshotSink, error) {
		return s.Create(1, 10, 1, raft.Configuration{}, 1, nil)
	}
	leftovers := func(when string) {
		t.Helper()
		tmps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*"+tmpSuffix))
		if len(tmps) > 0 {
			t.Fatalf("%s: left behind %v", when, tmps)
		}
	}

	// A snapshot bigger than the disk: writing fails, raft cancels it.
	sink, err := create()
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var werr error
	for i := 0; i < 128 && werr == nil; i++ {
		_, werr = sink.Write(chunk)
	}
	if werr == nil {
		t.Fatal("wrote 8 MiB to a 4 MiB disk")
	}
	sink.Cancel()
	leftovers("a snapshot cancelled after its writes failed")

	// A disk too full for the snapshot's metadata: creating it fails.
	filler, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	for werr = nil; werr == nil; {
		_, werr = filler.Write(chunk)
	}
	filler.WriteString("x")
	filler.Close()
	if _, err := create(); err == nil {
		t.Fatal("created a snapshot on a full disk")
	}
	leftovers("a snapshot whose creation failed")

	// Leftovers of a node stopped while writing a snapshot go when it starts.
	os.Remove(filepath.Join(dir, "filler"))
	if err := os.Mkdir(filepath.Join(dir, "snapshots", "1-10-123"+tmpSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := openSnapshots(dir, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	leftovers("reopening")
}

// The log store keeps free the space the next snapshot needs, judged by the
// newest snapshot, also after a restart: a node whose log filled its disk
// could not snapshot, so it could never compact the log and stayed full.
// Found by `certa chaos --long --scenarios disk`.
func TestSnapshotStoreKnowsTheRoomTheNextSnapshotNeeds(t *testing.T) {
	dir := t.TempDir()
	s, err := openSnapshots(dir, hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	if s.room() != 0 {
		t.Fatalf("room %d with no snapshot yet, want 0", s.room())
	}
	sink, err := s.Create(1, 10, 1, raft.Configuration{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	sink.Write(make([]byte, 3000))
	sink.Write(make([]byte, 1000))
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	if s.room() != 8000 {
		t.Fatalf("room %d after a 4000-byte snapshot, want 8000", s.room())
	}
	if s, err = openSnapshots(dir, hclog.NewNullLogger()); err != nil {
		t.Fatal(err)
	}
	if s.room() != 8000 {
		t.Fatalf("room %d after reopening, want 8000", s.room())
	}
}
