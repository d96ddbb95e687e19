package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// lockModes are LOCK TABLE's modes, by the number PostgreSQL's parser
// gives them (LockStmt.Mode).
var lockModes = []string{1: "ACCESS SHARE", 2: "ROW SHARE", 3: "ROW EXCLUSIVE", 4: "SHARE UPDATE EXCLUSIVE",
	5: "SHARE", 6: "SHARE ROW EXCLUSIVE", 7: "EXCLUSIVE", 8: "ACCESS EXCLUSIVE"}

// ParseLockTable returns the mode ("ACCESS SHARE") of sql if it is one
// LOCK TABLE statement, and the tables it names (schema-qualified as
// written). Cheap for other statements.
func ParseLockTable(sql string) (mode string, tables []string, ok bool) {
	s := strings.TrimLeft(sql, " \t\r\n")
	if len(s) < 4 || !strings.EqualFold(s[:4], "lock") {
		return "", nil, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", nil, false
	}
	ls := tree.Stmts[0].Stmt.GetLockStmt()
	if ls == nil || ls.Mode < 1 || int(ls.Mode) >= len(lockModes) {
		return "", nil, false
	}
	for _, r := range ls.Relations {
		if rel := r.GetRangeVar(); rel != nil {
			name := rel.Relname
			if rel.Schemaname != "" {
				name = rel.Schemaname + "." + name
			}
			tables = append(tables, name)
		}
	}
	return lockModes[ls.Mode], tables, true
}
