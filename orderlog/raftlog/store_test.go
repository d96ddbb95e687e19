package raftlog

import (
	"bytes"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// fullDiskFS is the real file system, except that creating a file fails
// with ENOSPC while full is set.
type fullDiskFS struct {
	*fs.FS
	full atomic.Bool
}

func (f *fullDiskFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if f.full.Load() {
		return nil, syscall.ENOSPC
	}
	return f.FS.Create(dir, name, size)
}

// raft-wal creates the next segment in the background after sealing the
// full one; when that fails (a full disk), every later append fails with
// ErrSealed until the WAL is opened again. The store refuses while the
// disk is full and reopens the WAL once there is room. Found by `certa
// chaos --long` (disk): two nodes refused every append for 20 minutes.
func TestStoreRecoversFromAFailedSegmentRotation(t *testing.T) {
	dir := t.TempDir()
	vfs := &fullDiskFS{FS: fs.New()}
	open := func() (*wal.WAL, error) {
		return wal.Open(dir, wal.WithSegmentFiler(segment.NewFiler(dir, vfs)), wal.WithSegmentSize(32<<10))
	}
	s, err := openStore(dir, 32<<10, open)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.roomFor = func() bool { return !vfs.full.Load() }

	data := bytes.Repeat([]byte("x"), 1000)
	next := uint64(1)
	store := func() error {
		err := s.StoreLogs([]*raft.Log{{Index: next, Term: 1, Data: data}})
		if err == nil {
			next++
		}
		return err
	}
	vfs.full.Store(true)
	var refused error
	for range 200 {
		if refused = store(); refused != nil {
			break
		}
	}
	if !errors.Is(refused, wal.ErrSealed) {
		t.Fatalf("with the disk full, got %v after %d entries, want ErrSealed", refused, next-1)
	}
	if err := store(); !errors.Is(err, wal.ErrSealed) {
		t.Fatalf("still full: got %v, want ErrSealed", err)
	}

	vfs.full.Store(false)
	for range 100 {
		if err := store(); err != nil {
			t.Fatalf("after space was freed, entry %d: %v", next, err)
		}
	}
	for i := uint64(1); i < next; i++ {
		var l raft.Log
		if err := s.GetLog(i, &l); err != nil || !bytes.Equal(l.Data, data) {
			t.Fatalf("entry %d: %v", i, err)
		}
	}
	if last, err := s.LastIndex(); err != nil || last != next-1 {
		t.Fatalf("last index %d (%v), want %d", last, err, next-1)
	}
}
