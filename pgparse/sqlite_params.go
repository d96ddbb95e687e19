package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
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
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return
		}
		parts = append(parts, s.Sval)
	}
	if len(parts) > 1 && parts[0] == "public" {
		parts = parts[1:]
	}
	switch len(parts) {
	case 1:
		prm.Column = parts[0]
	case 2:
		prm.Table, prm.Column = p.tableNamed(parts[0]), parts[1]
	}
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
	if c == nil || c.Isnull || c.GetSval() == nil || cr == nil || !p.typeConstants || p.cat != nil {
		return // a catalog query's constants are typed by its printer
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return
		}
		parts = append(parts, s.Sval)
	}
	if len(parts) > 1 && parts[0] == "public" {
		parts = parts[1:]
	}
	var tables string
	switch len(parts) {
	case 1:
		tables = strings.Join(p.tables, ",")
	case 2:
		tables = p.tableNamed(parts[0])
	default:
		return
	}
	if p.typedConsts == nil {
		p.typedConsts = map[*pg_query.A_Const][2]string{}
	}
	p.typedConsts[c] = [2]string{tables, parts[len(parts)-1]}
}

// arithmetic are the operators of arithmetic.
var arithmetic = map[string]bool{"+": true, "-": true, "*": true, "/": true, "%": true}

// arithmetic notes that n, if a parameter, is an operand of arithmetic.
func (p *printer) arithmetic(n *pg_query.Node) {
	if prm := p.paramOf(n); prm != nil {
		prm.Arithmetic = true
	}
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
