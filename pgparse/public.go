package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

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
