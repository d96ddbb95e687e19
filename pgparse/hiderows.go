package pgparse

import (
	"slices"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Rows of catalog relations a client reads that are not the client's:
// HideRows reads such a relation through a subquery that leaves them out,
// spliced into the client's text so that the rest of it, and the
// positions PostgreSQL reports in it, stay the client's.

// HiddenRows says, for each relation whose rows a client's reads are to
// see only in part, which rows they see: keyed by "schema.relation" (one
// of pg_catalog's may also be named bare, as PostgreSQL finds it first),
// a condition on the relation's columns, true of the rows to see.
type HiddenRows map[string]string

// Hidden is a client's statement text with its reads of HiddenRows'
// relations rewritten (HideRows).
type Hidden struct {
	SQL     string   // the text to run
	client  string   // the client's text
	splices []splice // in the order of the text
}

// splice replaced removed bytes of the client's text at at by added.
type splice struct{ at, removed, added int }

// systemColumns are the columns a table has that a subquery's * does not
// give: a statement that names one gets it from the subquery by name.
var systemColumns = map[string]bool{"tableoid": true, "ctid": true, "xmin": true, "xmax": true, "cmin": true, "cmax": true}

// HideRows rewrites each relation of rows in sql, where a statement reads
// it as a FROM item (in a query, INSERT ... SELECT, UPDATE ... FROM,
// DELETE ... USING, MERGE, DECLARE and COPY (query)), into
// "(SELECT * FROM relation WHERE condition) alias", keeping the client's
// alias or taking the relation's name as one; a column named through the
// schema (pg_catalog.pg_class.relname) loses the schema, which the
// subquery does not have. Other statements (DDL stores what the client
// wrote, EXPLAIN shows it, PREPARE keeps its text) are left alone.
// ok is false, and sql unchanged, when there is nothing to rewrite or sql
// does not parse.
func HideRows(sql string, rows HiddenRows) (Hidden, bool) {
	h := Hidden{SQL: sql, client: sql}
	if !namesAny(strings.ToLower(sql), rows) {
		return h, false // cheap: almost no statement does
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return h, false
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return h, false
	}
	var edits []edit
	for _, raw := range tree.Stmts {
		if readsRows(raw.Stmt) {
			edits = append(edits, hideInStatement(sql, scan.Tokens, raw.Stmt, rows)...)
		}
	}
	if len(edits) == 0 {
		return h, false
	}
	var b strings.Builder
	at := 0
	for _, e := range sortedEdits(edits) {
		b.WriteString(sql[at:e.at])
		b.WriteString(e.text)
		h.splices = append(h.splices, splice{at: e.at, removed: e.end - e.at, added: len(e.text)})
		at = e.end
	}
	b.WriteString(sql[at:])
	h.SQL = b.String()
	return h, true
}

// ClientPosition returns where in the client's text position pos (a
// character index from 1, as PostgreSQL reports it) of h.SQL is: inside
// a rewritten relation, where the client named it. 0 stays 0.
func (h Hidden) ClientPosition(pos int) int {
	if pos <= 0 || len(h.splices) == 0 {
		return pos
	}
	off := byteOffset(h.SQL, pos-1)
	shift := 0
	for _, s := range h.splices {
		if off < s.at+shift {
			break
		}
		if off < s.at+shift+s.added {
			return utf8.RuneCountInString(h.client[:s.at]) + 1
		}
		shift += s.added - s.removed
	}
	back := min(max(off-shift, 0), len(h.client))
	return utf8.RuneCountInString(h.client[:back]) + 1
}

// byteOffset is the offset in s of its character n (from 0).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// edit replaces sql[at:end] with text.
type edit struct {
	at, end int
	text    string
}

// sortedEdits returns edits in the order of the text, without one that
// overlaps an earlier one (none should).
func sortedEdits(edits []edit) []edit {
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].at < edits[j-1].at; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	out := edits[:0]
	end := 0
	for _, e := range edits {
		if e.at >= end {
			out = append(out, e)
			end = e.end
		}
	}
	return out
}

// namesAny says whether lower (a statement in lower case) may name one
// of rows' relations: its name, and its schema unless pg_catalog's (whose
// relations may be named bare). information_schema's names (tables,
// columns, views) are common words of applications' own schemas.
func namesAny(lower string, rows HiddenRows) bool {
	for key := range rows {
		schema, name, _ := strings.Cut(key, ".")
		if strings.Contains(lower, name) && (schema == "pg_catalog" || strings.Contains(lower, schema)) {
			return true
		}
	}
	return false
}

// readsRows says whether a statement of stmt's kind is one HideRows
// rewrites.
func readsRows(stmt *pg_query.Node) bool {
	switch {
	case stmt.GetSelectStmt() != nil:
		return stmt.GetSelectStmt().IntoClause == nil
	case stmt.GetCopyStmt() != nil:
		return stmt.GetCopyStmt().Query != nil
	}
	return stmt.GetInsertStmt() != nil || stmt.GetUpdateStmt() != nil || stmt.GetDeleteStmt() != nil ||
		stmt.GetMergeStmt() != nil || stmt.GetDeclareCursorStmt() != nil
}

// hideInStatement returns the edits that rewrite stmt's FROM items of
// rows' relations, and its columns named through their schema.
func hideInStatement(sql string, tokens []*pg_query.ScanToken, stmt *pg_query.Node, rows HiddenRows) []edit {
	// System columns named through a FROM item's name: the subquery
	// gives them by name.
	system := map[string][]string{}
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
			if name := names(cr.Fields); len(name) == 2 && len(cr.Fields) == 2 && systemColumns[name[1]] && !slices.Contains(system[name[0]], name[1]) {
				system[name[0]] = append(system[name[0]], name[1])
			}
		}
	})
	var edits []edit
	bare := map[string]bool{} // pg_catalog's relations rewritten without an alias of the client's
	from := func(bareSystem []string, items ...*pg_query.Node) {
		for _, item := range items {
			rv := item.GetRangeVar()
			if rv == nil || rv.Catalogname != "" {
				continue
			}
			key := rv.Schemaname + "." + rv.Relname
			if rv.Schemaname == "" {
				key = "pg_catalog." + rv.Relname
			}
			cond, ok := rows[key]
			if !ok {
				continue
			}
			start, end, ok := nameExtent(tokens, int(rv.Location))
			if !ok {
				continue
			}
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			cols := "*"
			for _, c := range system[name] {
				cols += ", " + c
			}
			for _, c := range bareSystem {
				if !slices.Contains(system[name], c) {
					cols += ", " + c
				}
			}
			text := "(SELECT " + cols + " FROM " + sql[start:end] + " WHERE " + cond + ")"
			if rv.Alias == nil {
				text += " " + rv.Relname
				if rv.Schemaname == "pg_catalog" {
					bare[rv.Relname] = true
				}
			}
			edits = append(edits, edit{at: start, end: end, text: text})
		}
	}
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		switch n := m.Interface().(type) {
		case *pg_query.SelectStmt:
			var soleSystem []string
			if len(n.FromClause) == 1 {
				soleSystem = bareSystemColumns(n)
			}
			from(soleSystem, n.FromClause...)
		case *pg_query.UpdateStmt:
			from(nil, n.FromClause...)
		case *pg_query.DeleteStmt:
			from(nil, n.UsingClause...)
		case *pg_query.JoinExpr:
			from(nil, n.Larg, n.Rarg)
		case *pg_query.MergeStmt:
			from(nil, n.SourceRelation)
		}
	})
	if len(bare) == 0 {
		return edits
	}
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		cr, ok := m.Interface().(*pg_query.ColumnRef)
		if !ok || len(cr.Fields) != 3 || !bare[cr.Fields[1].GetString_().GetSval()] ||
			cr.Fields[0].GetString_().GetSval() != "pg_catalog" {
			return
		}
		// pg_catalog.rel.column: the schema and its dot go.
		if start, end, ok := nameExtent(tokens, int(cr.Location)); ok {
			if dot := strings.IndexByte(sql[start:end], '.'); dot > 0 {
				edits = append(edits, edit{at: start, end: start + dot + 1})
			}
		}
	})
	return edits
}

// nameExtent returns where in the text the (possibly qualified) name that
// starts at location ends: tokens joined by dots.
func nameExtent(tokens []*pg_query.ScanToken, location int) (start, end int, ok bool) {
	for i, t := range tokens {
		if int(t.Start) != location {
			continue
		}
		end = int(t.End)
		for i+2 < len(tokens) && tokens[i+1].Token == pg_query.Token_ASCII_46 && tokens[i+2].Token != pg_query.Token_ASCII_42 {
			i += 2
			end = int(tokens[i].End)
		}
		return location, end, true
	}
	return 0, 0, false
}

// bareSystemColumns returns the system columns sel names without a
// relation's name, in its own clauses (not in the queries within it).
func bareSystemColumns(sel *pg_query.SelectStmt) []string {
	var out []string
	walkPruned(sel.ProtoReflect(), func(m protoreflect.Message) bool {
		switch n := m.Interface().(type) {
		case *pg_query.SelectStmt:
			return n == sel
		case *pg_query.ColumnRef:
			if name := names(n.Fields); len(name) == 1 && len(n.Fields) == 1 && systemColumns[name[0]] && !slices.Contains(out, name[0]) {
				out = append(out, name[0])
			}
		}
		return true
	})
	return out
}
