// Package orderlog defines the total-order log through which every write set
// passes: a replicated, fsync'd log whose committed entries every node hands,
// in the same order, to its state machine. orderlog/raftlog implements it with
// hashicorp/raft; no other package of ours knows Raft. orderlog/memlog
// implements it in memory, for tests.
package orderlog

import (
	"context"
	"errors"
	"io"
	"time"
)

// Errors returned by Log methods. They are classified by what the caller may
// conclude about an entry it tried to append.
var (
	// ErrNotLeader: this node is not the leader; the entry was not appended.
	ErrNotLeader = errors.New("orderlog: not the leader")
	// ErrUnknownOutcome: the entry may or may not commit (leadership was lost
	// or the log shut down after it was appended).
	ErrUnknownOutcome = errors.New("orderlog: outcome unknown")
	// ErrTimeout: the entry could not be handed to the log in time; it was not appended.
	ErrTimeout = errors.New("orderlog: timed out")
	// ErrClosed: the log was closed.
	ErrClosed = errors.New("orderlog: closed")
	// ErrTooLarge: the entry is larger than MaxEntryBytes; it was not appended.
	ErrTooLarge = errors.New("orderlog: entry larger than the log can store")
)

// MaxEntryBytes is the largest entry every Log stores and reads back; Append
// refuses a larger one with ErrTooLarge. (raftlog's WAL, raft-wal, writes
// larger records but refuses to read back one over 64 MiB: a node whose log
// held one could not restart.) Callers keep their entries well below it.
const MaxEntryBytes = 63 << 20

// Entry is one committed log entry.
type Entry struct {
	Index uint64 // position in the log (Raft index)
	Data  []byte
}

// StateMachine consumes committed entries. Its methods are called from one
// goroutine, never concurrently with each other.
type StateMachine interface {
	// Apply is called with committed entries in log order, without gaps
	// between calls other than entries internal to the log.
	Apply(entries []Entry)
	// Snapshot captures the state reached so far. The snapshot is written
	// out later, while Apply goes on.
	Snapshot() (Snapshot, error)
	// Restore replaces the state with the contents of a snapshot.
	Restore(r io.Reader) error
}

// Snapshot is captured state, written out by the log for compaction and for
// nodes that join or fall too far behind.
type Snapshot interface {
	WriteTo(w io.Writer) (int64, error)
	Release()
}

// Server is one voting or non-voting member of the log's configuration.
type Server struct {
	ID      string
	Address string
	Voter   bool
}

// Log is the total-order log. Its methods are safe for concurrent use.
type Log interface {
	// Append appends data as one entry on the leader and returns once it is
	// committed on a majority and applied by this node's state machine.
	// Errors: ErrNotLeader, ErrTimeout, ErrTooLarge (not appended),
	// ErrUnknownOutcome.
	Append(data []byte, timeout time.Duration) error
	// Barrier returns once every entry committed before the call has been
	// applied by this node's state machine. Leader only (else ErrNotLeader).
	Barrier(timeout time.Duration) error
	// Term returns the current Raft term. A node's term only grows, and it
	// grows before the node votes for another candidate.
	Term() uint64
	// CommitIndex returns the index of the last entry this node knows to be
	// committed. On a leader that has committed an entry of its own term
	// (any Barrier since it was elected), every entry committed anywhere
	// before the call is at or below it.
	CommitIndex() uint64
	// WaitApplied returns once this node's state machine has applied every
	// entry up to index, or with ctx's error (ErrClosed when the log closes).
	WaitApplied(ctx context.Context, index uint64) error
	// Leader returns the leader's ID, or "" when none is known.
	Leader() string
	// IsLeader reports whether this node is the leader.
	IsLeader() bool
	// State returns "leader", "follower", "candidate" or "shutdown".
	State() string
	// AddVoter adds (or updates) a voting member. Leader only.
	AddVoter(id, addr string, timeout time.Duration) error
	// RemoveServer removes a member from the configuration. Leader only;
	// a leader that removes itself steps down once the change commits.
	RemoveServer(id string, timeout time.Duration) error
	// Servers returns the current configuration.
	Servers() ([]Server, error)
	// Stats returns log positions for monitoring.
	Stats() Stats
	// OpenSnapshot has the state machine capture its state now, between
	// two Apply calls (or takes the newest snapshot when nothing was
	// applied since it), and opens it for reading in the form Restore
	// reads. Another node that must take this node's state reads it. The
	// caller closes it.
	OpenSnapshot() (io.ReadCloser, error)
	// Close stops the log; pending operations fail.
	Close() error
}

// Stats are log positions for monitoring.
type Stats struct {
	LastIndex    uint64
	CommitIndex  uint64
	AppliedIndex uint64
	Term         uint64
	LastContact  time.Time // last contact with the leader (followers)
	// SnapshotIndex is the index of the newest snapshot this node took or
	// received (0: none); entries up to it may have been compacted away.
	SnapshotIndex uint64
	// CatchingUp: this node joined with no state and takes no part in
	// elections until its log holds everything committed.
	CatchingUp bool
}
