package sqlite

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// fakeHolder is a lock holder whose abort releases the lock, as a Tx does.
type fakeHolder struct {
	l       *writeLock
	aborted atomic.Int32
	held    atomic.Bool
}

func (h *fakeHolder) bruteForceAbort() {
	h.aborted.Add(1)
	if h.held.CompareAndSwap(true, false) {
		h.l.unlock()
	}
}

func (h *fakeHolder) release() {
	if h.held.CompareAndSwap(true, false) {
		h.l.unlock()
	}
}

func lockLocal(t *testing.T, l *writeLock, timeout time.Duration) *fakeHolder {
	t.Helper()
	h := &fakeHolder{l: l}
	if err := l.lock(context.Background(), h, timeout); err != nil {
		t.Fatal(err)
	}
	h.held.Store(true)
	return h
}

func TestWriteLockUncontended(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	h.release()
	if err := l.lockPriority(context.Background(), time.Second); err != nil {
		t.Fatal(err)
	}
	l.unlock()
	lockLocal(t, &l, time.Second).release()
}

func TestWriteLockLocalWaitsThenTimesOut(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	start := time.Now()
	err := l.lock(context.Background(), &fakeHolder{l: &l}, 50*time.Millisecond)
	if !errors.Is(err, errLockTimeout) {
		t.Fatalf("got %v, want errLockTimeout", err)
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v, before the timeout", d)
	}
	if h.aborted.Load() != 0 {
		t.Fatal("a local waiter aborted the holder")
	}
	h.release()
}

func TestWriteLockLocalGetsLockOnRelease(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	got := make(chan error, 1)
	go func() { got <- l.lock(context.Background(), &fakeHolder{l: &l}, 10*time.Second) }()
	h.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	l.unlock()
}

func TestWriteLockLocalContextCanceled(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- l.lock(ctx, &fakeHolder{l: &l}, time.Hour) }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	h.release()
}

func TestWriteLockPriorityWaitsForReleaseWithinGrace(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	got := make(chan error, 1)
	go func() { got <- l.lockPriority(context.Background(), time.Hour) }()
	// The local holder finishes by itself within the grace.
	eventually(t, "the priority waiter to register", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.priority == 1
	})
	h.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if h.aborted.Load() != 0 {
		t.Fatal("holder aborted although it released within the grace")
	}
	l.unlock()
}

func TestWriteLockPriorityAbortsAfterGrace(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
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

func TestWriteLockPriorityGoesFirst(t *testing.T) {
	var l writeLock
	h := lockLocal(t, &l, time.Second)
	prio := make(chan error, 1)
	go func() { prio <- l.lockPriority(context.Background(), time.Hour) }()
	eventually(t, "the priority waiter to register", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.priority == 1
	})
	local := make(chan error, 1)
	go func() { local <- l.lock(context.Background(), &fakeHolder{l: &l}, time.Hour) }()
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
	h := lockLocal(t, &l, time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() { got <- l.lockPriority(ctx, time.Hour) }()
	eventually(t, "the priority waiter to register", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.priority == 1
	})
	// A local waiter is held back by the priority waiter...
	local := make(chan error, 1)
	go func() { local <- l.lock(context.Background(), &fakeHolder{l: &l}, time.Hour) }()
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	// ...and proceeds once it gave up and the holder released.
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
