package sqlite

import (
	"context"
	"errors"
	"math"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/result"
	"certa/writeset"
)

// Row images. A transaction whose writes are all key writes (keywrite.go),
// and which may have read before the first of them, keeps the rows it
// touches itself, each as it was before the transaction first touched it and
// as it is now, instead of having a SQLite session record them. Parking it
// then costs only the rollback, resuming it writes its rows back with the
// applier's cached statements, and its write set at COMMIT is built from the
// images, without taking the lock again to re-run its statements or having
// the session compare every row. (oltp-write at 32 clients: re-running
// parked transactions and the session were a third of a node's CPU.)
//
// Each statement still runs in SQLite on the transaction's own state (its
// rows written back on the latest state), so it returns what it would
// without images. A statement that is not a key write, a transaction
// longer than imagedStmtLimit, a key write the images cannot follow (a
// multi-row INSERT, an UPDATE of a rowid alias) or a schema change while
// parked ends image mode: the transaction is parked to be re-run, and its
// next statement re-runs the logged ones with a session (park.go), as for
// any parked transaction; one that has read is parked with its changes set
// aside from the images instead, as any parked transaction that read is.

// maxImagedStmts is the longest transaction kept in image mode; it stays
// within what a parked transaction may re-run (maxReplayStmts), so that
// ending image mode can always re-run the statements.
const maxImagedStmts = maxReplayStmts

// rowImages is what a transaction in image mode changed.
type rowImages struct {
	schema int64                   // the schema version the images were taken at
	tables []*imagedTable          // in the order first touched
	rows   map[string]*imagedRow   // by writeset key
	byName map[string]*imagedTable // by lower-cased table name
}

// imagedTable is one table's layout and its touched rows.
type imagedTable struct {
	name    string
	columns []string
	pkPos   []byte       // per column: its position in the primary key (1-based), 0 if none
	rows    []*imagedRow // in the order first touched
}

// imagedRow is one touched row: before is how the transaction found it
// (nil: absent), after how it is now (nil: absent).
type imagedRow struct {
	key           string
	before, after []rowValue
}

// errLeaveImages ends image mode for a statement the images cannot follow.
var errLeaveImages = errors.New("leave image mode")

// canStartImages reports whether the Tx may enter image mode at this
// statement: it has not written yet (it may have read). tx.mu is held.
func (tx *Tx) canStartImages() bool {
	return tx.img == nil && tx.schema == nil && !tx.holdsLock && !tx.parked && tx.sess == nil && !tx.unchecked && !tx.usedSavepoints &&
		!tx.rlog.off && len(tx.writes) == 0 && len(tx.locked) == 0 && len(tx.conn.temps) == 0
}

// imagedStmtLimit is how many statements a Tx in image mode may have run:
// one that has read leaves image mode with its changes set aside, not by a
// re-run, and needs its log only to check its reads later.
func (tx *Tx) imagedStmtLimit() int {
	if tx.rlog.read {
		return maxLoggedStmts
	}
	return maxImagedStmts
}

// execImaged runs sql in image mode if it is a key write the images can
// follow. handled false means the caller runs it the usual way: the Tx never
// entered image mode, or has just left it (parked, to be re-run). tx.mu is
// held; w logs for the statement log.
func (tx *Tx) execImaged(ctx context.Context, sql string, w result.Writer, args []any) (handled bool, err error) {
	ti, op := tx.imageable(sql)
	if ti == nil || !tx.rlog.canHold(sql, tx.imagedStmtLimit()) {
		// Leaving later must be able to re-run this statement too.
		return false, tx.leaveImages()
	}
	if err := tx.resumeImaged(ctx); err != nil {
		if errors.Is(err, errLeaveImages) {
			return false, tx.leaveImages()
		}
		return true, err
	}
	err = tx.imageStatement(ctx, ti, op, sql, w, args)
	if errors.Is(err, errLeaveImages) {
		// The client has its result; the re-run checks it again.
		return true, tx.leaveImages()
	}
	return true, err
}

// imageable returns the table sql writes and its first keyword if sql is a
// key write on a table the images can follow (a rowid table whose rowid is
// not hidden by a column), else nil. tx.mu is held.
func (tx *Tx) imageable(sql string) (*tableInfo, string) {
	// Most statements are not writes: tell at a glance, before the
	// statement cache and the tokenizer.
	op := strings.ToLower(firstKeyword(sql))
	if op != "insert" && op != "update" && op != "delete" {
		return nil, ""
	}
	c := tx.conn
	stmt, rec, tail, err := c.prepareCached(sql)
	if err != nil {
		return nil, "" // the usual path reports the error
	}
	c.release(stmt)
	c.endStatement()
	if !isBlank(tail) || !c.keyWrite(sql, rec) {
		return nil, ""
	}
	if op == "insert" && !oneRowInsert(tokenize(sql)) {
		return nil, ""
	}
	ti, err := c.table(rec.writes[0])
	if err != nil || !ti.exists {
		return nil, ""
	}
	if tx.img != nil && c.schemaVersion != tx.img.schema {
		return nil, ""
	}
	if !ti.rowidChecked {
		ti.rowidChecked = true
		ti.hasRowid = c.exec("SELECT rowid FROM "+quoteIdent(ti.name)+" LIMIT 0") == nil
		for _, col := range ti.columns {
			switch strings.ToLower(col) {
			case "rowid", "_rowid_", "oid":
				ti.hasRowid = false
			}
		}
	}
	if !ti.hasRowid {
		return nil, ""
	}
	return ti, op
}

// oneRowInsert reports whether the tokens of an INSERT ... VALUES have one
// row of values.
func oneRowInsert(toks []string) bool {
	v := wordIndex(toks, "values")
	if v < 0 || v+1 >= len(toks) || toks[v+1] != "(" {
		return false
	}
	depth := 0
	for i := v + 1; i < len(toks); i++ {
		switch toks[i] {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				rest := toks[i+1:]
				return len(rest) == 0 || len(rest) == 1 && rest[0] == ";"
			}
		}
	}
	return false
}

// resumeImaged readies the Tx to run a statement in image mode: at its
// first write, it takes the lock and begins on the latest state, where its
// snapshot moves if nothing it has read changed since (moveForward's rule;
// otherwise it keeps its snapshot and the check of its reads is put off, as
// for any key write); when parked, it takes the lock and writes its rows
// back on the latest state. tx.mu is held.
func (tx *Tx) resumeImaged(ctx context.Context) error {
	if tx.img != nil && !tx.parked {
		return nil
	}
	if err := tx.takeLock(ctx); err != nil {
		return err
	}
	c := tx.conn
	if tx.img == nil {
		if err := c.rollback(); err != nil { // Begin's read transaction
			return err
		}
		s, err := tx.beginLatestNoSession()
		if err != nil {
			return err
		}
		// Under the lock, every apply since the snapshot is in the history.
		if tx.e.hist.changed(tx.view, tx.reads) {
			tx.unchecked = true
		} else {
			tx.snapshot.Store(s)
			tx.view = s
		}
		tx.img = &rowImages{schema: c.schemaVersion, rows: map[string]*imagedRow{}, byName: map[string]*imagedTable{}}
		return nil
	}
	if _, err := tx.beginLatestNoSession(); err != nil {
		return err
	}
	if c.schemaVersion != tx.img.schema {
		return errLeaveImages
	}
	err := applyRows(c, tx.img.changeset())
	if errors.Is(err, errNotClean) || errors.Is(err, errBadChangeset) {
		// A row changed since (certification would refuse the Tx), or
		// the rows clash when written back in another order: the re-run
		// decides.
		return errLeaveImages
	}
	if err != nil {
		return err
	}
	tx.parked = false
	return nil
}

// imageStatement runs one key write and records the row it touched: read
// before (UPDATE, DELETE: the row its WHERE names) and after (by rowid).
// tx.mu is held; the Tx holds the lock in its write transaction.
func (tx *Tx) imageStatement(ctx context.Context, ti *tableInfo, op, sql string, w result.Writer, args []any) error {
	c := tx.conn
	var before []rowValue
	var rowid int64
	if op != "insert" {
		var found bool
		var err error
		before, rowid, found, err = readImage(c, ti, "WHERE "+whereClause(sql), args)
		if err != nil {
			return err
		}
		if !found {
			before = nil
		}
	}
	err := tx.execOnce(ctx, sql, w, args)
	changes := tx.stmtChanges
	if tx.e.hist.changed(tx.view, tx.writes) {
		// Resumed on a newer state than the snapshot: a key taken or a
		// row deleted since is the write conflict certification would
		// find, as in the usual path (Exec).
		if err != nil && sqlite.ErrCode(err).ToPrimary() == sqlite.ResultConstraint ||
			err == nil && changes == 0 && before == nil {
			return tx.failNow(errWriteConflict)
		}
	}
	if err != nil {
		return err
	}
	switch {
	case changes == 0 && before == nil:
		return nil // no such row
	case changes != 1:
		return errLeaveImages
	case op == "insert":
		rowid = c.c.LastInsertRowID()
	case before == nil:
		return errLeaveImages // changed a row its WHERE did not find
	}
	var after []rowValue
	if op != "delete" {
		var found bool
		var err error
		after, _, found, err = readImage(c, ti, "WHERE rowid = $1", []any{rowid})
		if err != nil {
			return err
		}
		if !found {
			return errLeaveImages // the UPDATE moved the row (a new rowid)
		}
	}
	// An UPDATE that leaves the row as it was still certifies it, as
	// certifyKeyRows does in the usual path: record keeps it in keys.
	if before != nil && after != nil && rowKey(ti, before) != rowKey(ti, after) {
		tx.img.record(ti, before, nil) // a primary-key change: a delete and an insert
		tx.img.record(ti, nil, after)
		return nil
	}
	tx.img.record(ti, before, after)
	return nil
}

// readImage reads the one row of ti that where (a WHERE clause with
// parameters args) selects: its columns in table order and its rowid.
func readImage(c *conn, ti *tableInfo, where string, args []any) (vals []rowValue, rowid int64, found bool, err error) {
	defer c.internal()()
	var b strings.Builder
	b.WriteString("SELECT rowid")
	for _, col := range ti.columns {
		b.WriteString(", " + quoteIdent(col))
	}
	b.WriteString(" FROM " + quoteIdent(ti.name) + " " + where)
	stmt, err := c.c.Prepare(b.String())
	if err != nil {
		return nil, 0, false, err
	}
	defer stmt.Reset()
	if err := bindArgs(stmt, args); err != nil {
		return nil, 0, false, err
	}
	hasRow, err := stmt.Step()
	if err != nil || !hasRow {
		return nil, 0, false, err
	}
	rowid = stmt.ColumnInt64(0)
	vals = make([]rowValue, len(ti.columns))
	for i := range vals {
		vals[i] = storedValue(stmt, i+1)
	}
	if hasRow, err = stmt.Step(); err != nil || hasRow {
		return nil, 0, false, errors.Join(err, errLeaveImages) // more than one row: not a key
	}
	return vals, rowid, true, nil
}

// storedValue returns column i of stmt's row as SQLite stores it.
func storedValue(stmt *sqlite.Stmt, i int) rowValue {
	switch stmt.ColumnType(i) {
	case sqlite.TypeInteger:
		return rowValue{kind: kindInt, i: stmt.ColumnInt64(i)}
	case sqlite.TypeFloat:
		return rowValue{kind: kindFloat, f: stmt.ColumnFloat(i)}
	case sqlite.TypeText:
		return rowValue{kind: kindText, bytes: []byte(stmt.ColumnText(i))}
	case sqlite.TypeBlob:
		b := make([]byte, stmt.ColumnLen(i))
		stmt.ColumnBytes(i, b)
		return rowValue{kind: kindBlob, bytes: b}
	default:
		return rowValue{kind: kindNull}
	}
}

// rowKey is the certification key of a row of ti.
func rowKey(ti *tableInfo, vals []rowValue) string {
	pk := make([]any, len(ti.pkCols))
	for k, i := range ti.pkCols {
		pk[k], _ = keyValue(vals[i])
	}
	return string(writeset.EncodeKey(ti.name, pk...))
}

// record notes that the Tx found a row as before and left it as after
// (nil: absent). A row touched earlier keeps the before it had.
func (im *rowImages) record(ti *tableInfo, before, after []rowValue) {
	vals := after
	if vals == nil {
		vals = before
	}
	key := rowKey(ti, vals)
	if r := im.rows[key]; r != nil {
		r.after = after
		return
	}
	t := im.byName[strings.ToLower(ti.name)]
	if t == nil {
		t = &imagedTable{name: ti.name, columns: ti.columns, pkPos: make([]byte, len(ti.columns))}
		for k, i := range ti.pkCols {
			t.pkPos[i] = byte(k + 1)
		}
		im.byName[strings.ToLower(ti.name)] = t
		im.tables = append(im.tables, t)
	}
	r := &imagedRow{key: key, before: before, after: after}
	im.rows[key] = r
	t.rows = append(t.rows, r)
}

// changeset encodes the net changes in SQLite's changeset format, as a
// session would: an INSERT of a row that was absent, a DELETE of one that
// is gone, an UPDATE with the primary key and the changed columns' old
// values and their new ones; nothing for a row left as it was.
func (im *rowImages) changeset() []byte {
	var b []byte
	for _, t := range im.tables {
		header := false
		for _, r := range t.rows {
			op := rowOp(r)
			if op == 0 {
				continue
			}
			if !header {
				b = append(b, 'T')
				b = putVarint(b, uint64(len(t.columns)))
				b = append(b, t.pkPos...)
				b = append(b, t.name...)
				b = append(b, 0)
				header = true
			}
			b = append(b, op, 0)
			switch op {
			case opInsert:
				b = appendRecord(b, r.after, nil)
			case opDelete:
				b = appendRecord(b, r.before, nil)
			case opUpdate:
				changed := make([]bool, len(r.before))
				for i := range r.before {
					changed[i] = !equalValue(r.before[i], r.after[i])
				}
				b = appendUpdateOld(b, r.before, changed, t.pkPos)
				b = appendRecord(b, r.after, changed)
			}
		}
	}
	return b
}

// rowOp is the net change of a row: 0 for none.
func rowOp(r *imagedRow) byte {
	switch {
	case r.before == nil && r.after == nil:
		return 0
	case r.before == nil:
		return opInsert
	case r.after == nil:
		return opDelete
	}
	for i := range r.before {
		if !equalValue(r.before[i], r.after[i]) {
			return opUpdate
		}
	}
	return 0
}

// keys returns the certification keys and tables of every row the Tx
// wrote, changed or not; not of a row it inserted and deleted again.
func (im *rowImages) keys() (keys []writeset.Key, tables []string) {
	for _, t := range im.tables {
		for _, r := range t.rows {
			if r.before == nil && r.after == nil {
				continue
			}
			keys = append(keys, writeset.Key(r.key))
			tables = append(tables, t.name)
		}
	}
	return keys, tables
}

func equalValue(a, b rowValue) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case kindInt:
		return a.i == b.i
	case kindFloat:
		return math.Float64bits(a.f) == math.Float64bits(b.f)
	case kindText, kindBlob:
		return string(a.bytes) == string(b.bytes)
	}
	return true
}

// leaveImages ends image mode, leaving the Tx parked: its next statement
// (or COMMIT) re-runs the logged statements with a session, or, for a Tx
// that has read, re-applies its changes set aside from the images, as for
// any parked Tx (park.go). tx.mu is held.
func (tx *Tx) leaveImages() error {
	img := tx.img
	if img == nil {
		return nil
	}
	tx.img = nil
	var spill []byte
	if tx.rlog.read {
		// Non-nil, even empty: nil means re-run. Rows it wrote by key
		// certify even if left unchanged, as in image mode.
		spill = append([]byte{}, img.changeset()...)
		keys, tables := img.keys()
		tx.keyRows = append(tx.keyRows, keys...)
		tx.keyRowsIn = append(tx.keyRowsIn, tables...)
	} else if !tx.rlog.replayable() {
		// Cannot happen: image mode ends before the log does.
		return tx.failNow(errChangedWhileParked)
	}
	// Not rollbackLocked: Exec's interrupt must stay set on the connection.
	if err := tx.conn.rollback(); err != nil {
		tx.conn.close() // never hand on a connection in an unknown state
		tx.fail(errAborted)
		return errAborted
	}
	if tx.holdsLock {
		tx.holdsLock = false
		tx.lockHeld.Store(false)
		tx.e.lock.unlock()
	}
	tx.parked, tx.spill = true, spill
	return nil
}
