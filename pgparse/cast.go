package pgparse

import (
	"regexp"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Cast is one CAST ( expr AS type ) of a statement.
type Cast struct {
	Span      // the whole CAST ( ... )
	Expr Span // expr
	// Type is the type as written, in lower case with blanks collapsed
	// and none around punctuation: "integer", "numeric(10,2)",
	// "character varying(5)", "double precision", "int[]".
	Type string
}

// FindCasts returns the outermost CASTs of sql in the order they appear
// (a CAST inside another's expression is in that Expr). ok is false when
// PostgreSQL's scanner cannot read sql.
func FindCasts(sql string) (casts []Cast, ok bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	toks := scan.Tokens
	for i := 0; i < len(toks); i++ {
		if toks[i].Token != pg_query.Token_CAST || i+1 >= len(toks) || toks[i+1].Token != pg_query.Token_ASCII_40 {
			continue
		}
		depth, as, end := 0, -1, -1
		for j := i + 1; j < len(toks) && end < 0; j++ {
			switch toks[j].Token {
			case pg_query.Token_ASCII_40:
				depth++
			case pg_query.Token_ASCII_41:
				depth--
				if depth == 0 {
					end = j
				}
			case pg_query.Token_AS:
				if depth == 1 {
					as = j
				}
			}
		}
		if as < 0 || end < 0 || as+1 >= end {
			return nil, false // not a cast PostgreSQL would parse
		}
		casts = append(casts, Cast{
			Span: Span{int(toks[i].Start), int(toks[end].End)},
			Expr: Span{int(toks[i+1].End), int(toks[as].Start)},
			Type: normalizeType(sql[toks[as+1].Start:toks[end].Start]),
		})
		i = end
	}
	return casts, true
}

var (
	blanks       = regexp.MustCompile(`\s+`)
	blanksAround = regexp.MustCompile(`\s*([(),.\[\]])\s*`)
)

func normalizeType(t string) string {
	t = strings.ToLower(strings.TrimSpace(t))
	t = blanks.ReplaceAllString(t, " ")
	return blanksAround.ReplaceAllString(t, "$1")
}
