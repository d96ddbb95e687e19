package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"certa/sqlerr"
)

// CheckToSQLite translates the condition of a CHECK constraint, as
// PostgreSQL reads it, to SQLite's SQL (casts, operators and functions as
// the printer writes them for statements).
func CheckToSQLite(cond string) (string, error) {
	tree, err := pg_query.Parse("SELECT " + cond)
	if err != nil {
		return "", parseError(err)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if len(tree.Stmts) != 1 || sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil {
		return "", sqlerr.New(sqlerr.SyntaxError, "a check constraint must be one expression")
	}
	p := &printer{}
	p.expr(sel.TargetList[0].GetResTarget().Val)
	if p.err != nil {
		return "", p.err
	}
	return p.b.String(), nil
}

// CheckForCatalog is a CHECK condition as CheckToSQLite printed it,
// written again as PostgreSQL writes it (pg_get_constraintdef): each
// pg_cast(x, 'kind') as x::kind. Another condition is returned as it is.
func CheckForCatalog(cond string) string { return exprForCatalog(cond, false) }

// exprForCatalog writes an expression printed for SQLite as PostgreSQL
// writes it, without its outermost pg_cast if assignment (a default's
// conversion to its column's type).
func exprForCatalog(expr string, assignment bool) string {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return expr
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 {
		return expr
	}
	rt := sel.TargetList[0].GetResTarget()
	if a, _, ok := pgCastCall(rt.Val); ok && assignment {
		rt.Val = a
	}
	rt.Val = castsForCatalog(rt.Val)
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return expr
	}
	return strings.TrimPrefix(out, "SELECT ")
}

// catalogOperators are the operators the SQLite printer writes as
// functions (pg_add(a, b) for a + b), which catalogs show as written.
var catalogOperators = map[string]string{"pg_add": "+", "pg_sub": "-", "pg_mul": "*", "pg_div": "/", "pg_mod": "%"}

// castsForCatalog rewrites pg_cast(x, 'kind') as x::kind, and the
// functions of catalogOperators as their operators, throughout the
// expressions a condition is usually made of.
func castsForCatalog(n *pg_query.Node) *pg_query.Node {
	if n == nil {
		return nil
	}
	if a, kind, ok := pgCastCall(n); ok {
		names := []*pg_query.Node{pg_query.MakeStrNode(kind)}
		if standardTypes[kind] {
			// Printed as SQL names them (numeric, not "numeric").
			names = append([]*pg_query.Node{pg_query.MakeStrNode("pg_catalog")}, names...)
		}
		return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg: castsForCatalog(a), TypeName: &pg_query.TypeName{Names: names, Typemod: -1}}}}
	}
	if f := n.GetFuncCall(); f != nil && len(f.Args) == 2 && catalogOperators[functionName(f.Funcname)] != "" {
		return &pg_query.Node{Node: &pg_query.Node_AExpr{AExpr: &pg_query.A_Expr{Kind: pg_query.A_Expr_Kind_AEXPR_OP,
			Name:  []*pg_query.Node{pg_query.MakeStrNode(catalogOperators[functionName(f.Funcname)])},
			Lexpr: castsForCatalog(f.Args[0]), Rexpr: castsForCatalog(f.Args[1])}}}
	}
	all := func(ns []*pg_query.Node) {
		for i := range ns {
			ns[i] = castsForCatalog(ns[i])
		}
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_AExpr:
		x.AExpr.Lexpr, x.AExpr.Rexpr = castsForCatalog(x.AExpr.Lexpr), castsForCatalog(x.AExpr.Rexpr)
	case *pg_query.Node_BoolExpr:
		all(x.BoolExpr.Args)
	case *pg_query.Node_FuncCall:
		all(x.FuncCall.Args)
	case *pg_query.Node_NullTest:
		x.NullTest.Arg = castsForCatalog(x.NullTest.Arg)
	case *pg_query.Node_TypeCast:
		x.TypeCast.Arg = castsForCatalog(x.TypeCast.Arg)
	case *pg_query.Node_List:
		all(x.List.Items)
	case *pg_query.Node_CoalesceExpr:
		all(x.CoalesceExpr.Args)
	case *pg_query.Node_CaseExpr:
		x.CaseExpr.Arg, x.CaseExpr.Defresult = castsForCatalog(x.CaseExpr.Arg), castsForCatalog(x.CaseExpr.Defresult)
		for _, w := range x.CaseExpr.Args {
			if cw := w.GetCaseWhen(); cw != nil {
				cw.Expr, cw.Result = castsForCatalog(cw.Expr), castsForCatalog(cw.Result)
			}
		}
	}
	return n
}

// standardTypes are the types PostgreSQL's deparser prints by their SQL
// names when qualified with pg_catalog.
var standardTypes = map[string]bool{"numeric": true, "bool": true, "int2": true, "int4": true, "int8": true,
	"float4": true, "float8": true, "timestamp": true, "timestamptz": true, "time": true, "timetz": true,
	"interval": true, "bpchar": true, "varchar": true}

// CheckBaseName is the name PostgreSQL gives a CHECK constraint of table
// that has none, before a number makes it unique: table_column_check
// where condition (PostgreSQL's text or as printed for SQLite) refers to
// one column alone, whether it was written on the column or on the
// table, else table_check.
func CheckBaseName(table, condition string) string {
	tree, err := pg_query.Parse("SELECT " + condition)
	if err != nil || len(tree.Stmts) != 1 {
		return table + "_check"
	}
	columns := map[string]bool{}
	var last string
	walkMessages(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) {
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
			if name := lastName(cr.Fields); name != "" {
				columns[name], last = true, name
			}
		}
	})
	if len(columns) == 1 {
		return table + "_" + last + "_check"
	}
	return table + "_check"
}
