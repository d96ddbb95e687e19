package postgres

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// Brute-force abort: the applier never waits behind a local transaction
// for longer than the grace, and never behind a handed-over one. While
// Apply runs, a watcher looks up which backends block the applier's
// (pg_blocking_pids), marks the local work on them aborted and ends those
// backends; the work then fails with 40001 wrapping
// engine.ErrAbortedForApply, and a handed-over transaction ended this way
// has its rows applied at its position instead.
//
// A handed-over transaction is ended as soon as it is seen blocking: it
// lets go of its locks only when it commits at its position, which comes
// after the applier's, so waiting for it only delays every commit behind
// the applier (by the whole grace, as seen under oltp-write: applier
// statements of 100 ms). Its write set cannot pass certification anyway:
// the write set being applied came first and changes what it locked. Work
// still running gets the grace, to finish what it holds a lock for.
//
// A backend pinned to a session (it holds the session's temporary
// tables, session.go) that is running a statement has only the
// statement cancelled: its transaction fails the same way (and rolls
// back at once, Tx.failed, so that its locks go) and the backend stays,
// with the tables; if it still blocks cancelGrace later, it is ended. One idle in its transaction cannot be
// made to let go but by ending it: the session then loses its temporary
// tables (engine.ErrSessionLost). Between transactions a pinned backend
// holds no locks, and is never in the way.
//
// A maintenance command (VACUUM, ANALYZE, CLUSTER, REINDEX: read.go's
// maintain) is local work too: VACUUM FULL, CLUSTER and REINDEX take
// locks that stop the applier's writes for as long as they run. One that
// blocks the applier for the grace is cancelled (pg_cancel_backend: the
// backend stays), and the client gets 57014 saying why
// (errMaintenanceCancelled); if it still blocks cancelGrace later, its
// backend is ended. So is CheckDDL's trial run of a schema statement sent
// on its own, after trialGrace (errTrialCancelled): its locks hold the
// applier as long as it runs, and the statement still has to run at its
// position on every node.

// applyGrace is how long the applier waits behind local work that is
// still running; watchEvery is how often it looks.
const (
	applyGrace = 100 * time.Millisecond
	watchEvery = 5 * time.Millisecond
	// cancelGrace is how long a cancelled maintenance command may still
	// block before its backend is ended.
	cancelGrace = time.Second
	// trialGrace is how long CheckDDL's trial run may block the applier:
	// longer than applyGrace, as a schema change takes a while on a
	// table of some size even when nothing else runs.
	trialGrace = time.Second
)

// track registers the backend of local work with its aborted flag.
func (e *Engine) track(pid uint32, aborted *atomic.Bool) {
	e.localMu.Lock()
	e.local[pid] = aborted
	e.localMu.Unlock()
}

// trackMaintenance registers the backend of a maintenance command (or of
// CheckDDL's trial run) with its cancelled flag: the watcher cancels it
// rather than end it, once it blocked the applier for grace.
func (e *Engine) trackMaintenance(pid uint32, cancelled *atomic.Bool, grace time.Duration) {
	e.localMu.Lock()
	e.local[pid] = cancelled
	e.maint[pid] = grace
	e.localMu.Unlock()
}

// untrack forgets a backend registered by track or trackMaintenance.
func (e *Engine) untrack(pid uint32) {
	e.localMu.Lock()
	delete(e.local, pid)
	delete(e.waiting, pid)
	delete(e.maint, pid)
	e.localMu.Unlock()
}

// setWaiting records that a tracked backend's transaction was handed over:
// it waits for its position in the log.
func (e *Engine) setWaiting(pid uint32) {
	e.localMu.Lock()
	if e.local[pid] != nil {
		e.waiting[pid] = true
	}
	e.localMu.Unlock()
}

// setPinned records whether a backend is pinned to a session.
func (e *Engine) setPinned(pid uint32, pinned bool) {
	e.localMu.Lock()
	if pinned {
		e.pinned[pid] = true
	} else {
		delete(e.pinned, pid)
	}
	e.localMu.Unlock()
}

// watchBlockers watches the applier's backend until the returned stop is
// called, aborting the handed-over transactions that block it at once and
// other local work that blocks it for longer than the grace.
//
// stop lets a look under way finish rather than cancel it: a cancelled
// statement costs a connection of its own to the server (the cancel
// request), and Apply would wait for that.
func (e *Engine) watchBlockers(ctx context.Context) (stop func()) {
	quit, done := make(chan struct{}), make(chan struct{})
	applier := strconv.FormatUint(uint64(e.applier.PID()), 10)
	go func() {
		defer close(done)
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		w := &watchState{blocking: map[string]time.Time{}, cancelled: map[string]time.Time{}}
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			e.abortBlockers(ctx, applier, w, time.Now())
		}
	}()
	return func() { close(quit); <-done }
}

// watchState is what a watcher remembers between its looks.
type watchState struct {
	blocking  map[string]time.Time // backend pid: when first seen blocking
	cancelled map[string]time.Time // backend pid of a maintenance command or a pinned session: when cancelled
	reopened  time.Time            // when the watcher's connection was last opened again
}

// abortBlockers ends the local backends that block the applier's: those of
// handed-over transactions now, others once blocking (when each was first
// seen) has held them for the grace. Backends that are not certa's local
// work (an operator's psql) are left alone: the applier waits for them.
func (e *Engine) abortBlockers(ctx context.Context, applierPID string, w *watchState, now time.Time) {
	// Polled every few milliseconds while the applier works: only the
	// lock manager is asked (pg_stat_activity reads every backend's state).
	r := e.watch.ExecParams(ctx, "SELECT unnest(pg_blocking_pids($1::int))", [][]byte{[]byte(applierPID)}, nil, nil, nil).Read()
	if r.Err != nil {
		if e.watch.IsClosed() {
			e.reopenWatch(ctx, w, now)
		}
		return
	}
	for _, row := range r.Rows {
		pid, err := strconv.ParseUint(string(row[0]), 10, 32)
		if err != nil {
			continue
		}
		e.localMu.Lock()
		aborted, pinned, waiting := e.local[uint32(pid)], e.pinned[uint32(pid)], e.waiting[uint32(pid)]
		grace, maint := e.maint[uint32(pid)]
		e.localMu.Unlock()
		if aborted == nil {
			continue
		}
		since, seen := w.blocking[string(row[0])]
		if !seen {
			since = now
			w.blocking[string(row[0])] = now
		}
		if !maint {
			grace = applyGrace
		}
		if !waiting && now.Sub(since) < grace {
			continue
		}
		end := "SELECT pg_terminate_backend($1::int)"
		at, cancelled := w.cancelled[string(row[0])]
		if maint || pinned && (cancelled || e.running(ctx, row[0])) {
			// Cancelled, the backend stays (a pinned one keeps the
			// session's temporary tables; its Tx then rolls back at once,
			// letting go of its locks: Tx.failed); ended if it still
			// blocks cancelGrace later (a command that does not look at
			// interrupts).
			if !cancelled {
				w.cancelled[string(row[0])] = now
				end = "SELECT pg_cancel_backend($1::int)"
			} else if now.Sub(at) < cancelGrace {
				continue
			}
		}
		aborted.Store(true)
		e.watch.ExecParams(ctx, end, [][]byte{row[0]}, nil, nil, nil).Read()
	}
}

// reopenWatch opens the watcher's connection again once it was found
// lost (at most every healthEvery): without it, nothing would end what
// blocks the applier. The watcher's goroutine owns e.watch while Apply
// runs.
func (e *Engine) reopenWatch(ctx context.Context, w *watchState, now time.Time) {
	if now.Sub(w.reopened) < healthEvery {
		return
	}
	w.reopened = now
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := connect(cctx, e.cfg.DSN, "", map[string]string{"synchronous_commit": asyncCommit})
	if err != nil {
		return
	}
	old := e.watch
	e.watch = c
	old.Close(context.Background())
	if admin := e.adminPIDs.Load(); admin != nil {
		pids := slices.Clone(*admin)
		for i, pid := range pids {
			if pid == old.PID() {
				pids[i] = c.PID()
			}
		}
		e.adminPIDs.Store(&pids)
	}
}

// running reports whether the backend pid is running a statement.
func (e *Engine) running(ctx context.Context, pid []byte) bool {
	r := e.watch.ExecParams(ctx, "SELECT state = 'active' FROM pg_stat_get_activity($1::int)", [][]byte{pid}, nil, nil, nil).Read()
	return r.Err == nil && len(r.Rows) == 1 && string(r.Rows[0][0]) == "t"
}
