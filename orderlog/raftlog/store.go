package raftlog

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// store is the node's log and stable store: a raft-wal WAL that is closed
// and opened again when it is stuck sealed.
//
// raft-wal seals a full segment inside an append and creates the next one
// in the background. When that creation fails (no space for the new,
// preallocated segment), every later append fails with ErrSealed until
// the WAL is opened again, which finishes the rotation. So on ErrSealed the
// store reopens the WAL, once there is room for a segment, and retries.
type store struct {
	open      func() (*wal.WAL, error)
	roomFor   func() bool // whether a new segment fits on the disk
	mu        sync.RWMutex
	w         *wal.WAL // nil after a failed reopen
	reopenErr error    // why w is nil
}

var (
	_ raft.LogStore          = (*store)(nil)
	_ raft.StableStore       = (*store)(nil)
	_ raft.MonotonicLogStore = (*store)(nil)
)

// openStore opens the WAL in dir with opts' segment size.
func openStore(dir string, segmentBytes int, open func() (*wal.WAL, error)) (*store, error) {
	w, err := open()
	if err != nil {
		return nil, err
	}
	return &store{open: open, w: w, roomFor: func() bool { return freeBytes(dir) > uint64(segmentBytes)+1<<20 }}, nil
}

// freeBytes is the space left for unprivileged writes on dir's file system.
func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// errUnavailable is returned while the WAL could not be opened again.
var errUnavailable = errors.New("raftlog: the log is unavailable")

// with runs f on the WAL under the read lock.
func (s *store) with(f func(w *wal.WAL) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return fmt.Errorf("%w: reopening it failed: %v", errUnavailable, s.reopenErr)
	}
	return f(s.w)
}

// reopen closes and opens the WAL, if it is still the one that failed.
func (s *store) reopen(failed *wal.WAL) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w != failed && s.w != nil {
		return nil // reopened meanwhile
	}
	if s.w != nil {
		s.w.Close()
		s.w = nil
	}
	s.w, s.reopenErr = s.open()
	return s.reopenErr
}

func (s *store) StoreLogs(logs []*raft.Log) error {
	var used *wal.WAL
	err := s.with(func(w *wal.WAL) error { used = w; return w.StoreLogs(logs) })
	if errors.Is(err, errUnavailable) || errors.Is(err, wal.ErrSealed) {
		if !s.roomFor() {
			return err // refused; Raft retries the append later
		}
		if rerr := s.reopen(used); rerr != nil {
			return fmt.Errorf("%w (reopening the log: %v)", err, rerr)
		}
		return s.with(func(w *wal.WAL) error { return w.StoreLogs(logs) })
	}
	return err
}

func (s *store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

func (s *store) FirstIndex() (i uint64, err error) {
	err = s.with(func(w *wal.WAL) error { i, err = w.FirstIndex(); return err })
	return i, err
}

func (s *store) LastIndex() (i uint64, err error) {
	err = s.with(func(w *wal.WAL) error { i, err = w.LastIndex(); return err })
	return i, err
}

func (s *store) GetLog(index uint64, l *raft.Log) error {
	return s.with(func(w *wal.WAL) error { return w.GetLog(index, l) })
}

func (s *store) DeleteRange(min, max uint64) error {
	return s.with(func(w *wal.WAL) error { return w.DeleteRange(min, max) })
}

func (s *store) Set(k, v []byte) error {
	return s.with(func(w *wal.WAL) error { return w.Set(k, v) })
}

func (s *store) Get(k []byte) (v []byte, err error) {
	err = s.with(func(w *wal.WAL) error { v, err = w.Get(k); return err })
	return v, err
}

func (s *store) SetUint64(k []byte, v uint64) error {
	return s.with(func(w *wal.WAL) error { return w.SetUint64(k, v) })
}

func (s *store) GetUint64(k []byte) (v uint64, err error) {
	err = s.with(func(w *wal.WAL) error { v, err = w.GetUint64(k); return err })
	return v, err
}

// IsMonotonic tells Raft the log cannot have gaps (raft-wal's rule): after
// restoring a snapshot Raft then empties the log.
func (s *store) IsMonotonic() bool { return true }

// Close closes the WAL.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	s.reopenErr = errors.New("closed")
	return err
}
