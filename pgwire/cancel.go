package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"sync"

	"certa/sqlerr"
)

// errCancelRequested is the cause of a statement context cancelled by a
// CancelRequest.
var errCancelRequested = errors.New("pgwire: cancel request")

// cancelKey is what a client needs to cancel a connection's statement:
// the process ID and secret of its BackendKeyData.
type cancelKey struct {
	pid    uint32
	secret [4]byte // protocol 3.0 size
}

// cancelRegistry maps the process IDs of live connections to them, so that
// a CancelRequest, which arrives on a connection of its own, finds its
// target.
type cancelRegistry struct {
	mu    sync.Mutex
	conns map[uint32]*conn
}

// register gives c a key unique among live connections.
func (r *cancelRegistry) register(c *conn) cancelKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = make(map[uint32]*conn)
	}
	for {
		k := newCancelKey()
		if _, taken := r.conns[k.pid]; !taken {
			r.conns[k.pid] = c
			c.cancelKey = k
			return k
		}
	}
}

func (r *cancelRegistry) unregister(c *conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns[c.cancelKey.pid] == c {
		delete(r.conns, c.cancelKey.pid)
	}
}

// cancel cancels the statement running on the connection with key pid and
// secret, if there is one. The secret is compared in constant time, and a
// wrong key does nothing (the client is told nothing in any case).
func (r *cancelRegistry) cancel(pid uint32, secret []byte) bool {
	r.mu.Lock()
	c := r.conns[pid]
	r.mu.Unlock()
	if c == nil || subtle.ConstantTimeCompare(c.cancelKey.secret[:], secret) != 1 {
		return false
	}
	c.stmtMu.Lock()
	defer c.stmtMu.Unlock()
	switch {
	case c.stmtCancel != nil:
		c.stmtCancel(errCancelRequested)
	case !c.waiting:
		c.cancelPending = true
	}
	return true
}

// setWaiting records whether the connection waits for client input. Only
// waiting for a new command (idle: ReadyForQuery sent, nothing read since)
// counts, and drops a pending cancel: a read in the middle of an extended
// protocol batch (Parse read, Execute not yet) is not idle, as in
// PostgreSQL, and a cancel then must reach the Execute (PgJDBC sends one
// cancel per statement and waits for the statement to end).
func (c *conn) setWaiting(w bool) {
	c.stmtMu.Lock()
	c.waiting = w && c.idle
	if c.waiting {
		c.cancelPending = false
	}
	c.stmtMu.Unlock()
}

// newCancelKey returns a random BackendKeyData process ID and secret.
func newCancelKey() cancelKey {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	// A positive, non-zero int32, since clients store it as a process ID.
	k := cancelKey{pid: binary.BigEndian.Uint32(b[:4])&0x7fffffff | 1}
	copy(k.secret[:], b[4:])
	return k
}

// statementContext returns the context one statement (a Query, an Execute)
// runs under: c.ctx, and cancelled as well by a CancelRequest with this
// connection's key while the statement runs, or while the connection was
// working on the messages before it (cancelPending). A cancel arriving
// while the connection waits for input is ignored, as in PostgreSQL. Call
// the returned func when the statement ends.
func (c *conn) statementContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(sqlerr.WithNotices(c.ctx, c.sendNotice))
	c.stmtMu.Lock()
	c.stmtCancel = cancel
	if c.cancelPending {
		c.cancelPending = false
		cancel(errCancelRequested)
	}
	c.stmtMu.Unlock()
	return ctx, func() {
		c.stmtMu.Lock()
		c.stmtCancel = nil
		c.stmtMu.Unlock()
		cancel(nil)
	}
}

// statementError returns the client-facing form of err, the error a
// statement run under ctx (from statementContext) ended with. A session
// that passes a cancelled context's error through gets PostgreSQL's
// message for a cancel request rather than "context canceled".
func statementError(ctx context.Context, err error) *sqlerr.Error {
	var se *sqlerr.Error
	if !errors.As(err, &se) && errors.Is(err, context.Canceled) && errors.Is(context.Cause(ctx), errCancelRequested) {
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	return sqlerr.As(err)
}
