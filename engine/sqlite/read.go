package sqlite

import (
	"context"

	"certa/engine"
	"certa/result"
)

// Read runs one statement that only reads, in a read transaction of its own
// on a pooled connection: no Tx, no applied-seqno read, no write lock. A
// statement that is not a plain query (its first keyword is not SELECT,
// WITH or VALUES), reads FOR UPDATE (at any depth), writes, or does not
// prepare gets engine.ErrNotReadOnly before anything reached w: the caller
// runs it in a Tx, which also reports its errors as usual.
func (e *Engine) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	sql = skipBlank(sql)
	if !mayRead(sql) {
		return engine.ErrNotReadOnly
	}
	if e.closed.Load() {
		return errClosed
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		return err
	}
	return e.readOn(ctx, c, sql, w, args, func(broken bool) { e.pool.put(c, broken) })
}

// mayRead reports whether Read may run sql (with no blanks before it): a
// plain query that locks nothing.
func mayRead(sql string) bool {
	switch firstKeyword(sql) {
	case "SELECT", "WITH", "VALUES":
	default:
		return false
	}
	if _, locking := parseLocking(sql); locking {
		return false
	}
	nested, err := nestedLocks(sql) // locks in a subquery or CTE (the Tx refuses what it must)
	return err == nil && len(nested) == 0
}

// readOn is Read on connection c, which done takes back (broken: it is
// in an unknown state and must be closed).
func (e *Engine) readOn(ctx context.Context, c *conn, sql string, w result.Writer, args []any, done func(broken bool)) error {
	c.user = sessionUser(ctx)
	c.lastValues = engine.SequenceValuesFrom(ctx)
	broken := false
	defer func() { done(broken) }()
	// BEGIN holds one snapshot for the schema check in prepareCached and
	// the statement, so the column types match what it reads.
	if err := c.exec("BEGIN"); err != nil {
		broken = true
		return mapErr(err)
	}
	defer func() {
		if c.rollback() != nil {
			broken = true
		}
	}()
	stmt, rec, tail, err := c.prepareCached(sql)
	if err != nil {
		return engine.ErrNotReadOnly
	}
	defer func() {
		c.release(stmt)
		c.endStatement()
	}()
	// nextval takes values: not read-only.
	if !isBlank(tail) || len(rec.writes) > 0 || rec.tempWrites || rec.nextval {
		return engine.ErrNotReadOnly
	}
	if err := bindArgs(stmt, args); err != nil {
		return mapErr(err)
	}
	c.c.SetInterrupt(ctx.Done())
	defer c.c.SetInterrupt(nil)
	c.takeFuncErr() // none of an earlier statement's
	err = c.streamTo(ctx, stmt, sql, &rec, w)
	if fe := c.funcError(sql); fe != nil {
		return fe // our functions (pg_cast, pg_like...) failed the statement
	}
	return err
}
