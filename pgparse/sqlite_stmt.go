package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
	"slices"
	"strconv"

	"certa/sqlerr"
)

// Statements and their clauses, printed for SQLite.

// selectStmt writes a SELECT, VALUES or set operation. top is false for
// an operand of a set operation, which SQLite takes without parentheses
// (and so without its own ORDER BY or LIMIT).
func (p *printer) selectStmt(s *pg_query.SelectStmt, top bool) {
	if s.IntoClause != nil {
		p.refuse("SELECT INTO")
	}
	p.with(s.WithClause)
	switch {
	case s.Op != pg_query.SetOperation_SETOP_NONE && s.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED:
		p.setOperationConstants(s)
		p.setOperand(s.Larg)
		switch s.Op {
		case pg_query.SetOperation_SETOP_UNION:
			p.w(" UNION ")
		case pg_query.SetOperation_SETOP_INTERSECT:
			p.w(" INTERSECT ")
		case pg_query.SetOperation_SETOP_EXCEPT:
			p.w(" EXCEPT ")
		}
		if s.All {
			if s.Op != pg_query.SetOperation_SETOP_UNION {
				p.refuse("INTERSECT ALL and EXCEPT ALL")
			}
			p.w("ALL ")
		}
		p.setOperand(s.Rarg)
	case len(s.ValuesLists) > 0:
		p.w("VALUES ")
		p.list(s.ValuesLists, func(n *pg_query.Node) {
			p.w("(")
			p.list(n.GetList().Items, p.expr)
			p.w(")")
		})
	default:
		srf := ""
		if p.cat != nil {
			p.pushScope(s.FromClause)
			defer p.popScope()
			srf = p.targetSRFs(s.TargetList)
		}
		if s.DistinctClause != nil && (len(s.DistinctClause) > 1 || s.DistinctClause[0].Node != nil) {
			p.distinctOn(s) // distincton.go
			return
		}
		if p.columnTypes {
			p.pushFromScope(s.FromClause)
			defer p.popFromScope()
			p.checkGrouping(s)
		}
		p.w("SELECT ")
		if s.DistinctClause != nil {
			p.w("DISTINCT ")
		}
		if p.cat != nil {
			p.catalogTargets(s.TargetList, p.nested == 0)
		} else {
			p.targets(s.TargetList, len(s.GroupClause) == 0 && s.HavingClause != nil && !anyAggregate(s.TargetList))
		}
		if len(s.FromClause) > 0 {
			p.w(" FROM ")
			p.list(s.FromClause, p.fromItem)
		}
		if srf != "" {
			if len(s.FromClause) > 0 {
				p.w(", ")
			} else {
				p.w(" FROM ")
			}
			p.w("json_each(", srf, ") AS \"certa_srf\"")
		}
		if len(s.GroupClause) == 0 && s.HavingClause != nil && !anyAggregate(s.TargetList) && !anyAggregate([]*pg_query.Node{s.HavingClause}) &&
			readsNoColumn(append([]*pg_query.Node{s.HavingClause}, s.TargetList...)) {
			// No aggregate needs a row: PostgreSQL reads none (nor runs
			// WHERE), and the one group is there or not by HAVING alone.
			p.w(" WHERE 0")
		} else {
			p.where(s.WhereClause)
		}
		p.checkPositions("GROUP BY", s.GroupClause, s.TargetList)
		if len(s.GroupClause) > 0 {
			if s.GroupDistinct {
				p.refuse("GROUP BY DISTINCT")
			}
			p.w(" GROUP BY ")
			p.list(s.GroupClause, p.groupItem)
		}
		if s.HavingClause != nil {
			p.w(" HAVING ")
			p.expr(s.HavingClause)
		}
		if len(s.WindowClause) > 0 {
			p.w(" WINDOW ")
			p.list(s.WindowClause, func(n *pg_query.Node) {
				wd := n.GetWindowDef()
				p.ident(wd.Name)
				p.w(" AS ")
				p.windowSpec(wd)
			})
		}
	}
	if !top && (len(s.SortClause) > 0 || s.LimitCount != nil || s.LimitOffset != nil) {
		p.refuse("ORDER BY or LIMIT inside a set operation's operand")
	}
	if (s.Op == pg_query.SetOperation_SETOP_NONE || s.Op == pg_query.SetOperation_SET_OPERATION_UNDEFINED) && len(s.ValuesLists) == 0 {
		var sorted []*pg_query.Node
		for _, sb := range s.SortClause {
			sorted = append(sorted, sb.GetSortBy().Node)
		}
		p.checkPositions("ORDER BY", sorted, s.TargetList)
		if p.cat == nil {
			p.outputPositions(s.SortClause, s.TargetList)
		}
	}
	p.orderBy(s.SortClause)
	p.limit(s)
}

// outputPositions notes in p.sortPositions each item of sort that is a
// bare name of exactly one output column of targets, with that column's
// position, which sortBy writes instead. PostgreSQL reads such a name as
// the output column first, also where it is no alias (SELECT x.b ...
// ORDER BY b); SQLite only an alias, and finds b ambiguous where two
// tables have one.
func (p *printer) outputPositions(sort, targets []*pg_query.Node) {
	names := make([]string, len(targets))
	for i, t := range targets {
		rt := t.GetResTarget()
		if rt == nil {
			return
		}
		names[i] = rt.Name
		if cr := rt.Val.GetColumnRef(); cr != nil && rt.Name == "" {
			last := cr.Fields[len(cr.Fields)-1]
			if last.GetAStar() != nil {
				return // the names a * stands for are not known here
			}
			names[i] = last.GetString_().GetSval()
		}
	}
	for _, n := range sort {
		sb := n.GetSortBy()
		cr := sb.GetNode().GetColumnRef()
		if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetString_() == nil {
			continue
		}
		at, count := 0, 0
		for j, name := range names {
			if name == cr.Fields[0].GetString_().Sval {
				at, count = j+1, count+1
			}
		}
		if count == 1 { // else an input column, or PostgreSQL's error is SQLite's
			if p.sortPositions == nil {
				p.sortPositions = map[*pg_query.SortBy]int{}
			}
			p.sortPositions[sb] = at
		}
	}
}

// setOperationConstants notes the string constants of a set operation's
// column whose other operands are numbers (numberConstant): PostgreSQL
// reads them as numbers of the column's type, the widest of theirs, and
// fails those that are none ('3.4'::numeric UNION SELECT 'foo'), where
// SQLite would mix text with the numbers. A column with an operand of
// another or an unknown kind (a table's column) is left as it is.
func (p *printer) setOperationConstants(s *pg_query.SelectStmt) {
	var operands [][]*pg_query.Node // each operand's result expressions
	var walk func(s *pg_query.SelectStmt) bool
	walk = func(s *pg_query.SelectStmt) bool {
		switch {
		case s.Op != pg_query.SetOperation_SETOP_NONE && s.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED:
			return walk(s.Larg) && walk(s.Rarg)
		case len(s.ValuesLists) > 0:
			return false
		}
		var exprs []*pg_query.Node
		for _, t := range s.TargetList {
			exprs = append(exprs, t.GetResTarget().Val)
		}
		operands = append(operands, exprs)
		return true
	}
	if !walk(s) {
		return
	}
	for i := range operands[0] {
		kind, rank := "", -1
		var consts []*pg_query.A_Const
		for _, exprs := range operands {
			if i >= len(exprs) {
				return
			}
			if c := exprs[i].GetAConst(); c != nil && !c.Isnull && c.GetSval() != nil {
				consts = append(consts, c)
				continue
			}
			k, _ := valueKind(exprs[i])
			r := slices.Index(numericKinds, k)
			if r < 0 {
				kind = "other"
				break
			}
			if r > rank {
				kind, rank = k, r
			}
		}
		if rank < 0 || kind == "other" {
			continue
		}
		if p.numberConsts == nil {
			p.numberConsts = map[*pg_query.A_Const]string{}
		}
		for _, c := range consts {
			p.numberConsts[c] = kind
		}
	}
}

// setOperand writes one side of UNION, INTERSECT or EXCEPT.
func (p *printer) setOperand(s *pg_query.SelectStmt) {
	if s.WithClause != nil {
		p.refuse("WITH inside a set operation's operand")
	}
	if s.Op != pg_query.SetOperation_SETOP_NONE && s.Op != pg_query.SetOperation_SET_OPERATION_UNDEFINED {
		// SQLite applies set operations left to right, as PostgreSQL
		// does for UNION and EXCEPT; nesting the other way needs a
		// subquery.
		p.w("SELECT * FROM (")
		p.selectStmt(s, true)
		p.w(")")
		return
	}
	p.selectStmt(s, false)
}

func (p *printer) with(w *pg_query.WithClause) {
	if w == nil {
		return
	}
	p.w("WITH ")
	if w.Recursive {
		p.w("RECURSIVE ")
	}
	if p.cat != nil {
		p.noteCTEs(w)
	}
	p.list(w.Ctes, func(n *pg_query.Node) {
		cte := n.GetCommonTableExpr()
		p.deriveName(cte.Ctename)
		if cte.SearchClause != nil || cte.CycleClause != nil {
			p.refuse("SEARCH and CYCLE clauses of WITH")
		}
		if w.Recursive {
			p.checkRecursion(cte)
		}
		p.ident(cte.Ctename)
		if len(cte.Aliascolnames) > 0 {
			p.w("(")
			p.list(cte.Aliascolnames, func(c *pg_query.Node) { p.ident(c.GetString_().GetSval()) })
			p.w(")")
		}
		p.w(" AS ")
		switch {
		case cte.Ctematerialized == pg_query.CTEMaterialize_CTEMaterializeAlways:
			p.w("MATERIALIZED ")
		case cte.Ctematerialized == pg_query.CTEMaterialize_CTEMaterializeNever:
			p.w("NOT MATERIALIZED ")
		case references(cte.Ctequery, cte.Ctename) == 0 && references(p.root, cte.Ctename) > 1:
			// PostgreSQL evaluates a query named more than once once:
			// random() in it gives each reference the same rows.
			// SQLite could run it for each reference. (Not a recursive
			// one, which names itself: one that streams rows until it
			// is stopped would never end.)
			p.w("MATERIALIZED ")
		}
		p.w("(")
		p.stmt(cte.Ctequery)
		p.w(")")
	})
	p.w(" ")
}

// checkRecursion refuses what PostgreSQL refuses in a recursive query
// (one that names itself), in its words: SQLite runs ORDER BY and LIMIT
// there as a queue, which may never end.
func (p *printer) checkRecursion(cte *pg_query.CommonTableExpr) {
	s := cte.Ctequery.GetSelectStmt()
	if s == nil || s.Op == pg_query.SetOperation_SETOP_NONE {
		return
	}
	recursive := false
	walkMessages(s.ProtoReflect(), func(m protoreflect.Message) {
		if rv, ok := m.Interface().(*pg_query.RangeVar); ok && rv.Schemaname == "" && rv.Relname == cte.Ctename {
			recursive = true
		}
	})
	var what string
	switch {
	case !recursive:
		return
	case len(s.SortClause) > 0:
		what = "ORDER BY"
	case s.LimitOffset != nil:
		what = "OFFSET"
	case s.LimitCount != nil:
		what = "LIMIT"
	case len(s.LockingClause) > 0:
		what = "FOR UPDATE/SHARE"
	default:
		return
	}
	p.fail(sqlerr.New(sqlerr.FeatureNotSupported, "%s in a recursive query is not implemented", what))
}

// stmt writes a statement nested in another (a WITH query).
func (p *printer) stmt(n *pg_query.Node) {
	p.nested++
	defer func() { p.nested-- }()
	switch s := n.Node.(type) {
	case *pg_query.Node_SelectStmt:
		p.selectStmt(s.SelectStmt, true)
	case *pg_query.Node_InsertStmt:
		p.insertStmt(s.InsertStmt)
	case *pg_query.Node_UpdateStmt:
		p.updateStmt(s.UpdateStmt)
	case *pg_query.Node_DeleteStmt:
		p.deleteStmt(s.DeleteStmt)
	default:
		p.refuse("this statement inside WITH")
	}
}

func (p *printer) where(n *pg_query.Node) {
	if n != nil {
		p.w(" WHERE ")
		p.expr(n)
	}
}

// usingOperator is the operator of ORDER BY ... USING op, without a
// pg_catalog qualifier ("" if it has another).
func usingOperator(op []*pg_query.Node) string {
	switch {
	case len(op) == 1:
		return op[0].GetString_().GetSval()
	case len(op) == 2 && op[0].GetString_().GetSval() == "pg_catalog":
		return op[1].GetString_().GetSval()
	}
	return ""
}

// checkPositions fails as PostgreSQL does where a GROUP BY or ORDER BY
// (clause) item is a number that is no position of targets: SQLite says
// which term, PostgreSQL which number, and where. Targets with a * are
// not counted here.
func (p *printer) checkPositions(clause string, items, targets []*pg_query.Node) {
	for _, t := range targets {
		if cr := t.GetResTarget().GetVal().GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return
		}
	}
	for _, n := range items {
		c := n.GetAConst()
		if c == nil || c.GetIval() == nil {
			continue
		}
		p.fixed = true // a position: a template would take another number as one
		if i := c.GetIval().Ival; i < 1 || int(i) > len(targets) {
			e := sqlerr.New(sqlerr.InvalidColumnReference, "%s position %d is not in select list", clause, i)
			e.Position = p.position(c.Location)
			p.fail(e)
			return
		}
	}
}

func (p *printer) groupItem(n *pg_query.Node) {
	if n.GetGroupingSet() != nil {
		p.refuse("GROUPING SETS, ROLLUP and CUBE")
		return
	}
	p.expr(n)
}

func (p *printer) orderBy(sort []*pg_query.Node) {
	if len(sort) == 0 {
		return
	}
	p.w(" ORDER BY ")
	p.list(sort, p.sortBy)
}

func (p *printer) sortBy(n *pg_query.Node) {
	sb := n.GetSortBy()
	if at, ok := p.sortPositions[sb]; ok {
		p.w(strconv.Itoa(at))
	} else {
		p.expr(sb.Node)
	}
	desc := false
	switch sb.SortbyDir {
	case pg_query.SortByDir_SORTBY_DESC:
		p.w(" DESC")
		desc = true
	case pg_query.SortByDir_SORTBY_USING:
		// USING < and > are the ascending and descending order of the
		// types' default B-tree order, which the engine's types sort by.
		switch usingOperator(sb.UseOp) {
		case "<":
		case ">":
			p.w(" DESC")
			desc = true
		default:
			p.refuse("ORDER BY ... USING an operator other than < or >")
		}
	}
	// PostgreSQL sorts NULLs as larger than any value, SQLite as smaller:
	// say where they go whenever PostgreSQL's default is meant.
	switch {
	case sb.SortbyNulls == pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		p.w(" NULLS FIRST")
	case sb.SortbyNulls == pg_query.SortByNulls_SORTBY_NULLS_LAST:
		p.w(" NULLS LAST")
	case desc:
		p.w(" NULLS FIRST")
	default:
		p.w(" NULLS LAST")
	}
}

func (p *printer) limit(s *pg_query.SelectStmt) {
	if s.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		p.refuse("FETCH FIRST ... WITH TIES")
	}
	count := s.LimitCount
	if count != nil {
		if c := count.GetAConst(); c != nil && c.Isnull { // LIMIT ALL, LIMIT NULL
			count = nil
		}
	}
	p.hintKind(count, "int8")
	p.hintKind(s.LimitOffset, "int8")
	switch {
	case count != nil:
		p.w(" LIMIT ")
		p.expr(count)
	case s.LimitOffset != nil:
		p.w(" LIMIT -1")
	}
	if s.LimitOffset != nil {
		p.w(" OFFSET ")
		p.expr(s.LimitOffset)
	}
}

// targets writes a SELECT's or RETURNING's target list. Every target that
// is not a plain column is named as PostgreSQL names it (colname.go).
//
// aggregate makes the query one SQLite aggregates, as PostgreSQL does a
// query with HAVING and no GROUP BY (one group, also of no rows): SQLite
// refuses HAVING where no target aggregates, so the first target is
// printed as coalesce(target, min(NULL)), the same value.
func (p *printer) targets(list []*pg_query.Node, aggregate bool) {
	if len(list) == 0 {
		if aggregate {
			p.w("min(NULL)")
			return
		}
		p.w("NULL") // SELECT FROM t: a column SQLite needs (SQLite.NoColumns)
		return
	}
	first := true
	p.list(list, func(n *pg_query.Node) {
		rt := n.GetResTarget()
		if rt == nil {
			p.refuse("this target")
			return
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			aggregate = false // PostgreSQL's grouping check refuses it (engine/sqlite/grouping.go)
		}
		if aggregate && first {
			first = false
			p.w("coalesce(")
			p.expr(rt.Val)
			p.w(", min(NULL)) AS ")
			if rt.Name != "" {
				p.ident(rt.Name)
			} else {
				p.ident(figureColname(rt.Val))
			}
			return
		}
		p.expr(rt.Val)
		if rt.Name != "" {
			p.w(" AS ")
			p.ident(rt.Name)
			return
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			return // SQLite names it by its column, as PostgreSQL does
		}
		p.w(" AS ")
		p.ident(figureColname(rt.Val))
	})
}

func (p *printer) fromItem(n *pg_query.Node) {
	switch f := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		rv := f.RangeVar
		if q, ok := p.replaced[rv.Relname]; ok && (rv.Schemaname == "" || rv.Schemaname == "public") && rv.Catalogname == "" {
			p.w("(", q, ")")
			if rv.Alias != nil {
				p.alias(rv.Alias)
			} else {
				p.w(" AS ")
				p.ident(rv.Relname)
			}
			return
		}
		p.rangeVar(rv)
	case *pg_query.Node_JoinExpr:
		p.join(f.JoinExpr)
	case *pg_query.Node_RangeSubselect:
		if targets, ok := lateralSRFs(f.RangeSubselect); ok && p.cat != nil {
			p.w("json_each(", p.srfsOver(targets, f.RangeSubselect.Alias.Aliasname), ") AS ")
			p.ident(f.RangeSubselect.Alias.Aliasname)
			return
		}
		if f.RangeSubselect.Lateral {
			p.refuse("LATERAL")
		}
		p.rangeSubselect(f.RangeSubselect)
	case *pg_query.Node_RangeFunction:
		if p.cat != nil && p.catalogFunctionFrom(f.RangeFunction) {
			return
		}
		p.rangeFunction(f.RangeFunction)
	default:
		p.refuse("this FROM item")
	}
}

// rangeSubselect writes a subquery in FROM. Column names given in its
// alias (AS v(a, b), which SQLAlchemy's inserts of many rows use over
// VALUES) name the columns of a common table expression around it:
// SQLite's aliases name no columns.
func (p *printer) rangeSubselect(rs *pg_query.RangeSubselect) {
	a := rs.Alias
	if sel := rs.Subquery.GetSelectStmt(); sel != nil && a != nil && p.cat == nil {
		if p.subqueryKinds == nil {
			p.subqueryKinds = map[string]map[string]string{}
		}
		p.subqueryKinds[a.Aliasname] = selectKinds(sel, names(a.Colnames))
	}
	if a == nil || len(a.Colnames) == 0 {
		p.w("(")
		p.stmt(rs.Subquery)
		p.w(")")
		p.alias(a)
		return
	}
	cte := "certa_" + a.Aliasname
	p.w("(WITH ")
	p.ident(cte)
	p.w("(")
	p.list(a.Colnames, func(n *pg_query.Node) { p.ident(n.GetString_().GetSval()) })
	p.w(") AS (")
	p.stmt(rs.Subquery)
	p.w(") SELECT * FROM ")
	p.ident(cte)
	p.w(") AS ")
	p.ident(a.Aliasname)
}

// rangeVar writes a table's name. PostgreSQL's public schema is SQLite's
// main database; other schemas are not kept by the embedded engine.
func (p *printer) rangeVar(rv *pg_query.RangeVar) {
	if p.cat != nil {
		p.catalogRangeVar(rv)
		return
	}
	if rv.Catalogname != "" {
		p.refuse("a table name with a database (" + rv.Catalogname + ")")
	}
	switch rv.Schemaname {
	case "", "public":
	default:
		p.fail(undefinedTable(rv.Schemaname + "." + rv.Relname))
	}
	p.noteTable(rv)
	p.ident(rv.Relname)
	p.alias(rv.Alias)
}

func (p *printer) alias(a *pg_query.Alias) {
	if a == nil {
		return
	}
	p.w(" AS ")
	p.ident(a.Aliasname)
	if len(a.Colnames) > 0 && p.cat == nil {
		p.refuse("column names in a table alias")
	}
}

func (p *printer) join(j *pg_query.JoinExpr) {
	if j.Alias != nil || j.JoinUsingAlias != nil {
		p.refuse("an alias of a join")
	}
	p.w("(")
	p.fromItem(j.Larg)
	switch {
	case j.IsNatural:
		p.w(" NATURAL")
	}
	switch j.Jointype {
	case pg_query.JoinType_JOIN_INNER:
		if j.Quals == nil && len(j.UsingClause) == 0 && !j.IsNatural {
			p.w(" CROSS JOIN ")
		} else {
			p.w(" JOIN ")
		}
	case pg_query.JoinType_JOIN_LEFT:
		p.w(" LEFT JOIN ")
	case pg_query.JoinType_JOIN_RIGHT:
		p.w(" RIGHT JOIN ")
	case pg_query.JoinType_JOIN_FULL:
		p.w(" FULL JOIN ")
	default:
		p.refuse("this kind of join")
	}
	p.fromItem(j.Rarg)
	if j.Quals != nil {
		p.w(" ON ")
		p.expr(j.Quals)
	}
	if len(j.UsingClause) > 0 {
		p.w(" USING (")
		p.list(j.UsingClause, func(c *pg_query.Node) { p.ident(c.GetString_().GetSval()) })
		p.w(")")
	}
	p.w(")")
}

func (p *printer) insertStmt(s *pg_query.InsertStmt) {
	p.with(s.WithClause)
	p.w("INSERT INTO ")
	p.rangeVar(s.Relation)
	if len(s.Cols) > 0 {
		p.w(" (")
		named := map[string]bool{}
		p.list(s.Cols, func(n *pg_query.Node) {
			rt := n.GetResTarget()
			if len(rt.Indirection) > 0 {
				p.refuse("assigning to a field or element of a column")
			}
			if named[rt.Name] {
				p.fail(sqlerr.New(sqlerr.DuplicateColumn, "column %q specified more than once", rt.Name))
			}
			named[rt.Name] = true
			p.ident(rt.Name)
		})
		p.w(")")
	}
	if s.Override != pg_query.OverridingKind_OVERRIDING_NOT_SET && s.Override != pg_query.OverridingKind_OVERRIDING_KIND_UNDEFINED {
		p.refuse("OVERRIDING in this statement")
	}
	if s.SelectStmt == nil {
		p.w(" DEFAULT VALUES")
	} else {
		p.w(" ")
		sel := s.SelectStmt.GetSelectStmt()
		for _, row := range sel.ValuesLists {
			for i, v := range row.GetList().Items {
				if v.GetSetToDefault() != nil {
					p.refuse("DEFAULT in this VALUES list")
				}
				col := ""
				if i < len(s.Cols) {
					col = s.Cols[i].GetResTarget().GetName()
				} else if len(s.Cols) > 0 {
					continue
				}
				p.hintTarget(v, s.Relation.Relname, col, i)
			}
		}
		p.upsertKeyCheck(s, sel)
		// SQLite reads "INSERT ... SELECT ... ON CONFLICT" as a join's ON:
		// a WHERE true ends the SELECT, as SQLite's documentation asks.
		if s.OnConflictClause != nil && len(sel.ValuesLists) == 0 && sel.WhereClause == nil && sel.Op == pg_query.SetOperation_SETOP_NONE {
			p.selectStmt(sel, true)
			p.w(" WHERE true")
		} else {
			p.selectStmt(sel, true)
		}
	}
	p.onConflict(s.Relation.Relname, s.OnConflictClause)
	p.returning(s.ReturningList)
}

// upsertKeyCheck has the rows of s, an INSERT of VALUES ... ON CONFLICT
// (columns) DO UPDATE, printed with the engine's check of their conflict
// keys (pg_upsert_key of each row's key values, which returns the last):
// PostgreSQL refuses to update a row a second time in one statement, so
// two rows with one key fail (21000), where SQLite would update the row
// the first inserted. Checked where each key value is a constant or a
// parameter (printed twice, it must not change) and the DO UPDATE has no
// WHERE (which can leave a conflicting row alone).
func (p *printer) upsertKeyCheck(s *pg_query.InsertStmt, sel *pg_query.SelectStmt) {
	oc := s.OnConflictClause
	if oc == nil || oc.Action != pg_query.OnConflictAction_ONCONFLICT_UPDATE || oc.WhereClause != nil ||
		oc.Infer == nil || len(oc.Infer.IndexElems) == 0 || len(sel.ValuesLists) < 2 {
		return
	}
	if len(s.Cols) == 0 {
		// The keys' places are the table's columns' (engine: print again
		// with them listed).
		p.upsertColumnsOf = s.Relation.Relname
		return
	}
	var pos []int
	for _, n := range oc.Infer.IndexElems {
		ie := n.GetIndexElem()
		i := slices.IndexFunc(s.Cols, func(c *pg_query.Node) bool { return c.GetResTarget().GetName() == ie.Name })
		if ie.Expr != nil || i < 0 {
			return
		}
		pos = append(pos, i)
	}
	for _, row := range sel.ValuesLists {
		items := row.GetList().Items
		var keys []*pg_query.Node
		for _, i := range pos {
			if i >= len(items) || !constantOrParam(items[i]) {
				return
			}
			keys = append(keys, items[i])
		}
		if p.upsertKeys == nil {
			p.upsertKeys = map[*pg_query.Node][]*pg_query.Node{}
		}
		// The last key value printed stands for them all.
		p.upsertKeys[items[pos[len(pos)-1]]] = append(keys[:len(keys)-1:len(keys)-1], items[pos[len(pos)-1]])
	}
}

// constantOrParam reports whether n is a constant or a parameter, maybe
// cast.
func constantOrParam(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	if a := n.GetAExpr(); a != nil && a.Lexpr == nil && operator(a.Name) == "-" {
		n = a.Rexpr
	}
	return n.GetAConst() != nil || n.GetParamRef() != nil
}

func (p *printer) onConflict(table string, oc *pg_query.OnConflictClause) {
	if oc == nil {
		return
	}
	p.w(" ON CONFLICT")
	if in := oc.Infer; in != nil {
		if in.Conname != "" {
			p.refuse("ON CONFLICT ON CONSTRAINT")
		}
		if len(in.IndexElems) > 0 {
			p.w(" (")
			p.list(in.IndexElems, func(n *pg_query.Node) {
				ie := n.GetIndexElem()
				if ie.Expr != nil {
					p.expr(ie.Expr)
				} else {
					p.ident(ie.Name)
				}
			})
			p.w(")")
		}
		if in.WhereClause != nil {
			p.where(in.WhereClause)
		}
	}
	switch oc.Action {
	case pg_query.OnConflictAction_ONCONFLICT_NOTHING:
		p.w(" DO NOTHING")
	case pg_query.OnConflictAction_ONCONFLICT_UPDATE:
		p.w(" DO UPDATE SET ")
		p.setList(table, oc.TargetList)
		p.where(oc.WhereClause)
	}
}

func (p *printer) returning(list []*pg_query.Node) {
	if len(list) > 0 {
		p.w(" RETURNING ")
		p.targets(list, false)
	}
}

func (p *printer) updateStmt(s *pg_query.UpdateStmt) {
	p.with(s.WithClause)
	p.w("UPDATE ")
	p.rangeVar(s.Relation)
	p.w(" SET ")
	p.setList(s.Relation.Relname, s.TargetList)
	if len(s.FromClause) > 0 {
		p.w(" FROM ")
		p.list(s.FromClause, p.fromItem)
	}
	p.where(s.WhereClause)
	p.returning(s.ReturningList)
}

// setList writes UPDATE's assignments; (a, b) = (...) assignments come as
// one MultiAssignRef per column and are written once. A column assigned
// twice fails as in PostgreSQL (SQLite would take the last).
func (p *printer) setList(table string, list []*pg_query.Node) {
	assigned := map[string]bool{}
	for _, n := range list {
		name := n.GetResTarget().GetName()
		if assigned[name] {
			p.fail(sqlerr.New(sqlerr.SyntaxError, "multiple assignments to same column %q", name))
		}
		assigned[name] = true
	}
	for i := 0; i < len(list); i++ {
		if i > 0 {
			p.w(", ")
		}
		rt := list[i].GetResTarget()
		if len(rt.Indirection) > 0 {
			p.refuse("assigning to a field or element of a column")
		}
		if ma := rt.Val.GetMultiAssignRef(); ma != nil {
			n := int(ma.Ncolumns)
			if i+n > len(list) {
				p.refuse("this multiple-column assignment")
				return
			}
			p.w("(")
			for k := 0; k < n; k++ {
				if k > 0 {
					p.w(", ")
				}
				p.ident(list[i+k].GetResTarget().Name)
			}
			p.w(") = ")
			p.expr(ma.Source)
			i += n - 1
			continue
		}
		p.ident(rt.Name)
		p.w(" = ")
		if rt.Val.GetSetToDefault() != nil {
			p.refuse("SET column = DEFAULT")
			continue
		}
		p.hintTarget(rt.Val, table, rt.Name, -1)
		p.expr(rt.Val)
	}
}

func (p *printer) deleteStmt(s *pg_query.DeleteStmt) {
	p.with(s.WithClause)
	p.w("DELETE FROM ")
	p.rangeVar(s.Relation)
	if len(s.UsingClause) > 0 {
		p.refuse("DELETE ... USING")
	}
	p.where(s.WhereClause)
	p.returning(s.ReturningList)
}
