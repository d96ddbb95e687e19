package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Result column names as PostgreSQL gives them (FigureColname in its
// parse_target.c).

// figureColname names an unnamed target the way PostgreSQL does
// (FigureColname in its parse_target.c): "?column?" when nothing names it.
func figureColname(n *pg_query.Node) string {
	if name, _ := figureColnameStrength(n); name != "" {
		return name
	}
	return "?column?"
}

// figureColnameStrength returns a name and how strongly the expression
// gives it (2: its own name, 1: a type's or "case", 0: none).
func figureColnameStrength(n *pg_query.Node) (string, int) {
	lastString := func(nodes []*pg_query.Node) string {
		name := ""
		for _, f := range nodes {
			if s := f.GetString_(); s != nil {
				name = s.Sval
			}
		}
		return name
	}
	switch {
	case n == nil:
		return "", 0
	case n.GetColumnRef() != nil:
		if name := lastString(n.GetColumnRef().Fields); name != "" {
			return name, 2
		}
	case n.GetAIndirection() != nil:
		if name := lastString(n.GetAIndirection().Indirection); name != "" {
			return name, 2
		}
		return figureColnameStrength(n.GetAIndirection().Arg)
	case n.GetFuncCall() != nil:
		return lastString(n.GetFuncCall().Funcname), 2
	case n.GetAExpr() != nil:
		if n.GetAExpr().Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		name, strength := figureColnameStrength(tc.Arg)
		if strength <= 1 && tc.TypeName != nil {
			if t := lastString(tc.TypeName.Names); t != "" {
				return t, 1
			}
		}
		return name, strength
	case n.GetCollateClause() != nil:
		return figureColnameStrength(n.GetCollateClause().Arg)
	case n.GetGroupingFunc() != nil:
		return "grouping", 2
	case n.GetSubLink() != nil:
		sl := n.GetSubLink()
		switch sl.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg_query.SubLinkType_EXPR_SUBLINK:
			// The subquery's first column's name, as PostgreSQL names it
			// once the subquery is analysed: a set operation's is its
			// first operand's, a VALUES list's column1.
			sel := sl.Subselect.GetSelectStmt()
			for sel != nil && sel.Larg != nil {
				sel = sel.Larg
			}
			if sel != nil && len(sel.ValuesLists) > 0 {
				return "column1", 2
			}
			if sel != nil && len(sel.TargetList) > 0 {
				rt := sel.TargetList[0].GetResTarget()
				if rt.Name != "" {
					return rt.Name, 2
				}
				return figureColname(rt.Val), 2
			}
		}
	case n.GetCaseExpr() != nil:
		if name, strength := figureColnameStrength(n.GetCaseExpr().Defresult); strength > 1 {
			return name, strength // CASE ... ELSE b END is named b
		}
		return "case", 1
	case n.GetAArrayExpr() != nil:
		return "array", 2
	case n.GetRowExpr() != nil:
		return "row", 2
	case n.GetCoalesceExpr() != nil:
		return "coalesce", 2
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().Op == pg_query.MinMaxOp_IS_GREATEST {
			return "greatest", 2
		}
		return "least", 2
	case n.GetSqlvalueFunction() != nil:
		return sqlValueName(n.GetSqlvalueFunction().Op), 2
	case n.GetXmlExpr() != nil:
		if op := n.GetXmlExpr().Op; op != pg_query.XmlExprOp_IS_DOCUMENT {
			return strings.TrimPrefix(strings.ToLower(op.String()), "is_"), 2
		}
	case n.GetXmlSerialize() != nil:
		return "xmlserialize", 2
	}
	return "", 0
}
