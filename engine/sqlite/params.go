package sqlite

import (
	"context"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Parameters are written as in PostgreSQL, $1, $2, ...; SQLite reads "$1"
// as a parameter named "$1", so the same number used twice is one
// parameter.

// bindArgs binds args to stmt's parameters: args[n-1] to $n.
func bindArgs(stmt *sqlite.Stmt, args []any) error {
	for i := 1; i <= stmt.BindParamCount(); i++ {
		n, err := paramNumber(stmt.BindParamName(i))
		if err != nil {
			return err
		}
		if n > len(args) {
			return sqlerr.New(sqlerr.UndefinedParameter, "there is no parameter $%d", n)
		}
		switch v := args[n-1].(type) {
		case nil:
			stmt.BindNull(i)
		case int64:
			stmt.BindInt64(i, v)
		case float64:
			stmt.BindFloat(i, v)
		case string:
			stmt.BindText(i, v)
		case []byte:
			stmt.BindBytes(i, v)
		case bool:
			stmt.BindBool(i, v)
		case result.WireParam:
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"parameter $%d is in binary format of type OID %d, which the embedded SQLite engine does not know: send it in text format", n, v.OID)
		default:
			return sqlerr.New(sqlerr.Internal, "parameter $%d has unsupported Go type %T", n, v)
		}
	}
	return nil
}

// paramNumber returns n for a parameter written $n.
func paramNumber(name string) (int, error) {
	n, err := strconv.Atoi(strings.TrimPrefix(name, "$"))
	if !strings.HasPrefix(name, "$") || err != nil || n < 1 || n > maxParams {
		if name == "" {
			name = "?"
		}
		return 0, sqlerr.New(sqlerr.SyntaxError, "parameter %s: parameters are written $1, $2, ... as in PostgreSQL", name)
	}
	return n, nil
}

// maxParams is PostgreSQL's limit on the parameters of one statement.
const maxParams = 65535

// Describe implements engine.Engine.
func (e *Engine) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	if e.closed.Load() {
		return nil, nil, errClosed
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	params, cols, err := c.describe(sql)
	e.pool.put(c, false)
	return params, cols, err
}

func (c *conn) describe(sql string) ([]result.Type, []result.Column, error) {
	if isBlank(sql) {
		return nil, nil, nil
	}
	if _, ok := pgparse.ParseCopy(sql); ok {
		return nil, nil, nil // no parameters; its data goes by the COPY protocol
	}
	if req, ok := parseLocking(sql); ok {
		sql = req.sql // FOR UPDATE changes neither parameters nor columns
	}
	if err := c.refreshSchema(); err != nil {
		return nil, nil, mapErr(err)
	}
	// DEFAULT, OVERRIDING and identity columns (identity.go): refused at
	// Parse, as PostgreSQL does.
	orig := sql
	stmt, rec, tail, sql, parsed, err := c.prepareWrite(sql)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	defer func() {
		stmt.Finalize()
		c.endStatement()
	}()
	if !isBlank(tail) {
		return nil, nil, errOneStatement()
	}
	defer c.internal()()
	if err := c.refreshSchema(); err != nil {
		return nil, nil, mapErr(err)
	}
	if err := c.checkWrites(orig, parsed, &rec); err != nil {
		return nil, nil, mapErr(err)
	}
	if err := c.checkNumericWrites(orig, &rec); err != nil {
		return nil, nil, mapErr(err)
	}
	count := 0
	for i := 1; i <= stmt.BindParamCount(); i++ {
		n, err := paramNumber(stmt.BindParamName(i))
		if err != nil {
			return nil, nil, err
		}
		count = max(count, n)
	}
	params := c.paramTypes(rec.params, rec.paramTables, count)
	if stmt.ColumnCount() == 0 {
		return params, nil, nil
	}
	cols, err := c.columns(stmt, &rec, false)
	if err != nil {
		return nil, nil, mapErr(err)
	}
	fromTree := len(rec.columns) == len(cols) // typed by the parse tree
	for i := range cols {
		if fromTree && (rec.columns[i].Cast != "" || rec.columns[i].Source != "") {
			continue
		}
		if cols[i].Type == result.Text && !c.declaredText(stmt, i) {
			cols[i].Type = expressionType(cols[i].Name)
		}
	}
	return params, cols, nil
}

// declaredText reports whether result column i is a table column declared
// as text (as opposed to an expression, whose type columns could not tell).
func (c *conn) declaredText(stmt *sqlite.Stmt, i int) bool {
	tbl, db := stmt.ColumnTableName(i), stmt.ColumnDatabaseName(i)
	if tbl == "" || db != "main" && db != "temp" {
		return false
	}
	ti, err := c.tableOf(db, tbl)
	if err != nil {
		return false
	}
	_, ok := ti.types[strings.ToLower(stmt.ColumnName(i))]
	return ok
}

// expressionType guesses the type of an expression column from its text,
// for the common cases whose type PostgreSQL clients rely on; anything else
// is Unknown (sent as text).
func expressionType(name string) result.Type {
	n := strings.ToLower(strings.TrimSpace(name))
	switch {
	case strings.HasPrefix(n, "count("), strings.HasPrefix(n, "length("), strings.HasPrefix(n, "changes("),
		strings.HasPrefix(n, "last_insert_rowid("):
		return result.Int8
	case strings.HasPrefix(n, "avg("), strings.HasPrefix(n, "total("):
		return result.Float8
	}
	if _, err := strconv.ParseInt(n, 10, 64); err == nil {
		return result.Int8
	}
	if _, err := strconv.ParseFloat(n, 64); err == nil {
		return result.Float8
	}
	if len(n) >= 2 && n[0] == '\'' && n[len(n)-1] == '\'' {
		return result.Text
	}
	return result.Unknown
}

// paramTypes returns the types of $1..$count as the statement says
// (pgparse.Param): a cast's or its place's, else the declared type of the
// column a parameter stands for; text for the others.
func (c *conn) paramTypes(params []pgparse.Param, tables []string, count int) []result.Type {
	types := make([]result.Type, max(count, len(params)))
	for i := range types {
		types[i] = result.Text
	}
	for i, prm := range params {
		switch {
		case prm.Kind != "":
			if r, ok := castResults[prm.Kind]; ok {
				types[i] = r.typ
			}
		case prm.Column != "" || prm.Position >= 0:
			if typ, ok := c.columnType(prm, tables); ok && (!prm.Arithmetic || typ.IsInteger() || typ.IsFloat() || typ == result.Numeric) {
				types[i] = typ
			}
		}
	}
	return types
}

// columnType returns the declared type of the column prm stands for: in
// its table, or the first of tables that has it.
func (c *conn) columnType(prm pgparse.Param, tables []string) (result.Type, bool) {
	if prm.Table != "" {
		tables = []string{prm.Table}
	}
	for _, t := range tables {
		ti, err := c.table(t)
		if err != nil || !ti.exists {
			continue
		}
		col := prm.Column
		if col == "" && prm.Position < len(ti.columns) {
			col = ti.columns[prm.Position]
		}
		if typ, ok := ti.types[strings.ToLower(col)]; ok {
			return typ, true
		}
	}
	return 0, false
}

func paramTok(t string) (int, bool) {
	if len(t) < 2 || t[0] != '$' {
		return 0, false
	}
	n, err := strconv.Atoi(t[1:])
	return n, err == nil && n >= 1
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`)
	}
	return s
}

// tokenize splits sql into identifiers (with dots), quoted identifiers,
// string literals, numbers, parameters and operators; comments are dropped.
// It only needs to be good enough for the scanners that still use it.
func tokenize(sql string) []string {
	var toks []string
	for i := 0; i < len(sql); {
		ch := sql[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r':
			i++
		case ch == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case ch == '/' && i+1 < len(sql) && sql[i+1] == '*':
			i = pgparse.BlockCommentEnd(sql, i)
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(sql) {
				if sql[j] == ch {
					if j+1 < len(sql) && sql[j+1] == ch {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, sql[i:min(j+1, len(sql))])
			i = j + 1
		case ch == '$' || ch == '_' || ch == '.' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= 0x80:
			j := i + 1
			for j < len(sql) && (sql[j] == '_' || sql[j] == '.' || sql[j] >= '0' && sql[j] <= '9' ||
				sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' || sql[j] >= 0x80) {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		default:
			j := i + 1
			if j < len(sql) && strings.ContainsRune("=<>!|", rune(sql[j])) && strings.ContainsRune("=<>!|", rune(ch)) {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		}
	}
	return toks
}
