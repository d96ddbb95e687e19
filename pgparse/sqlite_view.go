package pgparse

import (
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// View is a CREATE [OR REPLACE] VIEW printed for SQLite.
type View struct {
	Name    string
	Replace bool // OR REPLACE
	Temp    bool // TEMP
	// Columns are the names the statement gives the view's columns, in
	// order (fewer than the query has, or none).
	Columns []string
	// Star: the query's result has a * (t.*), which SQLite expands each
	// time it reads the view.
	Star bool
	// Query is the view's query as ToSQLite prints queries, so that it
	// means in SQLite what it means in PostgreSQL; Definition is it as
	// PostgreSQL's parser read it, deparsed (pg_get_viewdef).
	Query, Definition string
}

// ViewToSQLite describes sql if it is one CREATE VIEW; ok is false, with
// no error, for any other statement. What the printer refuses in a query
// is refused in a view, and so are CHECK OPTION and view options, which
// SQLite's views do not have, and a view of another schema.
func ViewToSQLite(sql string) (v *View, ok bool, err error) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false, nil
	}
	vs := tree.Stmts[0].Stmt.GetViewStmt()
	if vs == nil || vs.View == nil || vs.Query.GetSelectStmt() == nil {
		return nil, false, nil
	}
	p := &printer{columnTypes: true, root: vs.Query}
	switch {
	case vs.WithCheckOption != pg_query.ViewCheckOption_NO_CHECK_OPTION && vs.WithCheckOption != pg_query.ViewCheckOption_VIEW_CHECK_OPTION_UNDEFINED:
		p.refuse("WITH CHECK OPTION")
	case len(vs.Options) > 0:
		p.refuse("a view with options")
	case vs.View.Schemaname != "" && vs.View.Schemaname != "public":
		p.refuse("a view in a schema other than public")
	}
	p.selectStmt(vs.Query.GetSelectStmt(), true)
	if p.err != nil {
		return nil, true, p.err
	}
	def, ok := deparseQuery(vs.Query, tree.Version)
	if !ok {
		p.refuse("this view's query (certa cannot write it back)")
		return nil, true, p.err
	}
	v = &View{Name: vs.View.Relname, Replace: vs.Replace, Temp: vs.View.Relpersistence == "t", Query: p.b.String(), Definition: def, Star: hasStar(vs.Query.GetSelectStmt())}
	for _, n := range vs.Aliases {
		v.Columns = append(v.Columns, n.GetString_().GetSval())
	}
	return v, true, nil
}

// hasStar reports whether the result columns of s have a *.
func hasStar(s *pg_query.SelectStmt) bool {
	if s.Larg != nil {
		return hasStar(s.Larg) || hasStar(s.Rarg)
	}
	for _, n := range s.TargetList {
		if cr := n.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return true
		}
	}
	return false
}

// deparseQuery is query as PostgreSQL's parser would read it back,
// unless it holds what would end the comment it is kept in.
func deparseQuery(query *pg_query.Node, version int32) (string, bool) {
	text, err := pg_query.Deparse(&pg_query.ParseResult{Version: version, Stmts: []*pg_query.RawStmt{{Stmt: query}}})
	if err != nil || strings.Contains(text, pgDefClose) {
		return "", false
	}
	return text, true
}

// ViewSQL is the SQLite statement that makes view v, whose query's
// columns are named query, with the columns names: its definition rides
// along in a comment, as an index's does. A query with a * is read as a
// subquery by its columns' names, if they differ, so that a column added
// to a table later stays out of the view, as in PostgreSQL (SQLite
// expands a view's * each time it reads it).
//
// The definition kept is the query with the view's column names, as
// pg_get_viewdef gives it (pg_dump makes the view again from it alone):
// its result columns renamed, or, for a * read as a subquery, that
// subquery's columns named.
func ViewSQL(v *View, query, names []string) string {
	q, def := v.Query, v.Definition
	switch {
	case v.Star && !hasDuplicates(query):
		q = "SELECT " + quoteIdents(query) + " FROM (" + v.Query + ")"
		def = "SELECT " + renamedList(query, names) + " FROM (" + def + ") " + quoteIdent(v.Name)
	case !v.Star && !slices.Equal(query, names):
		def = renameResults(def, names)
	}
	return "CREATE VIEW " + quoteIdent(v.Name) + " (" + quoteIdents(names) + ") AS " + q + " " + pgDefOpen + def + pgDefClose
}

// renamedList is the select list of the columns query named names.
func renamedList(query, names []string) string {
	items := make([]string, len(query))
	for i, q := range query {
		items[i] = quoteIdent(q)
		if names[i] != q {
			items[i] += " AS " + quoteIdent(names[i])
		}
	}
	return strings.Join(items, ", ")
}

// renameResults gives the result columns of def, a query without a * in
// its result, the names names (those of a set operation's first operand).
func renameResults(def string, names []string) string {
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return def
	}
	s := tree.Stmts[0].Stmt.GetSelectStmt()
	for s.Larg != nil {
		s = s.Larg
	}
	if len(s.ValuesLists) > 0 || len(s.TargetList) != len(names) {
		return def
	}
	for i, n := range s.TargetList {
		if rt := n.GetResTarget(); rt.Name != "" || figureColname(rt.Val) != names[i] {
			rt.Name = names[i]
		}
	}
	out, err := pg_query.Deparse(tree)
	if err != nil || strings.Contains(out, pgDefClose) {
		return def
	}
	return out
}

func quoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}

func hasDuplicates(names []string) bool {
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			return true
		}
	}
	return false
}

// ViewDefinition returns the PostgreSQL definition of the view made by
// sqlite, a view's statement in sqlite_schema (ViewSQL). The engine
// refuses renames of what a view reads, so it stays the view's.
func ViewDefinition(sqlite string) (string, bool) {
	at := strings.LastIndex(sqlite, " "+pgDefOpen)
	if at < 0 || !strings.HasSuffix(sqlite, pgDefClose) {
		return "", false
	}
	return sqlite[at+1+len(pgDefOpen) : len(sqlite)-len(pgDefClose)], true
}

// ViewRelations returns the relations (of public) the view query def
// reads, without its WITH queries' names: what the view depends on.
func ViewRelations(def string) []string {
	tree, err := pg_query.Parse(def)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	ctes := map[string]bool{}
	var rels []string
	walkMessages(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) {
		switch n := m.Interface().(type) {
		case *pg_query.CommonTableExpr:
			ctes[n.Ctename] = true
		case *pg_query.RangeVar:
			if (n.Schemaname == "" || n.Schemaname == "public") && !slices.Contains(rels, n.Relname) {
				rels = append(rels, n.Relname)
			}
		}
	})
	return slices.DeleteFunc(rels, func(r string) bool { return ctes[r] })
}

// RenamedRelation returns the table or view sql renames, or renames a
// column of (ALTER TABLE ... RENAME [COLUMN]); ok is false for any other
// statement.
func RenamedRelation(sql string) (string, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	rs := tree.Stmts[0].Stmt.GetRenameStmt()
	if rs == nil || rs.Relation == nil {
		return "", false
	}
	switch rs.RenameType {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_COLUMN:
		return rs.Relation.Relname, true
	}
	return "", false
}
