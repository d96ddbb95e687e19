package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// ForeignKey is one foreign key a CREATE TABLE declares, as written.
type ForeignKey struct {
	Name       string   // CONSTRAINT name; "" when not named
	Columns    []string // the table's columns
	RefTable   string
	RefColumns []string // nil: the referenced table's primary key
	// Match is "FULL", "PARTIAL" or "SIMPLE" (the default).
	Match                         string
	Deferrable, InitiallyDeferred bool
}

// ParseForeignKeys returns the foreign keys of sql if it is one CREATE
// TABLE that PostgreSQL's parser accepts (ok false otherwise), in the order
// they are declared: column constraints (REFERENCES) and table constraints
// (FOREIGN KEY).
func ParseForeignKeys(sql string) (fks []ForeignKey, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false
	}
	cs := tree.Stmts[0].Stmt.GetCreateStmt()
	if cs == nil {
		return nil, false
	}
	add := func(c *pg_query.Constraint, cols []string) bool {
		if c == nil || c.Contype != pg_query.ConstrType_CONSTR_FOREIGN || c.Pktable == nil {
			return false
		}
		// INITIALLY DEFERRED implies DEFERRABLE.
		fk := ForeignKey{Name: c.Conname, Columns: cols, RefTable: c.Pktable.Relname, RefColumns: stringList(c.PkAttrs),
			Match: "SIMPLE", Deferrable: c.Deferrable || c.Initdeferred, InitiallyDeferred: c.Initdeferred}
		switch c.FkMatchtype {
		case "f":
			fk.Match = "FULL"
		case "p":
			fk.Match = "PARTIAL"
		}
		fks = append(fks, fk)
		return true
	}
	for _, elt := range cs.TableElts {
		if cd := elt.GetColumnDef(); cd != nil {
			// A column constraint's DEFERRABLE and INITIALLY DEFERRED
			// are constraints of their own that follow it.
			var last *ForeignKey
			for _, n := range cd.Constraints {
				c := n.GetConstraint()
				if add(c, []string{cd.Colname}) {
					last = &fks[len(fks)-1]
					continue
				}
				switch {
				case c == nil:
				case last != nil && c.Contype == pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE:
					last.Deferrable = true
				case last != nil && c.Contype == pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE:
					last.Deferrable = false
				case last != nil && c.Contype == pg_query.ConstrType_CONSTR_ATTR_DEFERRED:
					last.Deferrable, last.InitiallyDeferred = true, true
				case last != nil && c.Contype == pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE:
					last.InitiallyDeferred = false
				default:
					last = nil
				}
			}
			continue
		}
		if c := elt.GetConstraint(); c != nil {
			add(c, stringList(c.FkAttrs))
		}
	}
	return fks, true
}
