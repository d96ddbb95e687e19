package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// WithoutConcurrently returns sql with its CONCURRENTLY blanked out if sql
// is one CREATE INDEX, DROP INDEX or ALTER TABLE ... DETACH PARTITION
// that has it, and whether it did. PostgreSQL runs those only outside a
// transaction block, while certa runs a schema change in a transaction on
// every node: without the word it makes the same objects, holding
// stronger locks meanwhile. The word becomes spaces, so positions in the
// statement's errors stay the client's. Cheap for other statements.
func WithoutConcurrently(sql string) (string, bool) {
	if !strings.Contains(strings.ToUpper(sql), "CONCURRENTLY") {
		return sql, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sql, false
	}
	st := tree.Stmts[0].Stmt
	concurrent := st.GetIndexStmt().GetConcurrent() || st.GetDropStmt().GetConcurrent()
	if at := st.GetAlterTableStmt(); at != nil {
		for _, c := range at.Cmds {
			if pc := c.GetAlterTableCmd().GetDef().GetPartitionCmd(); pc != nil && pc.Concurrent {
				concurrent = true
			}
		}
	}
	if !concurrent {
		return sql, false
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return sql, false
	}
	b := []byte(sql)
	blanked := false
	for _, tok := range scan.Tokens {
		if tok.Token == pg_query.Token_CONCURRENTLY {
			for i := tok.Start; i < tok.End; i++ {
				b[i] = ' '
			}
			blanked = true
		}
	}
	return string(b), blanked
}
