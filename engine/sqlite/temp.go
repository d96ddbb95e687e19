package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Temporary tables. A session's temporary tables, views and indexes live
// in SQLite's temp database of one connection, which the session keeps for
// itself from then on (session.go): no other session sees them, nothing of
// them is replicated, and they go when the session closes. A statement
// that makes or drops them runs in the session's transaction (ExecLocal)
// under modeTemp, whose authorizer lets it change the temp database
// alone: what would change the main one is not the session's (it is
// replicated instead).
//
// A transaction's changes to temporary tables stay only if it commits on
// this node (CommitLocal), so a transaction may change temporary tables
// or replicated ones, not both (errTempMix).

// errTempMix refuses a statement that would make a transaction change
// both temporary and replicated tables: its replicated changes are
// applied from its write set, and the rest of it rolled back.
func errTempMix() error {
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"a transaction on the SQLite engine cannot change both temporary tables and replicated ones (or lock their rows)")
	e.Hint = "Change the temporary tables in a transaction of their own."
	return e
}

// authorizeTemp is the policy for a statement that changes the session's
// temporary objects: it may read anything and change the temp database;
// an action on the main database marks it not the session's (notLocal).
func (r *record) authorizeTemp(a sqlite.Action) sqlite.AuthResult {
	switch a.Type() {
	case sqlite.OpSelect, sqlite.OpFunction, sqlite.OpRecursive, sqlite.OpRead, sqlite.OpReindex:
		return sqlite.AuthResultOK
	case sqlite.OpInsert, sqlite.OpUpdate, sqlite.OpDelete, sqlite.OpAlterTable:
		if a.Database() == "temp" {
			return sqlite.AuthResultOK
		}
	case sqlite.OpCreateTempTable, sqlite.OpCreateTempIndex, sqlite.OpCreateTempView,
		sqlite.OpDropTempTable, sqlite.OpDropTempIndex, sqlite.OpDropTempView:
		return sqlite.AuthResultOK
	case sqlite.OpCreateTable, sqlite.OpCreateIndex, sqlite.OpCreateView,
		sqlite.OpDropTable, sqlite.OpDropIndex, sqlite.OpDropView:
	default:
		return r.denyKind(sqlerr.FeatureNotSupported, "statement not supported on temporary tables (%s)", a.Type())
	}
	r.notLocal = true
	return r.deny(sqlerr.FeatureNotSupported, "not a temporary object")
}

// loadTemps reads which objects c's temp database holds (certa's touch
// triggers aside), and which of them hide a replicated one.
func (c *conn) loadTemps() error {
	c.temps, c.hidden = nil, nil
	return c.execResult(`SELECT t.type, t.name, m.name IS NOT NULL FROM sqlite_temp_schema t
		LEFT JOIN sqlite_schema m ON m.name = t.name COLLATE NOCASE AND t.type IN ('table', 'view')
		WHERE t.type IN ('table', 'view', 'index')`, func(s *sqlite.Stmt) {
		if c.temps == nil {
			c.temps = map[string]string{}
		}
		name := strings.ToLower(s.ColumnText(1))
		c.temps[name] = s.ColumnText(0)
		if s.ColumnInt64(2) != 0 {
			c.hidden = append(c.hidden, name)
		}
	})
}

// refuseHidden refuses a client statement that names a replicated table
// a temporary one hides as public.name: SQLite has no schema public, and
// would reach the temporary table. (Unqualified, the name is the
// temporary table's, as in PostgreSQL.)
func (c *conn) refuseHidden(sql string) error {
	if len(c.hidden) == 0 {
		return nil
	}
	lower := strings.ToLower(sql)
	for _, name := range c.hidden {
		if strings.Contains(lower, "public."+name) || strings.Contains(lower, `public."`+name+`"`) {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"the SQLite engine cannot reach table public.%s while this session's temporary table %s hides it", name, name)
		}
	}
	return nil
}

// isTemp reports whether name is one of c's temporary objects of type
// typ ("table", "view", "index"; "" for any).
func (c *conn) isTemp(name, typ string) bool {
	t, ok := c.temps[strings.ToLower(name)]
	return ok && (typ == "" || t == typ)
}

// countTemps returns how many of names name temporary objects of type
// typ.
func (c *conn) countTemps(names []string, typ string) int {
	n := 0
	for _, name := range names {
		if c.isTemp(name, typ) {
			n++
		}
	}
	return n
}

// tempStatement is a schema statement on temporary objects as SQLite
// runs it: stmts in order, decided to be the session's (known) or to be
// found so by running them (CREATE INDEX: its table decides).
type tempStatement struct {
	stmts    []string
	known    bool
	onCommit string // a table made with ON COMMIT DROP or DELETE ROWS
	table    string // the table made
	notice   *sqlerr.Error
}

// tempStatementOf returns sql as a statement on c's temporary objects, or
// ok false when it is not one.
func (c *conn) tempStatementOf(sql string) (ts tempStatement, ok bool, err error) {
	tc, temp := pgparse.ParseTempCreate(sql)
	if !temp && len(c.temps) == 0 {
		return ts, false, nil // only a TEMP statement makes the first one
	}
	if v, ok, err := pgparse.ViewToSQLite(sql); ok {
		switch {
		case err != nil && temp && tc.Kind == "VIEW":
			return ts, true, err
		case err != nil:
			return ts, false, nil // refused as a replicated statement
		case v.Temp || len(c.temps) > 0:
			return c.tempView(v)
		}
		return ts, false, nil
	}
	if temp {
		if tc.Kind != "TABLE" {
			return ts, true, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TEMP %s is not supported by the SQLite engine", tc.Kind)
		}
		text, err := translateChecks(pgparse.FoldIdentifiers(sql))
		if err == nil {
			text, err = translateCreateTable(text)
		}
		if err != nil {
			return ts, true, err
		}
		return tempStatement{stmts: []string{text}, known: true, onCommit: tc.OnCommit, table: strings.ToLower(tc.Name)}, true, nil
	}
	if d := pgparse.ParseDrop(sql); d != nil {
		typ := strings.ToLower(d.Kind)
		if typ != "table" && typ != "view" && typ != "index" {
			return ts, false, nil
		}
		switch temp := c.countTemps(d.Names, typ); {
		case temp == 0 || d.Schema != "" && d.Schema != "pg_temp":
			return ts, false, nil
		case temp < len(d.Names):
			return ts, true, sqlerr.New(sqlerr.FeatureNotSupported, "the SQLite engine cannot drop temporary and replicated objects in one statement: drop them apart")
		}
		ifExists := ""
		if d.IfExists {
			ifExists = "IF EXISTS "
		}
		for _, n := range d.Names {
			ts.stmts = append(ts.stmts, fmt.Sprintf("DROP %s %stemp.%s", d.Kind, ifExists, quoteIdent(n)))
		}
		ts.known = true
		return ts, true, nil
	}
	if t := pgparse.ParseTruncate(sql); t != nil {
		switch temp := c.countTemps(t.Tables, "table"); {
		case temp == 0 || t.Schema != "" && t.Schema != "pg_temp":
			return ts, false, nil
		case temp < len(t.Tables):
			return ts, true, sqlerr.New(sqlerr.FeatureNotSupported, "the SQLite engine cannot truncate temporary and replicated tables in one statement: truncate them apart")
		}
		for _, n := range t.Tables {
			ts.stmts = append(ts.stmts, "DELETE FROM temp."+quoteIdent(n))
		}
		ts.known = true
		return ts, true, nil
	}
	if at := pgparse.ParseAlterTable(sql); at != nil && c.isTemp(at.Table, "") {
		return ts, true, sqlerr.New(sqlerr.FeatureNotSupported, "ALTER of temporary tables is not supported by the SQLite engine: drop the table and make it again")
	}
	if idx, ok, err := pgparse.IndexToSQLite(sql); ok && len(c.temps) > 0 {
		if err != nil {
			return ts, false, nil // refused as a replicated statement
		}
		return tempStatement{stmts: []string{idx}}, true, nil
	}
	return ts, false, nil
}

// tempView is tempStatementOf for a CREATE VIEW: a temporary view, or
// one whose query reads temporary tables, which PostgreSQL makes
// temporary too (ok false for any other view).
func (c *conn) tempView(v *pgparse.View) (ts tempStatement, ok bool, err error) {
	if !v.Temp {
		if err := c.refreshSchema(); err != nil {
			return ts, true, err
		}
		stmt, rec, _, err := c.prepare(v.Definition, modeLocal)
		if err != nil {
			return ts, false, nil // refused as a replicated statement
		}
		stmt.Finalize()
		c.endStatement()
		if !rec.tempReads {
			return ts, false, nil
		}
		ts.notice = &sqlerr.Error{Severity: "NOTICE", Code: "00000", Message: fmt.Sprintf("view %q will be a temporary view", v.Name)}
	}
	query, cols, err := c.viewColumns(v)
	if err != nil {
		return ts, true, err
	}
	switch {
	case v.Replace && c.isTemp(v.Name, "view"):
		ts.stmts = append(ts.stmts, "DROP VIEW temp."+quoteIdent(v.Name))
	case c.isTemp(v.Name, ""):
		return ts, true, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", v.Name)
	}
	ts.stmts = append(ts.stmts, "CREATE TEMP VIEW"+strings.TrimPrefix(pgparse.ViewSQL(v, query, cols), "CREATE VIEW"))
	ts.known = true
	return ts, true, nil
}

// execTemp runs sql if it changes only the session's temporary objects
// (ExecLocal). tx.mu is held.
func (tx *Tx) execTemp(ctx context.Context, sql string, w result.Writer) (bool, error) {
	sql = skipBlank(sql)
	if tc, ok := pgparse.ParseTempCopy(sql); ok {
		return true, tx.execTempCopy(ctx, tc, w)
	}
	ts, ok, err := tx.conn.tempStatementOf(sql)
	if !ok || err != nil {
		return ok, err
	}
	if err := tx.runTemp(ts); err != nil {
		if errors.Is(err, errNotLocal) {
			return false, nil
		}
		return true, err
	}
	if ts.notice != nil {
		sendNotices(ctx, []*sqlerr.Error{ts.notice})
	}
	return true, w.Complete(pgparse.SchemaTag(sql))
}

// discardTemp runs DISCARD TEMP: the session's temporary objects are
// dropped. tx.mu is held.
func (tx *Tx) discardTemp(w result.Writer) error {
	var ts tempStatement
	for _, typ := range []string{"view", "table"} {
		for name, t := range tx.conn.temps {
			if t == typ {
				ts.stmts = append(ts.stmts, "DROP "+strings.ToUpper(typ)+" IF EXISTS temp."+quoteIdent(name))
			}
		}
	}
	ts.known = true
	if err := tx.runTemp(ts); err != nil {
		return err
	}
	return w.Complete("DISCARD TEMP")
}

// isDiscardTemp reports whether sql is DISCARD TEMP (or TEMPORARY).
func isDiscardTemp(sql string) bool {
	if firstKeyword(sql) != "DISCARD" {
		return false // every statement of a transaction passes here
	}
	words := strings.Fields(strings.ToUpper(strings.TrimRight(sql, "; \t\n")))
	return len(words) == 2 && words[0] == "DISCARD" && (words[1] == "TEMP" || words[1] == "TEMPORARY")
}

// errNotLocal is runTemp's answer for a statement that would change
// the main database: it changed nothing.
var errNotLocal = errors.New("not a statement on temporary objects")

// runTemp runs ts, all or nothing, and records what it changed. tx.mu is
// held.
func (tx *Tx) runTemp(ts tempStatement) error {
	c := tx.conn
	if ts.known && tx.changesReplicated() {
		return errTempMix()
	}
	if err := c.exec("SAVEPOINT certa_temp"); err != nil {
		return mapErr(err)
	}
	undo := func() {
		c.exec("ROLLBACK TO certa_temp")
		c.exec("RELEASE certa_temp")
	}
	for _, s := range ts.stmts {
		local, err := stepTemp(c, s)
		if !local {
			undo()
			return errNotLocal
		}
		if err != nil {
			undo()
			return mapErr(err)
		}
	}
	if !ts.known && tx.changesReplicated() {
		undo()
		return errTempMix()
	}
	if err := c.exec("RELEASE certa_temp"); err != nil {
		return mapErr(err)
	}
	tx.tempChanged = true
	tx.rlog.stop() // never run again: its changes are kept, not replicated
	switch {
	case ts.onCommit != "":
		if c.onCommit == nil {
			c.onCommit = map[string]string{}
		}
		c.onCommit[ts.table] = ts.onCommit
	case ts.table != "":
		delete(c.onCommit, ts.table)
	}
	return tx.tempSchemaChanged()
}

// stepTemp runs one statement under modeTemp; local is false when it
// would change the main database (nothing ran).
func stepTemp(c *conn, sql string) (local bool, err error) {
	stmt, rec, tail, err := c.prepare(sql, modeTemp)
	if rec.notLocal {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer c.endStatement()
	defer stmt.Finalize()
	if !isBlank(tail) {
		return true, errOneStatement()
	}
	return true, stepAll(stmt)
}

// tempSchemaChanged brings what the Tx's connection knows of its schema
// up to date after its temporary objects changed: statements prepared
// before may name other tables now. tx.mu is held.
func (tx *Tx) tempSchemaChanged() error {
	c := tx.conn
	c.dropCache()
	c.forgetSchema()
	return mapErr(c.loadTemps())
}

// changesReplicated reports whether the Tx changed or locked anything
// that replicates. tx.mu is held.
func (tx *Tx) changesReplicated() bool {
	return len(tx.writes) > 0 || tx.schema != nil || tx.holdsLock || tx.img != nil || len(tx.locked) > 0
}

// commitTemp commits the Tx's changes to temporary tables, after their ON
// COMMIT actions. tx.mu is held.
func (tx *Tx) commitTemp() error {
	c := tx.conn
	if err := c.checkOnCommitKeys(); err != nil {
		return err
	}
	for name, action := range c.onCommit {
		if !c.isTemp(name, "table") {
			delete(c.onCommit, name)
			continue
		}
		q := "DELETE FROM temp." + quoteIdent(name)
		if action == "DROP" {
			q = "DROP TABLE temp." + quoteIdent(name)
			delete(c.onCommit, name)
		}
		if err := c.exec(q); err != nil {
			return mapErr(err)
		}
	}
	if err := c.exec("COMMIT"); err != nil {
		return mapErr(err)
	}
	return tx.tempSchemaChanged()
}

// execTempCopy runs a CREATE TABLE AS or SELECT INTO that makes a
// temporary table: the table is made with the columns the query
// describes (names and PostgreSQL types), then filled by an INSERT of
// the query's rows, which the command tag counts. tx.mu is held.
func (tx *Tx) execTempCopy(ctx context.Context, tc *pgparse.TableCopy, w result.Writer) error {
	if tx.changesReplicated() {
		return errTempMix()
	}
	c := tx.conn
	_, cols, err := c.describe(tc.Query())
	if err != nil {
		return err
	}
	if len(tc.Columns) > len(cols) {
		return sqlerr.New(sqlerr.SyntaxError, "too many column names were specified")
	}
	if slices.ContainsFunc(cols, func(col result.Column) bool { return col.Type == result.Unknown }) {
		if cols, err = c.firstRowColumns(tc.Query()); err != nil {
			return err
		}
	}
	var defs []string
	for i, col := range cols {
		name := col.Name
		if i < len(tc.Columns) {
			name = tc.Columns[i]
		}
		if col.Type == result.Unknown {
			return sqlerr.New(sqlerr.FeatureNotSupported,
				"the SQLite engine cannot tell the type of column %q before the query runs: make the temporary table with its columns, then INSERT ... SELECT", name)
		}
		mod := int64(col.Mod)
		if mod == 0 {
			mod = -1
		}
		defs = append(defs, quoteIdent(name)+" "+formatType(int64(col.Type.OID()), mod))
	}
	create := "CREATE TEMP TABLE " + quoteIdent(tc.Name) + " (" + strings.Join(defs, ", ") + ")"
	if tc.OnCommit != "" {
		create += " ON COMMIT " + tc.OnCommit
	}
	ts, _, err := c.tempStatementOf(create)
	if err != nil {
		return err
	}
	if err := tx.runTemp(ts); err != nil {
		return err
	}
	if tc.SkipData {
		return w.Complete("SELECT 0")
	}
	counted := &tagWriter{}
	if err := tx.execStmt(ctx, "INSERT INTO "+quoteIdent(tc.Name)+" "+tc.Query(), counted, nil); err != nil {
		return err
	}
	_, n, _ := strings.Cut(strings.TrimPrefix(counted.tag, "INSERT "), " ")
	return w.Complete("SELECT " + n)
}

// firstRowColumns describes the result columns of query as a client
// reading it would be told: typed by their values in its first row where
// the statement does not say (conn.columns).
func (c *conn) firstRowColumns(query string) ([]result.Column, error) {
	stmt, rec, tail, err := c.prepareCached(query)
	if err != nil {
		return nil, err
	}
	defer func() {
		c.release(stmt)
		c.endStatement()
	}()
	if !isBlank(tail) {
		return nil, errOneStatement()
	}
	if len(rec.writes) > 0 || rec.tempWrites {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the query of a temporary table's CREATE TABLE AS must not write")
	}
	hasRow, err := stmt.Step()
	if err != nil {
		return nil, err
	}
	return c.columns(stmt, &rec, hasRow)
}

// checkOnCommitKeys refuses, as PostgreSQL does at COMMIT, a temporary
// table whose rows ON COMMIT DELETE ROWS would empty while a table
// without that setting references it.
func (c *conn) checkOnCommitKeys() error {
	for name, typ := range c.temps {
		if typ != "table" || c.onCommit[name] == "DELETE ROWS" {
			continue
		}
		var parents []string
		err := c.execResult(`SELECT DISTINCT "table" FROM pragma_foreign_key_list(?1, 'temp')`, func(s *sqlite.Stmt) {
			parents = append(parents, s.ColumnText(0))
		}, name)
		if err != nil {
			return mapErr(err)
		}
		for _, p := range parents {
			if c.onCommit[strings.ToLower(p)] == "DELETE ROWS" {
				e := sqlerr.New(sqlerr.FeatureNotSupported, "unsupported ON COMMIT and foreign key combination")
				e.Detail = fmt.Sprintf("Table %q references %q, but they do not have the same ON COMMIT setting.", name, strings.ToLower(p))
				return e
			}
		}
	}
	return nil
}

// tagWriter keeps the command tag of a statement whose result it drops.
type tagWriter struct{ tag string }

func (*tagWriter) Columns([]result.Column) error { return nil }
func (*tagWriter) Row([]result.Value) error      { return nil }
func (t *tagWriter) Complete(tag string) error   { t.tag = tag; return nil }
func (*tagWriter) Empty() error                  { return nil }
