package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// run steps stmt to completion, reporting its result to w with tx.mu let go
// while w runs (callWriter).
func (tx *Tx) run(stmt *sqlite.Stmt, sql string, rec *record, w result.Writer) error {
	if err := tx.conn.requireTx(); err != nil {
		tx.fail(errNoTransaction)
		return err
	}
	changes, rows, err := tx.conn.stream(stmt, sql, rec, w, func(fn func() error) error { return tx.callWriter(stmt, fn) })
	tx.stmtChanges, tx.stmtRows = changes, rows
	if err := tx.conn.uniqueViolation(err, sql); err != nil {
		return err
	}
	if err := tx.conn.constantInputError(err, sql); err != nil {
		return err
	}
	if sqlite.ErrCode(err) == sqlite.ResultConstraintNotNull {
		if table, _, ok := strings.Cut(strings.TrimPrefix(sqliteMessage(err), "NOT NULL constraint failed: "), "."); ok {
			e := sqlerr.Wrap(err, sqlerr.NotNullViolation, "%s", notNullMessage(sqliteMessage(err)))
			e.Detail = tx.conn.failingRowDetail(sql, table)
			return e
		}
	}
	return tx.conn.checkViolation(err, sql, rec)
}

// constantInputError finds the constant of sql, an INSERT of VALUES that
// failed one of its columns' type checks (typeChecks: '34.5' for an
// integer), that PostgreSQL's parser would have failed on first: the
// first string constant, row by row and column by column, that its
// column's type does not read. It returns that one's error, with its
// value and place, as PostgreSQL's; nil for any other error, or where no
// constant fails (the value came from elsewhere).
func (c *conn) constantInputError(err error, sql string) error {
	if sqlite.ErrCode(err) != sqlite.ResultConstraintCheck {
		return nil
	}
	name, _ := strings.CutPrefix(sqliteMessage(err), "CHECK constraint failed: ")
	if typeCheckCode(name) == "" {
		return nil
	}
	ins, ok := pgparse.InsertRows(sql)
	if !ok {
		return nil
	}
	ti, terr := c.table(ins.Table)
	if terr != nil || ti == nil || !ti.exists {
		return nil
	}
	listed := ins.Columns
	if len(listed) == 0 {
		listed = ti.columns
	}
	for _, row := range ins.Rows {
		for i, v := range row {
			if !v.String || i >= len(listed) {
				continue
			}
			typ, has := ti.types[strings.ToLower(listed[i])]
			if !has || !hasStoredForm(typ) && !isNumber(typ) {
				continue
			}
			if _, ierr := typedConst(typ, v.Text); ierr != nil {
				return atPosition(ierr, v.Position)
			}
		}
	}
	return nil
}

// uniqueViolation says SQLite's "UNIQUE constraint failed: t.a, t.b" in
// PostgreSQL's words, naming the unique index or constraint on those
// columns as the catalogs do (t_pkey, t_a_b_key, or the index's own
// name), with the duplicated key as DETAIL where sql, the statement, says
// it (uniqueDetail); nil for any other error, or where no such index is
// found.
func (c *conn) uniqueViolation(err error, sql string) error {
	switch sqlite.ErrCode(err) {
	case sqlite.ResultConstraintUnique, sqlite.ResultConstraintPrimaryKey:
	default:
		return nil
	}
	cols, ok := strings.CutPrefix(sqliteMessage(err), "UNIQUE constraint failed: ")
	if !ok {
		return nil
	}
	var table string
	var want []string
	for _, tc := range strings.Split(cols, ", ") {
		t, col, ok := strings.Cut(tc, ".")
		if !ok || table != "" && t != table {
			return nil
		}
		table, want = t, append(want, col)
	}
	name := ""
	_ = execResult(c.c, `SELECT l.name, l.origin FROM pragma_index_list(?1) l
		WHERE l."unique" AND (SELECT group_concat(i.name, ',') FROM (SELECT name FROM pragma_index_info(l.name) ORDER BY seqno) i) = ?2`,
		func(s *sqlite.Stmt) {
			if name == "" {
				name = catalogIndexName(table, s.ColumnText(0), s.ColumnText(1) == "pk", want)
			}
		}, table, strings.Join(want, ","))
	if name == "" {
		// An INTEGER PRIMARY KEY is the rowid: no index of its own.
		var pk []string
		_ = execResult(c.c, "SELECT name FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk", func(s *sqlite.Stmt) {
			pk = append(pk, s.ColumnText(0))
		}, table)
		if !slices.Equal(pk, want) {
			return nil
		}
		name = catalogIndexName(table, "", true, pk)
	}
	e := sqlerr.Wrap(err, sqlerr.UniqueViolation, "duplicate key value violates unique constraint %q", name)
	e.Detail = c.uniqueDetail(sql, table, want)
	return e
}

// checkViolation says SQLite's "CHECK constraint failed: name" of a
// client's constraint in PostgreSQL's words, naming the table the
// statement writes, with the failing row where sql says it
// (failingRowDetail); any other error is returned as it is.
func (c *conn) checkViolation(err error, sql string, rec *record) error {
	if sqlite.ErrCode(err) != sqlite.ResultConstraintCheck || len(rec.writes) != 1 {
		return err
	}
	name, ok := strings.CutPrefix(sqliteMessage(err), "CHECK constraint failed: ")
	if !ok || typeCheckCode(name) != "" || isMatchFullCheck(name) || strings.ContainsAny(name, "()") {
		return err // a type's, a foreign key's, or one without a name
	}
	e := sqlerr.Wrap(err, sqlerr.CheckViolation, "new row for relation %q violates check constraint %q", rec.writes[0], name)
	e.Detail = c.failingRowDetail(sql, rec.writes[0])
	return e
}

// stream steps stmt to completion, reporting its result to w: Columns, Row
// per row and Complete, or Complete alone for a statement without a result
// set. call runs one method of w. It returns how many rows the statement
// changed (0 for one that does not write) and how many it returned.
func (c *conn) stream(stmt *sqlite.Stmt, sql string, rec *record, w result.Writer, call func(func() error) error) (changes, rows int, err error) {
	hasRow, err := stmt.Step()
	if err != nil {
		return 0, 0, err
	}
	ncol := stmt.ColumnCount()
	if ncol == 0 {
		for hasRow {
			if hasRow, err = stmt.Step(); err != nil {
				return 0, rows, err
			}
		}
		if c.funcErr != nil {
			return 0, rows, c.funcErr
		}
		changes = c.changes(rec)
		tag := commandTag(sql, rec, false, 0, changes)
		return changes, 0, call(func() error { return w.Complete(tag) })
	}
	// Types come from the first row when the schema does not say, so
	// Columns is sent after the first step.
	cols, err := c.columns(stmt, rec, hasRow)
	if err != nil {
		return 0, rows, err
	}
	if err := call(func() error { return w.Columns(cols) }); err != nil {
		return 0, rows, err
	}
	vals := make([]result.Value, len(cols))
	computed := computedColumns(rec, len(cols))
	for hasRow {
		if c.funcErr != nil {
			// One of our functions failed computing this row (its value
			// is a NULL): the row is not sent, and the caller fails the
			// statement with the function's error (takeFuncErr).
			return 0, rows, c.funcErr
		}
		for i, col := range cols {
			vals[i] = columnValue(stmt, i, col)
			if computed[i] {
				if err := checkIntegerRange(col.Type, vals[i]); err != nil {
					return 0, rows, err
				}
			}
		}
		rows++
		if err := call(func() error { return w.Row(vals) }); err != nil {
			return 0, rows, err
		}
		if hasRow, err = stmt.Step(); err != nil {
			return 0, rows, err
		}
	}
	if c.funcErr != nil {
		// A function failed on a row the statement then left out (in
		// its WHERE): the statement fails, not completes.
		return 0, rows, c.funcErr
	}
	changes = c.changes(rec)
	tag := commandTag(sql, rec, true, rows, changes)
	return changes, rows, call(func() error { return w.Complete(tag) })
}

// streamTo is stream for a caller that holds the connection alone (no Tx
// to unlock while w runs). It returns w's error as it is, and any other as
// the client sees it, ctx's end as a cancel or timeout.
func (c *conn) streamTo(ctx context.Context, stmt *sqlite.Stmt, sql string, rec *record, w result.Writer) error {
	_, _, err := c.stream(stmt, sql, rec, w, func(fn func() error) error {
		if err := fn(); err != nil {
			return writerError{err}
		}
		return nil
	})
	var we writerError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &we):
		return we.err
	case ctx.Err() != nil:
		return mapErr(ctx.Err())
	}
	return mapErr(err)
}

// changes is how many rows the statement that just completed changed.
// SQLite's count is that of the last write on the connection, so a
// statement that writes nothing changed nothing.
func (c *conn) changes(rec *record) int {
	if len(rec.writes) == 0 && !rec.tempWrites {
		return 0
	}
	return c.c.Changes()
}

// columns describes stmt's result columns. A column taken straight from a
// table has the type its table declares; any other is typed by its value in
// the first row, else reported as text. c's table cache must be fresh for
// the snapshot stmt runs on: prepareCached (or refreshSchema) in the same
// transaction. Where the statement's parse tree says a column's name and
// type (rec.columns), those are PostgreSQL's.
func (c *conn) columns(stmt *sqlite.Stmt, rec *record, hasRow bool) ([]result.Column, error) {
	if rec.noColumns {
		return []result.Column{}, nil
	}
	cols := make([]result.Column, stmt.ColumnCount())
	pgCols := rec.columns
	if len(pgCols) != len(cols) {
		pgCols = nil
	}
	for i := range cols {
		if pgCols != nil && pgCols[i].Type != "" {
			if t, ok := pgparse.LookupType(pgCols[i].Type); ok {
				cols[i] = result.Column{Name: pgCols[i].Name, Type: result.TypeOf(t.OID)}
				continue
			}
		}
		if pgCols != nil && pgCols[i].Cast != "" {
			if r, ok := castResults[pgCols[i].Cast]; ok {
				cols[i] = result.Column{Name: pgCols[i].Name, Type: r.typ, Mod: castMod(r.typ, pgCols[i].Mods)}
				continue
			}
		}
		if pgCols != nil && len(pgCols[i].Common) > 0 {
			kind := pgparse.CommonKind(pgCols[i].Common, c.columnKind)
			r, ok := castResults[kind]
			if ok && (!pgCols[i].IntegerOnly || kind == "int2" || kind == "int4" || kind == "int8") {
				cols[i] = result.Column{Name: pgCols[i].Name, Type: r.typ}
				continue
			}
		}
		name := stmt.ColumnName(i)
		if rec.names != nil {
			name = rec.names[i]
		}
		if pgCols != nil {
			name = pgCols[i].Name
		}
		typ, known, mod := result.Text, false, int32(0)
		if tbl, db := stmt.ColumnTableName(i), stmt.ColumnDatabaseName(i); tbl != "" && (db == "main" || db == "temp") {
			ti, err := c.tableOf(db, tbl)
			if err != nil {
				return nil, err
			}
			// The result column's name is the source column's unless
			// aliased; an aliased column falls back to its values unless
			// the parse tree names its source.
			source := name
			if pgCols != nil && pgCols[i].Source != "" {
				source = pgCols[i].Source
			} else if s, ok := rec.sources[name]; ok {
				source = s
			}
			typ, known = ti.types[strings.ToLower(source)]
			if known {
				mod = ti.mods[strings.ToLower(source)]
				if oid := ti.charOIDs[strings.ToLower(source)]; oid != 0 && typ == result.Text {
					typ = result.Other(oid)
				}
			}
		}
		if !known {
			if cc, ok := castColumn(name); ok { // casts.go
				name, typ, mod, known = cc.Name, cc.Type, cc.Mod, true
			}
		}
		if !known && hasRow {
			typ = runtimeType(stmt.ColumnType(i))
		}
		if !known && !hasRow {
			typ = result.Text
		}
		cols[i] = result.Column{Name: name, Type: typ, Mod: mod}
	}
	return cols, nil
}

// runtimeType is the type of a value SQLite returned.
func runtimeType(t sqlite.ColumnType) result.Type {
	switch t {
	case sqlite.TypeInteger:
		return result.Int8
	case sqlite.TypeFloat:
		return result.Float8
	case sqlite.TypeBlob:
		return result.Bytea
	default:
		return result.Text
	}
}

// integerRanges are the ranges of PostgreSQL's integer types, with the
// error of a value out of them.
var integerRanges = map[result.Type]struct {
	min, max int64
	err      *sqlerr.Error
}{
	result.Int2: {math.MinInt16, math.MaxInt16, sqlerr.New(sqlerr.NumericValueOutOfRange, "smallint out of range")},
	result.Int4: {math.MinInt32, math.MaxInt32, sqlerr.New(sqlerr.NumericValueOutOfRange, "integer out of range")},
	result.Int8: {math.MinInt64, math.MaxInt64, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")},
}

// computedColumns reports which of n result columns the parse tree types
// (not a table's column, whose stored values the table's constraints
// keep in range).
func computedColumns(rec *record, n int) []bool {
	out := make([]bool, n)
	if len(rec.columns) != n {
		return out
	}
	for i, c := range rec.columns {
		out[i] = c.Source == "" && (c.Cast != "" || len(c.Common) > 0)
	}
	return out
}

// checkIntegerRange refuses a value of an integer column outside its
// type, as PostgreSQL's arithmetic does: SQLite computes in 64 bits and
// turns an overflow of those into a double, where PostgreSQL's smallint,
// integer and bigint operators fail. It checks the columns the parse
// tree types (computedColumns). What overflows only inside an expression
// (in WHERE, or undone by a later operator) is not seen here.
func checkIntegerRange(typ result.Type, v result.Value) error {
	r, ok := integerRanges[typ]
	if !ok {
		return nil
	}
	switch v := v.(type) {
	case int64:
		if v < r.min || v > r.max {
			return r.err
		}
	case float64:
		// -2^63 as a double is where SQLite's 64-bit arithmetic
		// overflowed to, not a bigint it computed.
		if math.IsNaN(v) || v < float64(r.min) || v >= float64(r.max)+1 || r.min == math.MinInt64 && v == float64(r.min) {
			return r.err
		}
	}
	return nil
}

// columnValue returns column i of the current row as the Go type of col.
// SQLite columns are dynamically typed; a value that does not match its
// column's type is converted with SQLite's own CAST rules (text '12' in an
// INTEGER column reads as 12), so every value of a column has one Go type.
// A numeric(p,s) column's values are written with s decimals, as
// PostgreSQL writes them.
func columnValue(stmt *sqlite.Stmt, i int, col result.Column) result.Value {
	ct := stmt.ColumnType(i)
	if ct == sqlite.TypeNull {
		return nil
	}
	if scale, ok := col.Scale(); ok && (ct == sqlite.TypeInteger || ct == sqlite.TypeFloat) {
		return fixedScale(stmt, i, ct, scale)
	}
	if col.Type == result.Numeric && ct == sqlite.TypeFloat {
		// PostgreSQL writes numeric without an exponent, and has no
		// negative zero (ceil(-0.5) is 0).
		f := stmt.ColumnFloat(i)
		if f == 0 {
			f = 0
		}
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	switch col.Type {
	case result.Int8, result.Int4, result.Int2:
		switch ct {
		case sqlite.TypeInteger:
			return stmt.ColumnInt64(i)
		case sqlite.TypeFloat:
			f := stmt.ColumnFloat(i)
			if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
				return int64(f)
			}
			// A column typed by its first row (1 UNION SELECT 2.2): the
			// value as it is, never cut to an integer.
			return f
		}
		return numberOrText(stmt.ColumnText(i), true)
	case result.Float8, result.Float4:
		if ct == sqlite.TypeText || ct == sqlite.TypeBlob {
			return numberOrText(stmt.ColumnText(i), false)
		}
		return stmt.ColumnFloat(i)
	case result.Bool:
		switch ct {
		case sqlite.TypeInteger:
			return stmt.ColumnInt64(i) != 0
		case sqlite.TypeFloat:
			return stmt.ColumnFloat(i) != 0
		default:
			s := strings.TrimSpace(stmt.ColumnText(i))
			if b, err := strconv.ParseBool(s); err == nil {
				return b
			}
			return stmt.ColumnFloat(i) != 0
		}
	case result.Bytea:
		b := make([]byte, stmt.ColumnLen(i))
		stmt.ColumnBytes(i, b)
		return b
	case bpchar:
		// char(n) keeps what it was given; PostgreSQL pads it to n.
		v := stmt.ColumnText(i)
		if n := int(col.Mod) - 4; col.Mod > 4 && ct == sqlite.TypeText {
			if short := n - utf8.RuneCountInString(v); short > 0 {
				v += strings.Repeat(" ", short)
			}
		}
		return v
	default:
		if col.Type != result.Text && isArrayType(col.Type) {
			// An array as PostgreSQL prints it, however the client wrote it.
			if elems, err := pgtext.ParseArray(stmt.ColumnText(i)); err == nil {
				return pgtext.FormatArray(elems)
			}
		}
		return stmt.ColumnText(i)
	}
}

// numberOrText reads text found in a number column as the number it is
// (an integer if integer), or else leaves it text: SQLite would read it
// as 0.
func numberOrText(s string, integer bool) result.Value {
	t := strings.TrimSpace(s)
	if integer {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			return n
		}
	} else if f, err := strconv.ParseFloat(t, 64); err == nil {
		return f
	}
	return s
}

// bpchar is the type of a char(n) column's values.
var bpchar = result.Other(1042)

// fixedScale writes the number in column i with scale decimals. The
// numeric(p,s) column's CHECK constraints (typeChecks) keep only values
// with at most 15 significant digits and scale decimals, which a double
// holds exactly enough for this to print the digits that were stored.
func fixedScale(stmt *sqlite.Stmt, i int, ct sqlite.ColumnType, scale int) string {
	if ct == sqlite.TypeInteger {
		s := strconv.FormatInt(stmt.ColumnInt64(i), 10)
		if scale > 0 {
			s += "." + strings.Repeat("0", scale)
		}
		return s
	}
	s := strconv.FormatFloat(stmt.ColumnFloat(i), 'f', scale, 64)
	if s == "-0" || strings.HasPrefix(s, "-0.") && strings.Trim(s[3:], "0") == "" {
		s = s[1:] // PostgreSQL has no negative zero
	}
	return s
}

// commandTag returns the PostgreSQL command tag of a finished statement.
func commandTag(sql string, rec *record, hasCols bool, rows, changes int) string {
	kw := firstKeyword(sql)
	op := kw
	if kw == "WITH" {
		switch rec.firstOp {
		case sqlite.OpInsert:
			op = "INSERT"
		case sqlite.OpUpdate:
			op = "UPDATE"
		case sqlite.OpDelete:
			op = "DELETE"
		}
	}
	switch op {
	case "INSERT", "REPLACE":
		return fmt.Sprintf("INSERT 0 %d", changes)
	case "UPDATE", "DELETE":
		return fmt.Sprintf("%s %d", op, changes)
	}
	if hasCols {
		return fmt.Sprintf("SELECT %d", rows)
	}
	return kw
}

// isArrayType reports whether t is an array type (an array column's).
func isArrayType(t result.Type) bool {
	info, ok := pgparse.TypeByOID(t.OID())
	return ok && info.Category == 'A'
}
