package pgparse

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// insertOfValues parses sql as one INSERT of VALUES; ok is false for any
// other statement.
func insertOfValues(sql string) (tree *pg_query.ParseResult, ins *pg_query.InsertStmt, rows []*pg_query.Node, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, nil, nil, false
	}
	ins = tree.Stmts[0].Stmt.GetInsertStmt()
	if ins == nil || ins.Relation == nil {
		return nil, nil, nil, false
	}
	sel := ins.SelectStmt.GetSelectStmt()
	if sel == nil || len(sel.ValuesLists) == 0 {
		return nil, nil, nil, false
	}
	return tree, ins, sel.ValuesLists, true
}

// InsertWithColumns returns sql, one INSERT of VALUES without a column
// list, with its table's first columns listed, as many as its rows have
// values: what PostgreSQL reads it as. ok is false for any other
// statement, or rows longer than columns (the statement then fails as it
// is).
func InsertWithColumns(sql string, columns []string) (string, bool) {
	tree, ins, rows, ok := insertOfValues(sql)
	if !ok || len(ins.Cols) > 0 {
		return "", false
	}
	n := 0
	for _, row := range rows {
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

// InsertValues are the rows of an INSERT of VALUES, as written.
type InsertValues struct {
	Table string
	// Columns are the columns it lists, none if it lists none.
	Columns []string
	Rows    [][]InsertValue
	// Upsert: it has ON CONFLICT.
	Upsert bool
}

// InsertValue is a value of an INSERT's VALUES as written: Known for a
// string constant (String, Text), a number (Text, its digits with its
// sign) or NULL (Null); not for anything else (DEFAULT, an expression, a
// parameter). Position is where it stands in the statement, counting
// characters from 1 (an error's position).
type InsertValue struct {
	Text                string
	Null, Known, String bool
	Position            int
}

// InsertRows returns the rows of sql, one INSERT of VALUES. ok is false
// for any other statement.
func InsertRows(sql string) (v InsertValues, ok bool) {
	_, ins, rows, ok := insertOfValues(sql)
	if !ok {
		return v, false
	}
	v.Upsert = ins.OnConflictClause != nil
	for _, c := range ins.Cols {
		v.Columns = append(v.Columns, c.GetResTarget().GetName())
	}
	for _, row := range rows {
		var vals []InsertValue
		for _, item := range row.GetList().Items {
			vals = append(vals, constantValue(sql, item))
		}
		v.Rows = append(v.Rows, vals)
	}
	v.Table = ins.Relation.Relname
	if ins.Relation.Schemaname != "" && ins.Relation.Schemaname != "public" {
		v.Table = ins.Relation.Schemaname + "." + v.Table
	}
	return v, true
}

// constantValue is n, an item of sql's VALUES, as a value.
func constantValue(sql string, n *pg_query.Node) InsertValue {
	neg := ""
	if a := n.GetAExpr(); a != nil && a.Lexpr == nil && operator(a.Name) == "-" {
		neg, n = "-", a.Rexpr
	}
	c := n.GetAConst()
	if c == nil {
		return InsertValue{}
	}
	v := InsertValue{Known: true}
	v.Position = charPosition(sql, c.Location)
	switch val := c.Val.(type) {
	case nil:
		v.Null = c.Isnull && neg == ""
		v.Known = v.Null
	case *pg_query.A_Const_Sval:
		v.Text, v.String, v.Known = val.Sval.Sval, true, neg == ""
	case *pg_query.A_Const_Ival:
		v.Text = neg + strconv.Itoa(int(val.Ival.Ival))
	case *pg_query.A_Const_Fval:
		v.Text = neg + val.Fval.Fval
	case *pg_query.A_Const_Boolval:
		v.Text, v.Known = strconv.FormatBool(val.Boolval.Boolval), neg == ""
	default:
		v.Known = false
	}
	return v
}
