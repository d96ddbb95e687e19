package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Concurrently is a CREATE INDEX, DROP INDEX or ALTER TABLE ... DETACH
// PARTITION with CONCURRENTLY. PostgreSQL runs those only outside a
// transaction block, while certa runs a schema change in a transaction on
// every node: without the word it makes the same objects, holding
// stronger locks meanwhile. What PostgreSQL refuses to do concurrently it
// must still refuse: its checks of the statement's form are done here
// (Refusal), those that depend on the objects by the caller, which looks
// up the relation named.
type Concurrently struct {
	// SQL is the statement with the word blanked out (spaces, so that
	// positions in its errors stay the client's).
	SQL string
	// Refusal is PostgreSQL's message (SQLSTATE 0A000) for a form it
	// does not run concurrently at all, or "".
	Refusal string
	// Kind is what Relation is: "index on" (CREATE INDEX: its table),
	// "drop index" (the index) or "detach from" (the partitioned table).
	Kind string
	// Relation is the relation's name, quoted and qualified as written,
	// for to_regclass; RelName is its last part as written.
	Relation, RelName string
}

// ParseConcurrently describes sql if it is one statement with
// CONCURRENTLY that certa runs without it (Concurrently). Cheap for other
// statements.
func ParseConcurrently(sql string) (Concurrently, bool) {
	if !strings.Contains(strings.ToUpper(sql), "CONCURRENTLY") {
		return Concurrently{}, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return Concurrently{}, false
	}
	var cc Concurrently
	var rv *pg_query.RangeVar
	st := tree.Stmts[0].Stmt
	switch {
	case st.GetIndexStmt().GetConcurrent():
		cc.Kind, rv = "index on", st.GetIndexStmt().Relation
	case st.GetDropStmt().GetConcurrent():
		d := st.GetDropStmt()
		cc.Kind = "drop index"
		switch {
		case len(d.Objects) != 1:
			cc.Refusal = "DROP INDEX CONCURRENTLY does not support dropping multiple objects"
		case d.Behavior == pg_query.DropBehavior_DROP_CASCADE:
			cc.Refusal = "DROP INDEX CONCURRENTLY does not support CASCADE"
		default:
			rv = rangeVarOf(d.Objects[0])
		}
	case st.GetAlterTableStmt() != nil:
		at := st.GetAlterTableStmt()
		for _, c := range at.Cmds {
			if pc := c.GetAlterTableCmd().GetDef().GetPartitionCmd(); pc != nil && pc.Concurrent {
				cc.Kind, rv = "detach from", at.Relation
			}
		}
	}
	if cc.Kind == "" {
		return Concurrently{}, false
	}
	if names := rangeVarName(rv); names != nil {
		cc.Relation, cc.RelName = names[0], rv.Relname
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return Concurrently{}, false
	}
	b := []byte(sql)
	for _, tok := range scan.Tokens {
		if tok.Token == pg_query.Token_CONCURRENTLY {
			for i := tok.Start; i < tok.End; i++ {
				b[i] = ' '
			}
		}
	}
	cc.SQL = string(b)
	return cc, true
}

// rangeVarOf is the relation a DROP's object (a list of names) names.
func rangeVarOf(object *pg_query.Node) *pg_query.RangeVar {
	var parts []string
	for _, n := range object.GetList().GetItems() {
		parts = append(parts, n.GetString_().GetSval())
	}
	switch len(parts) {
	case 1:
		return &pg_query.RangeVar{Relname: parts[0]}
	case 2:
		return &pg_query.RangeVar{Schemaname: parts[0], Relname: parts[1]}
	}
	return nil // a database's name too: PostgreSQL refuses it itself
}
