package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TxModes are the transaction modes a statement asks for: BEGIN and
// START TRANSACTION for the transaction they start, SET TRANSACTION for
// the current one, SET SESSION CHARACTERISTICS AS TRANSACTION for the
// session's later ones. A mode the statement does not name is nil (or "").
type TxModes struct {
	Of         string // "begin", "transaction" or "session"
	Isolation  string // "serializable", "repeatable read", "read committed", "read uncommitted"
	ReadOnly   *bool
	Deferrable *bool
}

// TransactionModes returns the modes sql asks for, if sql is one BEGIN,
// START TRANSACTION, SET TRANSACTION or SET SESSION CHARACTERISTICS AS
// TRANSACTION statement.
func TransactionModes(sql string) (m TxModes, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return m, false
	}
	var opts []*pg_query.Node
	switch n := tree.Stmts[0].Stmt.Node.(type) {
	case *pg_query.Node_TransactionStmt:
		k := n.TransactionStmt.Kind
		if k != pg_query.TransactionStmtKind_TRANS_STMT_BEGIN && k != pg_query.TransactionStmtKind_TRANS_STMT_START {
			return m, false
		}
		m.Of, opts = "begin", n.TransactionStmt.Options
	case *pg_query.Node_VariableSetStmt:
		vs := n.VariableSetStmt
		if vs.Kind != pg_query.VariableSetKind_VAR_SET_MULTI {
			return m, false
		}
		switch vs.Name {
		case "TRANSACTION":
			m.Of = "transaction"
		case "SESSION CHARACTERISTICS":
			m.Of = "session"
		default:
			return m, false // SET TRANSACTION SNAPSHOT
		}
		opts = vs.Args
	default:
		return m, false
	}
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		c := d.Arg.GetAConst()
		if c == nil {
			continue
		}
		switch d.Defname {
		case "transaction_isolation":
			m.Isolation = c.GetSval().GetSval()
		case "transaction_read_only":
			v := c.GetIval().GetIval() != 0
			m.ReadOnly = &v
		case "transaction_deferrable":
			v := c.GetIval().GetIval() != 0
			m.Deferrable = &v
		}
	}
	return m, true
}
