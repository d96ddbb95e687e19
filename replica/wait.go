package replica

import (
	"context"
	"sync"
)

// progress is a monotonically increasing position that goroutines can wait on.
type progress struct {
	mu      sync.Mutex
	value   uint64
	changed chan struct{} // closed and replaced whenever value grows
}

func newProgress(v uint64) *progress {
	return &progress{value: v, changed: make(chan struct{})}
}

func (p *progress) get() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.value
}

// advance raises the value to v (never lowers it) and wakes waiters.
func (p *progress) advance(v uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if v <= p.value {
		return
	}
	p.value = v
	close(p.changed)
	p.changed = make(chan struct{})
}

// wait returns nil once the value is at least v, or ctx's error.
func (p *progress) wait(ctx context.Context, v uint64) error {
	for {
		p.mu.Lock()
		cur, ch := p.value, p.changed
		p.mu.Unlock()
		if cur >= v {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// outcome is what became of a submitted write set.
type outcome struct {
	seqno uint64
	err   error // nil: committed and applied here
}

// waiters maps the TxIDs of this node's in-flight write sets to the channels
// their sessions wait on.
type waiters struct {
	mu sync.Mutex
	m  map[uint64]chan outcome
}

func (w *waiters) add(txid uint64) chan outcome {
	ch := make(chan outcome, 1)
	w.mu.Lock()
	if w.m == nil {
		w.m = make(map[uint64]chan outcome)
	}
	w.m[txid] = ch
	w.mu.Unlock()
	return ch
}

func (w *waiters) remove(txid uint64) {
	w.mu.Lock()
	delete(w.m, txid)
	w.mu.Unlock()
}

// deliver sends o to txid's waiter, if it still waits.
func (w *waiters) deliver(txid uint64, o outcome) {
	w.mu.Lock()
	ch := w.m[txid]
	delete(w.m, txid)
	w.mu.Unlock()
	if ch != nil {
		ch <- o
	}
}
