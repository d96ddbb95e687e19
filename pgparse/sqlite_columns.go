package pgparse

import (
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// Result columns: their names as PostgreSQL gives them (its
// FigureColname), and their types where the statement says what they are.

// strongName is the name expression n gives its result column, "" where
// it gives none.
func strongName(n *pg_query.Node) string {
	name, _ := figureColnameStrength(n)
	return name
}

// resultColumns describes a SELECT's result columns, nil if a * makes
// them unknown here.
func (p *printer) resultColumns(s *pg_query.SelectStmt) []ResultColumn {
	if cols := p.starOfSubquery(s); cols != nil {
		return cols
	}
	plain := s.Larg == nil // not a set operation, whose columns mix its operands'
	for s.Larg != nil {
		s = s.Larg // a set operation's columns are named by its first operand
	}
	if len(s.ValuesLists) > 0 {
		cols := make([]ResultColumn, len(s.ValuesLists[0].GetList().Items))
		for i := range cols {
			cols[i].Name = "column" + strconv.Itoa(i+1)
			cols[i].Cast = valuesKind(s.ValuesLists, i)
		}
		return cols
	}
	cols := p.returningColumns(s.TargetList)
	for i, c := range cols {
		if cr := s.TargetList[i].GetResTarget().Val.GetColumnRef(); cr != nil && c.Cast == "" {
			cols[i].Cast = p.subqueryKind(s.FromClause, names(cr.Fields))
		}
	}
	if plain && p.columnTypes && p.cat == nil && cols != nil {
		// The columns of its FROM list, as they were when its targets
		// were printed.
		p.pushFromScope(s.FromClause)
		defer p.popFromScope()
		for i, c := range cols {
			if c.Cast == "" {
				val := s.TargetList[i].GetResTarget().Val
				cols[i].Common = p.commonParts(val)
				a := val.GetAExpr()
				cols[i].IntegerOnly = a != nil && a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && arithmetic[operator(a.Name)]
			}
		}
	}
	return cols
}

// starOfSubquery describes the result columns of SELECT * FROM a
// subquery or VALUES list and nothing else: the subquery's, named by its
// alias's column names where it has them. nil for any other SELECT.
func (p *printer) starOfSubquery(s *pg_query.SelectStmt) []ResultColumn {
	if len(s.TargetList) != 1 || len(s.FromClause) != 1 || s.Larg != nil {
		return nil
	}
	cr := s.TargetList[0].GetResTarget().Val.GetColumnRef()
	rs := s.FromClause[0].GetRangeSubselect()
	if cr == nil || len(cr.Fields) != 1 || cr.Fields[0].GetAStar() == nil || rs == nil || rs.Subquery.GetSelectStmt() == nil {
		return nil
	}
	cols := p.resultColumns(rs.Subquery.GetSelectStmt())
	if rs.Alias != nil {
		for i, name := range names(rs.Alias.Colnames) {
			if i < len(cols) {
				cols[i].Name = name
			}
		}
	}
	return cols
}

// selectKinds returns the kinds of the result columns of s, a subquery
// in FROM, by name (colnames, its alias's, rename them in order): those
// its expressions say (stableKind).
func selectKinds(s *pg_query.SelectStmt, colnames []string) map[string]string {
	for s.Larg != nil {
		s = s.Larg // a set operation's columns are its first operand's
	}
	kinds := map[string]string{}
	add := func(i int, name, kind string) {
		if i < len(colnames) {
			name = colnames[i]
		}
		if kind != "" {
			kinds[name] = kind
		}
	}
	if len(s.ValuesLists) > 0 {
		for i := range s.ValuesLists[0].GetList().Items {
			add(i, "column"+strconv.Itoa(i+1), valuesKind(s.ValuesLists, i))
		}
		return kinds
	}
	for i, n := range s.TargetList {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			break // the columns after a * are at places it does not say
		}
		name := rt.Name
		if name == "" {
			name = figureColname(rt.Val)
		}
		add(i, name, stableKind(rt.Val))
	}
	return kinds
}

// valuesKind is the kind of column i of a VALUES list: the one every row
// says (stableKind), NULLs aside; "" if they do not agree.
func valuesKind(rows []*pg_query.Node, i int) string {
	kind := ""
	for _, r := range rows {
		items := r.GetList().Items
		if i >= len(items) {
			return ""
		}
		if c := items[i].GetAConst(); c != nil && c.Isnull {
			continue
		}
		k := stableKind(items[i])
		if k == "" || kind != "" && k != kind {
			return ""
		}
		kind = k
	}
	return kind
}

// stableKind is valueKind for what the statement cache's templates keep
// (sqlite_cache.go): not the kind of a number or string constant, which
// another statement of the same shape may give another.
func stableKind(n *pg_query.Node) string {
	if c := n.GetAConst(); c != nil && c.GetBoolval() == nil {
		return ""
	}
	kind, _ := valueKind(n)
	return kind
}

// subqueryKind is the kind of the column a column reference (its
// fields) names in a subquery of from, a FROM list (subqueryKinds), or
// "": unqualified, only where from holds subqueries alone (a table's
// column of that name would be another).
func (p *printer) subqueryKind(from []*pg_query.Node, fields []string) string {
	var aliases []string
	onlySubqueries := true
	for _, n := range from {
		if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil {
			aliases = append(aliases, rs.Alias.Aliasname)
		} else {
			onlySubqueries = false
		}
	}
	switch {
	case len(fields) == 2 && slices.Contains(aliases, fields[0]):
		return p.subqueryKinds[fields[0]][fields[1]]
	case len(fields) == 1 && onlySubqueries:
		kind := ""
		for _, a := range aliases {
			if k, ok := p.subqueryKinds[a][fields[0]]; ok {
				if kind != "" {
					return "" // ambiguous: PostgreSQL would say so
				}
				kind = k
			}
		}
		return kind
	}
	return ""
}

// renamedSources maps the names of a SELECT's result columns that are
// column references renamed by AS to the columns they name.
func renamedSources(s *pg_query.SelectStmt) map[string]string {
	for s.Larg != nil {
		s = s.Larg
	}
	var m map[string]string
	for _, n := range s.TargetList {
		rt := n.GetResTarget()
		if rt == nil || rt.Name == "" || rt.Val.GetColumnRef() == nil || strongName(rt.Val) == "" {
			continue
		}
		if m == nil {
			m = map[string]string{}
		}
		m[rt.Name] = strongName(rt.Val)
	}
	return m
}

// returningColumns describes the result columns of a target list.
func (p *printer) returningColumns(list []*pg_query.Node) []ResultColumn {
	if len(list) == 0 {
		return nil
	}
	cols := make([]ResultColumn, len(list))
	for i, n := range list {
		rt := n.GetResTarget()
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return nil
		}
		if cr := rt.Val.GetColumnRef(); cr != nil {
			cols[i].Source = strongName(rt.Val)
		}
		cols[i].Name = rt.Name
		if cols[i].Name == "" {
			cols[i].Name = figureColname(rt.Val)
		}
		cols[i].Cast, cols[i].Mods = valueKind(rt.Val)
	}
	return cols
}

// returningCommon sets the Common parts of the columns of a RETURNING
// list (cols, as returningColumns described list): its columns are those
// of the statement's tables.
func (p *printer) returningCommon(cols []ResultColumn, list []*pg_query.Node) []ResultColumn {
	for i, c := range cols {
		if c.Cast == "" {
			cols[i].Common = p.commonParts(list[i].GetResTarget().Val)
		}
	}
	return cols
}

// valueKind is the kind of type n's values have when n says so.
func valueKind(n *pg_query.Node) (string, []int64) {
	switch e := n.Node.(type) {
	case *pg_query.Node_TypeCast:
		kind, mods, err := CastKind(typeString(e.TypeCast.TypeName))
		if err == nil {
			return kind, mods
		}
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return "bool", nil
	case *pg_query.Node_FuncCall:
		name := functionName(e.FuncCall.Funcname)
		if argKindFunctions[name] && len(e.FuncCall.Args) > 0 {
			// numeric in, numeric out; double precision in, double out.
			if k, _ := valueKind(e.FuncCall.Args[0]); k == "numeric" || k == "float8" {
				return k, nil
			}
		}
		if mathFunctions[name] {
			return mathKind(e.FuncCall.Args), nil
		}
		return functionKinds[name], nil
	case *pg_query.Node_AConst:
		switch v := e.AConst.Val.(type) {
		case *pg_query.A_Const_Boolval:
			return "bool", nil
		case *pg_query.A_Const_Ival:
			return "int4", nil
		case *pg_query.A_Const_Fval:
			if strings.Trim(v.Fval.Fval, "0123456789-") == "" {
				return "int8", nil // an integer too large for int4
			}
			return "numeric", nil
		case *pg_query.A_Const_Sval:
			return "text", nil
		}
	case *pg_query.Node_SubLink:
		if e.SubLink.SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK {
			return "bool", nil
		}
	case *pg_query.Node_CaseExpr:
		results := []*pg_query.Node{e.CaseExpr.Defresult}
		for _, w := range e.CaseExpr.Args {
			results = append(results, w.GetCaseWhen().Result)
		}
		return commonKind(results), nil
	case *pg_query.Node_CoalesceExpr:
		return commonKind(e.CoalesceExpr.Args), nil
	case *pg_query.Node_MinMaxExpr:
		return commonKind(e.MinMaxExpr.Args), nil
	case *pg_query.Node_AExpr:
		switch e.AExpr.Kind {
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			kind, _ := valueKind(e.AExpr.Lexpr)
			return kind, nil
		case pg_query.A_Expr_Kind_AEXPR_OP:
			switch op := operator(e.AExpr.Name); {
			case comparison[op], op == "~", op == "~*", op == "!~", op == "!~*":
				return "bool", nil
			case e.AExpr.Lexpr == nil && (op == "-" || op == "+"):
				return valueKind(e.AExpr.Rexpr) // -2.5::float8 is -(2.5::float8)
			}
		default:
			return "bool", nil
		}
	}
	return "", nil
}

// numericKinds are the kinds of numbers in the order PostgreSQL
// resolves a mix of them (select_common_type): to the last one's.
var numericKinds = []string{"int2", "int4", "int8", "numeric", "float8"}

// commonKind is the kind of the result of a CASE, COALESCE, GREATEST or
// LEAST over exprs, as PostgreSQL resolves it: NULLs aside, string
// constants take the others' kind (text if all are strings), numbers of
// several kinds the widest; "" where an expression's kind is not known
// here or the kinds do not mix, and where a string is no number of the
// numbers' kind (PostgreSQL refuses it; SQLite would keep the string).
func commonKind(exprs []*pg_query.Node) string {
	kind := ""
	var strs []string
	for _, n := range exprs {
		if n == nil {
			continue
		}
		if c := n.GetAConst(); c != nil && (c.Isnull || c.GetSval() != nil) {
			if !c.Isnull {
				strs = append(strs, c.GetSval().Sval)
			}
			continue
		}
		k, _ := valueKind(n)
		if kind = widerKind(kind, k); kind == "" {
			return ""
		}
	}
	for _, str := range strs {
		if kind == "" {
			return "text"
		}
		if !numberOfKind(str, kind) {
			return ""
		}
	}
	return kind
}

// widerKind is the kind a mix of kind (so far; "" if none yet) and k
// resolves to, "" if they do not mix or k is not known.
func widerKind(kind, k string) string {
	switch a, b := slices.Index(numericKinds, kind), slices.Index(numericKinds, k); {
	case k == "":
		return ""
	case kind == "" || kind == k:
		return k
	case a >= 0 && b >= 0:
		return numericKinds[max(a, b)]
	}
	return ""
}

// CommonKind is the kind of an expression of parts (ResultColumn.Common),
// with columnKind giving a table column's kind ("" if not known), as
// commonKind resolves it: "" where a part's kind is not known or the
// kinds do not mix.
func CommonKind(parts []KindPart, columnKind func(tables, column string) string) string {
	kind, strs := "", false
	for _, part := range parts {
		k := part.Kind
		if part.Column != "" {
			k = columnKind(part.Tables, part.Column)
		}
		if k == "unknown" {
			strs = true
			continue
		}
		if kind = widerKind(kind, k); kind == "" {
			return ""
		}
	}
	if kind == "" && strs {
		return "text"
	}
	return kind
}

// commonParts returns the parts of n (ResultColumn.Common) if it is a
// CASE, COALESCE, NULLIF, GREATEST or LEAST, or arithmetic (whose
// result is of its operands' common kind when both are numbers: int4 *
// int2 is int4, int8 + numeric numeric; the engine checks an integer's
// range by it, as PostgreSQL's operators fail past it), with a table
// column among them, else nil. The columns are those of the innermost
// FROM list (columnOf).
func (p *printer) commonParts(n *pg_query.Node) []KindPart {
	var exprs []*pg_query.Node
	switch e := n.Node.(type) {
	case *pg_query.Node_CaseExpr:
		exprs = []*pg_query.Node{e.CaseExpr.Defresult}
		for _, w := range e.CaseExpr.Args {
			exprs = append(exprs, w.GetCaseWhen().Result)
		}
	case *pg_query.Node_CoalesceExpr:
		exprs = e.CoalesceExpr.Args
	case *pg_query.Node_MinMaxExpr:
		exprs = e.MinMaxExpr.Args
	case *pg_query.Node_AExpr:
		switch {
		case e.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF:
			exprs = []*pg_query.Node{e.AExpr.Lexpr}
		case e.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_OP && arithmetic[operator(e.AExpr.Name)]:
			exprs = []*pg_query.Node{e.AExpr.Lexpr, e.AExpr.Rexpr}
		default:
			return nil
		}
	default:
		return nil
	}
	var parts []KindPart
	columns := false
	for _, x := range exprs {
		if x == nil {
			continue
		}
		if c := x.GetAConst(); c != nil && (c.Isnull || c.GetSval() != nil) {
			if !c.Isnull {
				parts = append(parts, KindPart{Kind: "unknown"})
			}
			continue
		}
		if cr := x.GetColumnRef(); cr != nil {
			if k := p.scopeColumnKind(cr); k != "" {
				parts = append(parts, KindPart{Kind: k})
				continue
			}
			tables, column, ok := p.columnOf(cr)
			if !ok {
				return nil
			}
			parts = append(parts, KindPart{Tables: tables, Column: column})
			columns = true
			continue
		}
		if a := x.GetAExpr(); a != nil && a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && arithmetic[operator(a.Name)] {
			// (a + b) * c: of the parts of a + b.
			inner := p.commonParts(x)
			if inner == nil {
				k, _ := valueKind(x)
				if k == "" {
					return nil
				}
				inner = []KindPart{{Kind: k}}
			}
			for _, part := range inner {
				columns = columns || part.Column != ""
			}
			parts = append(parts, inner...)
			continue
		}
		k, _ := valueKind(x)
		if k == "" {
			return nil
		}
		parts = append(parts, KindPart{Kind: k})
	}
	if a := n.GetAExpr(); !columns && (a == nil || a.Kind != pg_query.A_Expr_Kind_AEXPR_OP) {
		// Of constants only: typed by its values, but arithmetic, whose
		// operands' types say its result's (smallint + smallint is a
		// smallint, and overflows as one).
		return nil
	}
	return parts
}

// numberOfKind reports whether s is the input of a number of kind.
func numberOfKind(s, kind string) bool {
	s = strings.TrimSpace(s)
	switch kind {
	case "int2", "int4", "int8":
		_, err := strconv.ParseInt(s, 10, 64)
		return err == nil
	case "numeric", "float8":
		_, err := strconv.ParseFloat(s, 64)
		return err == nil
	}
	return false
}

// argKindFunctions are the functions whose result has their first
// argument's type, when that is numeric or double precision.
var argKindFunctions = map[string]bool{"ceil": true, "ceiling": true, "floor": true, "round": true, "trunc": true,
	"abs": true, "sign": true}

// mathFunctions are PostgreSQL's functions of numeric and of double
// precision (mathKind), which the embedded engine computes (pgmath.go).
var mathFunctions = map[string]bool{"sqrt": true, "power": true, "pow": true, "exp": true, "ln": true,
	"log": true, "log10": true}

// mathKind is the kind of a math function's result over args, as
// PostgreSQL resolves it: numeric when an argument is numeric and none is
// double precision, else double precision (sqrt(2) is float8: integers
// go to the preferred type of numbers).
func mathKind(args []*pg_query.Node) string {
	kind := "float8"
	for _, a := range args {
		switch k, _ := valueKind(a); k {
		case "":
			return "" // a column's: the engine's value tells
		case "float8", "text":
			return "float8"
		case "numeric":
			kind = "numeric"
		}
	}
	return kind
}

// functionKinds are the types of functions' results that PostgreSQL
// clients rely on and SQLite's values would not tell (its integers are all
// int8; an empty result has no values).
var functionKinds = map[string]string{
	"count": "int8", "avg": "float8",
	"length": "int4", "char_length": "int4", "character_length": "int4", "octet_length": "int4",
	"strpos": "int4", "position": "int4", "ascii": "int4", "starts_with": "bool",
	"bool_and": "bool", "bool_or": "bool", "every": "bool",
	"now": "timestamptz", "transaction_timestamp": "timestamptz", "statement_timestamp": "timestamptz", "clock_timestamp": "timestamptz",
	"version": "text", "current_database": "text", "current_schema": "text", "gen_random_uuid": "uuid",
	"pg_try_advisory_xact_lock": "bool",
}

// castKinds maps PostgreSQL's type names to the kinds of type the
// embedded engine's pg_cast converts to.
var castKinds = map[string]string{
	"smallint": "int2", "int2": "int2",
	"integer": "int4", "int": "int4", "int4": "int4",
	"bigint": "int8", "int8": "int8",
	"numeric": "numeric", "decimal": "numeric",
	"double precision": "float8", "float8": "float8", "float": "float8",
	"text": "text", "varchar": "varchar", "character varying": "varchar",
	"boolean": "bool", "bool": "bool",
	"date": "date", "timestamp": "timestamp", "timestamp without time zone": "timestamp",
	"timestamptz": "timestamptz", "timestamp with time zone": "timestamptz",
	"time": "time", "time without time zone": "time",
	"uuid": "uuid", "json": "json", "jsonb": "jsonb", "bytea": "bytea",
}

// notPostgresTypes are names SQLite's CAST takes that name no PostgreSQL
// type.
var notPostgresTypes = map[string]bool{"blob": true, "string": true, "datetime": true, "clob": true, "tinyint": true, "mediumint": true, "nvarchar": true}

// CastKind reads a cast's type, written in lower case as "numeric(10,2)"
// or "int[]", as the kind of type pg_cast converts to and its modifiers:
// 0A000 for a PostgreSQL type the embedded engine cannot cast to, 42704
// for a name that is no PostgreSQL type.
func CastKind(t string) (kind string, mods []int64, err error) {
	name, modText := strings.TrimPrefix(t, "pg_catalog."), ""
	if i := strings.IndexByte(name, '('); i >= 0 && strings.HasSuffix(name, ")") {
		name, modText = name[:i], name[i+1:len(name)-1]
	}
	for _, m := range strings.Split(modText, ",") {
		if m == "" {
			continue
		}
		n, err := strconv.ParseInt(m, 10, 32)
		if err != nil || n < 0 {
			return "", nil, sqlerr.New(sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		mods = append(mods, n)
	}
	kind, ok := castKinds[name]
	unsupported := sqlerr.New(sqlerr.FeatureNotSupported, "CAST to %s is not supported by the embedded engine", t)
	switch {
	case strings.HasSuffix(t, "]"):
		return "", nil, sqlerr.New(sqlerr.FeatureNotSupported, "CAST to an array type (%s) is not supported by the embedded engine", t)
	case name == "float" && len(mods) == 1 && mods[0] <= 24, name == "real", name == "float4":
		return "", nil, sqlerr.New(sqlerr.FeatureNotSupported, "CAST to real (float4) is not supported by the embedded engine: use double precision")
	case name == "char" || name == "character" || name == "bpchar":
		// PostgreSQL pads char(n) and drops the padding again in most
		// uses; certa does not pad char(n) columns.
		return "", nil, sqlerr.New(sqlerr.FeatureNotSupported, "CAST to %s is not supported by the embedded engine: use varchar", t)
	case !ok && notPostgresTypes[name]:
		return "", nil, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", name)
	case !ok:
		return "", nil, unsupported
	case kind == "float8" && len(mods) > 0, kind == "numeric" && len(mods) > 2,
		kind != "numeric" && kind != "float8" && kind != "varchar" && len(mods) > 0,
		kind == "varchar" && len(mods) > 1:
		return "", nil, unsupported
	}
	return kind, mods, nil
}

func undefinedTable(name string) error {
	return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}
