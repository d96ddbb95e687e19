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

// UnqualifyPublic removes the schema public from the names of a schema
// statement (public.t, "public"."t" become t): the embedded engine keeps
// PostgreSQL's public schema as SQLite's main database, whose objects go
// unqualified.
func UnqualifyPublic(sql string) string {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return sql
	}
	toks := scan.Tokens
	var b strings.Builder
	last := 0
	for i := 0; i+2 < len(toks); i++ {
		t := toks[i]
		word := sql[t.Start:t.End]
		if t.Token != pg_query.Token_IDENT || word != "public" && word != `"public"` ||
			toks[i+1].Token != pg_query.Token_ASCII_46 || toks[i+2].Token != pg_query.Token_IDENT && toks[i+2].KeywordKind == pg_query.KeywordKind_NO_KEYWORD ||
			i > 0 && toks[i-1].Token == pg_query.Token_ASCII_46 {
			continue
		}
		b.WriteString(sql[last:t.Start])
		last = int(toks[i+2].Start)
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}
