package sqlite

import (
	"bytes"
	"context"
	"time"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// Parking: a local transaction that holds the write lock but is idle,
// waiting for its client between statements, gives the lock up without
// ending. Its changes so far are set aside as a changeset (the spill) and
// its SQLite transaction is rolled back; at its next statement it takes the
// lock again, begins on the latest state, checks that nothing it read or
// wrote was changed meanwhile (history.go) and re-applies the spill. So two
// interactive transactions on one node can both write, and the applier never
// has to abort a transaction just because its client is slow.

// localParkIdle is how long a holder must have been idle before another
// local writer parks it. Writers that run statement after statement (a bulk
// load) are idle only briefly between them and are not parked over and over
// (each unpark re-applies everything they changed so far); clients that think
// between statements are.
const localParkIdle = 10 * time.Millisecond

// errChangedWhileParked fails a transaction whose data was changed by a
// commit while it was parked.
var errChangedWhileParked = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "could not serialize access: data this transaction read or wrote was changed by a concurrent commit; retry the transaction"}

// idle implements lockHolder.
func (tx *Tx) idle() (time.Time, bool) {
	if tx.busy.Load() {
		return time.Time{}, false
	}
	return time.Unix(0, tx.idleAt.Load()), true
}

// setBusy marks the Tx busy in a call (it cannot be parked). tx.mu is held.
func (tx *Tx) setBusy() { tx.busy.Store(true) }

// setIdle marks the end of a call and wakes lock waiters that may now park
// the Tx. tx.mu is held.
func (tx *Tx) setIdle() {
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
	var spill bytes.Buffer
	if tx.sess != nil {
		if err := tx.sess.WriteChangeset(&spill); err != nil {
			tx.fail(sqlerr.Wrap(err, sqlerr.SerializationFailure,
				"could not serialize access: transaction aborted so that another could write; retry the transaction"))
			tx.endLocked()
			return true
		}
	}
	tx.spill = spill.Bytes()
	tx.parked = true
	if broken := tx.endLocked(); broken {
		tx.fail(errAborted)
	}
	return true
}

// unpark takes the write lock again for a parked Tx and restores its
// changes on the latest state. tx.mu is held.
func (tx *Tx) unpark(ctx context.Context) error {
	if err := tx.takeLock(ctx); err != nil {
		return err
	}
	c := tx.conn
	if err := c.exec("BEGIN IMMEDIATE"); err != nil {
		return err
	}
	s, ok, err := c.queryInt("SELECT seqno FROM _certa_meta")
	if err != nil || !ok {
		return mapErr(err)
	}
	// We hold the lock: every apply since the Tx's view is in the history.
	if tx.e.hist.changed(tx.view, tx.touched()) {
		return tx.failNow(errChangedWhileParked)
	}
	if err := tx.startSession(); err != nil {
		return err
	}
	if len(tx.spill) > 0 {
		conflict := false
		err := c.c.ApplyChangeset(bytes.NewReader(tx.spill), nil,
			func(sqlite.ConflictType, *sqlite.ChangesetIterator) sqlite.ConflictAction {
				conflict = true
				return sqlite.ChangesetAbort
			})
		if conflict {
			return tx.failNow(errChangedWhileParked)
		}
		if err != nil {
			return err
		}
	}
	// The Tx now reads state s, unchanged since its view where it matters;
	// its write set keeps its first snapshot for certification.
	tx.view = uint64(s)
	tx.parked, tx.spill = false, nil
	return nil
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
