package sqlite

import (
	"fmt"
	"slices"
	"strings"

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
