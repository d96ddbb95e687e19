package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
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
	if def, ok := indexDef(tree, name); ok {
		p.w(" " + pgDefOpen + def + pgDefClose)
	}
	return p.b.String(), true, nil
}

// An index's PostgreSQL definition rides along in a comment at the end of
// its SQLite statement, which SQLite keeps in sqlite_schema: the catalog
// shows it (pg_get_indexdef, psql's \d, pg_dump) where SQLite's text has
// the printer's forms of expressions and lacks what was left out.
const pgDefOpen, pgDefClose = "/* postgres: ", " */"

// indexDef is the PostgreSQL definition of the index tree makes, named
// name: tree deparsed with the table in public, the access method
// written out, without CONCURRENTLY and IF NOT EXISTS.
func indexDef(tree *pg_query.ParseResult, name string) (string, bool) {
	is := tree.Stmts[0].Stmt.GetIndexStmt()
	is.Idxname, is.Relation.Schemaname, is.Concurrent, is.IfNotExists = name, "public", false, false
	if is.AccessMethod == "" {
		is.AccessMethod = "btree"
	}
	def, err := pg_query.Deparse(tree)
	if err != nil || strings.Contains(def, pgDefClose) {
		return "", false
	}
	return def, true
}

// RenamedIndex returns sqlite, an index's statement in sqlite_schema
// after SQLite ran rename (a client's ALTER TABLE ... RENAME TO or RENAME
// COLUMN of its table), with its PostgreSQL definition renamed alike.
// ok is false if there is nothing to rename or the result would not be
// the index SQLite has (IndexDefinition would then not show it).
func RenamedIndex(sqlite, rename string) (string, bool) {
	at := strings.LastIndex(sqlite, " "+pgDefOpen)
	tree, err := pg_query.Parse(rename)
	if at < 0 || err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetRenameStmt() == nil {
		return "", false
	}
	rs := tree.Stmts[0].Stmt.GetRenameStmt()
	def, err := pg_query.Parse(sqlite[at+1+len(pgDefOpen) : len(sqlite)-len(pgDefClose)])
	if err != nil || rs.Relation == nil {
		return "", false
	}
	is := def.Stmts[0].Stmt.GetIndexStmt()
	if is == nil || is.Relation.Relname != rs.Relation.Relname {
		return "", false
	}
	switch rs.RenameType {
	case pg_query.ObjectType_OBJECT_TABLE:
		is.Relation.Relname = rs.Newname
	case pg_query.ObjectType_OBJECT_COLUMN:
		walkMessages(is.ProtoReflect(), func(m protoreflect.Message) {
			switch n := m.Interface().(type) {
			case *pg_query.IndexElem:
				if n.Name == rs.Subname {
					n.Name = rs.Newname
				}
			case *pg_query.ColumnRef:
				if last := n.Fields[len(n.Fields)-1].GetString_(); last != nil && last.Sval == rs.Subname {
					last.Sval = rs.Newname
				}
			}
		})
	default:
		return "", false
	}
	text, err := pg_query.Deparse(def)
	if err != nil {
		return "", false
	}
	again, ok, err := IndexToSQLite(text)
	if !ok || err != nil || again != sqlite[:at]+" "+pgDefOpen+text+pgDefClose {
		return "", false
	}
	return again, true
}

// IndexDefinition returns the PostgreSQL definition of the index that
// sqlite, an index's statement in sqlite_schema, was printed from
// (IndexToSQLite), if the index is still as it was made: a rename of its
// table or of a column since leaves the comment's names behind.
func IndexDefinition(sqlite string) (string, bool) {
	at := strings.LastIndex(sqlite, " "+pgDefOpen)
	if at < 0 || !strings.HasSuffix(sqlite, pgDefClose) {
		return "", false
	}
	def := sqlite[at+1+len(pgDefOpen) : len(sqlite)-len(pgDefClose)]
	again, ok, err := IndexToSQLite(def)
	if !ok || err != nil || again != sqlite {
		return "", false
	}
	return def, true
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

// IndexExpressions returns the expressions of the columns of the index
// def (a CREATE INDEX), deparsed, "" for a column that is a column's
// name: what pg_get_indexdef(index, n, ...) gives for an expression.
func IndexExpressions(def string) []string {
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetIndexStmt() == nil {
		return nil
	}
	var exprs []string
	for _, n := range tree.Stmts[0].Stmt.GetIndexStmt().IndexParams {
		e := n.GetIndexElem()
		if e == nil || e.Expr == nil {
			exprs = append(exprs, "")
			continue
		}
		sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(e.Expr, 0)}}
		text, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version,
			Stmts: []*pg_query.RawStmt{{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}}}})
		if err != nil {
			return nil
		}
		exprs = append(exprs, strings.TrimPrefix(text, "SELECT "))
	}
	return exprs
}
