package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// ParseVacuum returns the command tag of sql if it is one VACUUM or
// ANALYZE statement ("VACUUM", "ANALYZE"), and the tables it names (none:
// every table). Cheap for other statements.
func ParseVacuum(sql string) (tag string, tables []string, ok bool) {
	s := strings.TrimLeft(sql, " \t\r\n")
	if len(s) < 6 || !strings.EqualFold(s[:6], "vacuum") && !strings.EqualFold(s[:6], "analyz") && !strings.EqualFold(s[:6], "analys") {
		return "", nil, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", nil, false
	}
	vs := tree.Stmts[0].Stmt.GetVacuumStmt()
	if vs == nil {
		return "", nil, false
	}
	tag = "ANALYZE"
	if vs.IsVacuumcmd {
		tag = "VACUUM"
	}
	for _, r := range vs.Rels {
		if rel := r.GetVacuumRelation().GetRelation(); rel != nil {
			name := rel.Relname
			if rel.Schemaname != "" {
				name = rel.Schemaname + "." + name
			}
			tables = append(tables, name)
		}
	}
	return tag, tables, true
}
