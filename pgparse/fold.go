package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// FoldIdentifiers returns sql with its unquoted names in lower case, as
// PostgreSQL reads them (CREATE TABLE Users (Id int) makes users with
// column id), for statements handed to an engine that keeps names as
// written (SQLite). Quoted names, strings and comments are left as they
// are, and so are reserved words, which are no names (SELECT, FROM);
// other keywords are folded too (ALTER, KEY), as a keyword may be a
// name (a column Name or Type) and none is told by its case. Only ASCII
// letters change, as in PostgreSQL's UTF-8 databases, so every
// byte offset into sql stays valid. sql is returned unchanged if it does
// not scan.
func FoldIdentifiers(sql string) string {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return sql
	}
	var b []byte
	for _, t := range scan.Tokens {
		if !foldable(t) {
			continue
		}
		word := sql[t.Start:t.End]
		if strings.HasPrefix(word, `"`) || word == lowerASCII(word) {
			continue
		}
		if b == nil {
			b = []byte(sql)
		}
		copy(b[t.Start:t.End], lowerASCII(word))
	}
	if b == nil {
		return sql
	}
	return string(b)
}

// foldable reports whether a token is a name PostgreSQL folds: an
// unquoted identifier, or a keyword that is not reserved (a column may be
// called Name or Type).
func foldable(t *pg_query.ScanToken) bool {
	switch t.KeywordKind {
	case pg_query.KeywordKind_RESERVED_KEYWORD:
		return false
	case pg_query.KeywordKind_NO_KEYWORD:
		return t.Token == pg_query.Token_IDENT
	}
	return true
}

// lowerASCII lowers A-Z alone.
func lowerASCII(s string) string {
	return strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, s)
}
