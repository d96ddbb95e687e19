package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Write describes an INSERT or UPDATE statement as far as the columns it
// sets and the values it gives them: what an engine needs to enforce
// GENERATED ALWAYS identity columns and to replace DEFAULT and OVERRIDING,
// which SQLite does not know.
type Write struct {
	Insert bool   // INSERT, else UPDATE
	Table  string // the target table, as PostgreSQL folds it

	// Columns is an INSERT's column list, nil when it has none.
	Columns []string
	// Override is "SYSTEM" or "USER" for OVERRIDING SYSTEM VALUE or
	// OVERRIDING USER VALUE ("" without), and OverrideSpan that clause.
	Override     string
	OverrideSpan Span
	// Rows are the rows of an INSERT ... VALUES, one Item per value; nil
	// for any other source. ValuesAt is the offset of its VALUES.
	Rows     [][]Item
	ValuesAt int
	// DefaultValues: INSERT ... DEFAULT VALUES. SelectWidth is how many
	// columns a SELECT source gives (-1: unknown, as with *).
	DefaultValues bool
	SelectWidth   int

	// Set is an UPDATE's SET, or an INSERT's ON CONFLICT DO UPDATE SET,
	// one item per column set.
	Set []SetItem
}

// Item is one value of a VALUES row or a SET: Span is its text, and
// Default says it is the keyword DEFAULT. A value that is one parameter
// ($n) has Param n; one that is a string constant has Str set to its
// value ('1.5' gives 1.5). Those are the values whose text reaches the
// engine as the client wrote or sent it.
type Item struct {
	Span
	Default bool
	Param   int
	Str     *string
}

// bare sets it's Param or Str when n is a parameter or a string constant.
func (it *Item) bare(n *pg_query.Node) {
	if p := n.GetParamRef(); p != nil {
		it.Param = int(p.Number)
	}
	if c := n.GetAConst(); c != nil && c.GetSval() != nil {
		s := c.GetSval().Sval
		it.Str = &s
	}
}

// SetItem is one column a SET assigns. Its Span is known only for DEFAULT
// and a string constant (Str).
type SetItem struct {
	Column string
	Item
}

// ParseWrite returns the description of sql if it is one INSERT or UPDATE
// statement that PostgreSQL's parser accepts. ok is false when the parser
// does not read sql as one statement (SQLite's own syntax, several
// statements...); w is nil for one that is no INSERT or UPDATE (a DELETE,
// a query).
func ParseWrite(sql string) (w *Write, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false
	}
	w, ok = parseWrite(sql, tree.Stmts[0].Stmt)
	if w == nil && ok {
		ok = stmtKnown(tree.Stmts[0].Stmt)
	}
	return w, ok
}

// stmtKnown reports whether stmt, which is no INSERT or UPDATE, is a
// statement that sets no column: a DELETE or a query.
func stmtKnown(stmt *pg_query.Node) bool {
	return stmt.GetDeleteStmt() != nil || stmt.GetSelectStmt() != nil
}

func parseWrite(sql string, stmt *pg_query.Node) (*Write, bool) {
	var toks []*pg_query.ScanToken
	scan := func() []*pg_query.ScanToken {
		if toks == nil {
			if s, err := pg_query.Scan(sql); err == nil {
				toks = s.Tokens
			}
		}
		return toks
	}
	if up := stmt.GetUpdateStmt(); up != nil && up.Relation != nil {
		w := &Write{Table: up.Relation.Relname}
		if !w.addSet(up.TargetList, scan) {
			return nil, false
		}
		return w, true
	}
	ins := stmt.GetInsertStmt()
	if ins == nil || ins.Relation == nil {
		return nil, true
	}
	w := &Write{Insert: true, Table: ins.Relation.Relname}
	for _, n := range ins.Cols {
		if rt := n.GetResTarget(); rt != nil {
			w.Columns = append(w.Columns, rt.Name)
		}
	}
	switch ins.Override {
	case pg_query.OverridingKind_OVERRIDING_SYSTEM_VALUE:
		w.Override = "SYSTEM"
	case pg_query.OverridingKind_OVERRIDING_USER_VALUE:
		w.Override = "USER"
	}
	if w.Override != "" {
		sp, ok := overridingSpan(scan(), ins.Relation.Location)
		if !ok {
			return nil, false
		}
		w.OverrideSpan = sp
	}
	sel := ins.SelectStmt.GetSelectStmt()
	switch {
	case sel == nil:
		w.DefaultValues = true
	case len(sel.ValuesLists) > 0 && sel.Op == pg_query.SetOperation_SETOP_NONE:
		rows, at, ok := valuesRows(scan(), ins.Relation.Location, sel.ValuesLists)
		if !ok {
			return nil, false
		}
		w.Rows, w.ValuesAt = rows, at
	default:
		w.SelectWidth = selectWidth(sel)
	}
	if oc := ins.OnConflictClause; oc != nil && !w.addSet(oc.TargetList, scan) {
		return nil, false
	}
	return w, true
}

// addSet adds the columns of a SET list.
func (w *Write) addSet(targets []*pg_query.Node, scan func() []*pg_query.ScanToken) bool {
	for _, n := range targets {
		rt := n.GetResTarget()
		if rt == nil {
			return false
		}
		val := rt.Val
		if m := val.GetMultiAssignRef(); m != nil {
			// (a, b) = (x, y) sets a to x; (a, b) = (SELECT ...) sets
			// values that are never DEFAULT.
			val = nil
			if row := m.Source.GetRowExpr(); row != nil && int(m.Colno) >= 1 && int(m.Colno) <= len(row.Args) {
				val = row.Args[m.Colno-1]
			}
		}
		it := SetItem{Column: rt.Name}
		it.bare(val)
		if it.Str != nil {
			// The constant's span: one string token (not 'a' 'b' on
			// two lines, which PostgreSQL joins).
			c := val.GetAConst()
			toks := scan()
			t := tokenAt(toks, c.Location)
			if t == nil || t.Token != pg_query.Token_SCONST || nextToken(toks, t).GetToken() == pg_query.Token_SCONST {
				it.Str = nil
			} else {
				it.Span = Span{int(t.Start), int(t.End)}
			}
		}
		if d := val.GetSetToDefault(); d != nil {
			t := tokenAt(scan(), d.Location)
			if t == nil {
				return false
			}
			it.Span, it.Default = Span{int(t.Start), int(t.End)}, true
		}
		w.Set = append(w.Set, it)
	}
	return true
}

// overridingSpan finds OVERRIDING {SYSTEM | USER} VALUE after the table
// name at offset.
func overridingSpan(toks []*pg_query.ScanToken, offset int32) (Span, bool) {
	for i, t := range toks {
		if t.Start < offset || t.Token != pg_query.Token_OVERRIDING {
			continue
		}
		if i+2 < len(toks) && toks[i+2].Token == pg_query.Token_VALUE_P {
			return Span{int(t.Start), int(toks[i+2].End)}, true
		}
		break
	}
	return Span{}, false
}

// valuesRows finds the spans of the values of VALUES (...), (...) after the
// table name at offset, and which are DEFAULT, and the offset of VALUES;
// lists are the parser's rows, which the tokens must match.
func valuesRows(toks []*pg_query.ScanToken, offset int32, lists []*pg_query.Node) (rows [][]Item, valuesAt int, ok bool) {
	i := 0
	depth := 0
	for ; i < len(toks); i++ {
		t := toks[i]
		if t.Start < offset || isComment(t) {
			continue
		}
		switch t.Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		}
		if depth == 0 && t.Token == pg_query.Token_VALUES {
			break
		}
	}
	if i < len(toks) {
		valuesAt = int(toks[i].Start)
	}
	for i++; i < len(toks) && len(rows) < len(lists); i++ {
		t := toks[i]
		if isComment(t) || t.Token == pg_query.Token_ASCII_44 && len(rows) > 0 {
			continue
		}
		if t.Token != pg_query.Token_ASCII_40 {
			return nil, 0, false
		}
		// One row: items split at commas of depth 1.
		var row []Item
		start, end, depth := -1, -1, 1
		for i++; i < len(toks) && depth > 0; i++ {
			t := toks[i]
			if isComment(t) {
				continue
			}
			switch t.Token {
			case pg_query.Token_ASCII_40:
				depth++
			case pg_query.Token_ASCII_41:
				depth--
			}
			if depth == 0 || depth == 1 && t.Token == pg_query.Token_ASCII_44 {
				if start < 0 {
					return nil, 0, false
				}
				row = append(row, Item{Span: Span{start, end}})
				start = -1
				continue
			}
			if start < 0 {
				start = int(t.Start)
			}
			end = int(t.End)
		}
		i--
		items := lists[len(rows)].GetList().GetItems()
		if len(items) != len(row) {
			return nil, 0, false
		}
		for j, n := range items {
			row[j].bare(n)
			if d := n.GetSetToDefault(); d != nil {
				if int(d.Location) != row[j].Start || row[j].End-row[j].Start != len("DEFAULT") {
					return nil, 0, false
				}
				row[j].Default = true
			}
		}
		rows = append(rows, row)
	}
	return rows, valuesAt, len(rows) == len(lists)
}

// selectWidth is how many columns a SELECT gives, -1 if a * makes that
// unknown without the tables.
func selectWidth(sel *pg_query.SelectStmt) int {
	for sel.Op != pg_query.SetOperation_SETOP_NONE && sel.Larg != nil {
		sel = sel.Larg
	}
	if len(sel.ValuesLists) > 0 {
		return len(sel.ValuesLists[0].GetList().GetItems())
	}
	for _, n := range sel.TargetList {
		if cr := n.GetResTarget().GetVal().GetColumnRef(); cr != nil {
			for _, f := range cr.Fields {
				if f.GetAStar() != nil {
					return -1
				}
			}
		}
	}
	return len(sel.TargetList)
}

// WhereOffset returns the offset in sql just past the first WHERE keyword,
// as PostgreSQL's scanner finds it (not in a comment, a string or a
// quoted name); false if there is none or sql does not scan.
func WhereOffset(sql string) (int, bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return 0, false
	}
	for _, t := range scan.Tokens {
		if t.Token == pg_query.Token_WHERE {
			return int(t.End), true
		}
	}
	return 0, false
}
