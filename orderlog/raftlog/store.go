package raftlog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"certa/orderlog"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// store is the node's log and stable store: a raft-wal WAL that survives
// its segment rotations failing for want of disk space.
//
// raft-wal seals a full segment inside an append, then rotates in the
// background: it records the seal in its metadata and creates the next
// segment file. A tail truncation does the same in the foreground. When a
// rotation fails (the disk is full), raft-wal's memory and files disagree:
// every later append fails with ErrSealed, every later truncation with
// "file exists", and reopening does not help with the first: the reopened
// WAL takes the sealed file as its tail again. store therefore
//   - refuses appends while less than a segment and the next snapshot's
//     space are free, so that a rotation rarely meets a full disk, and the
//     snapshot that lets Raft compact the log has room (without that
//     reserve, a node's log filled its disk for good);
//   - when an append or a truncation fails, finishes the rotation
//     (finishRotation) and reopens the WAL, and tries once more (change);
//   - finishes such a rotation before opening the WAL at startup too.
type store struct {
	dir     string
	segment int // segment size in bytes
	logger  hclog.Logger
	newMeta func() types.MetaStore // the WAL's metadata store; tests inject failures
	roomFor func() bool            // whether a new segment and reserve() fit on the disk
	reserve func() uint64          // more space to keep free: the next snapshot's
	full    func()                 // called when an append is refused for want of room
	closing chan struct{}          // closed when the node shuts down; ends retries
	failOp  func() error           // tests: an error for the next change, or nil

	mu         sync.RWMutex    // guards w; held exclusively only to swap it
	w          *wal.WAL        // nil after a failed reopen, until one succeeds
	meta       types.MetaStore // w's metadata store
	lastRepair time.Time       // repairs are tried at most once per repairEvery

	truncatedTail atomic.Bool // the last change was a suffix truncation
}

// repairEvery spaces attempts to unseal the WAL: each one reads the tail segment.
const repairEvery = time.Second

var _ raft.MonotonicLogStore = (*store)(nil)

var (
	// errNoRoom refuses an append while the disk is nearly full.
	errNoRoom = errors.New("raftlog: refusing to append: the disk has no room for another log segment and a snapshot")
	// errRepairWait defers a repair tried less than repairEvery ago.
	errRepairWait = errors.New("waiting to retry")
	// errNoWAL is returned while the WAL is closed after a failed reopen.
	errNoWAL = errors.New("raftlog: the log is unavailable: reopening it failed")
	// errEntryTooLarge refuses to store an entry the WAL could not read back.
	errEntryTooLarge = errors.New("raftlog: refusing to store an entry larger than the log can read back")
)

// maxStoredBytes bounds the data and extensions of an entry the store
// writes: raft-wal writes a record of any size but refuses to read back one
// over segment.MaxEntrySize (64 MiB) as corrupt, and a record holds the
// entry's data and extensions plus at most 80 bytes of index, term, type,
// lengths and time. Appends are refused long before, at
// orderlog.MaxEntryBytes; this catches entries that reach a follower from
// a leader that did not check (an older version).
const maxStoredBytes = segment.MaxEntrySize - 1024

// orderlog.MaxEntryBytes must fit under maxStoredBytes (this fails to
// compile otherwise).
const _ = uint(maxStoredBytes - orderlog.MaxEntryBytes)

// openStore opens the WAL in dir, whose segments are segmentBytes long.
func openStore(dir string, segmentBytes int, logger hclog.Logger) (*store, error) {
	s := newStore(dir, segmentBytes, logger)
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

// newStore is a store with its defaults, not yet open.
func newStore(dir string, segmentBytes int, logger hclog.Logger) *store {
	s := &store{
		dir: dir, segment: segmentBytes, logger: logger,
		newMeta: func() types.MetaStore { return &metadb.BoltMetaDB{} },
		reserve: func() uint64 { return 0 },
		full:    func() {},
		closing: make(chan struct{}),
	}
	s.roomFor = func() bool { return freeBytes(dir) > uint64(segmentBytes)+s.reserve()+1<<20 }
	return s
}

// open finishes a rotation left half done, then opens the WAL. The caller
// holds mu or has the only reference to s.
func (s *store) open() error {
	// The metadata store is ours to close if Open fails: left open, it would
	// hold the file lock and the next Open would wait for it forever.
	meta := s.newMeta()
	if err := finishRotation(s.dir, s.segment, meta); err != nil {
		meta.Close()
		return err
	}
	w, err := wal.Open(s.dir, wal.WithMetaStore(meta), wal.WithLogger(s.logger), wal.WithSegmentSize(s.segment))
	if err != nil {
		meta.Close()
		return fmt.Errorf("raftlog: open wal: %w", err)
	}
	s.w, s.meta = w, meta
	return nil
}

// freeBytes is the space left for unprivileged writes on dir's file system.
func freeBytes(dir string) uint64 {
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) != nil {
		return 0
	}
	return st.Bavail * uint64(st.Bsize)
}

// StoreLogs appends logs unless the disk is nearly full. The append that
// follows a suffix truncation is never refused, and is retried until it
// succeeds or the node shuts down: hashicorp/raft truncates a follower's
// conflicting entries and then appends the leader's, and when that append
// fails it keeps counting the truncated entries as its own (a TODO in its
// appendEntries): it then rejects every later append ("failed to get log
// entry"), the leader walks it back one entry per retry with growing
// back-off, and the node never catches up until it restarts (the
// disk-full chaos scenario, in CI). Waiting keeps Raft's view and the log
// the same; a follower whose disk is full cannot take entries anyway.
func (s *store) StoreLogs(logs []*raft.Log) error {
	for _, l := range logs {
		if len(l.Data)+len(l.Extensions) > maxStoredBytes {
			s.logger.Error("refusing to store a log entry too large to be read back", "index", l.Index, "bytes", len(l.Data)+len(l.Extensions))
			return fmt.Errorf("%w: entry %d has %d bytes", errEntryTooLarge, l.Index, len(l.Data)+len(l.Extensions))
		}
	}
	store := func(w *wal.WAL) error { return w.StoreLogs(logs) }
	if s.truncatedTail.Swap(false) {
		return s.changeUntilDone(store)
	}
	if !s.roomFor() {
		s.full()
		return errNoRoom
	}
	return s.change(store)
}

// retryEvery spaces the attempts of changeUntilDone.
const retryEvery = 100 * time.Millisecond

// changeUntilDone runs change until it succeeds or the node shuts down:
// for changes Raft cannot survive failing (see StoreLogs and DeleteRange).
func (s *store) changeUntilDone(op func(*wal.WAL) error) error {
	for logged := false; ; {
		err := s.change(op)
		if err == nil {
			if logged {
				s.logger.Warn("the log change succeeded after all")
			}
			return nil
		}
		if !logged {
			s.logger.Error("a change Raft cannot undo failed; retrying until it succeeds (free disk space)", "error", err)
			logged = true
		}
		select {
		case <-s.closing:
			return err
		case <-time.After(retryEvery):
		}
	}
}

// change runs op, a change to the log. If op fails, change repairs the WAL
// and runs op once more, so that what it returns holds: after a failure,
// raft-wal's files can be ahead of its memory (a truncation recorded, but
// its next segment not created), and reopening the WAL would complete a
// change Raft was told had failed.
func (s *store) change(op func(*wal.WAL) error) error {
	err := s.withFault(op)
	if err == nil {
		return nil
	}
	if rerr := s.repair(); rerr != nil {
		return fmt.Errorf("%w (repairing the log: %v)", err, rerr)
	}
	return s.withFault(op)
}

// withFault runs op on the open WAL unless a test injects a failure.
func (s *store) withFault(op func(*wal.WAL) error) error {
	if s.failOp != nil {
		if err := s.failOp(); err != nil {
			return err
		}
	}
	return s.with(op)
}

// StoreLog implements raft.LogStore, as StoreLogs.
func (s *store) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// repair finishes a rotation the WAL failed, then closes and reopens it,
// bringing its memory in line with its files. It needs no free space (the
// reopened WAL deletes the segments a failed truncation dropped), and does
// nothing if it ran less than repairEvery ago; if finishing the rotation
// fails, the WAL stays open as it was.
func (s *store) repair() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.lastRepair) < repairEvery {
		return errRepairWait
	}
	s.lastRepair = time.Now()
	if s.w != nil {
		// Holding mu, no WAL operation runs, as finishRotation requires.
		if err := finishRotation(s.dir, s.segment, s.meta); err != nil {
			return err
		}
		if err := s.w.Close(); err != nil {
			return err
		}
		s.w = nil
	}
	if err := s.open(); err != nil {
		return err
	}
	s.logger.Warn("reopened the log after a failed change")
	return nil
}

// with runs f on the open WAL.
func (s *store) with(f func(*wal.WAL) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.w == nil {
		return errNoWAL
	}
	return f(s.w)
}

// FirstIndex implements raft.LogStore.
func (s *store) FirstIndex() (i uint64, err error) {
	err = s.with(func(w *wal.WAL) (e error) { i, e = w.FirstIndex(); return })
	return i, err
}

// LastIndex implements raft.LogStore.
func (s *store) LastIndex() (i uint64, err error) {
	err = s.with(func(w *wal.WAL) (e error) { i, e = w.LastIndex(); return })
	return i, err
}

// GetLog implements raft.LogStore. An entry over raft-wal's read limit
// (written by a version of certa without a size limit) is reported with
// its cause: Raft stops the node on it, and the node cannot restart from
// its own log past that entry.
func (s *store) GetLog(index uint64, l *raft.Log) error {
	err := s.with(func(w *wal.WAL) error { return w.GetLog(index, l) })
	if err != nil && errors.Is(err, types.ErrCorrupt) && strings.Contains(err.Error(), "MaxEntrySize") {
		err = fmt.Errorf("%w: %w", errOversizedEntry{index}, err)
		s.logger.Error(err.Error())
	}
	return err
}

// errOversizedEntry reports a log entry the WAL cannot read back.
type errOversizedEntry struct{ index uint64 }

func (e errOversizedEntry) Error() string {
	return fmt.Sprintf("raftlog: log entry %d is larger than 64 MiB, which the log (raft-wal) cannot read back; "+
		"it was written by a certa version without a write-set size limit. This node cannot replay its log past it; "+
		"it can only be brought back with a state transfer (a snapshot taken after entry %d, from a member that has one)", e.index, e.index)
}

// DeleteRange implements raft.LogStore. A suffix truncation (min past the
// first entry) is retried until it succeeds, as the append after it (see
// StoreLogs): after a failed change the WAL's files can be ahead of its
// memory, so a truncation reported failed may yet take effect when the WAL
// is reopened, behind Raft's back.
func (s *store) DeleteRange(min, max uint64) error {
	first, err := s.FirstIndex()
	if err != nil {
		return err
	}
	del := func(w *wal.WAL) error { return w.DeleteRange(min, max) }
	if min <= first {
		return s.change(del)
	}
	if err := s.changeUntilDone(del); err != nil {
		return err
	}
	s.truncatedTail.Store(true)
	return nil
}

// Set implements raft.StableStore.
func (s *store) Set(key, val []byte) error {
	return s.with(func(w *wal.WAL) error { return w.Set(key, val) })
}

// Get implements raft.StableStore.
func (s *store) Get(key []byte) (v []byte, err error) {
	err = s.with(func(w *wal.WAL) (e error) { v, e = w.Get(key); return })
	return v, err
}

// SetUint64 implements raft.StableStore.
func (s *store) SetUint64(key []byte, val uint64) error {
	return s.with(func(w *wal.WAL) error { return w.SetUint64(key, val) })
}

// GetUint64 implements raft.StableStore.
func (s *store) GetUint64(key []byte) (v uint64, err error) {
	err = s.with(func(w *wal.WAL) (e error) { v, e = w.GetUint64(key); return })
	return v, err
}

// IsMonotonic tells Raft the log takes only consecutive indexes, as raft-wal does.
func (s *store) IsMonotonic() bool { return true }

// stopRetries ends the retries of changeUntilDone: Raft's shutdown waits
// for the append in progress. Call it once, before Close.
func (s *store) stopRetries() { close(s.closing) }

// Close closes the WAL.
func (s *store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return nil
	}
	err := s.w.Close()
	s.w = nil
	return err
}
