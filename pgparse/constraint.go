package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// constraint describes a constraint node whose text is sp, of a statement
// scanned as toks.
func constraint(toks []*pg_query.ScanToken, c *pg_query.Constraint, sp Span) Constraint {
	out := Constraint{Name: c.Conname, Span: sp, NotValid: c.SkipValidation, Deferrable: c.Deferrable}
	switch c.Contype {
	case pg_query.ConstrType_CONSTR_CHECK:
		out.Kind = ConstraintCheck
		if k := tokenIn(toks, sp, pg_query.Token_CHECK); k != nil {
			open := k.End
			for _, t := range toks {
				if t.Start >= k.End && t.Token == pg_query.Token_ASCII_40 {
					open = t.Start
					break
				}
			}
			out.Condition = Span{int(open) + 1, listEnd(toks, open)}
		}
	case pg_query.ConstrType_CONSTR_FOREIGN:
		out.Kind = ConstraintForeignKey
		out.Columns = stringList(c.FkAttrs)
		if c.Pktable != nil {
			out.RefTable = c.Pktable.Relname
		}
	case pg_query.ConstrType_CONSTR_UNIQUE:
		out.Kind = ConstraintUnique
		out.Columns = stringList(c.Keys)
	case pg_query.ConstrType_CONSTR_PRIMARY:
		out.Kind = ConstraintPrimaryKey
		out.Columns = stringList(c.Keys)
	case pg_query.ConstrType_CONSTR_NOTNULL:
		out.Kind = ConstraintNotNull
	case pg_query.ConstrType_CONSTR_DEFAULT:
		out.Kind = ConstraintDefault
	}
	return out
}

// lastTokenEnd returns the end of the last token (comments aside) that
// starts in [from, before), or from if there is none.
func lastTokenEnd(toks []*pg_query.ScanToken, from, before int) int {
	end := from
	for _, t := range toks {
		if int(t.Start) >= from && int(t.Start) < before && !isComment(t) {
			end = int(t.End)
		}
	}
	return end
}

// listEnd returns the offset of the parenthesis that closes the
// parenthesized list which follows offset.
func listEnd(toks []*pg_query.ScanToken, offset int32) int {
	depth := 0
	for _, t := range toks {
		if t.Start < offset {
			continue
		}
		switch t.Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
			if depth == 0 {
				return int(t.Start)
			}
		}
	}
	return -1
}

// nameEnd returns the end of the dotted name whose first token is first.
func nameEnd(toks []*pg_query.ScanToken, first *pg_query.ScanToken) int {
	end := first.End
	for i, t := range toks {
		if t.Start < first.Start {
			continue
		}
		if t.Start == end && t.Token == pg_query.Token_ASCII_46 && i+1 < len(toks) {
			end = toks[i+1].End
		}
	}
	return int(end)
}
