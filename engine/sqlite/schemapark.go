package sqlite

import (
	"context"
	"errors"

	"certa/sqlerr"
)

// Parking a Tx that ran schema statements. Its changes are its segments
// (segments.go): the rows it wrote, flushed from its session, and the
// schema statements it ran, in order, which is also what its write set
// carries. Parked, it keeps them and gives up SQLite's transaction and the
// write lock; resumed, it applies them again on the latest state, as the
// applier will at its position in the log, unless a table it read or
// wrote changed meanwhile (then it fails with 40001, as any parked Tx
// whose data changed). Without this, a migration tool that writes its
// history table on a second connection while its migration's block is
// open (Flyway) waited on the block's write lock until one of them failed.
//
// SQLite's savepoints end with its transaction: a savepoint set after the
// first schema statement is returned to by its segments (the rows are
// flushed at each savepoint, schemaSavepoint); one set before it can no
// longer be returned to once the Tx parked (errSchemaAfterPark).

// parkSchema parks a Tx that ran schema statements (park). tx.mu is held.
func (tx *Tx) parkSchema() {
	if err := tx.flushRows(); err != nil {
		tx.fail(sqlerr.Wrap(err, sqlerr.SerializationFailure,
			"could not serialize access: transaction aborted so that another could write; retry the transaction"))
		tx.endLocked()
		return
	}
	tx.setAsideSchema()
}

// setAsideSchema rolls back the SQLite transaction of a Tx that ran
// schema statements, releases the lock and keeps its segments, which are
// its changes: its session holds none. tx.mu is held.
func (tx *Tx) setAsideSchema() {
	s := tx.schema
	if s.before != nil {
		s.before.Delete()
		s.before = nil
	}
	// rollbackLocked would end the schema record with the transaction.
	tx.schema = nil
	tx.parked, tx.spill = true, nil
	broken := tx.rollbackLocked(true)
	tx.schema = s
	tx.schemaHeld.Store(false)
	tx.conn.forgetSchema()
	tx.conn.newSeqs = nil
	if broken {
		tx.fail(errAborted)
	}
}

// unparkSchema resumes a parked Tx that ran schema statements: it holds
// the write lock and no SQLite transaction. tx.mu is held.
func (tx *Tx) unparkSchema(ctx context.Context) error {
	c := tx.conn
	seqno, err := tx.beginLatestNoSession()
	if err != nil {
		return err
	}
	s := tx.schema
	touched := tx.touched()
	for _, t := range lowerAll(s.tables) {
		touched[t] = struct{}{}
	}
	// Other sequences' reservations change the sequences' table all the
	// time: the rows and statements applied again below find out whether
	// one of its own sequences changed.
	delete(touched, sequencesTable)
	if tx.e.hist.changed(tx.view, touched) {
		return tx.failNow(errChangedWhileParked)
	}
	for _, seg := range s.segs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if seg.kind == segmentRows {
			if err := c.refreshSchema(); err != nil {
				return err
			}
			err := applyRows(c, seg.data)
			if errors.Is(err, errNotClean) || errors.Is(err, errBadChangeset) {
				return tx.failNow(errChangedWhileParked)
			}
			if err != nil {
				return err
			}
			continue
		}
		if _, _, err := runDDL(c, string(seg.data), 0); err != nil {
			if isTransient(err) {
				return err
			}
			return tx.failNow(errChangedWhileParked)
		}
	}
	if err := c.refreshSchema(); err != nil {
		return err
	}
	if err := tx.noteNewSequences(); err != nil {
		return err
	}
	tx.schemaHeld.Store(true)
	tx.view = seqno
	tx.parked = false
	return nil
}
