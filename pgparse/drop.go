package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// DroppedIndexes returns the indexes a DROP INDEX statement names, each as
// SQL would write it qualified ("s"."i", or "i"), or nil for any other
// statement. The tables of dropped indexes are gone from the catalogs by
// the time PostgreSQL reports the drop, so they are looked up before.
func DroppedIndexes(sql string) []string {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	drop := tree.Stmts[0].Stmt.GetDropStmt()
	if drop == nil || drop.RemoveType != pg_query.ObjectType_OBJECT_INDEX {
		return nil
	}
	var names []string
	for _, obj := range drop.Objects {
		var parts []string
		for _, item := range obj.GetList().GetItems() {
			parts = append(parts, `"`+strings.ReplaceAll(item.GetString_().GetSval(), `"`, `""`)+`"`)
		}
		if len(parts) > 0 {
			names = append(names, strings.Join(parts, "."))
		}
	}
	return names
}
