package sqlite

import (
	"bytes"
	"context"
	"fmt"

	"certa/sqlerr"
)

// Savepoints. While a Tx's SQLite transaction lasts, its savepoints are
// SQLite's own (native). Parking, moving the snapshot forward and re-running
// end that transaction, so a savepoint must also be restorable without it:
//
//   - The statement log holds the savepoint commands among the statements,
//     so a re-run (park.go, moveforward.go) replays them natively and
//     rebuilds the stack as it was.
//   - A Tx that parks by setting its changes aside first rolls back to each
//     of its native savepoints in turn and keeps the changes it had there
//     (the session gives the net changes since the Tx began; the rows a
//     savepoint rolled back are in none of them). Rolling back to such a
//     savepoint later sets those changes aside as the Tx's spill, and its
//     next statement restores them as after any park.
//
// So the write set at COMMIT holds exactly the changes that survive. A Tx
// that used savepoints never enters image mode (rowimage.go), whose images
// know no savepoints.

// savepoint is one mark on a Tx's stack.
type savepoint struct {
	// native: the mark is a SQLite savepoint in the current SQLite
	// transaction. Native marks are always the top of the stack.
	native bool
	// changes are the Tx's changes at the mark, as a changeset, when it is
	// not native; nil when unknown: the Tx is parked to be re-run, which
	// makes it native again.
	changes []byte
	// updated is how many of the Tx's updatedKeys it had at the mark
	// (touched.go): rows updated after it are not written once it is
	// rolled back to.
	updated int
	// inSchema: the mark was set after the Tx's first schema statement,
	// when it had segs segments (txschema.go).
	inSchema bool
	segs     int
}

// spName is the SQLite name of mark n (1-based): marks are only ever added
// on top, so the name is unique on the stack.
func spName(n int) string { return fmt.Sprintf("certa_sp%d", n) }

// Savepoint commands in the statement log (loggedStmt.sp).
const (
	spNone = iota
	spSet
	spRollbackTo
	spRelease
)

// errSavepointLost fails a Tx that must return to a savepoint it can no
// longer rebuild: neither re-run nor changes kept. Not expected.
var errSavepointLost = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "could not serialize access: the transaction could not be restored to its savepoint after giving way to another writer; retry the transaction"}

// errStatementEndedTx fails a Tx whose failed statement made SQLite roll
// the whole transaction back (an interrupted write, a full disk): no
// savepoint is left to return to.
var errStatementEndedTx = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "could not serialize access: the failed statement ended the whole transaction, so it cannot return to a savepoint; retry the transaction"}

// Savepoint implements engine.Tx.
func (tx *Tx) Savepoint(ctx context.Context) error {
	return tx.savepointOp(ctx, spSet, len(tx.sps)+1)
}

// RollbackTo implements engine.Tx.
func (tx *Tx) RollbackTo(ctx context.Context, n int) error {
	return tx.savepointOp(ctx, spRollbackTo, n)
}

// Release implements engine.Tx.
func (tx *Tx) Release(ctx context.Context, n int) error {
	return tx.savepointOp(ctx, spRelease, n)
}

func (tx *Tx) savepointOp(ctx context.Context, op, n int) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return err
	}
	if op != spSet && (n < 1 || n > len(tx.sps)) {
		return sqlerr.New(sqlerr.Internal, "savepoint %d of %d", n, len(tx.sps))
	}
	tx.setBusy()
	defer tx.setIdle()
	tx.usedSavepoints = true
	if err := tx.leaveImages(); err != nil {
		return err
	}
	// Logged first: a re-run must replay it, including one that the
	// rollback below starts.
	tx.rlog.addSavepoint(op, n)
	if err := tx.doSavepoint(op, n, !tx.parked); err != nil {
		if f := tx.failed.Load(); f != nil {
			return f
		}
		return tx.failNow(sqlerr.Wrap(err, sqlerr.SerializationFailure,
			"could not serialize access: savepoint command failed (%v); retry the transaction", err))
	}
	return nil
}

// doSavepoint carries out a savepoint command on the Tx's stack and state;
// live: the Tx's SQLite transaction is open (not parked). tx.mu is held.
func (tx *Tx) doSavepoint(op, n int, live bool) error {
	switch op {
	case spSet:
		sp := savepoint{native: live, updated: len(tx.updatedKeys)}
		if err := tx.schemaSavepoint(&sp); err != nil {
			return err
		}
		if live {
			if err := tx.conn.exec("SAVEPOINT " + spName(n)); err != nil {
				return err
			}
		} else if tx.spill != nil {
			sp.changes = bytes.Clone(tx.spill)
		}
		tx.sps = append(tx.sps, sp)
	case spRelease:
		// Releasing the lowest native mark at or above n releases the
		// native ones above it too.
		for i := n - 1; i < len(tx.sps); i++ {
			if tx.sps[i].native {
				if err := tx.conn.exec("RELEASE " + spName(i+1)); err != nil {
					return err
				}
				break
			}
		}
		tx.sps = tx.sps[:n-1]
	case spRollbackTo:
		sp := tx.sps[n-1]
		tx.sps = tx.sps[:n]
		tx.updatedKeys = tx.updatedKeys[:min(sp.updated, len(tx.updatedKeys))]
		if done, err := tx.schemaRollbackTo(sp); done || err != nil {
			return err
		}
		switch {
		case sp.native:
			return tx.conn.exec("ROLLBACK TO " + spName(n))
		case !live && tx.spill == nil:
			// To be re-run: the re-run replays this command.
		case sp.changes != nil:
			// Set the Tx aside with the changes it had at the mark;
			// its next statement restores them (unpark).
			if live {
				if broken := tx.rollbackLocked(true); broken {
					return tx.failNow(errAborted)
				}
			}
			tx.parked, tx.spill = true, bytes.Clone(sp.changes)
		case tx.rlog.active():
			if live {
				if broken := tx.rollbackLocked(true); broken {
					return tx.failNow(errAborted)
				}
			}
			tx.parked, tx.spill = true, nil
		default:
			return tx.failNow(errSavepointLost)
		}
	}
	return nil
}

// replaySavepoint runs a logged savepoint command during a re-run, which
// rebuilds the stack natively in the new SQLite transaction. tx.mu is held.
func (tx *Tx) replaySavepoint(op, n int) error {
	if op != spSet && n > len(tx.sps) {
		return errSavepointLost
	}
	return tx.doSavepoint(op, n, true)
}

// checkAfterError fails a Tx that used savepoints when an error left it
// unable to go on: its SQLite transaction ended while it was not parked
// (SQLite rolls the whole transaction back on an interrupted write or a
// full disk), or it holds the lock while parked (resuming failed halfway).
// A Tx without savepoints is rolled back by its session after any error.
// tx.mu is held.
func (tx *Tx) checkAfterError() {
	c := tx.conn
	if !tx.usedSavepoints || c == nil || tx.failed.Load() != nil {
		return
	}
	if c.closed || tx.parked && tx.holdsLock || !tx.parked && c.c.AutocommitEnabled() {
		tx.failNow(errStatementEndedTx)
	}
}

// unnative marks every savepoint as no longer native: the SQLite
// transaction ended. changes are what the Tx had at each (nil: unknown).
// tx.mu is held.
func (tx *Tx) unnative(changes []byte) {
	for i := range tx.sps {
		if sp := tx.sps[i]; sp.native {
			tx.sps[i] = savepoint{changes: changes, updated: sp.updated, inSchema: sp.inSchema, segs: sp.segs}
		}
	}
}

// keepSavepointChanges is called before a Tx parks with its changes set
// aside: it rolls back to each native savepoint in turn, from the top, and
// keeps the changes the Tx had there, for RollbackTo to restore. The Tx's
// SQLite transaction is rolled back next. tx.mu is held.
func (tx *Tx) keepSavepointChanges() error {
	for i := len(tx.sps) - 1; i >= 0 && tx.sps[i].native; i-- {
		if err := tx.conn.exec("ROLLBACK TO " + spName(i+1)); err != nil {
			return err
		}
		var b bytes.Buffer
		if tx.sess != nil {
			if err := tx.sess.WriteChangeset(&b); err != nil {
				return err
			}
		}
		tx.sps[i] = savepoint{changes: append([]byte{}, b.Bytes()...)}
	}
	return nil
}
