package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// dropStatements returns the SQLite statements of a PostgreSQL DROP of
// tables, indexes or views: one per object, since SQLite drops one at a
// time, the tables that reference others of the statement first (dropping
// a referenced table first would run its rows' foreign-key actions).
// CASCADE and RESTRICT are left out: what else depends on a dropped table
// is checked before (checkDropReferenced). ok is false for other
// statements, which SQLite is given as they are.
func (c *conn) dropStatements(sql string) (stmts []string, d *pgparse.Drop, ok bool, err error) {
	d = pgparse.ParseDrop(sql)
	if d == nil {
		return nil, nil, false, nil
	}
	switch d.Kind {
	case "TABLE", "INDEX", "VIEW":
	default:
		return nil, nil, false, nil
	}
	if d.Schema != "" {
		return nil, nil, true, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", d.Schema+"."+d.Names[0])
	}
	if err := c.checkDropped(d); err != nil {
		return nil, nil, true, err
	}
	names := d.Names
	if d.Kind == "TABLE" {
		if names, err = c.referencingFirst(names); err != nil {
			return nil, nil, true, err
		}
	}
	ifExists := ""
	if d.IfExists {
		ifExists = "IF EXISTS "
	}
	for _, n := range names {
		stmts = append(stmts, fmt.Sprintf("DROP %s %s%s", d.Kind, ifExists, quoteIdent(n)))
	}
	return stmts, d, true, nil
}

// referencingFirst orders tables so that each comes before the tables it
// references. c's schema cache must be fresh.
func (c *conn) referencingFirst(tables []string) ([]string, error) {
	refs := map[string][]string{} // table -> the tables of the set it references
	for _, t := range tables {
		ti, err := c.table(t)
		if err != nil {
			return nil, err
		}
		for _, fk := range ti.fks {
			refs[strings.ToLower(t)] = append(refs[strings.ToLower(t)], strings.ToLower(fk.parent))
		}
	}
	var out []string
	left := slices.Clone(tables)
	for len(left) > 0 {
		picked := -1
		for i, t := range left {
			referenced := false
			for _, o := range left {
				if o != t && slices.Contains(refs[strings.ToLower(o)], strings.ToLower(t)) {
					referenced = true
				}
			}
			if !referenced {
				picked = i
				break
			}
		}
		if picked < 0 {
			picked = 0 // a cycle: SQLite's own order
		}
		out = append(out, left[picked])
		left = slices.Delete(left, picked, picked+1)
	}
	return out, nil
}

// checkDropped refuses a DROP TABLE, VIEW or INDEX (d) of a name that is
// another kind of object, as PostgreSQL does (""v" is not a table", with
// the DROP to use), also with IF EXISTS, and without IF EXISTS one of a
// name that is none ("table "t" does not exist"). SQLite would say "no
// such table" of any of them.
func (c *conn) checkDropped(d *pgparse.Drop) error {
	kind := strings.ToLower(d.Kind)
	for _, name := range d.Names {
		var found string
		err := c.execResult("SELECT type FROM sqlite_schema WHERE type IN ('table', 'view', 'index') AND lower(name) = lower(?) LIMIT 1",
			func(stmt *sqlite.Stmt) { found = stmt.ColumnText(0) }, name)
		switch {
		case err != nil:
			return err
		case found == "" && d.IfExists:
		case found == "" && kind == "index":
			return sqlerr.New(sqlerr.UndefinedObject, "index %q does not exist", name)
		case found == "":
			return sqlerr.New(sqlerr.UndefinedTable, "%s %q does not exist", kind, name)
		case found != kind:
			e := sqlerr.New(sqlerr.WrongObjectType, "%q is not %s", name, withArticle(kind))
			e.Hint = fmt.Sprintf("Use DROP %s to remove %s.", strings.ToUpper(found), withArticle(found))
			return e
		}
	}
	return nil
}

// withArticle is "a table", "an index".
func withArticle(kind string) string {
	if kind == "index" {
		return "an " + kind
	}
	return "a " + kind
}

// skippedDrops returns the notices PostgreSQL sends for sql, a DROP ...
// IF EXISTS or ALTER SEQUENCE IF EXISTS, of each object it names that
// does not exist ("table "t" does not exist, skipping"); none for another
// statement. It runs before the statement.
func (c *conn) skippedDrops(sql string) ([]*sqlerr.Error, error) {
	if !hasKeyword(sql, "EXISTS") {
		return nil, nil
	}
	if s := pgparse.ParseSequenceStmt(sql); s != nil && s.Alter && s.Missing && s.Schema == "" {
		if _, ok, err := sequenceOwner(c, s.Names[0]); err != nil || ok {
			return nil, err
		}
		return []*sqlerr.Error{{Severity: "NOTICE", Code: "00000", Message: fmt.Sprintf("relation %q does not exist, skipping", s.Names[0])}}, nil
	}
	d := pgparse.ParseDrop(sql)
	if d == nil || !d.IfExists || d.Schema != "" {
		return nil, nil
	}
	query := map[string]string{
		"TABLE": "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND lower(name) = lower(?)",
		"VIEW":  "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND lower(name) = lower(?)",
		"INDEX": "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND lower(name) = lower(?)",
		// the sequences of SERIAL and identity columns too, as in PostgreSQL
		"SEQUENCE": "SELECT 1 FROM " + sequencesTable + " WHERE lower(name) = lower(?)",
	}[d.Kind]
	if query == "" {
		return nil, nil
	}
	var notices []*sqlerr.Error
	for _, name := range d.Names {
		if _, ok, err := c.queryInt(query, name); err != nil {
			return nil, err
		} else if !ok {
			notices = append(notices, &sqlerr.Error{Severity: "NOTICE", Code: "00000",
				Message: fmt.Sprintf("%s %q does not exist, skipping", strings.ToLower(d.Kind), name)})
		}
	}
	return notices, nil
}

// sendNotices sends notices to the client of ctx, if it has one.
func sendNotices(ctx context.Context, notices []*sqlerr.Error) {
	if send := sqlerr.NoticesFrom(ctx); send != nil {
		for _, n := range notices {
			send(n)
		}
	}
}
