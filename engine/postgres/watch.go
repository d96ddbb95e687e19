package postgres

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"
)

// Brute-force abort: the applier never waits behind a local transaction
// for longer than the grace. While Apply runs, a watcher looks up which
// backends block the applier's (pg_blocking_pids), marks the local work
// on them aborted and ends those backends; the work then fails with
// 40001 wrapping engine.ErrAbortedForApply, and a handed-over transaction
// ended this way has its rows applied at its position instead.
//
// A backend pinned to a session (it holds the session's temporary
// tables, session.go) that is running a statement has only the
// statement cancelled: its transaction fails the same way and the
// backend stays, with the tables. One idle in its transaction cannot be
// made to let go but by ending it: the session then loses its temporary
// tables (engine.ErrSessionLost). Between transactions a pinned backend
// holds no locks, and is never in the way.

// applyGrace is how long the applier waits behind local work.
const applyGrace = 100 * time.Millisecond

// track registers the backend of local work with its aborted flag.
func (e *Engine) track(pid uint32, aborted *atomic.Bool) {
	e.localMu.Lock()
	e.local[pid] = aborted
	e.localMu.Unlock()
}

// untrack forgets a backend registered by track.
func (e *Engine) untrack(pid uint32) {
	e.localMu.Lock()
	delete(e.local, pid)
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
// called, aborting the local work that blocks it for longer than the grace.
func (e *Engine) watchBlockers(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	applier := strconv.FormatUint(uint64(e.applier.PID()), 10)
	go func() {
		defer close(done)
		tick := time.NewTicker(applyGrace)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			e.abortBlockers(ctx, applier)
		}
	}()
	return func() { cancel(); <-done }
}

// abortBlockers ends the local backends that block the applier's now.
// Backends that are not certa's local work (an operator's psql) are left
// alone: the applier waits for them.
func (e *Engine) abortBlockers(ctx context.Context, applierPID string) {
	r := e.watch.ExecParams(ctx, `SELECT b.pid, coalesce(a.state = 'active', false) FROM unnest(pg_blocking_pids($1::int)) b(pid)
		LEFT JOIN pg_stat_activity a ON a.pid = b.pid`, [][]byte{[]byte(applierPID)}, nil, nil, nil).Read()
	if r.Err != nil {
		return
	}
	for _, row := range r.Rows {
		pid, err := strconv.ParseUint(string(row[0]), 10, 32)
		if err != nil {
			continue
		}
		e.localMu.Lock()
		aborted, pinned := e.local[uint32(pid)], e.pinned[uint32(pid)]
		e.localMu.Unlock()
		if aborted == nil {
			continue
		}
		aborted.Store(true)
		end := "SELECT pg_terminate_backend($1::int)"
		if pinned && string(row[1]) == "t" {
			end = "SELECT pg_cancel_backend($1::int)" // keeps the session's temporary tables
		}
		e.watch.ExecParams(ctx, end, [][]byte{row[0]}, nil, nil, nil).Read()
	}
}
