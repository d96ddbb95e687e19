package pgparse

import "strings"

// QuoteIdent quotes an identifier where PostgreSQL's quote_ident would:
// unless it is lower-case letters, digits and underscores, not starting
// with a digit, and no keyword but an unreserved one.
func QuoteIdent(s string) string {
	plain := s != "" && !quotedKeywords[s]
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// ReservedKeywords are PostgreSQL's reserved key words (pg_get_keywords'
// catcode R), which a tool must quote as identifiers.
var ReservedKeywords = strings.Fields(`all analyse analyze and any array as asc asymmetric both case cast check
collate column constraint create current_catalog current_date current_role current_time current_timestamp
current_user default deferrable desc distinct do else end except false fetch for foreign from grant group
having in initially intersect into lateral leading limit localtime localtimestamp not null offset on only or
order placing primary references returning select session_user some symmetric system_user table then to
trailing true union unique user using variadic when where window with`)

// quotedKeywords are the keywords quote_ident quotes: reserved ones, and
// those that may not be a function or type name (catcode C) or may only
// be one (T).
var quotedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range append(ReservedKeywords, strings.Fields(`between bigint bit boolean char character coalesce dec decimal
exists extract float greatest grouping inout int integer interval least national nchar none normalize nullif numeric out
overlay position precision real row setof smallint substring time timestamp treat trim values varchar xmlattributes
xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot xmlserialize xmltable
authorization binary collation concurrently cross current_schema freeze full ilike inner is isnull join left like
natural notnull outer overlaps right similar tablesample verbose`)...) {
		m[w] = true
	}
	return m
}()
