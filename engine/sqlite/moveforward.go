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

	"certa/result"
)

// moveForward moves the snapshot of a Tx that has not written yet to the
// latest applied state, if that cannot change what the Tx has read: either
// no table it read changed in between, or re-running its statements on the
// new snapshot returns exactly what the client saw (see stmtLog).
// The Tx holds the write lock, so every committed apply is in the history
// and none can commit until the statement is re-run.
//
// A Tx that cannot move fails for good (and gives the lock up at once): it
// has seen a state it can no longer write on.
func (tx *Tx) moveForward(ctx context.Context) error {
	if !tx.holdsLock {
		tx.fail(errReadChanged) // cannot happen: we write under the lock
		return errReadChanged
	}
	changed := tx.e.hist.changed(tx.view, tx.reads)
	if changed && !tx.rlog.active() {
		return tx.failNow(errReadChanged)
	}
	if tx.sess != nil {
		tx.sess.Delete()
		tx.sess = nil
	}
	if err := tx.conn.rollback(); err != nil {
		return fmt.Errorf("move snapshot forward: %w", err)
	}
	if err := tx.begin(); err != nil {
		return fmt.Errorf("move snapshot forward: %w", err)
	}
	if changed && !tx.revalidate(ctx) {
		if f := tx.failed.Load(); f != nil {
			return f // aborted while re-running
		}
		return tx.failNow(errReadChanged)
	}
	return nil
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

type loggedStmt struct {
	sql  string
	args []any
	sum  uint64
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
	for _, s := range stmts {
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
