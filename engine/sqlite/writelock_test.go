package sqlite

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fakeHolder is a lock holder that releases the lock when parked or aborted,
// as a Tx does. It is idle (parkable) unless busy is set.
type fakeHolder struct {
	l       *writeLock
	held    atomic.Bool
	busy    atomic.Bool
	since   atomic.Int64 // UnixNano
	parked  atomic.Int32
	aborted atomic.Int32
	patient atomic.Int64 // patience, in nanoseconds
}

func (h *fakeHolder) idle() (time.Time, bool) {
	return time.Unix(0, h.since.Load()), !h.busy.Load()
}

func (h *fakeHolder) setIdle() {
	h.since.Store(time.Now().UnixNano())
	h.busy.Store(false)
}

func (h *fakeHolder) park() bool {
	if h.busy.Load() {
		return false
	}
	h.parked.Add(1)
	h.release()
	return true
}

func (h *fakeHolder) bruteForceAbort() {
	h.aborted.Add(1)
	h.release()
}

func (h *fakeHolder) patience() time.Duration { return time.Duration(h.patient.Load()) }

func (h *fakeHolder) release() {
	if h.held.CompareAndSwap(true, false) {
		h.l.unlock()
	}
}

// lockLocal takes l for a new holder, busy unless idle is set.
func lockLocal(t *testing.T, l *writeLock, idle bool) *fakeHolder {
	t.Helper()
	h := &fakeHolder{l: l}
	h.since.Store(time.Now().UnixNano())
	h.busy.Store(!idle)
	if err := l.lock(context.Background(), h, time.Second, time.Hour); err != nil {
		t.Fatal(err)
	}
	h.held.Store(true)
	return h
}

func newWaiter(l *writeLock) *fakeHolder { return &fakeHolder{l: l} }

func waitPriority(t *testing.T, l *writeLock, n int) {
	t.Helper()
	eventually(t, "the priority waiter to register", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.priority == n
	})
}

func TestWriteLockUncontended(t *testing.T) {
	var l writeLock
	lockLocal(t, &l, false).release()
	if err := l.lockPriority(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	l.unlock()
	lockLocal(t, &l, false).release()
}

// A busy holder is waited for, at most the timeout; it is never aborted by a
// local waiter.
func TestWriteLockLocalWaitsForBusyHolderThenTimesOut(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	start := time.Now()
	err := l.lock(context.Background(), newWaiter(&l), 50*time.Millisecond, 0)
	if !errors.Is(err, errLockTimeout) {
		t.Fatalf("got %v, want errLockTimeout", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", d)
	}
	if h.aborted.Load() != 0 || h.parked.Load() != 0 {
		t.Fatal("a local waiter aborted or parked a busy holder")
	}
	h.release()
}

func TestWriteLockLocalGetsLockOnRelease(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	got := make(chan error, 1)
	go func() { got <- l.lock(context.Background(), newWaiter(&l), 10*time.Second, 0) }()
	h.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	l.unlock()
}

// An idle holder is parked once it has been idle for parkIdle, not before.
func TestWriteLockLocalParksIdleHolder(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, true)
	h.setIdle()
	start := time.Now()
	if err := l.lock(context.Background(), newWaiter(&l), 10*time.Second, 30*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 25*time.Millisecond {
		t.Fatalf("parked after %v of idleness, want 30ms", d)
	}
	if h.parked.Load() != 1 || h.aborted.Load() != 0 {
		t.Fatalf("parked %d, aborted %d", h.parked.Load(), h.aborted.Load())
	}
	l.unlock()
}

// A holder that becomes idle while a waiter waits is parked then.
func TestWriteLockLocalParksHolderWhenItBecomesIdle(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	got := make(chan error, 1)
	go func() { got <- l.lock(context.Background(), newWaiter(&l), 10*time.Second, 0) }()
	eventually(t, "the waiter to wait", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.waiters == 1
	})
	h.setIdle()
	l.notifyIdle()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h.parked.Load() != 1 {
		t.Fatal("not parked")
	}
	l.unlock()
}

func TestWriteLockLocalContextCanceled(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- l.lock(ctx, newWaiter(&l), time.Hour, 0) }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	h.release()
}

// The applier parks an idle holder at once, without waiting for the grace.
func TestWriteLockPriorityParksIdleHolder(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, true)
	h.setIdle()
	start := time.Now()
	if err := l.lockPriority(context.Background(), time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
	if h.parked.Load() != 1 || h.aborted.Load() != 0 {
		t.Fatalf("parked %d, aborted %d", h.parked.Load(), h.aborted.Load())
	}
	l.unlock()
}

// A busy holder that finishes within the grace is not aborted.
func TestWriteLockPriorityWaitsForBusyHolderWithinGrace(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	got := make(chan error, 1)
	go func() { got <- l.lockPriority(context.Background(), time.Hour) }()
	waitPriority(t, &l, 1)
	h.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h.aborted.Load() != 0 {
		t.Fatal("holder aborted although it released within the grace")
	}
	l.unlock()
}

// A holder still busy after the grace is brute-force aborted.
func TestWriteLockPriorityAbortsBusyHolderAfterGrace(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	start := time.Now()
	if err := l.lockPriority(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Fatalf("aborted after %v, before the grace", d)
	}
	if n := h.aborted.Load(); n != 1 {
		t.Fatalf("holder aborted %d times, want 1", n)
	}
	l.unlock()
}

// A holder given patience (Tx.Prioritize) is aborted only after it, when
// that is longer than the grace.
func TestWriteLockPriorityWaitsForPatientHolder(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	h.patient.Store(int64(150 * time.Millisecond))
	start := time.Now()
	if err := l.lockPriority(context.Background(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("aborted after %v, before the holder's patience", d)
	}
	if n := h.aborted.Load(); n != 1 {
		t.Fatalf("holder aborted %d times, want 1", n)
	}
	l.unlock()
}

func TestWriteLockPriorityGoesFirst(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	prio := make(chan error, 1)
	go func() { prio <- l.lockPriority(context.Background(), time.Hour) }()
	waitPriority(t, &l, 1)
	local := make(chan error, 1)
	go func() { local <- l.lock(context.Background(), newWaiter(&l), time.Hour, 0) }()
	h.release()
	if err := <-prio; err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-local:
		t.Fatalf("local waiter got the lock (%v) while the applier held it", err)
	default:
	}
	l.unlock()
	if err := <-local; err != nil {
		t.Fatal(err)
	}
	l.unlock()
}

func TestWriteLockPriorityContextCanceled(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, false)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- l.lockPriority(ctx, time.Hour) }()
	waitPriority(t, &l, 1)
	local := make(chan error, 1)
	go func() { local <- l.lock(context.Background(), newWaiter(&l), time.Hour, time.Hour) }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// The local waiter proceeds once the priority waiter gave up and the
	// holder released.
	h.release()
	if err := <-local; err != nil {
		t.Fatal(err)
	}
	l.unlock()
}

func TestWriteLockUnlockUnheldPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	var l writeLock
	l.unlock()
}
