package sqlite

import (
	"context"
	"errors"
	"sync"
	"time"
)

// errLockTimeout is returned by writeLock.lock when the lock stayed taken
// for the caller's whole timeout.
var errLockTimeout = errors.New("write lock timeout")

// lockHolder is a local transaction that can hold the write lock.
type lockHolder interface {
	// bruteForceAbort aborts the holder because the applier needs the lock:
	// it interrupts the holder's running statement, rolls its transaction back
	// and releases the lock (writeLock.unlock) before returning. It may be
	// called more than once and concurrently with the holder's own use.
	bruteForceAbort()
}

// writeLock is the Go-level lock every SQLite writer of an engine takes before
// writing. SQLite allows one writer per file; if two connections raced for the
// file's write lock, one would get SQLITE_BUSY ("database is locked") or wait
// in SQLite's busy handler, unbounded and without priority. Taking this lock
// first means SQLite never sees two writers: local writers queue here with a
// bounded timeout, and the applier has priority over them (it waits at most a
// grace period, then brute-force aborts the local holder).
//
// The lock knows nothing of SQLite; it is tested on its own.
type writeLock struct {
	mu       sync.Mutex
	held     bool
	holder   lockHolder    // the local holder; nil when free or held by a priority user
	priority int           // priority users (the applier) waiting: locals must not take the lock
	changed  chan struct{} // closed and replaced whenever held or priority changes
}

// broadcastLocked wakes every waiter. l.mu must be held.
func (l *writeLock) broadcastLocked() {
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

// waitChanLocked returns the channel closed at the next state change.
func (l *writeLock) waitChanLocked() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// lock takes the lock for the local transaction h, waiting at most timeout
// (errLockTimeout) and until ctx ends (ctx.Err()). A waiting priority user
// goes first.
func (l *writeLock) lock(ctx context.Context, h lockHolder, timeout time.Duration) error {
	var expired <-chan time.Time
	l.mu.Lock()
	for {
		if !l.held && l.priority == 0 {
			l.held, l.holder = true, h
			l.mu.Unlock()
			return nil
		}
		ch := l.waitChanLocked()
		l.mu.Unlock()
		if expired == nil {
			// The timer starts only when we actually have to wait, so the
			// uncontended path allocates nothing.
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-ch:
		case <-expired:
			return errLockTimeout
		case <-ctx.Done():
			return ctx.Err()
		}
		l.mu.Lock()
	}
}

// lockPriority takes the lock for the applier (or another engine-internal
// user such as Restore). Local transactions stop taking the lock as soon as
// it is called. If a local transaction holds the lock, lockPriority waits for
// it at most grace and then brute-force aborts it. It fails only when ctx ends.
func (l *writeLock) lockPriority(ctx context.Context, grace time.Duration) error {
	deadline := time.Now().Add(grace)
	var aborted lockHolder
	l.mu.Lock()
	l.priority++
	for {
		if !l.held {
			l.held, l.holder = true, nil
			l.priority--
			l.broadcastLocked()
			l.mu.Unlock()
			return nil
		}
		h := l.holder
		ch := l.waitChanLocked()
		l.mu.Unlock()

		var t *time.Timer
		var expired <-chan time.Time
		if h != nil && h != aborted {
			wait := time.Until(deadline)
			if wait <= 0 {
				// Past the grace: abort the holder. bruteForceAbort returns
				// once the holder has released the lock.
				aborted = h
				h.bruteForceAbort()
				l.mu.Lock()
				continue
			}
			t = time.NewTimer(wait)
			expired = t.C
		}
		select {
		case <-ch:
		case <-expired:
		case <-ctx.Done():
			if t != nil {
				t.Stop()
			}
			l.mu.Lock()
			l.priority--
			l.broadcastLocked()
			l.mu.Unlock()
			return ctx.Err()
		}
		if t != nil {
			t.Stop()
		}
		l.mu.Lock()
	}
}

// unlock releases the lock. Only the current holder calls it.
func (l *writeLock) unlock() {
	l.mu.Lock()
	if !l.held {
		l.mu.Unlock()
		panic("sqlite engine: unlock of unlocked write lock")
	}
	l.held, l.holder = false, nil
	l.broadcastLocked()
	l.mu.Unlock()
}
