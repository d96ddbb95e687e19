package postgres

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Rows a transaction locks for update (FOR UPDATE, FOR NO KEY UPDATE) are
// keys of its write set, as PostgreSQL's REPEATABLE READ treats them as
// written. No trigger sees a lock, so the statement runs rewritten
// (pgparse.ParseLockingSelect): a SELECT that locks at its top level
// returns each locked table's row too, and those extra columns become
// keys instead of reaching the client; a locking SELECT nested anywhere
// in a statement (a subquery, a CTE) passes its rows through a wrapper
// that calls certa.note_locked for each, which records it in the capture
// (opLocked) for WriteSet to read back as a key.

// lockingSelect returns the rewrite of a SELECT that locks rows, nil for
// any other statement, and refuses a lock of rows certa cannot name.
// lower is sql in lower case (Exec computes it once for its checks).
func (t *Tx) lockingSelect(ctx context.Context, sql, lower string) (*pgparse.LockingSelect, error) {
	if !strings.Contains(lower, "for") || !(strings.Contains(lower, "update") || strings.Contains(lower, "share")) {
		return nil, nil // cheap: most statements lock nothing
	}
	ls, ok := pgparse.ParseLockingSelect(sql, "certa.row_jsonb", "certa.note_locked", func(schema, name string) bool {
		return t.isTable(ctx, schema, name)
	})
	if !ok {
		e := sqlerr.New(sqlerr.FeatureNotSupported,
			"certa: FOR UPDATE of a subquery or a function, or FOR UPDATE in a subquery that orders * by position, is not supported")
		e.Hint = "Name the tables to lock with FOR UPDATE OF, and order by column names."
		return nil, e
	}
	return ls, nil
}

// isTable reports whether the relation a locking SELECT names (schema
// "": by the search path) is a table, or no relation (a CTE's name);
// false for a view (pgparse.IsTable). A table of that name the
// connection knows answers without a round trip; so does one it then
// learns of. A lookup that fails answers true: the statement then fails
// as PostgreSQL would, or on the view's missing tableoid.
func (t *Tx) isTable(ctx context.Context, schema, name string) bool {
	for key := range t.c.ts.byName {
		if key[1] == name && (schema == "" || key[0] == schema) {
			return true
		}
	}
	r := t.c.pg.ExecParams(ctx, `SELECT c.oid, c.relkind FROM pg_catalog.pg_class c WHERE c.oid = pg_catalog.to_regclass($1)`,
		[][]byte{[]byte(qualifiedName(schema, name))}, nil, nil, nil).Read()
	if r.Err != nil || len(r.Rows) == 0 {
		return true
	}
	switch string(r.Rows[0][1]) {
	case "v":
		return false
	case "r":
		t.c.ts.load(ctx, t.c.pg, string(r.Rows[0][0])) // known next time
	}
	return true
}

// runLocking runs a rewritten locking SELECT, reports the client's
// columns to w and keeps the keys of the locked rows.
func (t *Tx) runLocking(ctx context.Context, ls *pgparse.LockingSelect, w result.Writer, args []any) error {
	t.unseenLock = t.unseenLock || ls.Unseen
	if len(ls.Tables) == 0 {
		// Locks nested only: certa.note_locked records them, and the
		// result (a COPY's included) goes to w as it is.
		return t.e.localError(run(ctx, t.c, ls.SQL, w, args))
	}
	lw := &lockWriter{w: w, extra: 2 * len(ls.Tables)}
	if err := run(ctx, t.c, ls.SQL, lw, args); err != nil {
		return t.e.localError(err)
	}
	for i := 0; i+1 < len(lw.locked); i += 2 {
		oid, err := strconv.ParseUint(lw.locked[i], 10, 32)
		if err != nil {
			return sqlerr.Wrap(err, sqlerr.Internal, "certa: locked row's table: %v", err)
		}
		m, err := t.c.ts.byRelOID(ctx, t.c.pg, uint32(oid))
		if err != nil {
			return pgError(err)
		}
		if m.temp {
			continue // the session's own: nothing to certify
		}
		_, key, err := keyOf(m, []byte(lw.locked[i+1]))
		if err != nil {
			return sqlerr.Wrap(err, sqlerr.Internal, "certa: locked row: %v", err)
		}
		t.locked = append(t.locked, key)
	}
	return nil
}

// lockWriter passes a statement's result on without its last extra
// columns, which it keeps (as text: table oid, row as JSON). It takes
// PostgreSQL's values as they are when w does (result.WireWriter), so the
// client's columns keep their types and formats; the extra columns come
// in text, or in binary when the client asked binary for every column.
type lockWriter struct {
	w      result.Writer
	extra  int
	locked []string
	binary bool // the extra columns come in binary
}

// WireFormats asks for the client's formats and text for the extra
// columns: a list of one format per column grows by the extra ones, and
// one format for all (or none) stays as it is.
func (l *lockWriter) WireFormats() ([]int16, bool) {
	formats, ok := result.WireFormats(l.w)
	if !ok {
		return nil, false
	}
	switch len(formats) {
	case 0:
	case 1:
		l.binary = formats[0] == 1
	default:
		formats = append(formats[:len(formats):len(formats)], make([]int16, l.extra)...)
	}
	return formats, true
}

func (l *lockWriter) Columns(cols []result.Column) error {
	return l.w.Columns(cols[:len(cols)-l.extra])
}

func (l *lockWriter) Row(vals []result.Value) error {
	n := len(vals) - l.extra
	for i, v := range vals[n:] {
		l.locked = append(l.locked, l.text(i, v))
	}
	return l.w.Row(vals[:n])
}

// text returns the extra column i's value v as text: the binary form of
// the table's oid is 4 bytes, of the row's jsonb a version byte and text.
func (l *lockWriter) text(i int, v result.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case result.Wire:
		switch {
		case !l.binary:
			return string(v)
		case i%2 == 0 && len(v) == 4:
			return strconv.FormatUint(uint64(binary.BigEndian.Uint32(v)), 10)
		case i%2 == 1 && len(v) > 0:
			return string(v[1:])
		}
	}
	return ""
}

func (l *lockWriter) Complete(tag string) error { return l.w.Complete(tag) }
func (l *lockWriter) Empty() error              { return l.w.Empty() }
