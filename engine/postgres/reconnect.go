package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
)

// Reconnection: the node survives its PostgreSQL server restarting (its
// postmaster killed and started again by pgproc, or a backend crash that
// makes the postmaster end and restart every backend) and its
// connections being ended (pg_terminate_backend).
//
// What finds a lost connection: Apply (its statements fail), the
// watcher (watch.go: it opens its own again), and healthLoop, which
// holds one more connection waiting for notifications (a backend that
// ends closes it at once), and every second compares the backends of the
// engine's connections with the server's (sweep). Any of them sets
// broken; then recover, under applyMu, before Apply goes on:
//
//   - It connects until the server answers (with backoff, for at most
//     reconnectTimeout; Apply then fails with the reason, and the node
//     stops: a server that does not come back needs its operator).
//   - If the server restarted (it refused connections meanwhile, or none
//     of the engine's own backends is left), every backend is gone: the
//     pool is replaced by one kept shut (gate) until the replay below is
//     done, so that no client reads a state older than what this node
//     already acknowledged; local work in progress is marked aborted
//     (40001), held transactions included (their rows are applied at
//     their position, as for any transaction no longer held), and a
//     session whose temporary tables were on a lost backend gets 57P01
//     (engine.ErrSessionLost: "connect again"). Otherwise only the lost
//     backends' work is marked aborted and their idle pooled connections
//     dropped.
//   - It opens the applier's, watcher's, checker's and gcLoop's
//     connections again (connectAdmin; after a restart, it installs
//     certa's objects again too, as Open does) and reads the applied seqno from
//     certa.applied: PostgreSQL's crash recovery keeps every commit
//     whose WAL reached the disk, and the applier commits with
//     synchronous_commit off (asyncCommit), so the last commits may be
//     gone.
//   - It applies those again: the engine keeps the batches it applied
//     since the last one known to be on disk (retained; healthLoop
//     compares the server's WAL flush position with where the WAL was
//     when each batch had committed). A gap it does not hold (more than
//     maxRetainedBytes of batches applied since the last flush) fails
//     with what to do: restart the node, which replays its log.
//
// Then Apply applies its batch from the applied seqno on: nothing is lost
// or applied twice.

const (
	// reconnectTimeout bounds how long recover tries.
	reconnectTimeout = 60 * time.Second
	// healthEvery is how often healthLoop notes where the WAL is.
	healthEvery = 100 * time.Millisecond
	// sweepEvery is how often healthLoop looks for lost backends.
	sweepEvery = time.Second
	// maxRetainedBytes bounds the batches kept for a replay.
	maxRetainedBytes = 64 << 20
)

// appliedBatch is one Apply's batch, kept until its commits are on disk.
type appliedBatch struct {
	items []engine.ApplyItem
	upTo  uint64
	bytes int
}

// errUnrecoverable marks what recover cannot get over by trying again.
var errUnrecoverable = errors.New("postgres engine")

// connLost reports whether err says a connection or its server is gone:
// a connection exception (08xxx), the server ending the backend (57P01
// admin shutdown, 57P02 crash shutdown) or not accepting connections
// (57P03: starting up, in recovery, shutting down), or an I/O error.
func connLost(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return lostCode(pe.Code)
	}
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, syscall.ENOENT), errors.As(err, &ne):
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true // nothing more precise inside: no PgError
	}
	// pgError's wrapping of an error that is not PostgreSQL's.
	return strings.Contains(err.Error(), "conn closed") || strings.Contains(err.Error(), "lost the connection")
}

func lostCode(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
}

// withApplier runs f on the applier's connection, after recover if a
// connection was found lost, and once more after recover if f fails
// for a lost connection. The caller holds applyMu.
func (e *Engine) withApplier(f func(context.Context) error) error {
	if e.closed.Load() {
		return errClosed
	}
	ctx := context.Background()
	for try := 0; ; try++ {
		if e.broken.Load() || e.applier.IsClosed() {
			if err := e.recover(errors.New("the applier's connection was lost")); err != nil {
				return err
			}
		}
		err := f(ctx)
		if err == nil || try > 0 || !(connLost(err) || e.applier.IsClosed()) {
			return err
		}
		e.broken.Store(true)
	}
}

// recover opens again what the engine holds after a connection was
// found lost (why): see the top of this file. It tries for at most
// reconnectTimeout; errUnrecoverable ends it at once. The caller holds
// applyMu.
func (e *Engine) recover(why error) error {
	start := time.Now()
	ctx, cancel := context.WithDeadline(e.stopCtx, start.Add(reconnectTimeout))
	defer cancel()
	log := e.cfg.Logger
	log.Warn("postgres engine: a connection to PostgreSQL was lost; reconnecting", "reason", why)
	before := e.appliedUpTo
	reset := false
	backoff := 20 * time.Millisecond
	for {
		replayed, err := e.recoverOnce(ctx, &reset)
		if err == nil {
			e.ungate()
			e.broken.Store(false)
			e.gen.Add(1)
			e.appliedMark.Store(e.appliedUpTo)
			log.Warn("postgres engine: reconnected to PostgreSQL", "took", time.Since(start).Round(time.Millisecond),
				"server_restarted", reset, "applied_seqno", e.appliedUpTo, "lost_and_applied_again", replayed, "applied_before", before)
			return nil
		}
		if e.closed.Load() {
			return errClosed
		}
		if errors.Is(err, errUnrecoverable) || ctx.Err() != nil {
			if ctx.Err() != nil {
				err = fmt.Errorf("postgres engine: PostgreSQL did not come back within %v (%v): %w", reconnectTimeout, why, err)
			}
			if e.gated != nil {
				// Clients waiting for the gate fail now; later ones
				// wait for the next try.
				e.gated = nil
				e.gate()
			}
			log.Error("postgres engine: cannot reconnect to PostgreSQL", "err", err)
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 100*time.Millisecond) // a server that is not there answers at once
	}
}

// recoverOnce is one try of recover; reset says whether the server was
// found to have restarted (by this try or an earlier one). It returns how
// many write sets it applied again.
func (e *Engine) recoverOnce(ctx context.Context, reset *bool) (int, error) {
	admin := *e.adminPIDs.Load()
	work := e.localWork()
	alive, err := e.aliveBackends(ctx)
	if err != nil {
		if connLost(err) && !*reset {
			*reset = true // it does not accept connections: it restarts
			e.gate()
		}
		return 0, err
	}
	lost, restarted := false, true
	for _, pid := range admin {
		if alive[pid] {
			restarted = false
		} else {
			lost = true
		}
	}
	if restarted && !*reset {
		*reset = true
		e.gate()
	}
	e.endLost(work, func(pid uint32) bool { return *reset || !alive[pid] })
	if *reset || lost || e.adminClosed() {
		e.closeAdmin()
		// After a restart, certa's objects and token are made again: what
		// Open wrote just before may be lost with the last commits.
		if err := e.connectAdmin(ctx, *reset); err != nil {
			return 0, err
		}
		e.applyTS.reset()
	}
	return e.replay(ctx)
}

// aliveBackends returns the process ids of the server's backends, on a
// connection of its own.
func (e *Engine) aliveBackends(ctx context.Context) (map[uint32]bool, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, err := connect(cctx, e.cfg.DSN, "", nil)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.Background())
	return backends(cctx, c)
}

// backends returns the process ids of the server's backends.
func backends(ctx context.Context, c *pgconn.PgConn) (map[uint32]bool, error) {
	r := c.ExecParams(ctx, "SELECT pid FROM pg_stat_activity", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	alive := make(map[uint32]bool, len(r.Rows))
	for _, row := range r.Rows {
		if pid, err := strconv.ParseUint(string(row[0]), 10, 32); err == nil {
			alive[uint32(pid)] = true
		}
	}
	return alive, nil
}

// adminClosed reports whether one of the engine's own connections is
// closed on this side. The caller holds applyMu; the checker's and
// gcLoop's are looked at only when not in use (a lost one shows in the
// sweep).
func (e *Engine) adminClosed() bool {
	closed := e.applier.IsClosed() || e.watch.IsClosed()
	if e.checkMu.TryLock() {
		closed = closed || e.checker.IsClosed()
		e.checkMu.Unlock()
	}
	if e.gcMu.TryLock() {
		closed = closed || e.gcConn == nil || e.gcConn.IsClosed()
		e.gcMu.Unlock()
	}
	return closed
}

// localWork is the local work and the idle pooled connections there
// are, taken before the server is asked which backends it has: a backend
// that started since is not in its answer, and must not be taken for
// lost.
type localWork struct {
	local map[uint32]*atomic.Bool // tracked backends: their aborted flags
	pool  *pool
	idle  map[*conn]bool
}

func (e *Engine) localWork() localWork {
	w := localWork{pool: e.pool.Load()}
	e.localMu.Lock()
	w.local = make(map[uint32]*atomic.Bool, len(e.local))
	for pid, aborted := range e.local {
		w.local[pid] = aborted
	}
	e.localMu.Unlock()
	w.pool.mu.Lock()
	w.idle = make(map[*conn]bool, len(w.pool.idle))
	for _, c := range w.pool.idle {
		w.idle[c] = true
	}
	w.pool.mu.Unlock()
	return w
}

// endLost marks aborted the local work of w on the backends lost says
// are gone (its next statement fails with 40001, and a held
// transaction's rows are applied at its position), and closes w's idle
// pooled connections to them, which are then not handed out.
func (e *Engine) endLost(w localWork, lost func(pid uint32) bool) {
	e.localMu.Lock()
	for pid, aborted := range w.local {
		if lost(pid) && e.local[pid] == aborted {
			aborted.Store(true)
		}
	}
	e.localMu.Unlock()
	w.pool.dropIdle(w.idle, func(c *conn) bool { return lost(c.pg.PID()) })
}

// gate replaces the pool with one that hands out no connection until
// ungate: the server restarted, and the commits it lost must be applied
// again before a client reads. The old pool's connections are closed
// (idle ones now, others when they come back); a session pinned to one
// gets 57P01. The caller holds applyMu.
func (e *Engine) gate() {
	if e.gated != nil || e.closed.Load() {
		return
	}
	p := newPool(e.cfg, &e.schemaEpoch)
	for range e.cfg.MaxConns {
		<-p.slots
	}
	e.gated = p
	e.pool.Swap(p).close()
}

// ungate opens the pool gate shut. The caller holds applyMu.
func (e *Engine) ungate() {
	if p := e.gated; p != nil {
		e.gated = nil
		for range e.cfg.MaxConns {
			p.slots <- struct{}{}
		}
	}
}

// dropIdle closes the idle connections that drop says are lost, of those
// in among if it is not nil (idle when the caller looked at the server).
func (p *pool) dropIdle(among map[*conn]bool, drop func(*conn) bool) {
	p.mu.Lock()
	var dropped []*conn
	kept := p.idle[:0]
	for _, c := range p.idle {
		if (among == nil || among[c]) && drop(c) {
			dropped = append(dropped, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(p.idle[len(kept):])
	p.idle = kept
	p.mu.Unlock()
	for _, c := range dropped {
		c.pg.Close(context.Background())
	}
}

// retain keeps a batch Apply applied until its commit is known to be on
// disk (healthLoop's durable), and drops those that are. The caller
// holds applyMu.
func (e *Engine) retain(items []engine.ApplyItem, upTo uint64) {
	if upTo > e.retainedLast() {
		b := appliedBatch{items: slices.Clone(items), upTo: upTo}
		for _, it := range items {
			b.bytes += 128
			if it.WS != nil {
				b.bytes += len(it.WS.Changes) + len(it.WS.DDL) + 64*len(it.WS.Keys)
			}
		}
		e.retained = append(e.retained, b)
		e.retainedBytes += b.bytes
	}
	durable := e.durable.Load()
	n := 0
	for n < len(e.retained) && (e.retained[n].upTo <= durable || e.retainedBytes > maxRetainedBytes && n < len(e.retained)-1) {
		e.retainedBytes -= e.retained[n].bytes
		e.retainedFrom = e.retained[n].upTo
		n++
	}
	if n > 0 {
		clear(e.retained[:n])
		e.retained = e.retained[n:]
	}
}

// retainedLast is the applied seqno the retained batches reach.
func (e *Engine) retainedLast() uint64 {
	if n := len(e.retained); n > 0 {
		return e.retained[n-1].upTo
	}
	return e.retainedFrom
}

// replay applies again the retained batches past the applied seqno the
// database holds (appliedUpTo, as connectAdmin read it) and returns how
// many write sets it applied. The caller holds applyMu.
func (e *Engine) replay(ctx context.Context) (int, error) {
	last := e.retainedLast()
	if e.appliedUpTo >= last {
		return 0, nil
	}
	if e.appliedUpTo < e.retainedFrom {
		return 0, fmt.Errorf("%w: PostgreSQL lost commits in its restart (it holds seqno %d, this node had applied up to %d), and this node keeps them only from seqno %d on: restart the node, which applies its log from seqno %d",
			errUnrecoverable, e.appliedUpTo, last, e.retainedFrom+1, e.appliedUpTo+1)
	}
	n := 0
	for _, b := range e.retained {
		if b.upTo <= e.appliedUpTo {
			continue
		}
		items := slices.Clone(b.items)
		for i := range items {
			items[i].Err = nil
			if items[i].Seqno > e.appliedUpTo {
				n++
			}
		}
		if err := e.apply(ctx, items, b.upTo); err != nil {
			if !connLost(err) && !e.applier.IsClosed() {
				err = fmt.Errorf("%w: apply again what PostgreSQL lost in its restart: %w", errUnrecoverable, err)
			}
			return n, err
		}
	}
	return n, nil
}

// healthLoop watches the engine's connections to the server (see the top
// of this file) and notes which applied seqno is on disk, until Close.
func (e *Engine) healthLoop() {
	defer close(e.healthOK)
	h := &health{e: e}
	defer h.drop()
	for e.stopCtx.Err() == nil {
		if e.broken.Load() {
			h.drop()
			if err := e.recoverNow(errors.New("a connection to PostgreSQL was found lost")); errors.Is(err, errUnrecoverable) {
				sleepCtx(e.stopCtx, time.Second) // Apply fails with it
			}
			continue
		}
		if h.conn == nil {
			if err := h.connect(); err != nil {
				if connLost(err) {
					e.broken.Store(true)
				}
				sleepCtx(e.stopCtx, healthEvery)
				continue
			}
		}
		// A backend that ends closes the connection: the wait returns at
		// once.
		ctx, cancel := context.WithTimeout(e.stopCtx, healthEvery)
		h.conn.WaitForNotification(ctx)
		cancel()
		if e.stopCtx.Err() != nil {
			return
		}
		if h.conn.IsClosed() {
			e.broken.Store(true)
			continue
		}
		h.tick()
	}
}

// recoverNow runs recover if a connection is still found lost once
// applyMu is free (Apply may have recovered meanwhile).
func (e *Engine) recoverNow(why error) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if !e.broken.Load() || e.closed.Load() {
		return nil
	}
	return e.recover(why)
}

// sleepCtx waits for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// health is healthLoop's connection and its durability marks.
type health struct {
	e     *Engine
	conn  *pgconn.PgConn // as the DSN's superuser; its context deadlines interrupt reads
	gen   uint64         // the recovery its marks are of
	marks []walMark
	swept time.Time
}

// walMark: the WAL was at lsn after the commit of seqno.
type walMark struct {
	seqno, lsn uint64
}

func (h *health) connect() error {
	cfg, err := pgconn.ParseConfig(h.e.cfg.DSN)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(h.e.stopCtx, 10*time.Second)
	defer cancel()
	// The default context handling: a deadline interrupts a read, and the
	// connection stays usable (WaitForNotification).
	c, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	h.conn = c
	return nil
}

// drop closes the connection and forgets the marks (a recovery follows).
func (h *health) drop() {
	if h.conn != nil {
		h.conn.Close(context.Background())
		h.conn = nil
	}
	h.marks = nil
}

// walSQL reads the WAL's insert and flush positions as numbers.
const walSQL = "SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn, pg_current_wal_flush_lsn() - '0/0'::pg_lsn"

// tick notes where the WAL is now that the applied seqno is what
// appliedMark says (read first: that commit's record is before the
// position read after), raises durable to the marks the flush position
// passed, and sweeps every sweepEvery.
func (h *health) tick() {
	e := h.e
	gen, mark := e.gen.Load(), e.appliedMark.Load()
	ctx, cancel := context.WithTimeout(e.stopCtx, 10*time.Second)
	defer cancel()
	r := h.conn.ExecParams(ctx, walSQL, nil, nil, nil, nil).Read()
	if r.Err != nil || len(r.Rows) != 1 {
		return
	}
	insert, err1 := strconv.ParseUint(string(r.Rows[0][0]), 10, 64)
	flush, err2 := strconv.ParseUint(string(r.Rows[0][1]), 10, 64)
	if err1 != nil || err2 != nil {
		return
	}
	if gen != h.gen {
		h.gen, h.marks = gen, nil // of the server before a recovery
	}
	if n := len(h.marks); n == 0 || h.marks[n-1].seqno != mark {
		h.marks = append(h.marks, walMark{seqno: mark, lsn: insert})
	} else {
		h.marks[n-1].lsn = insert
	}
	var durable uint64
	n := 0
	for n < len(h.marks) && h.marks[n].lsn <= flush {
		durable = h.marks[n].seqno
		n++
	}
	h.marks = h.marks[n:]
	if durable > 0 && !e.broken.Load() && e.gen.Load() == gen {
		storeMax(&e.durable, durable)
	}
	if time.Since(h.swept) >= sweepEvery {
		h.swept = time.Now()
		h.sweep(ctx)
	}
}

// storeMax raises a to v.
func storeMax(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// sweep compares the backends of the engine's connections with the
// server's: a lost one of the engine's own sets broken; the local work on
// a lost one is marked aborted, and lost idle pooled connections are
// dropped (endLost).
func (h *health) sweep(ctx context.Context) {
	e := h.e
	admin := e.adminPIDs.Load()
	work := e.localWork()
	alive, err := backends(ctx, h.conn)
	if err != nil {
		return
	}
	for _, pid := range *admin {
		if !alive[pid] && e.adminPIDs.Load() == admin {
			e.broken.Store(true)
		}
	}
	e.endLost(work, func(pid uint32) bool { return !alive[pid] })
}
