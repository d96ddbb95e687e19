package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// IndexToSQLite prints a CREATE INDEX as SQLite SQL. What PostgreSQL's
// index options change is only how the index is kept and searched, not
// what it means (CONCURRENTLY, USING btree or hash, operator classes such
// as varchar_pattern_ops, INCLUDE, WITH (...), TABLESPACE, NULLS FIRST or
// LAST): they are left out. Other access methods (gin, gist ...), NULLS
// NOT DISTINCT and collations are refused with 0A000. An index without a
// name is named as PostgreSQL names it (table_column_idx). ok is false,
// with nothing printed, if sql is not one CREATE INDEX.
func IndexToSQLite(sql string) (out string, ok bool, err error) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false, nil
	}
	is := tree.Stmts[0].Stmt.GetIndexStmt()
	if is == nil || is.Relation == nil {
		return "", false, nil
	}
	p := &printer{}
	switch is.AccessMethod {
	case "", "btree", "hash":
	default:
		p.refuse("an index using " + is.AccessMethod)
	}
	if is.NullsNotDistinct {
		p.refuse("NULLS NOT DISTINCT")
	}
	if s := is.Relation.Schemaname; s != "" && s != "public" {
		p.refuse("a table in a schema other than public")
	}
	p.w("CREATE ")
	if is.Unique {
		p.w("UNIQUE ")
	}
	p.w("INDEX ")
	if is.IfNotExists {
		p.w("IF NOT EXISTS ")
	}
	name := is.Idxname
	if name == "" {
		name = defaultIndexName(is)
	}
	p.ident(name)
	p.w(" ON ")
	p.ident(is.Relation.Relname)
	p.w(" (")
	p.list(is.IndexParams, func(n *pg_query.Node) {
		e := n.GetIndexElem()
		switch {
		case e == nil:
			p.refuse("this index element")
			return
		case e.Name != "":
			p.ident(e.Name)
		default:
			p.w("(")
			p.expr(e.Expr)
			p.w(")")
		}
		if len(e.Collation) > 0 {
			p.refuse("an index column with a collation")
		}
		if e.Ordering == pg_query.SortByDir_SORTBY_DESC {
			p.w(" DESC")
		}
	})
	p.w(")")
	if is.WhereClause != nil {
		p.w(" WHERE ")
		p.expr(is.WhereClause)
	}
	if p.err != nil {
		return "", true, p.err
	}
	return p.b.String(), true, nil
}

// defaultIndexName is the name PostgreSQL gives an index made without
// one: the table, the columns (or "expr"), and idx or key, cut to 63
// bytes. (PostgreSQL adds a number if the name is taken; here the
// statement then fails.)
func defaultIndexName(is *pg_query.IndexStmt) string {
	parts := []string{is.Relation.Relname}
	for _, n := range is.IndexParams {
		if e := n.GetIndexElem(); e != nil && e.Name != "" {
			parts = append(parts, e.Name)
		} else {
			parts = append(parts, "expr")
		}
	}
	suffix := "idx"
	if is.Unique {
		suffix = "key"
	}
	name := strings.Join(parts, "_")
	if len(name) > 63-len(suffix)-1 {
		name = name[:63-len(suffix)-1]
	}
	return name + "_" + suffix
}
