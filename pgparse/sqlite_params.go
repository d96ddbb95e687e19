package pgparse

import (
	"regexp"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"certa/sqlerr"
)

// Parameters' types, as PostgreSQL infers them from where they stand.

// param returns the description of $num, growing the list to it.
func (p *printer) param(num int) *Param {
	for len(p.params) < num {
		p.params = append(p.params, Param{Position: -1})
	}
	return &p.params[num-1]
}

// paramOf returns the description of n if n is a parameter, else nil.
func (p *printer) paramOf(n *pg_query.Node) *Param {
	if n == nil {
		return nil
	}
	if pr := n.GetParamRef(); pr != nil && pr.Number >= 1 {
		return p.param(int(pr.Number))
	}
	return nil
}

// hintColumn notes that n, if a parameter, stands for a value of the
// column col, if col is one.
func (p *printer) hintColumn(n, col *pg_query.Node) {
	prm := p.paramOf(n)
	cr := col.GetColumnRef()
	if prm == nil || cr == nil || prm.Column != "" || prm.Kind != "" {
		return
	}
	switch parts := columnParts(cr); len(parts) {
	case 1:
		prm.Column = parts[0]
	case 2:
		prm.Table, prm.Column = p.tableNamed(parts[0]), parts[1]
	}
}

// columnParts returns a column reference's names, without a public
// qualifier; nil for one with a * (or anything but names).
func columnParts(cr *pg_query.ColumnRef) []string {
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return nil
		}
		parts = append(parts, s.Sval)
	}
	if len(parts) > 1 && parts[0] == "public" {
		parts = parts[1:]
	}
	return parts
}

// TypedConstFunction is the function a string constant compared with a
// column is printed in: TypedConstFunction(constant, tables, column),
// tables comma-separated. The engine defines it to read the constant as
// a value of the column's type, as PostgreSQL reads it ('t' for a
// boolean column is true, a timestamptz in its stored form); SQLite
// would compare the text as written.
const TypedConstFunction = "certa_const"

// typeConstant notes that n, if a string constant, is compared with the
// column col, if col is one.
func (p *printer) typeConstant(n, col *pg_query.Node) {
	c, cr := n.GetAConst(), col.GetColumnRef()
	if c == nil || c.Isnull || c.GetSval() == nil || cr == nil {
		return
	}
	tables, column, ok := p.columnOf(cr)
	if !ok {
		return
	}
	if p.typedConsts == nil {
		p.typedConsts = map[*pg_query.A_Const][2]string{}
	}
	p.typedConsts[c] = [2]string{tables, column}
}

// numberConstant notes n if it is a string constant compared with expr,
// an expression other than a column whose kind is a number's: PostgreSQL
// reads the constant as a number of that kind ('5' = length(x) is true
// for five letters), where SQLite would compare text with a number and
// find them unequal. A column's constants are typedConsts.
func (p *printer) numberConstant(n, expr *pg_query.Node) {
	c := n.GetAConst()
	if c == nil || c.Isnull || c.GetSval() == nil || expr.GetColumnRef() != nil {
		return
	}
	if kind, _ := valueKind(expr); slices.Contains(numericKinds, kind) {
		if p.numberConsts == nil {
			p.numberConsts = map[*pg_query.A_Const]string{}
		}
		p.numberConsts[c] = kind
	}
}

// numberTypeNames are the SQL names of the kinds of numbers, as
// PostgreSQL's input errors name them.
var numberTypeNames = map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric", "float8": "double precision"}

// decimalConstant is a number written as SQL writes numbers.
var decimalConstant = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// numberText writes the string constant c read as a number of kind, or
// fails as PostgreSQL's input of that type does, at the constant.
func (p *printer) numberText(c *pg_query.A_Const, kind string) {
	p.fixed = true // the number is the constant's value: no template
	s := c.GetSval().Sval
	t := strings.TrimSpace(s)
	if !numberOfKind(t, kind) || !decimalConstant.MatchString(t) {
		e := sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", numberTypeNames[kind], s)
		e.Position = p.position(c.Location)
		p.fail(e)
		return
	}
	p.w("(", t, ")")
}

// CastKindFunction is the function the kind of a cast of a column is
// printed in (pg_cast's second argument): CastKindFunction(kind, tables,
// column). The engine defines it to add what pg_cast must know of the
// column's type (castSource): a boolean column made text is true or
// false, a double made an integer is rounded half to even.
const CastKindFunction = "certa_cast_kind"

// columnOf returns the tables a column reference may name a column of
// (comma-separated) and the column, where the engine knows the columns'
// types at run time (columnTypes, not a catalog query's printer).
func (p *printer) columnOf(cr *pg_query.ColumnRef) (tables, column string, ok bool) {
	if !p.columnTypes || p.cat != nil {
		return "", "", false
	}
	switch parts := columnParts(cr); {
	case len(parts) == 1 && len(p.scopes) > 0:
		// The innermost SELECT's tables: PostgreSQL finds the column
		// there first (or, correlated, outside, where none is typed).
		sc := p.scopes[len(p.scopes)-1]
		if sc.derived {
			return "", "", false // it may be a subquery's column, of any type
		}
		return strings.Join(sc.tables, ","), parts[0], true
	case len(parts) == 1:
		return strings.Join(p.tables, ","), parts[0], true // UPDATE's, DELETE's
	case len(parts) == 2 && !p.derived[parts[0]]:
		return p.tableNamed(parts[0]), parts[1], true
	}
	return "", "", false
}

// fromScope is what columnOf knows of one SELECT's FROM list: the tables
// it names, and whether it also holds a WITH query, a subquery or a
// function.
type fromScope struct {
	tables  []string
	derived bool
	from    []*pg_query.Node // the FROM list
}

// pushFromScope notes the FROM list of a SELECT about to be printed, its
// tables (noteTable: before the targets, which columnOf reads them for)
// and the names of the subqueries and functions in it (derived);
// popFromScope, once it is printed, forgets it.
func (p *printer) pushFromScope(from []*pg_query.Node) {
	var sc fromScope
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			p.noteTable(rv)
			if rv.Schemaname == "" && p.derived[rv.Relname] {
				sc.derived = true // a WITH query's name
			} else {
				sc.tables = append(sc.tables, rv.Relname)
			}
		case n.GetJoinExpr() != nil:
			walk(n.GetJoinExpr().Larg)
			walk(n.GetJoinExpr().Rarg)
		default:
			sc.derived = true
			var a *pg_query.Alias
			if rs := n.GetRangeSubselect(); rs != nil {
				a = rs.Alias
			} else if rf := n.GetRangeFunction(); rf != nil {
				a = rf.Alias
			}
			if a != nil {
				p.deriveName(a.Aliasname)
			}
		}
	}
	for _, n := range from {
		walk(n)
	}
	sc.from = from
	p.scopes = append(p.scopes, sc)
}

// scopeColumnKind is the kind of the column cr names in a subquery (or
// VALUES) of the innermost FROM list (subqueryKind), "" if none says.
// The targets are printed before the FROM list: its subqueries' kinds
// are read here first.
func (p *printer) scopeColumnKind(cr *pg_query.ColumnRef) string {
	if len(p.scopes) == 0 || p.cat != nil {
		return ""
	}
	from := p.scopes[len(p.scopes)-1].from
	for _, n := range from {
		if rs := n.GetRangeSubselect(); rs != nil && rs.Alias != nil && rs.Subquery.GetSelectStmt() != nil {
			if p.subqueryKinds == nil {
				p.subqueryKinds = map[string]map[string]string{}
			}
			p.subqueryKinds[rs.Alias.Aliasname] = selectKinds(rs.Subquery.GetSelectStmt(), names(rs.Alias.Colnames))
		}
	}
	return p.subqueryKind(from, names(cr.Fields))
}

func (p *printer) popFromScope() { p.scopes = p.scopes[:len(p.scopes)-1] }

// deriveName notes name as a WITH query's or a subquery's (derived).
func (p *printer) deriveName(name string) {
	if p.derived == nil {
		p.derived = map[string]bool{}
	}
	p.derived[name] = true
}

// arithmetic are the operators of arithmetic.
var arithmetic = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true}

// arithmetic notes that n is an operand of arithmetic (+ - * / %),
// which SQLite does on numbers only: on a date's text '2020-01-01' + 1
// is 2021. A parameter is noted so; an operand of a kind that is no
// number's is refused, and a table column's kind, known at run time, is
// left for the engine to check (SQLite.Arithmetic). A string constant
// takes the other operand's type, as in PostgreSQL.
func (p *printer) arithmetic(n *pg_query.Node) {
	if prm := p.paramOf(n); prm != nil {
		prm.Arithmetic = true
		return
	}
	if !p.columnTypes || p.cat != nil || n.GetAConst() != nil {
		return
	}
	if cr := n.GetColumnRef(); cr != nil {
		if k := p.scopeColumnKind(cr); k != "" {
			p.numberOperand(k)
		} else if tables, column, ok := p.columnOf(cr); ok {
			p.arithColumns = append(p.arithColumns, KindPart{Tables: tables, Column: column})
		}
		return
	}
	if f := n.GetSqlvalueFunction(); f != nil {
		// CURRENT_DATE, LOCALTIMESTAMP, CURRENT_USER...: none a number.
		kind := map[string]string{"current_date": "date", "current_timestamp": "timestamptz",
			"localtimestamp": "timestamp", "current_time": "time", "localtime": "time"}[sqlValueName(f.Op)]
		if kind == "" {
			kind = "name"
		}
		p.numberOperand(kind)
		return
	}
	if k, _ := valueKind(n); k != "" {
		p.numberOperand(k)
	}
}

// numberOperand refuses an operand of arithmetic of kind, unless a
// number's.
func (p *printer) numberOperand(kind string) {
	if err := ArithmeticOperand(kind); err != nil {
		p.fail(err)
	}
}

// ArithmeticOperand returns the error of an operand of arithmetic of
// kind (as CastKind names kinds; "" if not known), nil for a number's:
// SQLite's arithmetic on anything else is not PostgreSQL's.
func ArithmeticOperand(kind string) error {
	if kind == "" || kind == "float4" || slices.Contains(numericKinds, kind) {
		return nil
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "arithmetic on %s values is not supported by the embedded engine (SQLite); the PostgreSQL engine (--engine postgres) supports it", kind)
}

// hintKind notes that n, if a parameter, is of kind.
func (p *printer) hintKind(n *pg_query.Node, kind string) {
	if prm := p.paramOf(n); prm != nil && prm.Kind == "" {
		prm.Kind = kind
	}
}

// hintTarget notes that n, if a parameter, is given to column col of
// table (or, col "", to the column at position pos).
func (p *printer) hintTarget(n *pg_query.Node, table, col string, pos int) {
	if prm := p.paramOf(n); prm != nil && prm.Kind == "" {
		prm.Table, prm.Column, prm.Position = table, col, pos
		if col != "" {
			prm.Position = -1
		}
	}
}

// noteTable records a table the statement reads or writes, and the name
// it goes by in it.
func (p *printer) noteTable(rv *pg_query.RangeVar) {
	if p.aliases == nil {
		p.aliases = map[string]string{}
	}
	name := rv.Relname
	if rv.Alias != nil {
		name = rv.Alias.Aliasname
	}
	p.aliases[name] = rv.Relname
	for _, t := range p.tables {
		if t == rv.Relname {
			return
		}
	}
	p.tables = append(p.tables, rv.Relname)
}

// references counts the relations named name without a schema in
// node: the references of a WITH query.
func references(node *pg_query.Node, name string) int {
	if node == nil {
		return 0
	}
	n := 0
	walkMessages(node.ProtoReflect(), func(m protoreflect.Message) {
		if rv, ok := m.Interface().(*pg_query.RangeVar); ok && rv.Schemaname == "" && rv.Relname == name {
			n++
		}
	})
	return n
}

// tableNamed returns the table a qualifier names (an alias, or the
// table's own name).
func (p *printer) tableNamed(q string) string {
	if t, ok := p.aliases[q]; ok {
		return t
	}
	return q
}

// sqliteString is s as an SQLite string constant.
func sqliteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
