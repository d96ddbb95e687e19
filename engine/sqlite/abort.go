package sqlite

import (
	"context"
	"sync"
	"time"

	"certa/sqlerr"
)

// How a local transaction is stopped from outside: its running statement is
// interrupted when its ctx ends or when it is aborted (a brute-force abort by
// the applier, a Restore, Close), and an aborted transaction's every later
// call fails.

// stopper is a channel closed at most once.
type stopper struct {
	once sync.Once
	ch   chan struct{}
}

func (s *stopper) stop() { s.once.Do(func() { close(s.ch) }) }

// fail makes every later call fail with err and interrupts a running Exec.
func (tx *Tx) fail(err *sqlerr.Error) {
	tx.failed.CompareAndSwap(nil, err)
	tx.stopMu.Lock()
	if tx.stop != nil {
		tx.stop.stop()
	}
	tx.stopMu.Unlock()
}

// interruptOn makes the connection's statements stop when ctx ends or the
// Tx is aborted, until the returned function is called. tx.mu is held.
func (tx *Tx) interruptOn(ctx context.Context) (done func()) {
	s := &stopper{ch: make(chan struct{})}
	tx.stopMu.Lock()
	tx.stop = s
	tx.stopMu.Unlock()
	if tx.failed.Load() != nil {
		s.stop()
	}
	stopAfter := context.AfterFunc(ctx, s.stop)
	c := tx.conn
	c.c.SetInterrupt(s.ch)
	return func() {
		stopAfter()
		tx.stopMu.Lock()
		tx.stop = nil
		tx.stopMu.Unlock()
		if !c.closed {
			c.c.SetInterrupt(nil)
		}
	}
}

// Prioritize implements engine.Tx.
func (tx *Tx) Prioritize(d time.Duration) { tx.patient.Store(int64(d)) }

// patience implements lockHolder.
func (tx *Tx) patience() time.Duration {
	d := time.Duration(tx.patient.Load())
	if tx.schemaHeld.Load() {
		d = max(d, tx.e.cfg.SchemaGrace)
	}
	return d
}

// bruteForceAbort implements lockHolder: the applier needs the write lock.
// The running statement is interrupted; once Exec has let go of the
// connection, the transaction is rolled back and the lock released here.
func (tx *Tx) bruteForceAbort() {
	if !tx.lockHeld.Load() {
		return // released (ended or parked) since the caller looked
	}
	tx.fail(errAborted)
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.holdsLock {
		tx.endLocked()
	}
}

// endLocked ends the SQLite transaction and its session and releases the
// write lock. It reports whether the connection broke (it is then closed).
// tx.mu is held.
func (tx *Tx) endLocked() (broken bool) { return tx.rollbackLocked(false) }

// rollbackLocked rolls the SQLite transaction back and releases the write
// lock. A parking Tx keeps its session (keepSession): the changes it records
// again when it resumes land on the rows it already knows, and creating a
// session reads each table's layout afresh (7% of the nodes' CPU under
// oltp-write, where transactions park several times each). The session's
// before-images stay those of the first time it touched each row; a row
// changed by a commit since then is also changed after the Tx's snapshot,
// so certification refuses the Tx anyway. Not so for an insert into a
// table without a primary key, which certifies by no key: see
// sessionOutlivesRollback.
func (tx *Tx) rollbackLocked(keepSession bool) (broken bool) {
	c := tx.conn
	if !c.closed {
		c.c.SetInterrupt(nil)
		if tx.cur != nil {
			c.release(tx.cur)
			tx.cur = nil
		}
		c.endStatement()
		err := c.rollback()
		tx.unnative(nil) // ended with the SQLite transaction
		tx.endSchema()
		if tx.sess != nil && (!keepSession || err != nil || !tx.sessionOutlivesRollback()) {
			tx.sess.Delete()
			tx.sess = nil
		}
		if err != nil {
			// Never hand on a connection in an unknown state, and never
			// release the lock while it may still hold SQLite's.
			c.close()
		}
	}
	if tx.holdsLock {
		tx.holdsLock = false
		tx.lockHeld.Store(false)
		tx.e.lock.unlock()
	}
	return c.closed
}

// sessionOutlivesRollback reports whether the Tx's session may go on
// recording after its SQLite transaction was rolled back, on a new one.
// Not if it wrote a table without a primary key: a rowid it inserted and
// lost may hold another transaction's row by then, which the session would
// report as inserted by this Tx (rowid.go). Nor if its writes may have run
// foreign-key actions, which may have written such a table.
func (tx *Tx) sessionOutlivesRollback() bool { return !tx.rowidWrites && !tx.fkActions }
