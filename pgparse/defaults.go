package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// Column defaults: printed for SQLite when a table is made or altered, and
// written back as PostgreSQL writes them for the catalogs.

// DefaultToSQLite prints a column default (the expression after DEFAULT)
// for SQLite, converted to kind, the kind of type of the column (CastKind;
// "" for none), as PostgreSQL converts a default to its column's type. A
// constant, a SQL value function (CURRENT_TIMESTAMP), a nextval call and
// a default printed already are returned unchanged: SQLite takes them as
// they are, and printing them again must change nothing.
func DefaultToSQLite(expr, kind string) (string, error) {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil {
		return "", parseError(err)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if len(tree.Stmts) != 1 || sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil {
		return "", sqlerr.New(sqlerr.SyntaxError, "a column default must be one expression")
	}
	e := sel.TargetList[0].GetResTarget().Val
	if e.GetAConst() != nil || e.GetSqlvalueFunction() != nil {
		return expr, nil
	}
	if f := e.GetFuncCall(); f != nil && functionName(f.Funcname) == "nextval" && len(f.Args) == 1 {
		// nextval('s'::regclass), as pg_dump and PostgreSQL's own
		// SERIAL write it: the sequence's name.
		if tc := f.Args[0].GetTypeCast(); tc != nil && typeName(tc.TypeName) == "regclass" && tc.Arg.GetAConst().GetSval() != nil {
			name := tc.Arg.GetAConst().GetSval().GetSval()
			return "(nextval('" + strings.ReplaceAll(name, "'", "''") + "'))", nil
		}
	}
	if f := e.GetFuncCall(); f != nil && (functionName(f.Funcname) == "nextval" || functionName(f.Funcname) == "pg_cast") {
		if strings.HasPrefix(strings.TrimSpace(expr), "(") {
			return expr, nil
		}
		return "(" + strings.TrimSpace(expr) + ")", nil // SQLite takes a call only in parentheses
	}
	p := &printer{}
	if kind != "" {
		p.w("pg_cast(")
	}
	p.expr(e)
	if kind != "" {
		p.w(", '", kind, "')")
	}
	if p.err != nil {
		return "", p.err
	}
	return "(" + p.b.String() + ")", nil
}

// DefaultForCatalog is a column default as DefaultToSQLite printed it,
// written again as PostgreSQL writes defaults (pg_get_expr): the
// conversion to the column's type left out, pg_cast(x, 'kind') as
// x::kind. Another expression is returned as it is.
func DefaultForCatalog(expr string) string { return exprForCatalog(expr, true) }

// pgCastCall reads pg_cast(a, 'kind').
func pgCastCall(n *pg_query.Node) (*pg_query.Node, string, bool) {
	f := n.GetFuncCall()
	if f == nil || functionName(f.Funcname) != "pg_cast" || len(f.Args) < 2 || f.Args[1].GetAConst().GetSval() == nil {
		return nil, "", false
	}
	return f.Args[0], f.Args[1].GetAConst().GetSval().GetSval(), true
}

// DefaultString returns the text of a column default that is a string
// constant ('5', 'now', E'x'), which PostgreSQL converts to the column's
// type when the default is made; ok is false for any other expression.
func DefaultString(expr string) (text string, ok bool) {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return "", false
	}
	c := sel.TargetList[0].GetResTarget().GetVal().GetAConst()
	if c == nil || c.GetSval() == nil {
		return "", false
	}
	return c.GetSval().GetSval(), true
}
