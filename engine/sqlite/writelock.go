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

// retryPark is how soon a waiter tries again to park a holder that was
// idle but momentarily busy (finishing a call).
const retryPark = time.Millisecond

// lockHolder is a local transaction that can hold the write lock.
type lockHolder interface {
	// idle reports whether the holder is between statements, waiting for
	// its client, and since when it counts as idle for local writers (a
	// holder that is costly to park may count from a little later).
	idle() (since time.Time, ok bool)
	// park releases the lock (writeLock.unlock) without ending the
	// holder's transaction: its changes are set aside and re-applied at its
	// next statement. It returns false, doing nothing, if the holder is
	// busy; true if it parked or no longer holds the lock.
	park() bool
	// bruteForceAbort ends the holder's transaction because the applier
	// needs the lock: it interrupts the holder's running statement, rolls
	// its transaction back and releases the lock before returning. It may
	// be called more than once and concurrently with the holder's own use.
	bruteForceAbort()
	// patience is how long the applier waits for the holder's running
	// statement before aborting it, if longer than the engine's grace.
	patience() time.Duration
}

// writeLock is the Go-level lock every SQLite writer of an engine takes before
// writing. SQLite allows one writer per file; if two connections raced for the
// file's write lock, one would get SQLITE_BUSY ("database is locked") or wait
// in SQLite's busy handler, unbounded and without priority. Taking this lock
// first means SQLite never sees two writers.
//
// A local transaction holds the lock from its first write to its end. Others
// get it from a holder in three ways:
//   - the holder ends (the common case: autocommit writes hold it for
//     microseconds);
//   - the holder is idle, waiting for its client between statements: it is
//     parked, its changes set aside until its next statement, so that an
//     interactive transaction does not block everyone else;
//   - the applier, which has priority, brute-force aborts a holder still
//     busy in a statement after a grace period.
//
// Local writers wait at most a timeout. The lock knows nothing of SQLite; it
// is tested on its own.
type writeLock struct {
	mu       sync.Mutex
	held     bool
	holder   lockHolder    // the local holder; nil when free or held by a priority user
	priority int           // priority users (the applier) waiting: locals must not take the lock
	waiters  int           // anyone waiting (to know whether notifyIdle must wake them)
	changed  chan struct{} // closed and replaced at every change waiters care about
}

// broadcastLocked wakes every waiter. l.mu must be held.
func (l *writeLock) broadcastLocked() {
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

// waitChanLocked returns the channel closed at the next change.
func (l *writeLock) waitChanLocked() chan struct{} {
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed
}

// notifyIdle is called by a holder that has just become idle, so that
// waiters can consider parking it.
func (l *writeLock) notifyIdle() {
	l.mu.Lock()
	if l.waiters > 0 {
		l.broadcastLocked()
	}
	l.mu.Unlock()
}

// wait blocks until the lock changes, until wake (if not zero) or until ctx
// ends. l.mu is held on entry and on return.
func (l *writeLock) wait(ctx context.Context, wake time.Time) error {
	ch := l.waitChanLocked()
	l.waiters++
	l.mu.Unlock()
	var timer <-chan time.Time
	if !wake.IsZero() {
		t := time.NewTimer(time.Until(wake))
		defer t.Stop()
		timer = t.C
	}
	var err error
	select {
	case <-ch:
	case <-timer:
	case <-ctx.Done():
		err = ctx.Err()
	}
	l.mu.Lock()
	l.waiters--
	return err
}

// lock takes the lock for the local transaction h, waiting at most timeout
// (errLockTimeout) and until ctx ends (ctx.Err()). A holder that has been
// idle for parkIdle is parked. A waiting priority user goes first.
func (l *writeLock) lock(ctx context.Context, h lockHolder, timeout, parkIdle time.Duration) error {
	deadline := time.Now().Add(timeout)
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		if !l.held && l.priority == 0 {
			l.held, l.holder = true, h
			return nil
		}
		wake := deadline
		if holder := l.holder; holder != nil && holder != h {
			if since, ok := holder.idle(); ok {
				at := since.Add(parkIdle)
				if !time.Now().Before(at) {
					l.mu.Unlock()
					parked := holder.park()
					l.mu.Lock()
					if parked {
						continue
					}
					at = time.Now().Add(retryPark)
				}
				if at.Before(wake) {
					wake = at
				}
			}
		}
		if !time.Now().Before(deadline) {
			return errLockTimeout
		}
		if err := l.wait(ctx, wake); err != nil {
			return err
		}
	}
}

// lockPriority takes the lock for the applier (or another engine-internal
// user such as Restore). Local transactions stop taking the lock as soon as
// it is called. An idle local holder is parked at once; one busy in a
// statement is waited for at most grace (or the holder's patience, if
// longer), then brute-force aborted. It fails
// only when ctx ends.
func (l *writeLock) lockPriority(ctx context.Context, grace time.Duration) error {
	start := time.Now()
	var aborted lockHolder
	l.mu.Lock()
	defer l.mu.Unlock()
	l.priority++
	for {
		if !l.held {
			l.held, l.holder = true, nil
			l.priority--
			l.broadcastLocked()
			return nil
		}
		var wake time.Time
		if h := l.holder; h != nil && h != aborted {
			deadline := start.Add(max(grace, h.patience()))
			if _, ok := h.idle(); ok {
				l.mu.Unlock()
				parked := h.park()
				l.mu.Lock()
				if parked {
					continue
				}
				wake = time.Now().Add(retryPark)
			}
			if !time.Now().Before(deadline) {
				// Past the grace: abort the holder. bruteForceAbort
				// returns once the holder has released the lock.
				aborted = h
				l.mu.Unlock()
				h.bruteForceAbort()
				l.mu.Lock()
				continue
			}
			if wake.IsZero() || deadline.Before(wake) {
				wake = deadline
			}
		}
		if err := l.wait(ctx, wake); err != nil {
			l.priority--
			l.broadcastLocked()
			return err
		}
	}
}

// unlock releases the lock. Only the current holder calls it.
func (l *writeLock) unlock() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.held {
		panic("sqlite engine: unlock of unlocked write lock")
	}
	l.held, l.holder = false, nil
	l.broadcastLocked()
}
