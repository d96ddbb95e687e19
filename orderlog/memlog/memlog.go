// Package memlog is an in-memory orderlog.Log for tests: a cluster of one
// node, always its own leader unless a test says otherwise, whose log is a
// slice. There are no sockets, no files and no clocks, so tests of what
// consumes the log (the replica core) run fast and decide every grouping of
// entries themselves.
//
// It keeps orderlog's contracts: an entry is committed as soon as it is
// appended, and Append returns once the state machine has applied it; the
// state machine's methods run on one goroutine of the Log, never
// concurrently, and Apply gets entries in log order, numbered 1, 2, ...
// without gaps; AppendAll's entries reach one Apply call, as entries that
// Raft commits together do. The timeouts of Append, Barrier, AddVoter and
// RemoveServer are not used: nothing queues, so ErrTimeout never happens.
//
// A Store is what survives a restart (raftlog's WAL and snapshot files):
// Open restores its snapshot, if any, and replays its entries, as a node
// that restarts does.
package memlog

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"certa/orderlog"
)

// Store holds a log's committed entries and its newest snapshot across
// Logs. One Log at a time uses a store. Safe for concurrent use.
type Store struct {
	mu        sync.Mutex
	entries   []orderlog.Entry // committed entries after the snapshot, in log order
	snapIndex uint64           // index of the last entry the snapshot covers (0: none)
	snapshot  []byte           // nil: none
	inUse     bool
}

// NewStore returns a store holding data as entries 1, 2, ...: a log
// received from a leader, not yet applied here.
func NewStore(data ...[]byte) *Store {
	s := &Store{}
	s.append(data)
	return s
}

// Copy returns a store holding the same entries and snapshot, as another
// node's disk does once the log has replicated to it.
func (s *Store) Copy() *Store {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &Store{entries: slices.Clone(s.entries), snapIndex: s.snapIndex, snapshot: s.snapshot}
}

// LastIndex returns the index of the last entry stored (or covered by the
// snapshot).
func (s *Store) LastIndex() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastIndex()
}

func (s *Store) lastIndex() uint64 {
	if n := len(s.entries); n > 0 {
		return s.entries[n-1].Index
	}
	return s.snapIndex
}

// append stores copies of data as the next entries and returns the index
// of the last one.
func (s *Store) append(data [][]byte) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range data {
		s.entries = append(s.entries, orderlog.Entry{Index: s.lastIndex() + 1, Data: bytes.Clone(d)})
	}
	return s.lastIndex()
}

// after returns up to max entries (0: all) that follow index.
func (s *Store) after(index uint64, max int) []orderlog.Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, _ := slices.BinarySearchFunc(s.entries, index+1, func(e orderlog.Entry, idx uint64) int {
		return cmp.Compare(e.Index, idx)
	})
	rest := s.entries[i:]
	if max > 0 && len(rest) > max {
		rest = rest[:max]
	}
	return slices.Clone(rest)
}

// keepSnapshot makes snap, covering the entries up to index, the newest
// snapshot and drops those entries.
func (s *Store) keepSnapshot(index uint64, snap []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if index < s.snapIndex {
		return // a newer one was kept meanwhile
	}
	s.snapIndex, s.snapshot = index, snap
	i := 0
	for i < len(s.entries) && s.entries[i].Index <= index {
		i++
	}
	s.entries = slices.Clone(s.entries[i:])
}

// Config configures a Log.
type Config struct {
	// ID is this node's id; it starts as the leader of a configuration of
	// itself alone (a voter at Address). Required.
	ID      string
	Address string
	// Store is the log's storage; nil: a new, empty one.
	Store *Store
	// MaxApplyEntries is the most entries one Apply call gets (0: no
	// limit), in the replay at Open as afterwards.
	MaxApplyEntries int
}

// Log is an orderlog.Log in memory. Its methods are safe for concurrent use.
type Log struct {
	cfg   Config
	store *Store
	sm    orderlog.StateMachine

	wake     chan struct{}          // entries wait to be applied (capacity 1)
	snapshot chan chan capturedSnap // Snapshot's requests to the apply goroutine
	done     chan struct{}          // closed by Close
	exited   chan struct{}          // closed when the apply goroutine returns

	mu        sync.Mutex
	leader    string
	term      uint64
	servers   []orderlog.Server
	closed    bool
	applied   uint64        // last index the state machine applied (or restored)
	appliedCh chan struct{} // closed and replaced when applied grows, closed at Close
}

var _ orderlog.Log = (*Log)(nil)

type capturedSnap struct {
	index uint64
	snap  orderlog.Snapshot
	err   error
}

// Open starts a log over cfg.Store that feeds sm. It restores the store's
// snapshot, if any, and has sm apply every stored entry after it before it
// returns. Errors: the store is in use by another open Log, or sm's Restore
// failed.
func Open(cfg Config, sm orderlog.StateMachine) (*Log, error) {
	if cfg.ID == "" {
		return nil, errors.New("memlog: ID is required")
	}
	if cfg.Store == nil {
		cfg.Store = NewStore()
	}
	s := cfg.Store
	s.mu.Lock()
	if s.inUse {
		s.mu.Unlock()
		return nil, errors.New("memlog: the store is in use by an open Log")
	}
	s.inUse = true
	snap, snapIndex := s.snapshot, s.snapIndex
	s.mu.Unlock()

	l := &Log{
		cfg: cfg, store: s, sm: sm,
		wake: make(chan struct{}, 1), snapshot: make(chan chan capturedSnap),
		done: make(chan struct{}), exited: make(chan struct{}),
		leader: cfg.ID, term: 1,
		servers:   []orderlog.Server{{ID: cfg.ID, Address: cfg.Address, Voter: true}},
		appliedCh: make(chan struct{}),
	}
	started := make(chan error, 1)
	go l.run(snap, snapIndex, started)
	if err := <-started; err != nil {
		s.mu.Lock()
		s.inUse = false
		s.mu.Unlock()
		return nil, err
	}
	return l, nil
}

// run is the apply goroutine: every call to the state machine is made here.
func (l *Log) run(snap []byte, snapIndex uint64, started chan<- error) {
	defer close(l.exited)
	if snap != nil {
		if err := l.sm.Restore(bytes.NewReader(snap)); err != nil {
			started <- fmt.Errorf("memlog: restore snapshot at index %d: %w", snapIndex, err)
			return
		}
		l.setApplied(snapIndex)
	}
	for l.applyNext() {
	}
	started <- nil
	for {
		select {
		case <-l.done:
			return
		case req := <-l.snapshot:
			l.mu.Lock()
			index := l.applied
			l.mu.Unlock()
			s, err := l.sm.Snapshot()
			req <- capturedSnap{index: index, snap: s, err: err}
		case <-l.wake:
			for l.applyNext() {
			}
		}
	}
}

// applyNext hands the next entries not yet applied to the state machine and
// reports whether there were any.
func (l *Log) applyNext() bool {
	l.mu.Lock()
	from := l.applied
	l.mu.Unlock()
	entries := l.store.after(from, l.cfg.MaxApplyEntries)
	if len(entries) == 0 {
		return false
	}
	l.sm.Apply(entries)
	l.setApplied(entries[len(entries)-1].Index)
	return true
}

func (l *Log) setApplied(index uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if index > l.applied {
		l.applied = index
		if !l.closed {
			close(l.appliedCh)
			l.appliedCh = make(chan struct{})
		}
	}
}

// Append implements orderlog.Log.
func (l *Log) Append(data []byte, timeout time.Duration) error {
	return l.AppendAll(data)
}

// AppendAll appends each of data as one entry, in order, and returns once
// the state machine has applied them all. They reach it in one Apply call
// (unless MaxApplyEntries splits them), possibly with entries appended
// concurrently. The errors are Append's; none is appended if one is too
// large.
func (l *Log) AppendAll(data ...[]byte) error {
	for _, d := range data {
		if len(d) > orderlog.MaxEntryBytes {
			return fmt.Errorf("%w: %d bytes, the limit is %d", orderlog.ErrTooLarge, len(d), orderlog.MaxEntryBytes)
		}
	}
	if err := l.leaderOnly(); err != nil {
		return err
	}
	last := l.store.append(data)
	return l.applyUpTo(last)
}

// leaderOnly returns ErrClosed or ErrNotLeader, or nil on the leader.
func (l *Log) leaderOnly() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return orderlog.ErrClosed
	case l.leader != l.cfg.ID:
		return orderlog.ErrNotLeader
	}
	return nil
}

// applyUpTo wakes the apply goroutine and waits until it has applied index.
// The entries are in the log: if it closes first, their outcome is unknown.
func (l *Log) applyUpTo(index uint64) error {
	select {
	case l.wake <- struct{}{}:
	default: // already woken; it reads the store after waking
	}
	if err := l.WaitApplied(context.Background(), index); err != nil {
		return fmt.Errorf("%w: %v", orderlog.ErrUnknownOutcome, err)
	}
	return nil
}

// Barrier implements orderlog.Log.
func (l *Log) Barrier(timeout time.Duration) error {
	if err := l.leaderOnly(); err != nil {
		return err
	}
	return l.applyUpTo(l.store.LastIndex())
}

// Term implements orderlog.Log.
func (l *Log) Term() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.term
}

// CommitIndex implements orderlog.Log: every stored entry is committed.
func (l *Log) CommitIndex() uint64 { return l.store.LastIndex() }

// WaitApplied implements orderlog.Log.
func (l *Log) WaitApplied(ctx context.Context, index uint64) error {
	for {
		l.mu.Lock()
		applied, changed, closed := l.applied, l.appliedCh, l.closed
		l.mu.Unlock()
		switch {
		case applied >= index:
			return nil
		case closed:
			return orderlog.ErrClosed
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// SetLeader makes id the leader ("" none known; another id than this
// node's: this node follows it and refuses appends with ErrNotLeader). A
// change of leader starts a new term.
func (l *Log) SetLeader(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if id != l.leader {
		l.leader = id
		l.term++
	}
}

// Leader implements orderlog.Log.
func (l *Log) Leader() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader
}

// IsLeader implements orderlog.Log.
func (l *Log) IsLeader() bool { return l.leaderOnly() == nil }

// State implements orderlog.Log.
func (l *Log) State() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return "shutdown"
	case l.leader == l.cfg.ID:
		return "leader"
	case l.leader == "":
		return "candidate"
	}
	return "follower"
}

// AddVoter implements orderlog.Log.
func (l *Log) AddVoter(id, addr string, timeout time.Duration) error {
	if err := l.leaderOnly(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = slices.DeleteFunc(l.servers, func(s orderlog.Server) bool { return s.ID == id })
	l.servers = append(l.servers, orderlog.Server{ID: id, Address: addr, Voter: true})
	return nil
}

// RemoveServer implements orderlog.Log. A leader that removes itself
// steps down: no leader is known afterwards.
func (l *Log) RemoveServer(id string, timeout time.Duration) error {
	if err := l.leaderOnly(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = slices.DeleteFunc(l.servers, func(s orderlog.Server) bool { return s.ID == id })
	if id == l.cfg.ID {
		l.leader = ""
		l.term++
	}
	return nil
}

// Servers implements orderlog.Log.
func (l *Log) Servers() ([]orderlog.Server, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, orderlog.ErrClosed
	}
	return slices.Clone(l.servers), nil
}

// Stats implements orderlog.Log.
func (l *Log) Stats() orderlog.Stats {
	l.store.mu.Lock()
	last, snapIndex := l.store.lastIndex(), l.store.snapIndex
	l.store.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	return orderlog.Stats{LastIndex: last, CommitIndex: last, AppliedIndex: l.applied, Term: l.term, SnapshotIndex: snapIndex}
}

// Snapshot has the state machine capture its state between two Apply
// calls, writes the snapshot out while Apply goes on, and keeps it in the
// store in place of the entries it covers, as raftlog does every so many
// entries. It returns the index of the last entry the snapshot covers.
func (l *Log) Snapshot() (uint64, error) {
	index, _, err := l.snapshotNow()
	return index, err
}

// OpenSnapshot implements orderlog.Log.
func (l *Log) OpenSnapshot() (io.ReadCloser, error) {
	_, snap, err := l.snapshotNow()
	if err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(snap)), nil
}

// snapshotNow is Snapshot, also returning the snapshot written.
func (l *Log) snapshotNow() (uint64, []byte, error) {
	req := make(chan capturedSnap, 1)
	select {
	case l.snapshot <- req:
	case <-l.done:
		return 0, nil, orderlog.ErrClosed
	}
	c := <-req
	if c.err != nil {
		return 0, nil, fmt.Errorf("memlog: snapshot: %w", c.err)
	}
	defer c.snap.Release()
	var buf bytes.Buffer
	if _, err := c.snap.WriteTo(&buf); err != nil {
		return 0, nil, fmt.Errorf("memlog: write snapshot: %w", err)
	}
	l.store.keepSnapshot(c.index, buf.Bytes())
	return c.index, buf.Bytes(), nil
}

// Close implements orderlog.Log. Appends and waits under way fail (an
// append with ErrUnknownOutcome); Close returns once the state machine is
// no longer called, and the store may then be opened again.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	close(l.appliedCh)
	l.mu.Unlock()
	close(l.done)
	<-l.exited
	l.store.mu.Lock()
	l.store.inUse = false
	l.store.mu.Unlock()
	return nil
}
