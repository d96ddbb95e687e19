package pgparse

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/pgtext"
	"certa/sqlerr"
)

// Expressions, printed for SQLite. Every operator is written inside
// parentheses, so PostgreSQL's precedence holds whatever SQLite's is.

func (p *printer) expr(n *pg_query.Node) {
	if n == nil {
		p.refuse("an empty expression")
		return
	}
	if keys, ok := p.upsertKeys[n]; ok {
		delete(p.upsertKeys, n)
		p.w("pg_upsert_key(")
		p.list(keys, p.expr)
		p.w(")")
		return
	}
	switch e := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		p.columnRef(e.ColumnRef)
	case *pg_query.Node_AConst:
		p.constant(e.AConst)
	case *pg_query.Node_ParamRef:
		num := int(e.ParamRef.Number)
		if num < 1 {
			p.fail(sqlerr.New(sqlerr.SyntaxError, "there is no parameter $%d", num))
			return
		}
		p.param(num)
		p.w("$", strconv.Itoa(num))
	case *pg_query.Node_AExpr:
		p.aExpr(e.AExpr)
	case *pg_query.Node_BoolExpr:
		p.boolExpr(e.BoolExpr)
	case *pg_query.Node_NullTest:
		if e.NullTest.Argisrow && e.NullTest.Arg.GetRowExpr() != nil {
			p.refuse("IS NULL of a row")
		}
		p.w("(")
		p.expr(e.NullTest.Arg)
		if e.NullTest.Nulltesttype == pg_query.NullTestType_IS_NOT_NULL {
			p.w(" IS NOT NULL)")
		} else {
			p.w(" IS NULL)")
		}
	case *pg_query.Node_BooleanTest:
		p.w("(")
		p.expr(e.BooleanTest.Arg)
		p.w(map[pg_query.BoolTestType]string{
			pg_query.BoolTestType_IS_TRUE: " IS TRUE)", pg_query.BoolTestType_IS_NOT_TRUE: " IS NOT TRUE)",
			pg_query.BoolTestType_IS_FALSE: " IS FALSE)", pg_query.BoolTestType_IS_NOT_FALSE: " IS NOT FALSE)",
			pg_query.BoolTestType_IS_UNKNOWN: " IS NULL)", pg_query.BoolTestType_IS_NOT_UNKNOWN: " IS NOT NULL)",
		}[e.BooleanTest.Booltesttype])
	case *pg_query.Node_FuncCall:
		p.funcCall(e.FuncCall)
	case *pg_query.Node_TypeCast:
		p.typeCast(e.TypeCast)
	case *pg_query.Node_SubLink:
		p.subLink(e.SubLink)
	case *pg_query.Node_CaseExpr:
		p.caseExpr(e.CaseExpr)
	case *pg_query.Node_CoalesceExpr:
		p.typeResults(e.CoalesceExpr.Args)
		p.w("coalesce(")
		p.list(e.CoalesceExpr.Args, p.expr)
		if len(e.CoalesceExpr.Args) == 1 { // SQLite's takes two or more
			p.w(", NULL")
		}
		p.w(")")
	case *pg_query.Node_MinMaxExpr:
		// PostgreSQL's GREATEST and LEAST skip NULLs; SQLite's
		// multi-argument max and min return NULL for any NULL.
		p.typeResults(e.MinMaxExpr.Args)
		if e.MinMaxExpr.Op == pg_query.MinMaxOp_IS_GREATEST {
			p.w("pg_greatest(")
		} else {
			p.w("pg_least(")
		}
		p.list(e.MinMaxExpr.Args, p.expr)
		p.w(")")
	case *pg_query.Node_SqlvalueFunction:
		p.sqlValueFunction(e.SqlvalueFunction)
	case *pg_query.Node_RowExpr:
		if len(e.RowExpr.Args) < 2 {
			p.refuse("a row of fewer than two values")
		}
		p.w("(")
		p.list(e.RowExpr.Args, p.expr)
		p.w(")")
	case *pg_query.Node_CollateClause:
		p.collate(e.CollateClause)
	case *pg_query.Node_AArrayExpr:
		if p.cat != nil {
			p.call("json_array", e.AArrayExpr.Elements...)
			return
		}
		p.refuse("an array value (ARRAY[...]) outside = ANY and <> ALL")
	case *pg_query.Node_AIndirection:
		if p.cat != nil {
			p.subscript(e.AIndirection)
			return
		}
		p.refuse("subscripts and field selection")
	case *pg_query.Node_SetToDefault:
		// Only a VALUES row of an INSERT and UPDATE's SET take it
		// (defaultMarker).
		p.fail(sqlerr.New(sqlerr.SyntaxError, "DEFAULT is not allowed in this context"))
	case *pg_query.Node_GroupingFunc:
		p.refuse("GROUPING")
	default:
		p.refuse("this expression")
	}
}

func (p *printer) columnRef(cr *pg_query.ColumnRef) {
	fields := cr.Fields
	if p.cat != nil {
		if len(fields) == 3 {
			if s := fields[0].GetString_().GetSval(); s == "pg_catalog" || s == "information_schema" {
				fields = fields[1:] // the relation goes by its name
			}
		}
		f := names(fields)
		qual := ""
		if len(f) > 1 {
			qual = f[len(f)-2]
		}
		if len(f) > 0 && len(f) == len(fields) {
			if c, ok := p.scope.resolve(qual, f[len(f)-1]); ok && c.sql != "" {
				p.w(c.sql)
				return
			}
		}
	}
	if len(fields) == 3 {
		if s := fields[0].GetString_(); s != nil && s.Sval == "public" {
			fields = fields[1:]
		}
	}
	if len(fields) > 2 {
		p.refuse("a column name with a schema other than public")
		return
	}
	for i, f := range fields {
		if i > 0 {
			p.w(".")
		}
		if f.GetAStar() != nil {
			p.w("*")
			continue
		}
		p.ident(f.GetString_().GetSval())
	}
}

func (p *printer) constant(c *pg_query.A_Const) {
	if c.Isnull {
		p.w("NULL")
		return
	}
	if kind, ok := p.numberConsts[c]; ok {
		p.numberText(c, kind)
		return
	}
	if typed, ok := p.typedConsts[c]; ok {
		p.w(TypedConstFunction, "(")
		defer p.w(", ", sqliteString(typed[0]), ", ", sqliteString(typed[1]), ")")
	}
	if p.recordHoles {
		switch c.Val.(type) {
		case *pg_query.A_Const_Ival, *pg_query.A_Const_Fval, *pg_query.A_Const_Sval:
			start := p.b.Len()
			defer func() { p.holes = append(p.holes, hole{start, p.b.Len(), int(c.Location)}) }()
		}
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		p.w(strconv.Itoa(int(v.Ival.Ival)))
	case *pg_query.A_Const_Fval:
		p.w(v.Fval.Fval)
	case *pg_query.A_Const_Sval:
		p.literal(v.Sval.Sval)
	case *pg_query.A_Const_Boolval:
		if v.Boolval.Boolval {
			p.w("TRUE")
		} else {
			p.w("FALSE")
		}
	case *pg_query.A_Const_Bsval:
		// x'...' is SQLite's blob constant, which certa takes as bytea
		// (PostgreSQL reads it as a bit string, a type certa does not have).
		if hex := v.Bsval.Bsval; len(hex) > 0 && hex[0] == 'x' {
			p.w("X'", hex[1:], "'")
			return
		}
		p.refuse("bit string constants")
	}
}

func (p *printer) boolExpr(b *pg_query.BoolExpr) {
	if b.Boolop == pg_query.BoolExprType_NOT_EXPR {
		p.w("(NOT ")
		p.expr(b.Args[0])
		p.w(")")
		return
	}
	op := " AND "
	if b.Boolop == pg_query.BoolExprType_OR_EXPR {
		op = " OR "
	}
	p.w("(")
	for i, a := range b.Args {
		if i > 0 {
			p.w(op)
		}
		p.expr(a)
	}
	p.w(")")
}

// sameOperators are PostgreSQL's operators that SQLite writes and means
// the same way on the values the embedded engine stores.
var sameOperators = map[string]bool{
	"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true,
	"+": true, "-": true, "*": true, "/": true, "%": true, "||": true,
	"&": true, "|": true, "<<": true, ">>": true, "->": true, "->>": true,
}

// regexOperators are PostgreSQL's regular expression matches, by
// operator: case-insensitive, negated.
var regexOperators = map[string][2]bool{"~": {false, false}, "~*": {true, false}, "!~": {false, true}, "!~*": {true, true}}

func (p *printer) aExpr(a *pg_query.A_Expr) {
	op := operator(a.Name)
	kind := a.Kind
	switch {
	case kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "~~" || op == "!~~"):
		kind = pg_query.A_Expr_Kind_AEXPR_LIKE // LIKE's operator, as pg_get_viewdef writes it
	case kind == pg_query.A_Expr_Kind_AEXPR_OP && (op == "~~*" || op == "!~~*"):
		kind = pg_query.A_Expr_Kind_AEXPR_ILIKE
	}
	switch kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		p.operator(op, a.Lexpr, a.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		p.anyAll(op, a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL, a.Lexpr, a.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT:
		p.binary(a.Lexpr, " IS NOT ", a.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		p.binary(a.Lexpr, " IS ", a.Rexpr)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		p.typeConstant(a.Rexpr, a.Lexpr)
		p.w("nullif(")
		p.expr(a.Lexpr)
		p.w(", ")
		p.expr(a.Rexpr)
		p.w(")")
	case pg_query.A_Expr_Kind_AEXPR_IN:
		p.w("(")
		p.expr(a.Lexpr)
		if op == "<>" {
			p.w(" NOT")
		}
		p.w(" IN (")
		for _, item := range a.Rexpr.GetList().Items {
			p.hintColumn(item, a.Lexpr)
			p.typeConstant(item, a.Lexpr)
		}
		p.list(a.Rexpr.GetList().Items, p.expr)
		p.w("))")
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		// SQLite's LIKE ignores case and has no escape character by
		// default; PostgreSQL's LIKE minds case and escapes with \.
		fn := "pg_like("
		if kind == pg_query.A_Expr_Kind_AEXPR_ILIKE {
			fn = "pg_ilike("
		}
		if op == "!~~" || op == "!~~*" {
			p.w("(NOT ")
			defer p.w(")")
		}
		p.hintKind(a.Lexpr, "text")
		p.hintKind(a.Rexpr, "text")
		p.w(fn)
		p.expr(a.Lexpr)
		p.w(", ")
		if fc := a.Rexpr.GetFuncCall(); fc != nil && lastName(fc.Funcname) == "like_escape" && len(fc.Args) == 2 {
			p.expr(fc.Args[0])
			p.w(", ")
			p.expr(fc.Args[1])
		} else {
			p.expr(a.Rexpr)
		}
		p.w(")")
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		bounds := a.Rexpr.GetList().Items
		p.hintColumn(bounds[0], a.Lexpr)
		p.hintColumn(bounds[1], a.Lexpr)
		p.typeConstant(bounds[0], a.Lexpr)
		p.typeConstant(bounds[1], a.Lexpr)
		p.w("(")
		p.expr(a.Lexpr)
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN {
			p.w(" NOT")
		}
		p.w(" BETWEEN ")
		p.expr(bounds[0])
		p.w(" AND ")
		p.expr(bounds[1])
		p.w(")")
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		p.refuse("SIMILAR TO")
	default:
		p.refuse("BETWEEN SYMMETRIC")
	}
}

// operator returns an operator's name, without a pg_catalog qualifier.
func operator(name []*pg_query.Node) string {
	parts := names(name)
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

func (p *printer) operator(op string, l, r *pg_query.Node) {
	switch {
	case l == nil && (op == "-" || op == "+" || op == "~"):
		p.w("(", op)
		p.expr(r)
		p.w(")")
	case l == nil:
		p.refuse("prefix operator " + op)
	case op == "!=":
		p.binary(l, " <> ", r)
	case sameOperators[op]:
		switch op {
		case "||":
			if lk, rk := nonTextKinds[p.argKind(l)], nonTextKinds[p.argKind(r)]; lk != "" && rk != "" {
				// No text on either side: PostgreSQL has no such
				// operator, where SQLite's would join their texts.
				err := sqlerr.New(sqlerr.UndefinedFunction, "operator does not exist: %s || %s", lk, rk)
				err.Hint = "No operator matches the given name and argument types. You might need to add explicit type casts."
				p.fail(err)
				return
			}
			p.hintKind(l, "text")
			p.hintKind(r, "text")
			if p.knownType(l) == "bool" || p.knownType(r) == "bool" {
				// A boolean made text is true or false, not SQLite's 1.
				p.w("(")
				p.textOf(l)
				p.w(" || ")
				p.textOf(r)
				p.w(")")
				return
			}
		case "->", "->>":
			if p.cat == nil {
				// PostgreSQL's: the member as written in the value
				// (a jsonb's is in jsonb's form), ->> a string's text;
				// SQLite's writes JSON its own way and ->> gives
				// numbers and booleans as SQL values.
				p.w("pg_json_get(")
				p.expr(l)
				p.w(", ")
				p.expr(r)
				p.w(map[string]string{"->": ", 0)", "->>": ", 1)"}[op])
				return
			}
		default:
			p.hintColumn(l, r)
			p.hintColumn(r, l)
			if comparison[op] {
				p.typeConstant(l, r)
				p.typeConstant(r, l)
				p.numberConstant(l, r)
				p.numberConstant(r, l)
			}
			if arithmetic[op] {
				p.arithmetic(l)
				p.arithmetic(r)
			}
			if (op == "/" || op == "%") && p.cat == nil && isZeroConstant(r) && isNumberConstant(l) {
				// PostgreSQL folds a constant division when it plans the
				// statement, so 1 / 0 fails even where it is not reached.
				p.fail(sqlerr.New(sqlerr.DivisionByZero, "division by zero"))
				return
			}
			if arithmetic[op] && p.cat == nil {
				// SQLite's x / 0 is NULL, where PostgreSQL's fails, its %
				// makes both operands integers, and its sums and products
				// that overflow become doubles or infinities.
				p.call(map[string]string{"/": "pg_div", "%": "pg_mod", "*": "pg_mul", "+": "pg_add", "-": "pg_sub"}[op], l, r)
				return
			}
		}
		p.binary(l, " "+op+" ", r)
	case op == "^":
		p.call("pg_pow", l, r)
	default:
		if re, ok := regexOperators[op]; ok {
			if re[1] {
				p.w("(NOT ")
				defer p.w(")")
			}
			p.w("pg_regex(")
			p.expr(l)
			p.w(", ")
			p.expr(r)
			if re[0] {
				p.w(", 'i')")
			} else {
				p.w(", '')")
			}
			return
		}
		p.refuse("operator " + op)
	}
}

// knownType is the type of expression n where the printer can tell it
// without the columns' types (which only a catalog query's printer
// has: typeOf): a constant, a cast, a boolean expression; "" otherwise.
func (p *printer) knownType(n *pg_query.Node) string {
	if p.cat != nil {
		return p.typeOf(n)
	}
	switch e := n.GetNode().(type) {
	case *pg_query.Node_AConst, *pg_query.Node_TypeCast, *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return p.typeOf(n)
	case *pg_query.Node_AExpr:
		if e.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP && comparison[operator(e.AExpr.Name)] {
			return "bool"
		}
	case *pg_query.Node_ColumnRef:
		return p.scopeColumnKind(e.ColumnRef) // a subquery's column
	}
	return ""
}

// comparison are the operators whose result is a boolean.
var comparison = map[string]bool{"=": true, "<>": true, "!=": true, "<": true, "<=": true, ">": true, ">=": true}

// textOf prints n, a boolean as PostgreSQL writes it as text.
func (p *printer) textOf(n *pg_query.Node) {
	if p.knownType(n) != "bool" {
		p.expr(n)
		return
	}
	p.w("pg_cast(")
	p.expr(n)
	p.w(", 'text:bool')")
}

func (p *printer) binary(l *pg_query.Node, op string, r *pg_query.Node) {
	if p.cat != nil {
		l, r = p.boolConstant(l, r), p.boolConstant(r, l)
	}
	p.w("(")
	p.expr(l)
	p.w(op)
	p.expr(r)
	p.w(")")
}

func (p *printer) call(fn string, args ...*pg_query.Node) {
	p.w(fn, "(")
	p.list(args, p.expr)
	p.w(")")
}

// anyAll writes x op ANY (array) or x op ALL (array): over an ARRAY[...]
// or an array constant, as IN / NOT IN or a chain of comparisons with the
// same NULL rules; over a parameter, with the array's elements as rows.
func (p *printer) anyAll(op string, all bool, l, r *pg_query.Node) {
	if p.cat != nil && p.catalogAnyAll(op, all, l, r) {
		return
	}
	if !sameOperators[op] || op == "||" || op == "->" || op == "->>" {
		p.refuse("operator " + op + " with ANY or ALL")
		return
	}
	var elems []*pg_query.Node
	switch {
	case r.GetAArrayExpr() != nil:
		elems = r.GetAArrayExpr().Elements
	case arrayConstant(r) != nil:
		values, err := pgtext.ParseArray(arrayConstant(r).GetAConst().GetSval().GetSval())
		if err != nil {
			p.fail(err)
			return
		}
		for _, v := range values {
			if v == nil {
				elems = append(elems, &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}})
			} else {
				elems = append(elems, pg_query.MakeAConstStrNode(*v, 0))
			}
		}
	case r.GetParamRef() != nil, r.GetTypeCast() != nil && r.GetTypeCast().Arg.GetParamRef() != nil:
		param := r
		if tc := r.GetTypeCast(); tc != nil {
			param = tc.Arg
		}
		p.w("(")
		p.expr(l)
		switch {
		case op == "=" && !all:
			p.w(" IN (SELECT value FROM json_each(pg_array_json(")
		case op == "<>" && all:
			p.w(" NOT IN (SELECT value FROM json_each(pg_array_json(")
		default:
			p.refuse("operator " + op + " with ANY or ALL over a parameter")
		}
		p.expr(param)
		p.w("))))")
		return
	default:
		p.refuse("ANY and ALL over this expression")
		return
	}
	switch {
	case len(elems) == 0 && all:
		p.w("TRUE")
	case len(elems) == 0:
		p.w("FALSE")
	case op == "=" && !all, op == "<>" && all:
		p.w("(")
		p.expr(l)
		if all {
			p.w(" NOT")
		}
		p.w(" IN (")
		p.list(elems, p.expr)
		p.w("))")
	default:
		join := " OR "
		if all {
			join = " AND "
		}
		p.w("(")
		for i, e := range elems {
			if i > 0 {
				p.w(join)
			}
			p.binary(l, " "+op+" ", e)
		}
		p.w(")")
	}
}

// arrayConstant returns the string constant of '{...}'::type[], or nil.
func arrayConstant(n *pg_query.Node) *pg_query.Node {
	tc := n.GetTypeCast()
	if tc == nil || len(tc.TypeName.ArrayBounds) == 0 {
		return nil
	}
	if c := tc.Arg.GetAConst(); c != nil && c.GetSval() != nil {
		return tc.Arg
	}
	return nil
}

func (p *printer) typeCast(tc *pg_query.TypeCast) {
	if p.cat != nil && p.catalogCast(tc) {
		return
	}
	typ := typeString(tc.TypeName)
	kind, mods, err := CastKind(typ)
	if err != nil {
		p.fail(err)
		return
	}
	if pr := tc.Arg.GetParamRef(); pr != nil && pr.Number >= 1 {
		p.param(int(pr.Number)).Kind = kind
	}
	p.w("pg_cast(")
	p.expr(tc.Arg)
	source := castSource(kind, p.knownType(tc.Arg))
	if cr := tc.Arg.GetColumnRef(); cr != nil && source == "" && castSource(kind, "bool")+castSource(kind, "float8") != "" {
		if tables, column, ok := p.columnOf(cr); ok {
			p.w(", ", CastKindFunction, "(", sqliteString(kind), ", ", sqliteString(tables), ", ", sqliteString(column), ")")
			for _, m := range mods {
				p.w(", ", strconv.FormatInt(m, 10))
			}
			p.w(")")
			return
		}
	}
	p.w(", '", kind+source, "'")
	for _, m := range mods {
		p.w(", ", strconv.FormatInt(m, 10))
	}
	p.w(")")
}

// castSource is what pg_cast must know of the type of its argument, as a
// suffix of its target kind, where SQLite's value does not say it:
// ":bool" for a boolean made text (SQLite holds 1, PostgreSQL writes
// true), ":float" for a float made an integer (rounded half to even, as
// PostgreSQL's rint; a REAL is otherwise taken as numeric, rounded half
// away from zero).
func castSource(kind, from string) string {
	switch {
	case (kind == "text" || kind == "varchar") && from == "bool":
		return ":bool"
	case (kind == "int2" || kind == "int4" || kind == "int8") && (from == "float8" || from == "float4"):
		return ":float"
	}
	return ""
}

// typeString writes a type name as CastKind reads it: its last name,
// modifiers in parentheses, [] for an array.
func typeString(tn *pg_query.TypeName) string {
	var b strings.Builder
	parts := names(tn.Names)
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	b.WriteString(strings.Join(parts, "."))
	if len(tn.Typmods) > 0 {
		b.WriteString("(")
		for i, m := range tn.Typmods {
			if i > 0 {
				b.WriteString(",")
			}
			if c := m.GetAConst(); c != nil && c.GetIval() != nil {
				b.WriteString(strconv.Itoa(int(c.GetIval().Ival)))
			} else {
				b.WriteString("?")
			}
		}
		b.WriteString(")")
	}
	if len(tn.ArrayBounds) > 0 {
		b.WriteString("[]")
	}
	return b.String()
}

func (p *printer) subLink(s *pg_query.SubLink) {
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		sub := s.Subselect
		if sel := sub.GetSelectStmt(); sel != nil && len(sel.TargetList) == 0 && len(sel.ValuesLists) == 0 &&
			(sel.Op == pg_query.SetOperation_SETOP_NONE || sel.Op == pg_query.SetOperation_SET_OPERATION_UNDEFINED) {
			// EXISTS (SELECT FROM ...), no columns: SQLite wants one.
			c := &pg_query.SelectStmt{DistinctClause: sel.DistinctClause, IntoClause: sel.IntoClause, FromClause: sel.FromClause,
				WhereClause: sel.WhereClause, GroupClause: sel.GroupClause, GroupDistinct: sel.GroupDistinct,
				HavingClause: sel.HavingClause, WindowClause: sel.WindowClause, SortClause: sel.SortClause,
				LimitOffset: sel.LimitOffset, LimitCount: sel.LimitCount, LimitOption: sel.LimitOption,
				LockingClause: sel.LockingClause, WithClause: sel.WithClause,
				TargetList: []*pg_query.Node{{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: pg_query.MakeAConstIntNode(1, 0)}}}}}
			sub = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: c}}
		}
		p.w("EXISTS (")
		p.stmt(sub)
		p.w(")")
	case pg_query.SubLinkType_EXPR_SUBLINK:
		p.w("(")
		p.stmt(s.Subselect)
		p.w(")")
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		op := operator(s.OperName)
		if op == "" {
			op = "=" // x IN (SELECT ...)
		}
		all := s.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK
		if !(op == "=" && !all || op == "<>" && all) {
			p.refuse("operator " + op + " with ANY or ALL over a subquery")
			return
		}
		p.w("(")
		p.expr(s.Testexpr)
		if all {
			p.w(" NOT")
		}
		p.w(" IN (")
		p.stmt(s.Subselect)
		p.w("))")
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		if p.cat != nil {
			p.arraySubquery(s)
			return
		}
		p.refuse("ARRAY(subquery)")
	default:
		p.refuse("this subquery")
	}
}

func (p *printer) caseExpr(c *pg_query.CaseExpr) {
	results := []*pg_query.Node{c.Defresult}
	for _, n := range c.Args {
		results = append(results, n.GetCaseWhen().Result)
		if c.Arg != nil {
			p.typeConstant(n.GetCaseWhen().Expr, c.Arg) // compared with it
		}
	}
	p.typeResults(results)
	p.w("CASE")
	if c.Arg != nil {
		p.w(" ")
		p.expr(c.Arg)
	}
	for _, n := range c.Args {
		cw := n.GetCaseWhen()
		p.w(" WHEN ")
		p.expr(cw.Expr)
		p.w(" THEN ")
		p.expr(cw.Result)
	}
	if c.Defresult != nil {
		p.w(" ELSE ")
		p.expr(c.Defresult)
	}
	p.w(" END")
}

// typeResults notes the string constants among exprs, the results of a
// CASE, COALESCE, GREATEST or LEAST, as of the type of the first column
// among them (typeConstant): PostgreSQL reads them as values of the
// expression's type ('2000-01-01' a timestamptz with a timestamptz
// column), where SQLite would keep the text.
func (p *printer) typeResults(exprs []*pg_query.Node) {
	for _, col := range exprs {
		if col != nil && col.GetColumnRef() != nil {
			for _, n := range exprs {
				if n != nil {
					p.typeConstant(n, col)
				}
			}
			return
		}
	}
}

func (p *printer) collate(c *pg_query.CollateClause) {
	name := operator(c.Collname)
	switch name {
	case "C", "POSIX", "default", "ucs_basic":
		p.w("(")
		p.expr(c.Arg)
		p.w(" COLLATE BINARY)")
	default:
		p.refuse("collation " + quoteIdent(name))
	}
}

// sqlValueFunctions are the SQL-standard value functions SQLite can give,
// printed as calls: current_user() is the engine's, the session's user.
var sqlValueFunctions = map[pg_query.SQLValueFunctionOp]string{
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:      "pg_cast(now(), 'date')",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP: "now()",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP:    "pg_cast(now(), 'timestamp')",
	pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME:         "pg_cast(now(), 'time')",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:   "current_database()",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:    "current_schema()",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:      "current_user()",
	pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:      "current_user()",
	pg_query.SQLValueFunctionOp_SVFOP_USER:              "current_user()",
	pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:      "current_user()",
}

func (p *printer) sqlValueFunction(f *pg_query.SQLValueFunction) {
	if call, ok := sqlValueFunctions[f.Op]; ok {
		p.w(call)
		return
	}
	p.refuse(strings.ToUpper(sqlValueName(f.Op)))
}

// sqlValueName is the name PostgreSQL gives a SQL value function's column.
func sqlValueName(op pg_query.SQLValueFunctionOp) string {
	name := strings.TrimPrefix(op.String(), "SVFOP_")
	name = strings.TrimSuffix(name, "_N")
	return strings.ToLower(name)
}

func lastName(nodes []*pg_query.Node) string {
	parts := names(nodes)
	if len(parts) == 0 {
		return ""
	}
	return parts[len(parts)-1]
}

// isNumberConstant reports whether n is a number written as a constant
// (1, 2.5, -3), which PostgreSQL folds with the operators around it.
func isNumberConstant(n *pg_query.Node) bool {
	if a := n.GetAExpr(); a != nil && a.Lexpr == nil && operator(a.Name) == "-" {
		n = a.Rexpr
	}
	c := n.GetAConst()
	return c != nil && (c.GetIval() != nil || c.GetFval() != nil)
}

// isZeroConstant reports whether n is the number constant 0 (0, 0.0).
func isZeroConstant(n *pg_query.Node) bool {
	if !isNumberConstant(n) {
		return false
	}
	if a := n.GetAExpr(); a != nil {
		n = a.Rexpr
	}
	c := n.GetAConst()
	if c.GetIval() != nil {
		return c.GetIval().Ival == 0
	}
	f, err := strconv.ParseFloat(c.GetFval().Fval, 64)
	return err == nil && f == 0
}
