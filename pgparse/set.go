package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Set is a SET or RESET of one run-time parameter, as PostgreSQL reads it.
type Set struct {
	Name  string // lower case, as PostgreSQL names it: SET TIME ZONE is "timezone"
	Local bool   // SET LOCAL
	Reset bool   // RESET name, SET name TO DEFAULT
	All   bool   // RESET ALL
}

// ParseSet returns the SET or RESET of sql if sql is one such statement
// of a parameter (not SET TRANSACTION, SET SESSION CHARACTERISTICS).
func ParseSet(sql string) (s Set, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return s, false
	}
	vs := tree.Stmts[0].Stmt.GetVariableSetStmt()
	if vs == nil {
		return s, false
	}
	s = Set{Name: strings.ToLower(vs.Name), Local: vs.IsLocal}
	switch vs.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE, pg_query.VariableSetKind_VAR_SET_CURRENT:
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		s.Reset = true
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		s.Reset, s.All = true, true
	default:
		return Set{}, false
	}
	return s, true
}

// ParseShow returns the parameter sql shows if sql is one SHOW statement,
// named as PostgreSQL names it: SHOW TRANSACTION ISOLATION LEVEL is
// "transaction_isolation", SHOW TIME ZONE "timezone".
func ParseShow(sql string) (name string, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	vs := tree.Stmts[0].Stmt.GetVariableShowStmt()
	if vs == nil {
		return "", false
	}
	return strings.ToLower(vs.Name), true
}
