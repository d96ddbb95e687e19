package raftlog

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"certa/orderlog"
)

// appliedIndex is a lower bound of the index up to which the state machine
// has applied the log: the last entry it was handed (fsm.ApplyBatch), or an
// index a barrier proved applied.
type appliedIndex struct {
	mu      sync.Mutex
	index   uint64
	changed chan struct{} // closed when index grows
}

func newAppliedIndex() *appliedIndex { return &appliedIndex{changed: make(chan struct{})} }

func (a *appliedIndex) get() (uint64, <-chan struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.index, a.changed
}

func (a *appliedIndex) raise(index uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if index > a.index {
		a.index = index
		close(a.changed)
		a.changed = make(chan struct{})
	}
}

// internalPoll is how often WaitApplied looks again when the entries it
// waits for are internal to Raft (they never reach the state machine, so
// nothing signals them).
const internalPoll = 200 * time.Microsecond

// maxInternalScan bounds how many entries WaitApplied reads from the log to
// find whether those past the applied index are all internal to Raft.
const maxInternalScan = 64

// Term implements orderlog.Log.
func (l *Log) Term() uint64 { return l.raft.CurrentTerm() }

// CommitIndex implements orderlog.Log.
func (l *Log) CommitIndex() uint64 { return l.raft.CommitIndex() }

// WaitApplied implements orderlog.Log. Raft's own entries (the leader's
// no-op at the start of its term, barriers) never reach the state machine:
// once Raft has handed on everything up to index, entries past the last one
// the state machine applied that are all Raft's own count as applied.
func (l *Log) WaitApplied(ctx context.Context, index uint64) error {
	for {
		got, changed := l.applied.get()
		if got >= index || l.raft.AppliedIndex() >= index && l.onlyInternal(got+1, index) {
			return nil
		}
		select {
		case <-changed:
		case <-time.After(internalPoll):
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return orderlog.ErrClosed
		}
	}
}

// onlyInternal reports whether the entries from first to last are all
// Raft's own (not commands or configurations, which the state machine is
// handed). An entry it cannot read counts as not internal.
func (l *Log) onlyInternal(first, last uint64) bool {
	if last-first >= maxInternalScan {
		return false
	}
	var e raft.Log
	for i := first; i <= last; i++ {
		if err := l.logs.GetLog(i, &e); err != nil {
			return false
		}
		if e.Type == raft.LogCommand || e.Type == raft.LogConfiguration {
			return false
		}
	}
	return true
}
