package pgparse

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// SELECT DISTINCT ON (e, ...) targets ... ORDER BY o, ...: the first row
// of each group of rows equal on e, in the order o. SQLite has no such
// clause; the printer writes the query as a subquery that numbers the
// rows of each group in that order (row_number() OVER (PARTITION BY e
// ORDER BY o)), keeps the first of each, and sorts them by o:
//
//	SELECT "certa_d1" AS name1, ... FROM (SELECT target1 AS "certa_d1", ...,
//	  row_number() OVER (...) AS "certa_rn", o1 AS "certa_o1", ... FROM ...)
//	WHERE "certa_rn" = 1 ORDER BY "certa_o1", ... LIMIT ...
//
// An ORDER BY item that names an output column or its position is that
// target's expression. A * among the targets is refused (the outer query
// must name each column).

// distinctOn writes s, a SELECT DISTINCT ON, as described above.
func (p *printer) distinctOn(s *pg_query.SelectStmt) {
	names := make([]string, len(s.TargetList))
	exprs := make([]*pg_query.Node, len(s.TargetList))
	for i, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil || isStar(rt.Val) {
			p.refuse("SELECT DISTINCT ON with *")
			return
		}
		names[i], exprs[i] = rt.Name, rt.Val
		if names[i] == "" {
			names[i] = figureColname(rt.Val)
			if cr := rt.Val.GetColumnRef(); cr != nil {
				if f := cr.Fields[len(cr.Fields)-1].GetString_(); f != nil {
					names[i] = f.Sval
				}
			}
		}
	}
	// An ORDER BY item as the inner query can compute it.
	sortExpr := func(n *pg_query.Node) *pg_query.Node {
		if c := n.GetAConst(); c != nil && c.GetIval() != nil {
			if k := int(c.GetIval().Ival); k >= 1 && k <= len(exprs) {
				return exprs[k-1]
			}
		}
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && cr.Fields[0].GetString_() != nil {
			for i, rt := range s.TargetList {
				if name := rt.GetResTarget().Name; name != "" && name == cr.Fields[0].GetString_().Sval {
					return exprs[i]
				}
			}
		}
		return n
	}
	var order []*pg_query.Node
	for _, n := range s.SortClause {
		order = append(order, sortByOn(n.GetSortBy(), sortExpr(n.GetSortBy().Node)))
	}
	var partition []*pg_query.Node
	for _, n := range s.DistinctClause {
		partition = append(partition, sortExpr(n))
	}
	// The query without DISTINCT ON, ORDER BY, LIMIT and WITH (written
	// by the caller, outside), and other targets.
	inner := pg_query.SelectStmt{FromClause: s.FromClause, WhereClause: s.WhereClause, GroupClause: s.GroupClause,
		GroupDistinct: s.GroupDistinct, HavingClause: s.HavingClause, WindowClause: s.WindowClause,
		IntoClause: s.IntoClause, LockingClause: s.LockingClause}
	target := func(name string, val *pg_query.Node) {
		inner.TargetList = append(inner.TargetList, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Name: name, Val: val}}})
	}
	for i, e := range exprs {
		target("certa_d"+strconv.Itoa(i+1), e)
	}
	target("certa_rn", &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode("row_number")},
		Over:     &pg_query.WindowDef{PartitionClause: partition, OrderClause: order},
	}}})
	for i, o := range order {
		target("certa_o"+strconv.Itoa(i+1), o.GetSortBy().Node)
	}
	p.w("SELECT ")
	for i, name := range names {
		if i > 0 {
			p.w(", ")
		}
		p.ident("certa_d" + strconv.Itoa(i+1))
		p.w(" AS ")
		p.ident(name)
	}
	top := p.cat != nil && p.topColumns == nil
	p.w(" FROM (")
	p.selectStmt(&inner, false)
	p.w(") WHERE \"certa_rn\" = 1")
	if top && len(p.topColumns) >= len(names) {
		// A catalog query's result columns are the inner query's
		// first ones (catalogTargets), under the names asked for.
		p.topColumns = p.topColumns[:len(names)]
		for i := range names {
			p.topColumns[i].Name = names[i]
		}
	}
	if len(order) > 0 {
		p.w(" ORDER BY ")
		for i, o := range order {
			if i > 0 {
				p.w(", ")
			}
			p.sortBy(sortByOn(o.GetSortBy(), &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{
				Fields: []*pg_query.Node{pg_query.MakeStrNode("certa_o" + strconv.Itoa(i+1))}}}}))
		}
	}
	p.limit(s)
}

// sortByOn is ORDER BY item sb over another expression.
func sortByOn(sb *pg_query.SortBy, expr *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_SortBy{SortBy: &pg_query.SortBy{
		Node: expr, SortbyDir: sb.SortbyDir, SortbyNulls: sb.SortbyNulls, UseOp: sb.UseOp, Location: sb.Location}}}
}

// isStar reports whether a target is * or t.*.
func isStar(n *pg_query.Node) bool {
	cr := n.GetColumnRef()
	return cr != nil && len(cr.Fields) > 0 && cr.Fields[len(cr.Fields)-1].GetAStar() != nil
}
