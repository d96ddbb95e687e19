package pgparse

import (
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
