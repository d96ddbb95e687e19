package replica

import (
	"context"
	"sync"

	"certa/sqlerr"
)

// heldNotices holds the notices sent through ctx until release.
type heldNotices struct {
	ctx  context.Context
	mu   sync.Mutex
	send func(*sqlerr.Error) // the client's; nil: none
	held []*sqlerr.Error
	done bool // released: notices go straight through
}

// holdNotices returns the notices of ctx, held.
func holdNotices(ctx context.Context) *heldNotices {
	h := &heldNotices{ctx: ctx, send: sqlerr.NoticesFrom(ctx)}
	if h.send != nil {
		h.ctx = sqlerr.WithNotices(ctx, h.add)
	}
	return h
}

func (h *heldNotices) add(n *sqlerr.Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		h.send(n)
		return
	}
	h.held = append(h.held, n)
}

// release sends the notices held (send) or drops them; later ones go
// straight through. Only the first call counts.
func (h *heldNotices) release(send bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	if send {
		for _, n := range h.held {
			h.send(n)
		}
	}
	h.held = nil
}
