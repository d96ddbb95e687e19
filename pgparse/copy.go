package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Copy is a COPY statement whose data travels to or from the client
// (FROM STDIN, TO STDOUT).
type Copy struct {
	From    bool   // FROM STDIN; else TO STDOUT
	Binary  bool   // in binary format; else text or csv
	Schema  string // the table's schema as written ("" : the search path); empty with Query
	Table   string // the table; empty for COPY (query) TO STDOUT
	Columns int    // the columns listed (0: every column of the table)
	Query   string // the query of COPY (query) TO STDOUT
}

// ParseCopy returns the COPY of sql if sql is one COPY statement to or
// from the client; ok is false for anything else (a COPY of a file or a
// program is the server's).
func ParseCopy(sql string) (c Copy, ok bool) {
	if !strings.Contains(strings.ToUpper(sql), "COPY") {
		return c, false // cheap: most statements are no COPY
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return c, false
	}
	cs := tree.Stmts[0].Stmt.GetCopyStmt()
	if cs == nil || cs.Filename != "" || cs.IsProgram {
		return c, false
	}
	c = Copy{From: cs.IsFrom, Columns: len(cs.Attlist)}
	for _, o := range cs.Options {
		if d := o.GetDefElem(); d != nil && d.Defname == "format" && strings.EqualFold(d.Arg.GetString_().GetSval(), "binary") {
			c.Binary = true
		}
	}
	if cs.Relation != nil {
		c.Schema, c.Table = cs.Relation.Schemaname, cs.Relation.Relname
	}
	if cs.Query != nil {
		q, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: cs.Query}}})
		if err != nil {
			return Copy{}, false
		}
		c.Query = q
	}
	return c, true
}
