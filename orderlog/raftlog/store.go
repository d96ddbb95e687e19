package raftlog

import (
	"errors"
	"syscall"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// store is the node's log and stable store: a raft-wal WAL that refuses
// appends while less than a log segment of disk space is free.
//
// raft-wal seals a full segment inside an append and creates the next one
// (preallocated) in the background. When that creation fails for want of
// space, every later append fails with ErrSealed, and `certa chaos --long`
// (disk) left such a WAL sealed even after reopening: the node never took
// another entry. Refusing appends before the disk is that full keeps the
// rotation from failing (short of another process taking the space in
// between); Raft retries refused appends.
type store struct {
	*wal.WAL
	roomFor func() bool // whether a new segment fits on the disk
}

var _ raft.MonotonicLogStore = (*store)(nil)

// openStore wraps w, whose segments of segmentBytes are in dir.
func openStore(dir string, segmentBytes int, w *wal.WAL) *store {
	return &store{WAL: w, roomFor: func() bool { return freeBytes(dir) > uint64(segmentBytes)+1<<20 }}
}

// freeBytes is the space left for unprivileged writes on dir's file system.
func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// errNoRoom refuses an append while the disk is nearly full.
var errNoRoom = errors.New("raftlog: refusing to append: less than a log segment of disk space is free")

// StoreLogs appends logs unless the disk is nearly full.
func (s *store) StoreLogs(logs []*raft.Log) error {
	if !s.roomFor() {
		return errNoRoom
	}
	return s.WAL.StoreLogs(logs)
}

// StoreLog appends one log unless the disk is nearly full.
func (s *store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }
