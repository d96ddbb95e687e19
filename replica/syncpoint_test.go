package replica

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers that arrive while a fetch is under way share the next one, and
// every caller gets a result fetched after it arrived.
func TestSyncGroupSharesFetchesStartedAfterTheCaller(t *testing.T) {
	var g syncGroup
	var fetches atomic.Uint64
	started := make(chan uint64, 10)
	release := make(chan struct{})
	fetch := func() (uint64, error) {
		n := fetches.Add(1)
		started <- n
		<-release
		return n, nil
	}
	ctx := context.Background()
	first := make(chan uint64)
	go func() { s, _ := g.get(ctx, fetch); first <- s }()
	if n := <-started; n != 1 {
		t.Fatalf("first fetch is number %d", n)
	}
	// Ten callers arrive while fetch 1 runs: they must not share it.
	var wg sync.WaitGroup
	got := make([]uint64, 10)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = g.get(ctx, fetch) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		joined := g.next != nil && g.next.callers == len(got)
		g.mu.Unlock()
		if joined || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	release <- struct{}{}
	if s := <-first; s != 1 {
		t.Fatalf("first caller got fetch %d", s)
	}
	if n := <-started; n != 2 {
		t.Fatalf("second fetch is number %d", n)
	}
	close(release)
	wg.Wait()
	for i, s := range got {
		if s != 2 {
			t.Fatalf("caller %d got fetch %d, want the shared fetch 2", i, s)
		}
	}
	if n := fetches.Load(); n != 2 {
		t.Fatalf("%d fetches for 11 callers, want 2", n)
	}
	// A caller after everything ended starts a fetch of its own.
	if s, _ := g.get(ctx, fetch); s != 3 {
		t.Fatalf("a later caller got fetch %d", s)
	}
}

// A caller whose context ends stops waiting; the fetch goes on for others.
func TestSyncGroupCallerGivesUp(t *testing.T) {
	var g syncGroup
	release := make(chan struct{})
	fetch := func() (uint64, error) { <-release; return 7, nil }
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.get(ctx, fetch); err == nil {
		t.Fatal("a cancelled caller got a result")
	}
	close(release)
	if s, err := g.get(context.Background(), fetch); s != 7 || err != nil {
		t.Fatalf("got %d, %v", s, err)
	}
}
