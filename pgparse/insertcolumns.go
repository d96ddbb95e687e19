package pgparse

import (
	"strconv"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// InsertWithColumns returns sql, one INSERT of VALUES without a column
// list, with its table's first columns listed, as many as its rows have
// values: what PostgreSQL reads it as. ok is false for any other
// statement, or rows longer than columns (the statement then fails as it
// is).
func InsertWithColumns(sql string, columns []string) (string, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	ins := tree.Stmts[0].Stmt.GetInsertStmt()
	if ins == nil || len(ins.Cols) > 0 {
		return "", false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		return "", false
	}
	n := 0
	for _, row := range sel.ValuesLists {
		n = max(n, len(row.GetList().Items))
	}
	if n > len(columns) {
		return "", false
	}
	for _, col := range columns[:n] {
		ins.Cols = append(ins.Cols, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Name: col}}})
	}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return "", false
	}
	return out, true
}

// InsertConstant is a string constant of an INSERT's VALUES, given as
// the value of a column.
type InsertConstant struct {
	// Column is the column's name, as the INSERT lists it; "" where it
	// lists none, and Index is then its place in the table.
	Column string
	Index  int
	Value  string
	// Position is where it stands in the statement, counting characters
	// from 1 (an error's position).
	Position int
}

// InsertConstants returns the string constants that sql, one INSERT of
// VALUES, gives as columns' values (not cast, not inside an expression),
// in the order PostgreSQL's parser reads them: row by row, column by
// column. ok is false for any other statement.
func InsertConstants(sql string) (table string, consts []InsertConstant, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", nil, false
	}
	ins := tree.Stmts[0].Stmt.GetInsertStmt()
	if ins == nil || ins.Relation == nil {
		return "", nil, false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		return "", nil, false
	}
	for _, row := range sel.ValuesLists {
		for i, item := range row.GetList().Items {
			c := item.GetAConst()
			if c == nil || c.GetSval() == nil || c.Location < 0 || int(c.Location) > len(sql) {
				continue
			}
			k := InsertConstant{Index: i, Value: c.GetSval().Sval, Position: utf8.RuneCountInString(sql[:c.Location]) + 1}
			if len(ins.Cols) > 0 {
				if i >= len(ins.Cols) {
					continue
				}
				k.Column = ins.Cols[i].GetResTarget().GetName()
			}
			consts = append(consts, k)
		}
	}
	name := ins.Relation.Relname
	if ins.Relation.Schemaname != "" && ins.Relation.Schemaname != "public" {
		name = ins.Relation.Schemaname + "." + name
	}
	return name, consts, true
}

// InsertValue is a value of an INSERT's VALUES as written: Known for a
// string or number constant (Text, a number's digits with its sign) or
// NULL (Null); not for anything else (DEFAULT, an expression, a
// parameter).
type InsertValue struct {
	Text        string
	Null, Known bool
}

// InsertRows returns the rows of sql, one INSERT of VALUES without ON
// CONFLICT, and the columns it lists (none if it lists none). ok is
// false for any other statement.
func InsertRows(sql string) (table string, cols []string, rows [][]InsertValue, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", nil, nil, false
	}
	ins := tree.Stmts[0].Stmt.GetInsertStmt()
	if ins == nil || ins.Relation == nil || ins.OnConflictClause != nil {
		return "", nil, nil, false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		return "", nil, nil, false
	}
	for _, c := range ins.Cols {
		cols = append(cols, c.GetResTarget().GetName())
	}
	for _, row := range sel.ValuesLists {
		var vals []InsertValue
		for _, item := range row.GetList().Items {
			vals = append(vals, constantValue(item))
		}
		rows = append(rows, vals)
	}
	name := ins.Relation.Relname
	if ins.Relation.Schemaname != "" && ins.Relation.Schemaname != "public" {
		name = ins.Relation.Schemaname + "." + name
	}
	return name, cols, rows, true
}

// constantValue is n as a value of VALUES.
func constantValue(n *pg_query.Node) InsertValue {
	neg := ""
	if a := n.GetAExpr(); a != nil && a.Lexpr == nil && operator(a.Name) == "-" {
		neg, n = "-", a.Rexpr
	}
	c := n.GetAConst()
	switch {
	case c == nil:
		return InsertValue{}
	case c.Isnull && neg == "":
		return InsertValue{Null: true, Known: true}
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Sval:
		if neg == "" {
			return InsertValue{Text: v.Sval.Sval, Known: true}
		}
	case *pg_query.A_Const_Ival:
		return InsertValue{Text: neg + strconv.Itoa(int(v.Ival.Ival)), Known: true}
	case *pg_query.A_Const_Fval:
		return InsertValue{Text: neg + v.Fval.Fval, Known: true}
	case *pg_query.A_Const_Boolval:
		if neg == "" {
			return InsertValue{Text: strconv.FormatBool(v.Boolval.Boolval), Known: true}
		}
	}
	return InsertValue{}
}
