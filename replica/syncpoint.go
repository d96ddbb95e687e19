package replica

import (
	"context"
	"sync"
)

// Sync points are shared. A 'sync' read needs a log index at or above every
// commit acknowledged before it started; any one fetched entirely after it
// started will do. So concurrent reads share one fetch (one read index
// round, readindex.go) rather than each paying for its own: reads that
// arrive while a fetch is under way wait for the next one, which starts when
// it ends.

// syncGroup runs fetches of sync points, one at a time, each shared by all
// callers that arrived before it started.
type syncGroup struct {
	mu      sync.Mutex
	next    *syncRound // the round new callers join; it has not started
	running bool
}

type syncRound struct {
	done    chan struct{}
	callers int // how many share it
	seqno   uint64
	err     error
}

// get returns the result of a fetch that started after get was called. The
// fetch runs on its own goroutine and is not stopped by ctx, which only
// bounds how long this caller waits.
func (g *syncGroup) get(ctx context.Context, fetch func() (uint64, error)) (uint64, error) {
	g.mu.Lock()
	if g.next == nil {
		g.next = &syncRound{done: make(chan struct{})}
	}
	r := g.next
	r.callers++
	if !g.running {
		g.running, g.next = true, nil
		go g.run(r, fetch)
	}
	g.mu.Unlock()
	select {
	case <-r.done:
		return r.seqno, r.err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// run fetches for r, then for the rounds that formed meanwhile.
func (g *syncGroup) run(r *syncRound, fetch func() (uint64, error)) {
	for r != nil {
		r.seqno, r.err = fetch()
		close(r.done)
		g.mu.Lock()
		r, g.next = g.next, nil
		g.running = r != nil
		g.mu.Unlock()
	}
}
