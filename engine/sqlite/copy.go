package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/pgbinary"
	"certa/pgparse"
	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// COPY FROM STDIN and COPY TO STDOUT, in text and CSV form, as PostgreSQL
// reads and writes them (pgtext/copy.go). COPY FROM inserts each row with
// the Tx's own INSERT, so defaults, sequences, constraints, foreign keys and
// the write set are exactly those of INSERT. COPY TO runs the query (or
// SELECT of the columns) in the Tx and writes its rows as they come.
//
// A COPY cannot be run again from the statement log (its data came once),
// so a Tx that ran one is restored from its changes if it is parked.

// copyStatement runs the COPY cp for the client of w.
// tx.mu is held.
func (tx *Tx) copyStatement(ctx context.Context, cp pgparse.Copy, w result.Writer) error {
	copier, ok := w.(result.Copier)
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported, "COPY to or from the client is not possible here (only as a statement of its own)")
	}
	if cp.Where {
		return sqlerr.New(sqlerr.FeatureNotSupported, "COPY FROM ... WHERE is not supported by the embedded SQLite engine: copy into a staging table and INSERT ... SELECT ... WHERE")
	}
	if tx.img != nil {
		if err := tx.leaveImages(); err != nil {
			return tx.classify(err)
		}
	}
	if tx.parked {
		if err := tx.unpark(ctx); err != nil {
			return tx.classify(err)
		}
	}
	if tx.unchecked {
		if err := tx.checkReads(ctx); err != nil {
			return tx.classify(err)
		}
	}
	tx.rlog.stop()
	var err error
	if cp.From {
		err = tx.copyFrom(ctx, cp, copier, w)
	} else {
		err = tx.copyTo(ctx, cp, copier, w)
	}
	return tx.classify(err)
}

// copyTable returns the table of a COPY and the columns it copies.
func (tx *Tx) copyTable(cp pgparse.Copy) (*tableInfo, []string, error) {
	switch cp.Schema {
	case "", "public":
	case "pg_catalog", "information_schema":
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY of a catalog is not supported by the embedded SQLite engine: use COPY (SELECT * FROM %s.%s) TO STDOUT", cp.Schema, cp.Table)
	default:
		return nil, nil, sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", cp.Schema)
	}
	c := tx.conn
	if err := c.refreshSchema(); err != nil {
		return nil, nil, err
	}
	ti, err := c.table(cp.Table)
	if err != nil {
		return nil, nil, err
	}
	if !ti.exists {
		return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", cp.Table)
	}
	isView := false
	if err := c.execResult("SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ? COLLATE NOCASE",
		func(*sqlite.Stmt) { isView = true }, cp.Table); err != nil {
		return nil, nil, err
	}
	if isView {
		// As PostgreSQL says it (the embedded engine has no INSTEAD OF
		// triggers that would let COPY FROM write through a view).
		if cp.From {
			err := sqlerr.New(sqlerr.WrongObjectType, "cannot copy to view %q", cp.Table)
			err.Hint = "To enable copying to a view, provide an INSTEAD OF INSERT trigger."
			return nil, nil, err
		}
		err := sqlerr.New(sqlerr.WrongObjectType, "cannot copy from view %q", cp.Table)
		err.Hint = "Try the COPY (SELECT ...) TO variant."
		return nil, nil, err
	}
	if len(cp.Columns) == 0 {
		return ti, ti.columns, nil
	}
	cols := make([]string, len(cp.Columns))
	for i, name := range cp.Columns {
		j := columnIndex(ti.columns, name)
		if j < 0 {
			return nil, nil, sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", name, cp.Table)
		}
		for _, prev := range cols[:i] {
			if prev == ti.columns[j] {
				return nil, nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", name)
			}
		}
		cols[i] = ti.columns[j]
	}
	return ti, cols, nil
}

// columnIndex finds name among columns: as written, or else as SQLite
// matches names (without regard to case).
func columnIndex(columns []string, name string) int {
	for i, c := range columns {
		if c == name {
			return i
		}
	}
	for i, c := range columns {
		if strings.EqualFold(c, name) {
			return i
		}
	}
	return -1
}

// copyFrom reads the client's rows and inserts them.
func (tx *Tx) copyFrom(ctx context.Context, cp pgparse.Copy, copier result.Copier, w result.Writer) error {
	ti, cols, err := tx.copyTable(cp)
	if err != nil {
		return err
	}
	var f pgtext.CopyFormat
	var format int16 // of the data: 0 text or CSV, 1 binary
	if cp.Binary {
		err, format = cp.CheckBinary(), 1
	} else {
		f, err = cp.TextFormat(cols)
	}
	if err != nil {
		return err
	}
	types := make([]result.Type, len(cols))
	quoted := make([]string, len(cols))
	params := make([]string, len(cols))
	overriding := ""
	for i, col := range cols {
		types[i] = ti.types[strings.ToLower(col)]
		quoted[i] = quoteIdent(col)
		params[i] = "$" + strconv.Itoa(i+1)
		if ti.identity[strings.ToLower(col)] == identityAlways {
			overriding = " OVERRIDING SYSTEM VALUE" // COPY writes identity columns as given
		}
	}
	insert := fmt.Sprintf("INSERT INTO %s (%s)%s VALUES (%s)", quoteIdent(ti.name), strings.Join(quoted, ", "), overriding, strings.Join(params, ", "))
	in, err := copier.CopyIn(format, len(cols))
	if err != nil {
		return engine.CopierError(err)
	}
	var rows copyRows = textRows{pgtext.NewCopyReader(in, f, cols), types}
	if cp.Binary {
		rows = binaryRows{pgbinary.NewCopyReader(in, len(cols)), types}
	}
	args := make([]any, len(cols))
	n := 0
	for {
		err := rows.next(args)
		if err == io.EOF {
			break
		}
		var bad *badField
		if errors.As(err, &bad) {
			return copyContext(bad.err, cp.Table, rows.line(), cols[bad.column], bad.text)
		}
		if err != nil {
			return copyContext(engine.CopierError(err), cp.Table, rows.line(), "", nil)
		}
		if err := tx.copyRow(ctx, insert, args); err != nil {
			return copyContext(err, cp.Table, rows.line(), "", nil)
		}
		n++
	}
	return w.Complete("COPY " + strconv.Itoa(n))
}

// copyRows reads the rows of COPY FROM's data.
type copyRows interface {
	// next sets args to the next row's values, or returns io.EOF after
	// the last row; a *badField for a value its column's type refuses.
	next(args []any) error
	// line is the line (or row) of the data read last, for errors.
	line() int
}

// badField is a value of COPY FROM's data that its column's type refuses.
type badField struct {
	column int
	text   *string // the field as text, for the error's context (nil: binary)
	err    error
}

func (b *badField) Error() string { return b.err.Error() }

type textRows struct {
	r     *pgtext.CopyReader
	types []result.Type
}

func (t textRows) line() int { return t.r.Line() }

func (t textRows) next(args []any) error {
	row, err := t.r.Next()
	if err != nil {
		return err
	}
	for i, v := range row {
		args[i] = nil
		if v != nil {
			if args[i], err = pgtext.ParseValue(t.types[i], *v); err != nil {
				return &badField{i, v, err}
			}
		}
	}
	return nil
}

type binaryRows struct {
	r     *pgbinary.CopyReader
	types []result.Type
}

func (b binaryRows) line() int { return b.r.Line() }

func (b binaryRows) next(args []any) error {
	row, err := b.r.Next()
	if err != nil {
		return err
	}
	for i, raw := range row {
		args[i] = nil
		if raw != nil {
			if args[i], err = pgbinary.Decode(b.types[i], b.types[i].OID(), raw); err != nil {
				return &badField{i, nil, err}
			}
		}
	}
	return nil
}

// copyRow inserts one row. The first may find the Tx's snapshot stale
// (its first write): it moves forward, as any statement's first write.
func (tx *Tx) copyRow(ctx context.Context, insert string, args []any) error {
	for attempt := 0; ; attempt++ {
		err := tx.execOnce(ctx, insert, result.Discard, args)
		if err == nil || attempt >= maxMoveForward || sqlite.ErrCode(err) != sqlite.ResultBusySnapshot {
			return err
		}
		if err := tx.moveForward(ctx, false); err != nil {
			return err
		}
	}
}

// copyContext adds PostgreSQL's CONTEXT to an error of a COPY FROM: the
// line of the data, and the column and value if one was at fault.
func copyContext(err error, table string, line int, column string, value *string) error {
	e := sqlerr.As(mapErr(err))
	if e.Code == sqlerr.Internal || e.Where != "" || line == 0 {
		return err
	}
	e2 := *e
	e2.Where = pgtext.CopyContext(table, line)
	if value != nil {
		e2.Where += fmt.Sprintf(", column %s: %q", column, *value)
	} else if column != "" {
		e2.Where += ", column " + column
	}
	return &e2
}

// copyTo runs the COPY's query, or a SELECT of its columns, and sends its
// rows to the client.
func (tx *Tx) copyTo(ctx context.Context, cp pgparse.Copy, copier result.Copier, w result.Writer) error {
	query := cp.Query
	if query == "" {
		ti, cols, err := tx.copyTable(cp)
		if err != nil {
			return err
		}
		quoted := make([]string, len(cols))
		for i, col := range cols {
			quoted[i] = quoteIdent(col)
		}
		query = fmt.Sprintf("SELECT %s FROM %s", strings.Join(quoted, ", "), quoteIdent(ti.name))
	}
	out := &copyOut{cp: cp, copier: copier}
	err := tx.execOnce(ctx, query, out, nil)
	if err == nil && out.w == nil {
		err = errors.New("sqlite engine: COPY TO: the query returned no columns")
	}
	if err != nil {
		if out.w != nil {
			out.w.Close()
		}
		return err
	}
	if err := out.w.Close(); err != nil {
		return engine.CopierError(err)
	}
	return w.Complete("COPY " + strconv.Itoa(out.rows))
}

// copyOut is the result.Writer of COPY TO's query: it starts the copy at
// the columns and writes each row in the COPY's format.
type copyOut struct {
	cp     pgparse.Copy
	copier result.Copier
	f      pgtext.CopyFormat
	w      io.WriteCloser
	buf    []byte
	fields []*string
	texts  []string
	rows   int
}

func (o *copyOut) Columns(cols []result.Column) error {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	f, err := o.cp.TextFormat(names)
	if err != nil {
		return err
	}
	w, err := o.copier.CopyOut(0, len(cols))
	if err != nil {
		return engine.CopierError(err)
	}
	o.f, o.w = f, w
	o.fields, o.texts = make([]*string, len(cols)), make([]string, len(cols))
	if f.Header {
		if _, err := w.Write(pgtext.CopyHeader(f, names)); err != nil {
			return engine.CopierError(err)
		}
	}
	return nil
}

func (o *copyOut) Row(vals []result.Value) error {
	for i, v := range vals {
		o.fields[i] = nil
		if v != nil {
			b, err := pgtext.AppendValue(nil, v)
			if err != nil {
				return err
			}
			o.texts[i] = string(b)
			o.fields[i] = &o.texts[i]
		}
	}
	o.buf = pgtext.AppendCopyRow(o.buf[:0], o.f, o.fields)
	o.rows++
	if _, err := o.w.Write(o.buf); err != nil {
		return engine.CopierError(err)
	}
	return nil
}

func (o *copyOut) Complete(string) error { return nil }
func (o *copyOut) Empty() error          { return nil }
