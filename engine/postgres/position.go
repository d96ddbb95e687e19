package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Apply applies certified write sets in log order. An item whose
// transaction a session of this node handed over (Tx.HandOver) and that is
// still held commits that transaction at its position: the origin does
// not do its work twice. The other items are applied as rows, in runs of
// one transaction each between held ones (applier.go); the last records
// upTo. A local transaction that blocks the applier for longer than the
// grace is aborted (watch.go).
//
// A full disk (PostgreSQL's 53100) fails Apply with engine.ErrNoSpace. The
// batch commits in parts (around the held transactions), so what stayed
// of it is skipped when the same batch is applied again: items at or
// below the applied seqno.
//
// A lost connection (the server restarted, or ended the applier's
// backend) does not fail Apply: it reconnects (reconnect.go: recover),
// reads the applied seqno back from the database, applies again what the
// server lost of earlier batches, and applies the batch from there. It
// fails if the server does not come back within reconnectTimeout.
func (e *Engine) Apply(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed.Load() {
		return errClosed
	}
	for _, it := range items {
		if changesSchema(it.WS) {
			// After the snapshots being dumped are written (engine.dumping).
			e.dumping.Lock()
			defer e.dumping.Unlock()
			break
		}
	}
	var err error
	deadline := time.Now().Add(reconnectTimeout)
	for {
		if e.broken.Load() || e.applier.IsClosed() {
			if err = e.recover(errors.New("the applier's connection was lost")); err != nil {
				return err
			}
			// What of the batch committed and stayed is in
			// certa.applied, as recover read it back: the rest is
			// applied again, with its items' errors anew.
			for i := range items {
				if items[i].Seqno > e.appliedUpTo {
					items[i].Err = nil
				}
			}
		}
		err = e.apply(ctx, items, upTo)
		if err == nil || e.closed.Load() || !(connLost(err) || e.applier.IsClosed()) || time.Now().After(deadline) {
			break
		}
		e.broken.Store(true)
	}
	if err == nil {
		e.retain(items, upTo)
		e.appliedMark.Store(e.appliedUpTo)
		return nil
	}
	if sqlerr.Code(pgError(err)) == sqlerr.DiskFull || strings.Contains(err.Error(), "No space left on device") {
		return fmt.Errorf("%w: %w", engine.ErrNoSpace, err)
	}
	return err
}

func (e *Engine) apply(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	if e.appliedUpTo >= upTo {
		return nil // applied before a failure of the same batch
	}
	for len(items) > 0 && items[0].Seqno <= e.appliedUpTo {
		items = items[1:]
	}
	stop := e.watchBlockers(ctx)
	defer stop()
	start := 0
	recorded := uint64(0)
	for i := range items {
		t := e.takeHeld(items[i].WS)
		if t == nil {
			continue
		}
		if i > start {
			if err := e.applyRun(ctx, items[start:i], items[i-1].Seqno); err != nil {
				return err
			}
		}
		if !e.commitHeld(ctx, t, items[i].Seqno) {
			if err := e.applyRun(ctx, items[i:i+1], items[i].Seqno); err != nil {
				return err
			}
		} else {
			e.appliedUpTo = items[i].Seqno
			if changesSchema(items[i].WS) {
				e.applyTS.reset()
				e.schemaEpoch.Add(1)
			}
		}
		start, recorded = i+1, items[i].Seqno
	}
	if start < len(items) || recorded < upTo {
		if err := e.applyRun(ctx, items[start:], upTo); err != nil {
			return err
		}
	}
	return nil
}

// commitHeld commits a held transaction at seqno (Tx.commitAt) and
// reports whether it committed. A commit whose answer did not come (its
// backend ended or the server crashed after the COMMIT) may have
// committed: certa.applied, written in it, says (the applier's connection
// failing too is Apply's to handle). One aborted before it was tried
// sent nothing.
func (e *Engine) commitHeld(ctx context.Context, t *Tx, seqno uint64) bool {
	tried := !t.aborted.Load()
	if t.commitAt(ctx, seqno) {
		return true
	}
	if !tried {
		return false
	}
	applied, err := appliedSeqno(ctx, e.applier)
	return err == nil && applied >= seqno
}

// takeHeld returns the held transaction of ws, no longer held, or nil.
func (e *Engine) takeHeld(ws *writeset.WriteSet) *Tx {
	if ws == nil || ws.Origin != e.cfg.NodeID || ws.TxID == 0 {
		return nil
	}
	e.heldMu.Lock()
	defer e.heldMu.Unlock()
	t := e.held[ws.TxID]
	delete(e.held, ws.TxID)
	return t
}

// applyRun applies items as rows in one transaction recording upTo; an
// item that changes the schema makes every connection drop its table cache.
func (e *Engine) applyRun(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	err := applyItems(ctx, e.applier, &e.applyTS, items, upTo, e.token, e.placeNew, &tempWay{log: e.cfg.Logger, list: e.listTempDependents})
	if err == nil {
		e.appliedUpTo = upTo
	}
	for _, it := range items {
		if changesSchema(it.WS) {
			e.schemaEpoch.Add(1)
			break
		}
	}
	return err
}

// placeNew moves the sequences a schema change made (or changed) into
// this node's blocks (sequences.go), in the schema change's transaction
// (which runs as the client role), so that no client takes a value
// before.
func (e *Engine) placeNew(ctx context.Context, conn *pgconn.PgConn) error {
	return placeAsClient(ctx, conn, e.token, e.slot.Load())
}
