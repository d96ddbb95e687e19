package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// isTemp reports whether rel names a temporary relation: made TEMP (or
// TEMPORARY, LOCAL TEMP), or in schema pg_temp.
func isTemp(rel *pg_query.RangeVar) bool {
	return rel != nil && (rel.Relpersistence == "t" || strings.EqualFold(rel.Schemaname, "pg_temp"))
}

// onCommitAction names a temporary table's ON COMMIT action as
// CreateTable.OnCommit does.
func onCommitAction(a pg_query.OnCommitAction) string {
	switch a {
	case pg_query.OnCommitAction_ONCOMMIT_DROP:
		return "DROP"
	case pg_query.OnCommitAction_ONCOMMIT_DELETE_ROWS:
		return "DELETE ROWS"
	}
	return ""
}

// TempCreate is a statement that makes a temporary relation.
type TempCreate struct {
	// Kind is "TABLE" (CREATE TABLE with its columns), "TABLE AS"
	// (CREATE TABLE AS, SELECT INTO), "VIEW" or "SEQUENCE".
	Kind     string
	Name     string
	OnCommit string // as CreateTable.OnCommit
}

// ParseTempCreate reports whether sql, one statement, makes a temporary
// relation, and which.
func ParseTempCreate(sql string) (TempCreate, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return TempCreate{}, false
	}
	n := tree.Stmts[0].Stmt
	switch {
	case n.GetCreateStmt() != nil:
		cs := n.GetCreateStmt()
		if isTemp(cs.Relation) {
			return TempCreate{Kind: "TABLE", Name: cs.Relation.Relname, OnCommit: onCommitAction(cs.Oncommit)}, true
		}
	case n.GetCreateTableAsStmt() != nil:
		ca := n.GetCreateTableAsStmt()
		if ca.Into != nil && isTemp(ca.Into.Rel) {
			kind := "TABLE AS"
			if ca.Objtype == pg_query.ObjectType_OBJECT_MATVIEW {
				kind = "MATERIALIZED VIEW"
			}
			return TempCreate{Kind: kind, Name: ca.Into.Rel.Relname, OnCommit: onCommitAction(ca.Into.OnCommit)}, true
		}
	case n.GetSelectStmt() != nil:
		if into := n.GetSelectStmt().IntoClause; into != nil && isTemp(into.Rel) {
			return TempCreate{Kind: "TABLE AS", Name: into.Rel.Relname, OnCommit: onCommitAction(into.OnCommit)}, true
		}
	case n.GetViewStmt() != nil:
		if v := n.GetViewStmt(); isTemp(v.View) {
			return TempCreate{Kind: "VIEW", Name: v.View.Relname}, true
		}
	case n.GetCreateSeqStmt() != nil:
		if s := n.GetCreateSeqStmt(); isTemp(s.Sequence) {
			return TempCreate{Kind: "SEQUENCE", Name: s.Sequence.Relname}, true
		}
	}
	return TempCreate{}, false
}
