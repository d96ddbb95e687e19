package sqlite

import (
	"bytes"
	"context"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Schema statements inside a transaction block (migration tools run them
// so). SQLite's DDL is transactional: the statement runs in the Tx's SQLite
// transaction, seen by its later statements and undone by ROLLBACK. The
// write set carries the block's rows and statements as segments in their
// order (segments.go); every node, the origin included, applies them at the
// transaction's position in the log.
//
// A Tx that ran one never moves its snapshot forward (it holds SQLite's
// write transaction). Idle, it is parked like any writer, with its
// segments set aside (schemapark.go); busy in a statement past
// Config.SchemaGrace while another node's transaction must be applied,
// the applier brute-force aborts it (40001).

// schemaChanges is what a Tx that ran schema statements has changed.
type schemaChanges struct {
	segs   []segment // up to the last flush of the Tx's session
	tables []string  // the tables its statements touched
	all    bool      // a statement touched no table of its own: it may change any
	// before is the session that recorded the Tx's rows before its first
	// schema statement, disabled since: a ROLLBACK TO a savepoint set
	// before that statement returns to it (returnToBefore).
	before        *sqlite.Session
	beforeVersion int64 // the schema version before was made for
}

// ExecSchema implements engine.Tx.
func (tx *Tx) ExecSchema(ctx context.Context, sql string, w result.Writer) error {
	if err := pgparse.CheckSyntax(sql); err != nil {
		return err
	}
	sql = pgparse.UnqualifyPublic(foldNames(sql))
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return err
	}
	if tx.tempChanged {
		return errTempMix() // its write set would roll them back (temp.go)
	}
	if word, ok := unsupportedDDL(sql); ok {
		return errUnsupportedDDL(word)
	}
	sql, err := translateChecks(sql)
	if err != nil {
		return err
	}
	if pgparse.CopiesRows(sql) {
		// Its rows would be replicated and the statement run again on
		// the other nodes: they would write them twice.
		err := sqlerr.New(sqlerr.FeatureNotSupported, "a schema change that also writes rows (CREATE TABLE AS) cannot run inside a transaction block")
		err.Hint = "Run it on its own, outside a transaction block: it then runs in total order on every node."
		return err
	}
	tx.setBusy()
	defer tx.setIdle()
	done := tx.interruptOn(ctx)
	defer done()
	err = tx.readyForSchema(ctx)
	var skipped []*sqlerr.Error
	if err == nil {
		skipped, err = tx.conn.skippedDrops(sql)
	}
	for attempt := 0; err == nil; attempt++ {
		err = tx.runSchema(sql)
		if err != nil && attempt < maxMoveForward && sqlite.ErrCode(err) == sqlite.ResultBusySnapshot {
			// Its snapshot was stale and it had not written: move forward,
			// as Exec does, while it still can.
			err = tx.moveForward(ctx, false)
			continue
		}
		break
	}
	if err != nil {
		err = tx.classify(err)
		tx.checkAfterError()
		return err
	}
	sendNotices(ctx, skipped)
	return tx.callWriter(nil, func() error { return w.Complete(pgparse.SchemaTag(sql)) })
}

// readyForSchema brings the Tx to where a schema statement can run: out of
// image mode, not parked, holding the write lock, its reads checked.
// tx.mu is held.
func (tx *Tx) readyForSchema(ctx context.Context) error {
	if err := tx.leaveImages(); err != nil {
		return err
	}
	if tx.parked {
		if err := tx.unpark(ctx); err != nil {
			return err
		}
	}
	if !tx.holdsLock {
		if err := tx.takeLock(ctx); err != nil {
			return err
		}
	}
	if tx.unchecked {
		return tx.checkReads(ctx)
	}
	return nil
}

// runSchema runs one schema statement in the Tx's SQLite transaction, in a
// savepoint of its own so that a refused one leaves nothing. tx.mu is held.
func (tx *Tx) runSchema(sql string) error {
	first := tx.schema == nil
	if first {
		if err := tx.startSchema(); err != nil {
			return err
		}
	} else if err := tx.flushRows(); err != nil {
		return err
	}
	c := tx.conn
	err := c.exec("SAVEPOINT certa_schema")
	if err != nil {
		return err
	}
	ran, tables, err := runDDL(c, sql, 0)
	if err != nil {
		if !c.closed && !c.c.AutocommitEnabled() {
			c.exec("ROLLBACK TO certa_schema")
			c.exec("RELEASE certa_schema")
		}
		if c.closed {
			return err
		}
		// The schema version it reached may be reached again by another
		// change: its caches must go.
		c.forgetSchema()
		if first {
			tx.returnToBefore()
		}
		return err
	}
	if err := c.exec("RELEASE certa_schema"); err != nil {
		return err
	}
	s := tx.schema
	s.segs = append(s.segs, segment{segmentSchema, []byte(ran)})
	s.tables = append(s.tables, tables...)
	s.all = s.all || len(tables) == 0
	// Nothing it ran can be re-run now (it holds SQLite's write
	// transaction, and the log has no schema statements).
	tx.rlog.stop()
	return tx.noteNewSequences()
}

// startSchema begins the Tx's record of schema changes before its first
// schema statement: the rows it wrote so far become the first segment, and
// their session is kept, disabled, for a ROLLBACK TO a savepoint set
// before (schemaRollbackTo). tx.mu is held.
func (tx *Tx) startSchema() error {
	for _, sp := range tx.sps {
		if !sp.native {
			// ROLLBACK TO it would set the Tx aside, which a Tx that
			// changed the schema cannot be.
			return errSchemaAfterPark()
		}
	}
	s := &schemaChanges{before: tx.sess, beforeVersion: tx.sessSchema}
	if s.before != nil {
		var b bytes.Buffer
		if err := s.before.WriteChangeset(&b); err != nil {
			return err
		}
		if b.Len() > 0 {
			s.segs = []segment{{segmentRows, b.Bytes()}}
		}
		s.before.Disable()
	}
	tx.schema, tx.sess = s, nil
	tx.schemaHeld.Store(true)
	return nil
}

// returnToBefore undoes startSchema: the Tx is as it was before its first
// schema statement (which failed, or was rolled back to a savepoint set
// before it). tx.mu is held.
func (tx *Tx) returnToBefore() {
	if tx.sess != nil {
		tx.sess.Delete()
	}
	tx.sess, tx.sessSchema, tx.schema.before = tx.schema.before, tx.schema.beforeVersion, nil
	if tx.sess != nil {
		tx.sess.Enable()
	}
	tx.endSchema()
}

// flushRows ends the Tx's current row segment: the changes its session
// recorded become a segment, and the next write starts a new session (the
// next statement may change the tables' layout, which a session knows from
// its first change). tx.mu is held.
func (tx *Tx) flushRows() error {
	if tx.sess == nil {
		return nil
	}
	var b bytes.Buffer
	if err := tx.sess.WriteChangeset(&b); err != nil {
		return err
	}
	if b.Len() > 0 {
		tx.schema.segs = append(tx.schema.segs, segment{segmentRows, b.Bytes()})
	}
	tx.sess.Delete()
	tx.sess = nil
	return nil
}

// noteNewSequences records the sequences the Tx's statements made, whose
// values nextval takes from their rows (takeNewSequenceValue): no node
// has reserved any yet. tx.mu is held.
func (tx *Tx) noteNewSequences() error {
	c := tx.conn
	return c.execResult("SELECT name FROM _certa_sequences", func(st *sqlite.Stmt) {
		if name := st.ColumnText(0); !tx.e.seqs.knows(name) {
			if c.newSeqs == nil {
				c.newSeqs = map[string]bool{}
			}
			c.newSeqs[name] = true
		}
	})
}

// schemaWriteSet returns the changes of a Tx that ran schema statements,
// as segments ending with what its session recorded since the last flush,
// and sets ws's Schema and schema tables. tx.mu is held.
func (tx *Tx) schemaWriteSet(ws *writeset.WriteSet) error {
	segs := tx.schema.segs
	if tx.sess != nil {
		var b bytes.Buffer
		if err := tx.sess.WriteChangeset(&b); err != nil {
			return err
		}
		if b.Len() > 0 {
			segs = append(segs[:len(segs):len(segs)], segment{segmentRows, b.Bytes()})
		}
	}
	ws.Changes = encodeSegments(segs)
	ws.Schema = writeset.SchemaTables
	if tx.schema.all {
		ws.Schema = writeset.SchemaAll
	}
	ws.Tables = append(ws.Tables, tx.schema.tables...)
	return nil
}

// endSchema forgets the Tx's schema changes as its SQLite transaction
// ends: the connection's caches of the schema are dropped (the schema
// version SQLite returns to may be reached again by another change).
// tx.mu is held.
func (tx *Tx) endSchema() {
	if tx.schema == nil {
		return
	}
	if tx.schema.before != nil {
		tx.schema.before.Delete()
	}
	tx.schema = nil
	tx.schemaHeld.Store(false)
	tx.conn.forgetSchema()
	tx.conn.newSeqs = nil
}

// schemaSavepoint readies a savepoint set by a Tx that ran schema
// statements: the rows so far are flushed, so that the segments alone
// describe the Tx at the mark. tx.mu is held.
func (tx *Tx) schemaSavepoint(sp *savepoint) error {
	if tx.schema == nil {
		return nil
	}
	if err := tx.flushRows(); err != nil {
		return err
	}
	sp.inSchema, sp.segs = true, len(tx.schema.segs)
	return nil
}

// schemaRollbackTo returns the Tx's record of its changes to mark sp,
// before SQLite's ROLLBACK TO returns its state there. A mark set after
// the first schema statement but no longer SQLite's (the Tx was parked
// since) is returned to by its segments: the Tx is set aside with those,
// which its next statement applies again (done). tx.mu is held.
func (tx *Tx) schemaRollbackTo(sp savepoint) (done bool, err error) {
	s := tx.schema
	if s == nil {
		return false, nil
	}
	if !sp.native && !sp.inSchema {
		return false, errSchemaAfterPark()
	}
	if sp.inSchema {
		if tx.sess != nil {
			tx.sess.Delete()
			tx.sess = nil
		}
		s.segs = s.segs[:sp.segs]
		if !sp.native {
			if !tx.parked {
				tx.setAsideSchema()
			}
			return true, nil
		}
		return false, nil
	}
	tx.returnToBefore()
	return false, nil
}

func errUnsupportedDDL(word string) *sqlerr.Error {
	err := sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded SQLite engine", word)
	err.Hint = "The PostgreSQL engine (--engine postgres) runs " + word + "."
	return err
}

func errSchemaAfterPark() *sqlerr.Error {
	err := sqlerr.New(sqlerr.FeatureNotSupported,
		"this transaction gave way to another writer while it held a savepoint set before its first schema change; on the embedded SQLite engine it can then not return to that savepoint")
	err.Hint = "Retry the transaction; the PostgreSQL engine (--engine postgres) has no such limit."
	return err
}
