package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// MissingColumn is what PostgreSQL would say of a column reference that
// names nothing (SQLite: "no such column: q.c").
type MissingColumn struct {
	// Problem is one of:
	//   - "column": no such column (42703);
	//   - "missing FROM": the qualifier names no table of the statement
	//     (42P01, missing FROM-clause entry for table "q");
	//   - "aliased": the qualifier is the name of a table the statement
	//     gives an alias, Alias (42P01, invalid reference to FROM-clause
	//     entry for table "q").
	//   - "whole row": an unqualified name that names a table of the
	//     statement: PostgreSQL's whole-row reference (t, t::text).
	Problem string
	Alias   string
	// Position is where the reference stands in sql, counting characters
	// from 1 (LINE and the caret); 0 unless exactly one reference of sql
	// fits.
	Position int
}

// FindMissingColumn reads sql, a statement whose column reference
// qualifier.column (qualifier "" when it has none) SQLite did not find,
// the way PostgreSQL's parser resolves it: whether the qualifier names a
// table of the statement at all (its alias, or its name where it has
// none). The tables of every level of the statement count: a correlated
// reference is not told from another. ok is false if sql has no such
// reference (the engine's printing made it).
func FindMissingColumn(sql, qualifier, column string) (out MissingColumn, ok bool) {
	out.Problem = "column"
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return out, false
	}
	root := tree.Stmts[0].Stmt.ProtoReflect()
	var found []int32
	named, aliasOf := false, ""
	name := qualifier
	if name == "" {
		name = column // an unqualified name: a table's, it is its whole row
	}
	walkMessages(root, func(m protoreflect.Message) {
		switch n := m.Interface().(type) {
		case *pg_query.ColumnRef:
			if refMatches(n, qualifier, column) {
				found = append(found, n.Location)
			}
		case *pg_query.RangeVar:
			alias := ""
			if n.Alias != nil {
				alias = n.Alias.Aliasname
			}
			switch {
			case strings.EqualFold(alias, name), alias == "" && strings.EqualFold(n.Relname, name):
				named = true
			case strings.EqualFold(n.Relname, name) && aliasOf == "":
				aliasOf = alias
			}
		case *pg_query.Alias: // of a subquery, a function, VALUES, a join
			if strings.EqualFold(n.Aliasname, name) {
				named = true
			}
		case *pg_query.CommonTableExpr:
			if strings.EqualFold(n.Ctename, name) {
				named = true
			}
		}
	})
	switch {
	case qualifier == "" && named:
		out.Problem = "whole row"
	case qualifier == "" || named:
	case aliasOf != "":
		out.Problem, out.Alias = "aliased", aliasOf
	default:
		out.Problem = "missing FROM"
	}
	if len(found) == 1 {
		out.Position = charPosition(sql, found[0])
	}
	return out, len(found) > 0
}

// refMatches says whether ref is qualifier.column (or column alone, if
// qualifier is ""), as SQLite names it back: case aside.
func refMatches(ref *pg_query.ColumnRef, qualifier, column string) bool {
	var names []string
	for _, f := range ref.Fields {
		s := f.GetString_()
		if s == nil {
			return false // t.*
		}
		names = append(names, s.Sval)
	}
	if qualifier == "" {
		return len(names) == 1 && strings.EqualFold(names[0], column)
	}
	return len(names) == 2 && strings.EqualFold(names[0], qualifier) && strings.EqualFold(names[1], column)
}
