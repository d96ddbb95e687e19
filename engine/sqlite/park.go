package sqlite

import (
	"bytes"
	"context"
	"errors"
	"time"

	"certa/sqlerr"
)

// Parking: a local transaction that holds the write lock but is idle,
// waiting for its client between statements, gives the lock up without
// ending, and its SQLite transaction is rolled back. At its next statement
// it takes the lock again and begins on the latest state. A short
// transaction that has only written is simply re-run there: its logged
// statements run again and must return what the client saw (moveforward.go);
// values the client never saw, such as now() in an INSERT, are computed
// again. Any other sets its changes aside as a changeset (the spill) and
// re-applies it, after checking that no table it read or wrote changed
// meanwhile (history.go), or re-runs when one did. So interactive
// transactions on one node can all write, and the applier never has to abort
// a transaction just because its client is slow.

// localParkIdle is how long a holder must have been idle before another
// local writer parks it: none. Waiting lets the holder's next statement come
// without a re-run, but the lock then waits on client round trips (oltp-write
// at 32 clients: 1,686 transactions/s parking at once, 1,423 after 0.2 ms,
// 954 after 1 ms). A holder costly to park counts as idle later (idle).
const localParkIdle = 0

// errChangedWhileParked fails a transaction whose data was changed by a
// commit while it was parked.
var errChangedWhileParked = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "could not serialize access: data this transaction read or wrote was changed by a concurrent commit; retry the transaction"}

// costlyParkDelay is how much later a Tx that parks by setting its changes
// aside counts as idle for local writers: writing them out and applying them
// again costs in proportion to everything it changed, and a transaction
// whose client answers within it usually finishes first. (TPC-C on 3 nodes,
// 8 clients: 127 transactions/s parked at once, 206 with 2 ms, 193 with 5.)
const costlyParkDelay = 2 * time.Millisecond

// idle implements lockHolder.
func (tx *Tx) idle() (time.Time, bool) {
	if tx.busy.Load() {
		return time.Time{}, false
	}
	since := time.Unix(0, tx.idleAt.Load())
	if !tx.cheapPark.Load() {
		since = since.Add(costlyParkDelay)
	}
	return since, true
}

// setBusy marks the Tx busy in a call (it cannot be parked). tx.mu is held.
func (tx *Tx) setBusy() { tx.busy.Store(true) }

// setIdle marks the end of a call and wakes lock waiters that may now park
// the Tx. tx.mu is held.
func (tx *Tx) setIdle() {
	tx.cheapPark.Store(tx.img != nil || tx.rlog.replayable())
	tx.idleAt.Store(time.Now().UnixNano())
	tx.busy.Store(false)
	if tx.holdsLock {
		tx.e.lock.notifyIdle()
	}
}

// park implements lockHolder. It runs on the waiter's goroutine.
func (tx *Tx) park() bool {
	if tx.busy.Load() || !tx.mu.TryLock() {
		return false
	}
	defer tx.mu.Unlock()
	if tx.busy.Load() {
		return false // an Exec began between the two checks
	}
	if !tx.holdsLock {
		return true
	}
	if tx.schema != nil {
		tx.parkSchema() // schemapark.go
		return true
	}
	if tx.img != nil || tx.rlog.replayable() || tx.fkActions && tx.rlog.active() {
		// Re-running is cheaper than writing the changes out and
		// applying them again; in image mode they are out already. A Tx
		// whose changes may run foreign-key actions is always re-run:
		// applying its changes again would run them again (fkeys.go).
		tx.parked, tx.spill = true, nil
		if broken := tx.rollbackLocked(true); broken {
			tx.fail(errAborted)
		}
		return true
	}
	var spill bytes.Buffer
	var err error
	if tx.sess != nil {
		err = tx.sess.WriteChangeset(&spill)
	}
	if err == nil {
		err = tx.keepSavepointChanges()
	}
	if err != nil {
		tx.fail(sqlerr.Wrap(err, sqlerr.SerializationFailure,
			"could not serialize access: transaction aborted so that another could write; retry the transaction"))
		tx.endLocked()
		return true
	}
	tx.spill = spill.Bytes()
	tx.parked = true
	if broken := tx.rollbackLocked(true); broken {
		tx.fail(errAborted)
	}
	return true
}

// unpark takes the write lock again for a parked Tx and restores its
// changes on the latest state. tx.mu is held.
//
// If no table the Tx touched changed since its view, its changes are
// re-applied as they were. Otherwise its statements are re-run on the latest
// state (the changes set aside are dropped): if each returns what the client
// saw, the client's view is consistent with the latest state, and the Tx goes
// on from there. Only a Tx whose client would see a difference fails here.
// Its snapshot for certification stays where it began, so a concurrent commit
// that wrote a row it writes still makes it fail (first committer wins).
func (tx *Tx) unpark(ctx context.Context) error {
	if err := tx.takeLock(ctx); err != nil {
		return err
	}
	if tx.schema != nil {
		return tx.unparkSchema(ctx)
	}
	c := tx.conn
	s, err := tx.beginLatest()
	if err != nil {
		return err
	}
	// We hold the lock: every apply since the Tx's view is in the history.
	// A Tx whose reads are unchecked has written only by key since
	// (keywrite.go): its changes are re-applied whatever changed, and its
	// reads stay unchecked.
	// Re-applying changes that ran foreign-key actions would run them
	// again: re-run instead while the log allows (fkeys.go).
	if tx.spill == nil || tx.fkActions && tx.rlog.active() || !tx.unchecked && tx.e.hist.changed(tx.view, tx.touched()) {
		if err := tx.rerun(ctx); err != nil {
			return err
		}
		tx.unchecked = false
	} else {
		// Row by row with cached statements, as the applier does: SQLite's
		// changeset apply prepares its statements on every call.
		err := applyRows(c, tx.spill)
		if errors.Is(err, errNotClean) || errors.Is(err, errBadChangeset) {
			return tx.failNow(errChangedWhileParked)
		}
		if err != nil {
			return err
		}
	}
	// The Tx now reads state s, unchanged since its view where it matters
	// (checked, or re-run), unless its reads are unchecked: they were made
	// at its view, from where they will be checked.
	if !tx.unchecked {
		tx.view = s
	}
	tx.parked, tx.spill = false, nil
	return nil
}

// beginLatest begins a write transaction on the latest state for a Tx that
// holds the lock and has no SQLite transaction open, with its session ready,
// and returns the applied seqno it reads. tx.mu is held.
func (tx *Tx) beginLatest() (uint64, error) {
	s, err := tx.beginLatestNoSession()
	if err != nil {
		return 0, err
	}
	return s, tx.ensureSession()
}

// beginLatestNoSession is beginLatest for a Tx in image mode (rowimage.go),
// which records its changes itself.
func (tx *Tx) beginLatestNoSession() (uint64, error) {
	c := tx.conn
	if err := c.exec("BEGIN IMMEDIATE"); err != nil {
		return 0, err
	}
	s, ok, err := c.queryInt("SELECT seqno FROM _certa_meta")
	if err != nil || !ok {
		return 0, mapErr(err)
	}
	return uint64(s), c.refreshSchema()
}

// rerun runs the Tx's logged statements again, in a new SQLite transaction
// holding the lock, and fails the Tx unless each returns what it returned
// before. tx.mu is held.
func (tx *Tx) rerun(ctx context.Context) error {
	tx.locked, tx.lockedIn = nil, nil // FOR UPDATE statements add theirs again
	tx.updatedKeys = nil              // and UPDATEs theirs
	if tx.revalidate(ctx) {
		return nil
	}
	if f := tx.failed.Load(); f != nil {
		return f // aborted while re-running
	}
	return tx.failNow(errChangedWhileParked)
}

// touched returns the tables the Tx read or wrote, lower-cased.
func (tx *Tx) touched() map[string]struct{} {
	m := make(map[string]struct{}, len(tx.reads)+len(tx.writes))
	for t := range tx.reads {
		m[t] = struct{}{}
	}
	for t := range tx.writes {
		m[t] = struct{}{}
	}
	return m
}

// failNow makes the Tx fail with err from now on, ending its SQLite
// transaction and releasing the lock at once rather than at Rollback.
func (tx *Tx) failNow(err *sqlerr.Error) error {
	tx.fail(err)
	tx.endLocked()
	return err
}
