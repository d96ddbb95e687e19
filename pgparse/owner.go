package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// OwnerChange is an ALTER ... OWNER TO of one object, as pg_dump writes
// one after each object it makes.
type OwnerChange struct {
	Kind string // TABLE, SEQUENCE, VIEW, INDEX, MATERIALIZED VIEW or SCHEMA
	Name string // as PostgreSQL folds it, without a public. qualifier
	// Schema is the schema that qualifies Name, if another than public.
	Schema string
}

// ParseOwnerChange returns the OWNER TO of sql if sql is one ALTER TABLE,
// SEQUENCE, VIEW, INDEX or MATERIALIZED VIEW ... OWNER TO with no other
// command, or an ALTER SCHEMA ... OWNER TO.
func ParseOwnerChange(sql string) (OwnerChange, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return OwnerChange{}, false
	}
	stmt := tree.Stmts[0].Stmt
	if ao := stmt.GetAlterOwnerStmt(); ao != nil {
		if ao.ObjectType != pg_query.ObjectType_OBJECT_SCHEMA {
			return OwnerChange{}, false
		}
		return OwnerChange{Kind: "SCHEMA", Name: ao.Object.GetString_().GetSval()}, true
	}
	at := stmt.GetAlterTableStmt()
	if at == nil || at.Relation == nil || len(at.Cmds) != 1 ||
		at.Cmds[0].GetAlterTableCmd().GetSubtype() != pg_query.AlterTableType_AT_ChangeOwner {
		return OwnerChange{}, false
	}
	kind := strings.ReplaceAll(strings.TrimPrefix(at.Objtype.String(), "OBJECT_"), "_", " ")
	if at.Objtype == pg_query.ObjectType_OBJECT_MATVIEW {
		kind = "MATERIALIZED VIEW"
	}
	oc := OwnerChange{Kind: kind, Name: at.Relation.Relname}
	if s := at.Relation.Schemaname; s != "" && s != "public" {
		oc.Schema = s
	}
	return oc, true
}
