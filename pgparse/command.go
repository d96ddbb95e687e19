package pgparse

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Command is what a statement is, as PostgreSQL's parser reads it.
type Command struct {
	// Kind is the parse tree's statement node, as pg_query names it
	// (SelectStmt, CreateRoleStmt, ExplainStmt, NotifyStmt...).
	Kind string
	// Words are its leading keywords, upper case (at most two): CREATE
	// ROLE, NOTIFY, SECURITY LABEL. For messages.
	Words string
}

// ParseCommand returns what the first statement of sql is, or the error
// PostgreSQL's parser gives for sql (a client error: 42601 with its
// position).
func ParseCommand(sql string) (Command, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return Command{}, parseError(err)
	}
	if len(tree.Stmts) == 0 || tree.Stmts[0].Stmt == nil {
		return Command{}, ErrNotPrinted
	}
	kind := strings.TrimPrefix(fmt.Sprintf("%T", tree.Stmts[0].Stmt.Node), "*pg_query.Node_")
	return Command{Kind: kind, Words: leadingWords(sql, false)}, nil
}

// OutsideBlockOnly returns the command PostgreSQL refuses inside a
// transaction block ("VACUUM", "CREATE INDEX CONCURRENTLY", "DROP INDEX
// CONCURRENTLY") if sql is one, else "".
func OutsideBlockOnly(sql string) string {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return ""
	}
	switch n := tree.Stmts[0].Stmt.Node.(type) {
	case *pg_query.Node_VacuumStmt:
		if n.VacuumStmt.IsVacuumcmd {
			return "VACUUM"
		}
	case *pg_query.Node_IndexStmt:
		if n.IndexStmt.Concurrent {
			return "CREATE INDEX CONCURRENTLY"
		}
	case *pg_query.Node_DropStmt:
		if n.DropStmt.Concurrent {
			return "DROP INDEX CONCURRENTLY"
		}
	}
	return ""
}
