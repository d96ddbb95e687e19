package sqlite

// Moving a stale snapshot forward (SQLITE_BUSY_SNAPSHOT at a transaction's
// first write) instead of failing the transaction with 40001.

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"

	"certa/pgparse"
	"certa/result"
)

// moveForward moves the snapshot of a Tx that has not written yet to the
// latest applied state, if that cannot change what the Tx has read: either
// no table it read changed in between, or re-running its statements on the
// new snapshot returns exactly what the client saw (see stmtLog). When the
// statement that found its snapshot stale is a key write (keywrite.go), the
// check is put off (unchecked) until a statement that is not one.
// The Tx holds the write lock, so every committed apply is in the history
// and none can commit until the statement is re-run.
//
// A Tx that cannot move fails for good (and gives the lock up at once): it
// has seen a state it can no longer write on.
func (tx *Tx) moveForward(ctx context.Context, keyWrite bool) error {
	if !tx.holdsLock {
		tx.fail(errReadChanged) // cannot happen: we write under the lock
		return errReadChanged
	}
	changed := tx.e.hist.changed(tx.view, tx.reads)
	putOff := changed && keyWrite
	if changed && !putOff && !tx.rlog.active() {
		return tx.failNow(errReadChanged)
	}
	if tx.sess != nil {
		tx.sess.Delete()
		tx.sess = nil
	}
	if err := tx.conn.rollback(); err != nil {
		return fmt.Errorf("move snapshot forward: %w", err)
	}
	// Its savepoints held no changes: it had not written. A re-run
	// (revalidate) makes them native again.
	tx.unnative([]byte{})
	snapshot, view := tx.snapshot.Load(), tx.view
	if err := tx.begin(); err != nil {
		return fmt.Errorf("move snapshot forward: %w", err)
	}
	if putOff {
		// What it read was read at its first snapshot, which it keeps
		// for certification, and the check starts from there.
		tx.snapshot.Store(snapshot)
		tx.view, tx.unchecked = view, true
		return nil
	}
	if changed && !tx.revalidate(ctx) {
		if f := tx.failed.Load(); f != nil {
			return f // aborted while re-running
		}
		return tx.failNow(errReadChanged)
	}
	return nil
}

// checkReads does the check moveForward put off, before a statement that is
// not a key write: what the Tx read must be unchanged, or re-running its
// statements on the latest state must return what the client saw. The Tx
// holds the lock (it wrote). tx.mu is held.
func (tx *Tx) checkReads(ctx context.Context) error {
	tx.unchecked = false
	c := tx.conn
	if !tx.e.hist.changed(tx.view, tx.reads) {
		s, _, err := c.queryInt("SELECT seqno FROM _certa_meta")
		tx.view = uint64(s)
		return err
	}
	// Start again on the latest state, keeping the session if it may (see
	// rollbackLocked).
	if err := c.rollback(); err != nil {
		return err
	}
	if tx.sess != nil && !tx.sessionOutlivesRollback() {
		tx.sess.Delete()
		tx.sess = nil
	}
	s, err := tx.beginLatest()
	if err != nil {
		return err
	}
	if err := tx.rerun(ctx); err != nil {
		return err
	}
	tx.view = s
	return nil
}

// certifyKeyRows makes the rows an UPDATE or DELETE key write names join the
// Tx's certification keys, as SELECT ... FOR UPDATE does: the write's own
// changes would miss a row it sets to the values it already has, and that
// row may have changed since the snapshot. tx.mu is held.
func (tx *Tx) certifyKeyRows(ctx context.Context, sql string, args []any) error {
	toks := tokenize(sql)
	if isWord(toks[0], "insert") {
		return nil // an inserted row is always in its changes
	}
	where := whereClause(sql)
	table := toks[1] // UPDATE t
	if isWord(toks[0], "delete") {
		table = toks[2] // DELETE FROM t
	}
	return tx.execOnce(ctx, "SELECT 1 FROM "+table+" WHERE "+where+" FOR UPDATE", result.Discard, args)
}

// whereClause returns what follows the first WHERE of sql, as PostgreSQL's
// scanner finds it (a WHERE in a comment or a string is none).
func whereClause(sql string) string {
	at, ok := pgparse.WhereOffset(sql)
	if !ok {
		return ""
	}
	return sql[at:]
}

// isKeyWrite reports whether sql is a key write on the Tx's connection.
// tx.mu is held.
func (tx *Tx) isKeyWrite(sql string) bool {
	if _, ok := parseLocking(sql); ok {
		return false
	}
	c := tx.conn
	stmt, rec, tail, err := c.prepareCached(sql)
	if err != nil {
		return false // Exec reports the error
	}
	c.release(stmt)
	c.endStatement()
	return isBlank(tail) && c.keyWrite(sql, rec)
}

// Limits on what a transaction remembers of its reads for revalidation:
// beyond them it falls back to the table check alone.
const (
	maxLoggedStmts = 64
	maxLoggedBytes = 64 << 10 // of SQL text
	maxLoggedRows  = 10000    // re-run while holding the write lock
)

// stmtLog remembers the statements a transaction ran and a hash of what
// each returned to the client.
//
// The table check of moveForward and unpark (history.go) works at table
// granularity: a transaction that read one row of a busy table would fail as
// soon as any row of that table changed. When the table check fails, the
// statements are re-run on the new snapshot instead: if every one returns
// exactly what the client already saw, the client's view is consistent with
// the new snapshot, so moving there is as safe as if the transaction had
// started there. This keeps the abort rate near the rate of real conflicts.
type stmtLog struct {
	seed  maphash.Seed
	stmts []loggedStmt
	bytes int
	rows  int
	off   bool // something could not be logged: revalidation is impossible
	// read is set when a statement only read. Such a transaction parks
	// with its changes set aside: re-running it at COMMIT would require
	// what it read to be unchanged, which snapshot isolation does not.
	read bool
}

// maxReplayStmts is the longest transaction that parks to be re-run rather
// than to re-apply its changes (park.go).
const maxReplayStmts = 16

// replayable reports whether re-running the logged statements is the way
// to restore the transaction after parking.
func (l *stmtLog) replayable() bool {
	return !l.off && !l.read && len(l.stmts) <= maxReplayStmts
}

// canHold reports whether the log can take sql as its next statement and
// then hold at most max statements.
func (l *stmtLog) canHold(sql string, max int) bool {
	return !l.off && len(l.stmts) < max && l.bytes+len(sql) <= maxLoggedBytes
}

type loggedStmt struct {
	sql  string
	args []any
	sum  uint64
	sp   int // a savepoint command (savepoint.go), not a statement
	n    int // its savepoint
}

// active reports whether statements are still being logged.
func (l *stmtLog) active() bool { return !l.off }

// stop ends logging for good: the transaction can no longer be re-run.
func (l *stmtLog) stop() { l.off, l.stmts = true, nil }

// add logs a statement the client saw succeed with the result hashed by h;
// wrote says whether it wrote.
func (l *stmtLog) add(sql string, args []any, h *hashWriter, wrote bool) {
	if l.off {
		return
	}
	l.bytes += len(sql)
	l.rows += h.rows
	if len(l.stmts) >= maxLoggedStmts || l.bytes > maxLoggedBytes || l.rows > maxLoggedRows {
		l.stop()
		return
	}
	l.stmts = append(l.stmts, loggedStmt{sql: sql, args: cloneArgs(args), sum: h.h.Sum64()})
	l.read = l.read || !wrote
}

// addSavepoint logs savepoint command op on savepoint n.
func (l *stmtLog) addSavepoint(op, n int) {
	if l.off {
		return
	}
	if len(l.stmts) >= maxLoggedStmts {
		l.stop()
		return
	}
	l.stmts = append(l.stmts, loggedStmt{sp: op, n: n})
}

// newHasher returns a hashWriter that passes results on to w (nil: nowhere).
func (l *stmtLog) newHasher(w result.Writer) *hashWriter {
	if l.seed == (maphash.Seed{}) {
		l.seed = maphash.MakeSeed()
	}
	hw := &hashWriter{w: w}
	hw.h.SetSeed(l.seed)
	return hw
}

// revalidate re-runs the logged statements on the Tx's current snapshot and
// reports whether each returned what it returned before. tx.mu is held.
func (tx *Tx) revalidate(ctx context.Context) bool {
	if tx.rlog.off {
		return false
	}
	stmts := tx.rlog.stmts
	tx.rlog.off = true // the re-runs are not logged again
	defer func() { tx.rlog.off = false }()
	tx.seqs.startReplay() // and take the values of sequences they took
	defer tx.seqs.stopReplay()
	tx.sps = nil // the savepoint commands rebuild the stack
	for _, s := range stmts {
		if s.sp != spNone {
			if err := tx.replaySavepoint(s.sp, s.n); err != nil {
				return false
			}
			continue
		}
		h := tx.rlog.newHasher(nil)
		if err := tx.execOnce(ctx, s.sql, h, s.args); err != nil || h.h.Sum64() != s.sum {
			return false
		}
	}
	return true
}

// hashWriter hashes a statement's result (column types, rows and tag) and
// passes it on.
type hashWriter struct {
	w    result.Writer
	h    maphash.Hash
	rows int
	buf  [9]byte
}

func (hw *hashWriter) Columns(cols []result.Column) error {
	for _, c := range cols {
		hw.h.WriteString(c.Name)
		hw.h.WriteByte(byte(c.Type))
	}
	if hw.w == nil {
		return nil
	}
	return hw.w.Columns(cols)
}

func (hw *hashWriter) Row(vals []result.Value) error {
	hw.rows++
	hw.h.WriteByte('r')
	for _, v := range vals {
		hw.value(v)
	}
	if hw.w == nil {
		return nil
	}
	return hw.w.Row(vals)
}

func (hw *hashWriter) value(v result.Value) {
	b := hw.buf[:]
	switch v := v.(type) {
	case nil:
		hw.h.WriteByte(0)
	case int64:
		b[0] = 1
		binary.LittleEndian.PutUint64(b[1:], uint64(v))
		hw.h.Write(b)
	case float64:
		b[0] = 2
		binary.LittleEndian.PutUint64(b[1:], math.Float64bits(v))
		hw.h.Write(b)
	case bool:
		b[0] = 3
		if v {
			b[1] = 1
		} else {
			b[1] = 0
		}
		hw.h.Write(b[:2])
	case string:
		b[0] = 4
		binary.LittleEndian.PutUint64(b[1:], uint64(len(v)))
		hw.h.Write(b)
		hw.h.WriteString(v)
	case []byte:
		b[0] = 5
		binary.LittleEndian.PutUint64(b[1:], uint64(len(v)))
		hw.h.Write(b)
		hw.h.Write(v)
	}
}

func (hw *hashWriter) Complete(tag string) error {
	hw.h.WriteByte('c')
	hw.h.WriteString(tag)
	if hw.w == nil {
		return nil
	}
	return hw.w.Complete(tag)
}

func (hw *hashWriter) Empty() error {
	if hw.w == nil {
		return nil
	}
	return hw.w.Empty()
}

// cloneArgs copies args so that a caller reusing its buffers cannot change
// what a logged statement is re-run with.
func cloneArgs(args []any) []any {
	if len(args) == 0 {
		return nil
	}
	out := make([]any, len(args))
	for i, a := range args {
		if b, ok := a.([]byte); ok {
			a = bytes.Clone(b)
		}
		out[i] = a
	}
	return out
}
