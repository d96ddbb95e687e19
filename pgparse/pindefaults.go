package pgparse

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// PinDefaults returns the ALTER TABLE sql with the defaults of the columns
// it adds named in values (Recompute.Column; one added IF NOT EXISTS must
// have been missing) replaced by the value each
// gave the table's rows (its text, or nil for NULL), and each column's
// default set back to the expression written: subcommands ALTER COLUMN
// ... SET DEFAULT appended to the statement. Run on every node, it gives
// the rows there are the value the origin computed (now() differs on
// each node), and new rows the default the client wrote.
func PinDefaults(sql string, values map[string]*string) (string, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return "", err
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetAlterTableStmt() == nil {
		return "", fmt.Errorf("pin defaults: not one ALTER TABLE: %.80q", sql)
	}
	at := tree.Stmts[0].Stmt.GetAlterTableStmt()
	pinned := 0
	for _, c := range at.Cmds {
		cmd := c.GetAlterTableCmd()
		def := cmd.GetDef().GetColumnDef()
		if cmd.GetSubtype() != pg_query.AlterTableType_AT_AddColumn || def == nil {
			continue
		}
		value, ok := values[def.Colname]
		if !ok {
			continue
		}
		for _, cn := range def.Constraints {
			k := cn.GetConstraint()
			if k == nil || k.Contype != pg_query.ConstrType_CONSTR_DEFAULT {
				continue
			}
			written := k.RawExpr
			if value == nil {
				k.RawExpr = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}
			} else {
				k.RawExpr = &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
					Val: &pg_query.A_Const_Sval{Sval: &pg_query.String{Sval: *value}}}}}
			}
			at.Cmds = append(at.Cmds, &pg_query.Node{Node: &pg_query.Node_AlterTableCmd{AlterTableCmd: &pg_query.AlterTableCmd{
				Subtype: pg_query.AlterTableType_AT_ColumnDefault, Name: def.Colname, Def: written, Behavior: pg_query.DropBehavior_DROP_RESTRICT}}})
			pinned++
		}
	}
	if pinned != len(values) {
		return "", fmt.Errorf("pin defaults: %d of %d columns found in %.80q", pinned, len(values), sql)
	}
	return pg_query.Deparse(tree)
}
