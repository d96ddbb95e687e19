package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Apply applies certified write sets in order in one SQLite transaction on
// the applier connection, and records upTo as the applied seqno in it. An
// item that fails deterministically is rolled back alone and recorded in
// _certa_failed.
func (e *Engine) Apply(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	if e.closed.Load() {
		return errClosed
	}
	if err := checkOrder(e.applied.Load(), items, upTo); err != nil {
		return err
	}
	if err := e.lock.lockPriority(ctx, e.cfg.ApplyGrace); err != nil {
		return fmt.Errorf("sqlite engine: apply: %w", err)
	}
	defer e.lock.unlock()
	if e.closed.Load() {
		return errClosed
	}
	c := e.applier
	if c.closed {
		return errors.New("sqlite engine: apply: the applier connection broke earlier; restart the node")
	}
	c.c.SetInterrupt(ctx.Done())
	defer c.c.SetInterrupt(nil)

	changes, err := e.applyBatch(c, items, upTo)
	if err != nil {
		// Nothing of the batch may stay: the applied seqno must keep
		// saying what is applied.
		c.c.SetInterrupt(nil)
		if rerr := c.rollback(); rerr != nil {
			c.close()
			err = errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		} else if sqlite.ErrCode(err).ToPrimary() == sqlite.ResultFull {
			err = fmt.Errorf("%w: %w", engine.ErrNoSpace, err)
		}
		return fmt.Errorf("sqlite engine: apply up to %d: %w", upTo, err)
	}
	e.applied.Store(upTo)
	e.hist.add(changes)
	// What the batch asks of the sequences: nothing, to read their rows
	// again (a reservation, or setval: setval.go), or also to ask for
	// values of those this node has none of (a schema change may have
	// made some; another node's waits for that node's first block).
	const (
		seqsAsBefore = iota
		seqsRefresh
		seqsLoadOthers
		seqsLoad
	)
	seqs := seqsAsBefore
	for _, it := range items {
		switch {
		case it.Err != nil:
		case it.WS.DDL != "" || it.WS.Schema != writeset.SchemaNone:
			if e.cfg.NodeID == "" || it.WS.Origin == e.cfg.NodeID {
				seqs = max(seqs, seqsLoad)
			} else {
				seqs = max(seqs, seqsLoadOthers)
			}
		case slices.Contains(it.WS.Tables, sequencesTable):
			seqs = max(seqs, seqsRefresh)
		}
	}
	switch seqs {
	case seqsRefresh:
		err = e.seqs.refresh(c)
	case seqsLoadOthers:
		err = e.seqs.loadOthers(c)
	case seqsLoad:
		err = e.seqs.load(c)
	}
	if err != nil {
		return fmt.Errorf("sqlite engine: apply up to %d: load sequences: %w", upTo, err)
	}
	return nil
}

// checkOrder refuses a batch that would apply a seqno twice or out of order:
// that is a bug in the caller, and applying would diverge.
func checkOrder(applied uint64, items []engine.ApplyItem, upTo uint64) error {
	prev := applied
	for _, it := range items {
		if it.Seqno <= prev {
			return fmt.Errorf("sqlite engine: apply: seqno %d is not after %d (applied seqno %d)", it.Seqno, prev, applied)
		}
		if it.WS == nil {
			return fmt.Errorf("sqlite engine: apply: seqno %d has no write set", it.Seqno)
		}
		prev = it.Seqno
	}
	if upTo < prev {
		return fmt.Errorf("sqlite engine: apply: upTo %d is before seqno %d", upTo, prev)
	}
	return nil
}

// applyBatch runs the batch's transaction and returns what it changed. It
// first tries the fast path; if any item does not apply cleanly there, it
// starts over item by item with SQLite's changeset apply, so that the
// failing item is found and handled alone.
func (e *Engine) applyBatch(c *conn, items []engine.ApplyItem, upTo uint64) ([]change, error) {
	if err := c.exec("BEGIN IMMEDIATE"); err != nil {
		return nil, err
	}
	changes, clean, err := applyFast(c, items)
	if err != nil {
		return nil, err
	}
	if !clean {
		if err := c.rollback(); err != nil {
			return nil, err
		}
		if err := c.exec("BEGIN IMMEDIATE"); err != nil {
			return nil, err
		}
		if changes, err = applyEach(c, items); err != nil {
			return nil, err
		}
	}
	// WHERE id = 1 makes this a one-row update: a whole-table UPDATE
	// opens a statement journal, which modernc's allocator backs with
	// an mmap and munmap per batch (~4% of a node's CPU under load).
	if err := c.exec("UPDATE _certa_meta SET seqno = ? WHERE id = 1", int64(upTo)); err != nil {
		return nil, err
	}
	if err := c.exec("COMMIT"); err != nil {
		return nil, err
	}
	return changes, nil
}

// applyFast is the fast path: row changes through applyRows, without a
// savepoint per item. clean is false if some item did not apply cleanly;
// the transaction must then be rolled back.
func applyFast(c *conn, items []engine.ApplyItem) (changes []change, clean bool, err error) {
	if err := c.refreshSchema(); err != nil {
		return nil, false, err
	}
	for i := range items {
		it := &items[i]
		it.Err = nil
		ws := it.WS
		if ws.DDL != "" || ws.Schema != writeset.SchemaNone {
			ch, itemErr, err := applyItem(c, it)
			if err != nil || itemErr != nil {
				return nil, false, err
			}
			if err := c.refreshSchema(); err != nil {
				return nil, false, err
			}
			changes = append(changes, ch)
			continue
		}
		if err := applyRows(c, ws.Changes); err != nil {
			if errors.Is(err, errNotClean) || errors.Is(err, errBadChangeset) {
				return nil, false, nil
			}
			return nil, false, err
		}
		changes = append(changes, change{seqno: it.Seqno, tables: lowerAll(ws.Tables)})
	}
	return changes, true, nil
}

// applyEach is the slow path: each item in its own savepoint, so an item
// that fails deterministically is rolled back alone and recorded in
// _certa_failed.
func applyEach(c *conn, items []engine.ApplyItem) ([]change, error) {
	var changes []change
	for i := range items {
		it := &items[i]
		it.Err = nil
		if err := c.exec("SAVEPOINT certa_item"); err != nil {
			return nil, err
		}
		ch, itemErr, err := applyItem(c, it)
		if err != nil {
			return nil, fmt.Errorf("seqno %d: %w", it.Seqno, err)
		}
		if itemErr != nil {
			it.Err = itemErr
			if err := c.exec("ROLLBACK TO certa_item"); err != nil {
				return nil, err
			}
			if err := c.exec("RELEASE certa_item"); err != nil {
				return nil, err
			}
			if err := c.exec("INSERT INTO _certa_failed (seqno) VALUES (?)", int64(it.Seqno)); err != nil {
				return nil, err
			}
			continue
		}
		if err := c.exec("RELEASE certa_item"); err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	return changes, nil
}

// applyItem applies one write set. itemErr reports a deterministic failure
// of this item (every node fails it the same way); err a failure of the
// batch.
func applyItem(c *conn, it *engine.ApplyItem) (ch change, itemErr *sqlerr.Error, err error) {
	ws := it.WS
	ch = change{seqno: it.Seqno, tables: lowerAll(ws.Tables)}
	if ws.DDL != "" {
		_, tables, err := runDDL(c, ws.DDL, it.Seqno)
		if err != nil {
			if isTransient(err) {
				return ch, nil, err
			}
			return ch, mapErr(err).(*sqlerr.Error), nil
		}
		// Certification uses ws.Tables (none: every table); the tables
		// the statement actually touched are added for safety.
		ch.all = len(ws.Tables) == 0
		ch.tables = append(ch.tables, lowerAll(tables)...)
		return ch, nil, nil
	}
	if ws.Schema != writeset.SchemaNone {
		return applySchemaTx(c, it, ch)
	}
	itemErr, err = applyChanges(c, ws.Changes, ws.Tables)
	return ch, itemErr, err
}

// applySchemaTx applies the write set of a transaction block that ran
// schema statements: its segments in order (segments.go).
func applySchemaTx(c *conn, it *engine.ApplyItem, ch change) (change, *sqlerr.Error, error) {
	segs, err := decodeSegments(it.WS.Changes)
	if err != nil {
		return ch, sqlerr.New(sqlerr.DataCorrupted, "write set does not decode: %v", err), nil
	}
	ch.all = it.WS.Schema == writeset.SchemaAll
	for _, s := range segs {
		if s.kind == segmentRows {
			tables, err := changesetTables(s.data)
			if err != nil {
				return ch, sqlerr.New(sqlerr.DataCorrupted, "write set does not decode: %v", err), nil
			}
			if itemErr, err := applyChanges(c, s.data, tables); itemErr != nil || err != nil {
				return ch, itemErr, err
			}
			continue
		}
		_, tables, err := runDDL(c, string(s.data), it.Seqno)
		if err != nil {
			if isTransient(err) {
				return ch, nil, err
			}
			return ch, mapErr(err).(*sqlerr.Error), nil
		}
		ch.tables = append(ch.tables, lowerAll(tables)...)
	}
	return ch, nil, nil
}

// changesetTables returns the tables a changeset writes.
func changesetTables(changes []byte) ([]string, error) {
	var tables []string
	err := forEachChange(changes, func(ch *rowChange) error {
		if n := len(tables); n == 0 || tables[n-1] != ch.table {
			tables = append(tables, ch.table) // a changeset groups a table's rows
		}
		return nil
	})
	return tables, err
}

// applyChanges applies one changeset that writes tables. itemErr and err
// are applyItem's.
func applyChanges(c *conn, changes []byte, tables []string) (itemErr *sqlerr.Error, err error) {
	if len(changes) == 0 {
		return nil, nil
	}
	// A changeset for a table that does not exist would be skipped silently
	// by SQLite; every node has the same schema here, so it is an item error.
	missing, err := missingTable(c, tables)
	if err != nil {
		return nil, err
	}
	if missing != "" {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", missing), nil
	}
	// A changeset that does not decode fails the same on every node; SQLite
	// would report SQLITE_CORRUPT, which reads as a broken database file.
	if err := forEachChange(changes, func(*rowChange) error { return nil }); err != nil {
		return sqlerr.New(sqlerr.DataCorrupted, "write set does not decode: %v", err), nil
	}
	if err := c.refreshSchema(); err != nil {
		return nil, err
	}
	rowid, err := anyRowidTable(c, tables)
	if err != nil {
		return nil, err
	}
	if rowid {
		return applyRowsOnly(c, changes)
	}
	conflict, err := applyChangeset(c, changes)
	switch {
	case conflict != nil && conflict.typ == sqlite.ChangesetConstraint:
		return sqlerr.New(sqlerr.UniqueViolation,
			"duplicate key value violates a unique constraint on table %q (or another constraint of it)", conflict.table), nil
	case conflict != nil && conflict.typ == sqlite.ChangesetForeignKey:
		return sqlerr.New(sqlerr.ForeignKeyViolation, "write set violates a foreign key constraint"), nil
	case conflict != nil:
		// Certification should have refused a write set whose rows
		// changed since its snapshot; if one slipped through (a key
		// certification and SQLite compare differently), every node holds
		// the same rows and fails it the same way: the cluster goes on
		// and the origin's client gets 40001. Stopping the node instead
		// stopped every node, again at each restart.
		return errUnforeseenConflict(conflict), nil
	case err != nil && !isTransient(err):
		return mapErr(err).(*sqlerr.Error), nil
	}
	return nil, err
}

// anyRowidTable reports whether one of tables has no primary key.
func anyRowidTable(c *conn, tables []string) (bool, error) {
	for _, t := range tables {
		ti, err := c.table(t)
		if err != nil || ti.rowid != "" {
			return err == nil, err
		}
	}
	return false, nil
}

// applyRowsOnly is applyChanges for a changeset that writes a table
// without a primary key, whose rows SQLite's changeset apply would insert
// with the origin's rowids: applyRows applies it, and what does not apply
// cleanly is an item error.
func applyRowsOnly(c *conn, changes []byte) (itemErr *sqlerr.Error, err error) {
	err = applyRows(c, changes)
	var m *rowMismatch
	switch {
	case errors.As(err, &m) && m.err != nil:
		return mapErr(m.err).(*sqlerr.Error), nil
	case errors.As(err, &m):
		return errUnforeseenConflict(&changeConflict{typ: sqlite.ChangesetData, table: m.table}), nil
	case err != nil && !isTransient(err):
		return mapErr(err).(*sqlerr.Error), nil
	}
	return nil, err
}

// errUnforeseenConflict is the item error of a certified write set whose
// changes did not match the rows they change.
func errUnforeseenConflict(c *changeConflict) *sqlerr.Error {
	return sqlerr.New(sqlerr.SerializationFailure,
		"could not serialize access: the transaction's changes to table %q no longer match its rows (%v); retry the transaction", c.table, c.typ)
}

// missingTable returns the first of tables that does not exist, or "".
func missingTable(c *conn, tables []string) (string, error) {
	for _, t := range tables {
		_, ok, err := c.queryInt("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE", t)
		if err != nil {
			return "", err
		}
		if !ok {
			return t, nil
		}
	}
	return "", nil
}

// applyChangeset applies changes, stopping at the first conflict, which it
// returns.
func applyChangeset(c *conn, changes []byte) (*changeConflict, error) {
	var conflict *changeConflict
	handler := func(ct sqlite.ConflictType, iter *sqlite.ChangesetIterator) sqlite.ConflictAction {
		op, err := iter.Operation()
		if err == nil && op.TableName == sequencesTable && (ct == sqlite.ChangesetNotFound || ct == sqlite.ChangesetData) {
			// A block reserved (ReserveSequence) of a sequence a schema
			// change dropped or made anew since: nothing to reserve, on
			// every node alike; its grant is ignored (created differs).
			return sqlite.ChangesetOmit
		}
		if conflict == nil {
			conflict = &changeConflict{typ: ct}
			if err == nil {
				conflict.table = op.TableName
			}
		}
		return sqlite.ChangesetAbort
	}
	if err := c.requireTx(); err != nil {
		return nil, err
	}
	err := c.c.ApplyChangeset(bytes.NewReader(changes), nil, handler)
	return conflict, err
}

// changeConflict is the first conflict SQLite reported applying a changeset.
type changeConflict struct {
	typ   sqlite.ConflictType
	table string
}

// CheckChanges implements engine.Engine: ws's changes must decode as a
// changeset (the same check Apply makes, before the write set is logged).
func (e *Engine) CheckChanges(ws *writeset.WriteSet) error {
	if len(ws.Changes) == 0 {
		return nil
	}
	if err := checkChangesDecode(ws); err != nil {
		return sqlerr.New(sqlerr.DataCorrupted, "write set does not decode: %v", err)
	}
	return nil
}
