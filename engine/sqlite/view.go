package sqlite

import (
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// Views. A view's query is printed for SQLite as a client's query is
// (pgparse.ViewToSQLite), so that it means what it means in PostgreSQL,
// and its columns are named in the statement: SQLite expands a view's *
// each time it reads it, so a column added to the table later would join
// the view, where PostgreSQL fixes the columns when it makes the view.
// The PostgreSQL definition rides along for the catalog.

// createView returns the SQLite statement that makes v, with its columns
// as PostgreSQL names them; for OR REPLACE, the old view is dropped first,
// if it has the new one's leading columns, as PostgreSQL requires.
func (c *conn) createView(v *pgparse.View) (string, error) {
	if v.Temp {
		err := sqlerr.New(sqlerr.FeatureNotSupported, "TEMP tables, views and indexes are not supported by the SQLite engine")
		err.Hint = tempHint
		return "", err
	}
	query, cols, err := c.viewColumns(v)
	if err != nil {
		return "", err
	}
	if v.Replace {
		if err := c.replaceView(v, query, cols); err != nil {
			return "", err
		}
	}
	return pgparse.ViewSQL(v, query, cols), nil
}

// viewColumns returns the names of the result columns of v's query and
// those of v's columns (the names v gives them, then the query's).
func (c *conn) viewColumns(v *pgparse.View) (query, cols []string, err error) {
	query, err = c.queryColumns(v.Query)
	if err != nil {
		return nil, nil, err
	}
	if len(v.Columns) > len(query) {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "CREATE VIEW specifies more column names than columns")
	}
	cols = slices.Clone(query)
	copy(cols, v.Columns)
	for i, name := range cols {
		if slices.Contains(cols[:i], name) {
			return nil, nil, sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", name)
		}
	}
	return query, cols, nil
}

// queryColumns returns the names of the result columns of query, a
// printed query.
func (c *conn) queryColumns(query string) ([]string, error) {
	defer c.internal()()
	stmt, _, err := c.c.PrepareTransient(query)
	if err != nil {
		return nil, notEmbedded(query, true, err)
	}
	defer stmt.Finalize()
	if names := c.sharedNames(stmt, query); names != nil {
		return names, nil
	}
	cols := make([]string, stmt.ColumnCount())
	for i := range cols {
		cols[i] = stmt.ColumnName(i)
	}
	return cols, nil
}

// replaceView drops the view v names for CREATE OR REPLACE VIEW, which
// must keep its columns, their names and types (cols may add some after
// them); a table of the name is not replaced. query are the names of
// v's query's columns.
func (c *conn) replaceView(v *pgparse.View, query, cols []string) error {
	name := v.Name
	typ := ""
	if err := c.execResult("SELECT type FROM sqlite_schema WHERE lower(name) = lower(?)", func(s *sqlite.Stmt) { typ = s.ColumnText(0) }, name); err != nil {
		return err
	}
	switch typ {
	case "":
		return nil
	case "view":
	default:
		return sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", name)
	}
	var old []string
	if err := c.execResult("SELECT name FROM pragma_table_info(?) ORDER BY cid", func(s *sqlite.Stmt) { old = append(old, s.ColumnText(0)) }, name); err != nil {
		return err
	}
	if len(cols) < len(old) {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, o := range old {
		if o != cols[i] {
			err := sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change name of view column %q to %q", o, cols[i])
			err.Hint = "Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."
			return err
		}
	}
	oldTypes, err := c.viewColumnTypes(name)
	if err != nil {
		return err
	}
	// The new view's types are those of the view it makes, made under
	// another name for a moment (a schema statement runs in a transaction
	// that ends before anyone reads it).
	trial := *v
	trial.Name = "_certa_view_trial"
	if err := c.exec(pgparse.ViewSQL(&trial, query, cols)); err != nil {
		return err
	}
	newTypes, err := c.viewColumnTypes(trial.Name)
	if err != nil {
		return err
	}
	if err := c.exec("DROP VIEW " + quoteIdent(trial.Name)); err != nil {
		return err
	}
	for i, o := range oldTypes {
		if i < len(newTypes) && o != newTypes[i] {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "cannot change data type of view column %q from %s to %s",
				old[i], formatType(o[0], o[1]), formatType(newTypes[i][0], newTypes[i][1]))
		}
	}
	return c.exec("DROP VIEW " + quoteIdent(name))
}

// viewColumnTypes returns the type (oid and typmod) of each column of the
// view name, as the catalog shows them (readCatalogViews).
func (c *conn) viewColumnTypes(name string) ([][2]int64, error) {
	v := &catalogTable{name: name}
	err := c.execResult("SELECT sql FROM sqlite_schema WHERE type = 'view' AND name = ?", func(s *sqlite.Stmt) {
		v.view = viewDefinition(s.ColumnText(0))
	}, name)
	if err != nil {
		return nil, err
	}
	err = c.execResult("SELECT name, type FROM pragma_table_info(?) ORDER BY cid", func(s *sqlite.Stmt) {
		v.cols = append(v.cols, catalogColumn{name: s.ColumnText(0), decl: s.ColumnText(1)})
	}, name)
	if err != nil {
		return nil, err
	}
	viewKinds(v)
	types := make([][2]int64, len(v.cols))
	for i, col := range v.cols {
		oid := columnTypeOID(col.decl)
		types[i] = [2]int64{oid, int64(typeFacts(col.decl, oid).typmod)}
	}
	return types, nil
}

// refuseRenameUnderView refuses sql if it renames a table or view, or a
// column of one, that a view reads: SQLite would rename it in the
// view's query but not in the definition the catalog shows (and pg_dump
// writes) for it.
func (c *conn) refuseRenameUnderView(sql string) error {
	rel, ok := pgparse.RenamedRelation(sql)
	if !ok {
		return nil
	}
	reader := ""
	err := c.execResult("SELECT name, sql FROM sqlite_schema WHERE type = 'view' ORDER BY name", func(s *sqlite.Stmt) {
		if reader == "" && slices.ContainsFunc(pgparse.ViewRelations(viewDefinition(s.ColumnText(1))), func(r string) bool { return strings.EqualFold(r, rel) }) {
			reader = s.ColumnText(0)
		}
	})
	if err != nil || reader == "" {
		return err
	}
	e := sqlerr.New(sqlerr.FeatureNotSupported, "renaming %q or its columns is not supported by the embedded SQLite engine while view %q reads it", rel, reader)
	e.Hint = "Drop the view, rename, and create the view again."
	return e
}
