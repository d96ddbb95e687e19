package pgparse

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// LockingSelect describes a statement that locks rows for update (FOR
// UPDATE, FOR NO KEY UPDATE), rewritten so that the locked rows can be
// certified as written. Shared locks (FOR SHARE, FOR KEY SHARE) are left
// out: they block writers, as reads do not, but snapshot isolation does
// not count them as writes.
//
// A SELECT that locks at its top level is rewritten to also return, per
// row, each such locked table's row: after the statement's own columns
// come, for each of Tables, its tableoid and its row as JSON (by the
// function rowJSON names, such as to_jsonb).
//
// A locking SELECT nested anywhere in the statement (a subquery, a CTE,
// the query of an INSERT) cannot return more columns, so it is wrapped in
// one that passes its rows on unchanged and calls the function note names
// with each locked table's tableoid and row as JSON, once per row the
// lock let through (the wrapper filters the locking SELECT's output: rows
// a scan read but did not lock, such as those SKIP LOCKED skipped, are
// never noted). note must return true and must not be strict.
//
// A view has no rows of its own: locking it locks its tables' rows,
// which the view's columns cannot name. Such references are left as
// they are, and Unseen says that the statement locks rows the rewrite
// does not return.
type LockingSelect struct {
	SQL    string   // the rewritten statement
	Tables []string // the FROM references (alias or name) locked at the top level
	Unseen bool     // it locks a view's rows too, which it does not return
}

// IsTable reports whether the relation schema.name (schema "" when the
// statement does not name one: the search path finds it) is a table,
// whose rows have a tableoid, or a name no relation has (a CTE's); false
// for a view.
type IsTable func(schema, name string) bool

// ParseLockingSelect returns the rewrite of sql if it is one statement
// that locks rows for update; nil otherwise. ok is false when a locking
// clause locks something it cannot name (a subquery, a function) or a
// nested one cannot be wrapped (an ORDER BY position after a *).
// isTable is asked about the relations locked.
func ParseLockingSelect(sql, rowJSON, note string, isTable IsTable) (ls *LockingSelect, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, true
	}
	stmt := tree.Stmts[0].Stmt
	top := stmt.GetSelectStmt()
	var nested []*pg_query.SelectStmt
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		if s, is := m.Interface().(*pg_query.SelectStmt); is && s != top && len(lockedForUpdate(s)) > 0 {
			nested = append(nested, s)
		}
	})
	ls = &LockingSelect{}
	if top != nil && len(lockedForUpdate(top)) > 0 {
		locked, ok := lockedRefs(top)
		if !ok {
			return nil, false
		}
		if ls.Tables = tablesOnly(locked, top.FromClause, isTable); len(ls.Tables) < len(locked) {
			ls.Unseen = true
		}
		for _, ref := range ls.Tables {
			q := quoteIdent(ref)
			for _, expr := range []string{q + ".tableoid", rowJSON + "(" + q + ".*)"} {
				target, ok := parseTarget(expr)
				if !ok {
					return nil, false
				}
				target.GetResTarget().Name = fmt.Sprintf("certa_locked_%d", len(top.TargetList))
				top.TargetList = append(top.TargetList, target)
			}
		}
	}
	for _, s := range nested {
		wrapped, unseen := wrapLocking(s, rowJSON, note, isTable)
		if !wrapped {
			return nil, false
		}
		ls.Unseen = ls.Unseen || unseen
	}
	if len(ls.Tables) == 0 && len(nested) == 0 {
		if ls.Unseen {
			ls.SQL = sql
			return ls, true
		}
		return nil, true
	}
	if ls.SQL, err = pg_query.Deparse(tree); err != nil {
		return nil, false
	}
	return ls, true
}

// lockedForUpdate returns sel's locking clauses that lock for update.
func lockedForUpdate(sel *pg_query.SelectStmt) []*pg_query.LockingClause {
	var out []*pg_query.LockingClause
	for _, lc := range sel.LockingClause {
		l := lc.GetLockingClause()
		if l.Strength == pg_query.LockClauseStrength_LCS_FORUPDATE || l.Strength == pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE {
			out = append(out, l)
		}
	}
	return out
}

// lockedRefs returns the FROM references (alias or name) sel locks for
// update, each once; ok is false if one of them is not a plain table
// reference.
func lockedRefs(sel *pg_query.SelectStmt) (locked []string, ok bool) {
	refs, plain, _ := fromRefs(sel.FromClause)
	isRef := map[string]bool{}
	for _, r := range refs {
		isRef[r] = true
	}
	seen := map[string]bool{}
	add := func(r string) {
		if !seen[r] {
			seen[r] = true
			locked = append(locked, r)
		}
	}
	for _, l := range lockedForUpdate(sel) {
		if len(l.LockedRels) == 0 {
			if !plain {
				return nil, false // a subquery or function: locked too, without a key
			}
			for _, r := range refs {
				add(r)
			}
			continue
		}
		for _, r := range l.LockedRels {
			rv := r.GetRangeVar()
			if rv == nil || !isRef[rv.Relname] {
				return nil, false
			}
			add(rv.Relname)
		}
	}
	return locked, true
}

// tablesOnly returns the references of locked (names fromRefs gives)
// that name tables in the FROM list from, by isTable.
func tablesOnly(locked []string, from []*pg_query.Node, isTable IsTable) []string {
	relations := map[string]*pg_query.RangeVar{}
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil {
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			if relations[name] == nil {
				relations[name] = rv
			}
		} else if j := n.GetJoinExpr(); j != nil {
			walk(j.Larg)
			walk(j.Rarg)
		}
	}
	for _, f := range from {
		walk(f)
	}
	var out []string
	for _, ref := range locked {
		if rv := relations[ref]; rv == nil || isTable(rv.Schemaname, rv.Relname) {
			out = append(out, ref)
		}
	}
	return out
}

// fromRefs returns the table references in a FROM list, by the name a
// target list would use, in order; plain is false if it holds anything
// else (a subquery, a function), and byTable is false if its * is not
// the tables' columns side by side (a join with an alias, USING or
// NATURAL).
func fromRefs(from []*pg_query.Node) (refs []string, plain, byTable bool) {
	plain, byTable = true, true
	seen := map[string]bool{}
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			if !seen[name] {
				seen[name] = true
				refs = append(refs, name)
			}
		case n.GetJoinExpr() != nil:
			j := n.GetJoinExpr()
			if j.Alias != nil || j.IsNatural || len(j.UsingClause) > 0 {
				byTable = false
			}
			walk(j.Larg)
			walk(j.Rarg)
		default:
			plain = false
		}
	}
	for _, f := range from {
		walk(f)
	}
	return refs, plain, byTable
}

// FromRelation returns the table that ref (an alias, or a table's name)
// names in the FROM list of sql, a SELECT: "schema.name" or "name". ok is
// false when sql is not one SELECT or ref names no table in its FROM.
func FromRelation(sql, ref string) (relation string, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return "", false
	}
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		if rv := n.GetRangeVar(); rv != nil && !ok {
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			if name == ref {
				relation, ok = rv.Relname, true
				if rv.Schemaname != "" {
					relation = rv.Schemaname + "." + rv.Relname
				}
			}
		} else if j := n.GetJoinExpr(); j != nil {
			walk(j.Larg)
			walk(j.Rarg)
		}
	}
	for _, f := range tree.Stmts[0].Stmt.GetSelectStmt().FromClause {
		walk(f)
	}
	return relation, ok
}

// wrapLocking turns the nested locking SELECT s, in place, into
//
//	SELECT <s's columns> FROM (<s, with the locked rows>) AS certa_locked(...)
//	WHERE note(oid, row) AND ... OFFSET 0
//
// The inner SELECT is s with a column for each of its * (the row of each
// table it stands for, which the outer (c).* expands to the same columns)
// and two more per locked table; positional column aliases name them, so
// that s's own ORDER BY still reads its own names. OFFSET 0 keeps the
// planner from merging the wrapper into its parent, where another
// condition could run before note and skip a locked row.
//
// unseen reports that s also locks a view's rows, which are not noted.
func wrapLocking(s *pg_query.SelectStmt, rowJSON, note string, isTable IsTable) (wrapped, unseen bool) {
	all, ok := lockedRefs(s)
	if !ok {
		return false, false
	}
	locked := tablesOnly(all, s.FromClause, isTable)
	if unseen = len(locked) < len(all); len(locked) == 0 {
		return true, unseen // nothing to note: s stays as it is
	}
	inner := &pg_query.SelectStmt{}
	moveFields(inner, s)

	var innerTargets, outerTargets []*pg_query.Node
	var cols []string
	star := false
	column := func(inner *pg_query.Node, name string, expand bool) bool {
		col := fmt.Sprintf("certa_c%d", len(cols))
		cols = append(cols, col)
		innerTargets = append(innerTargets, inner)
		expr := "certa_locked." + col
		if expand {
			expr = "(" + expr + ").*"
		}
		target, ok := parseTarget(expr)
		if !ok {
			return false
		}
		target.GetResTarget().Name = name
		outerTargets = append(outerTargets, target)
		return true
	}
	wholeRow := func(ref string) *pg_query.Node {
		target, _ := parseTarget("coalesce(" + quoteIdent(ref) + ".*)")
		return target
	}
	for _, t := range inner.TargetList {
		rt := t.GetResTarget()
		switch refs, isStar := starRefs(rt, inner.FromClause); {
		case isStar && refs == nil:
			return false, false // a * this cannot expand to whole rows
		case isStar:
			star = true
			for _, ref := range refs {
				if !column(wholeRow(ref), "", true) {
					return false, false
				}
			}
		default:
			name := rt.Name
			if name == "" {
				name = figureColname(rt.Val)
			}
			if !column(t, name, false) {
				return false, false
			}
		}
	}
	if star && sortsByPosition(inner) {
		return false, false
	}
	var notes []string
	for k, ref := range locked {
		q := quoteIdent(ref)
		oidCol, rowCol := fmt.Sprintf("certa_o%d", k), fmt.Sprintf("certa_r%d", k)
		for _, expr := range []string{q + ".tableoid", rowJSON + "(" + q + ".*)"} {
			target, ok := parseTarget(expr)
			if !ok {
				return false, false
			}
			innerTargets = append(innerTargets, target)
		}
		cols = append(cols, oidCol, rowCol)
		notes = append(notes, note+"(certa_locked."+oidCol+", certa_locked."+rowCol+")")
	}
	inner.TargetList = innerTargets

	colList := make([]string, len(cols))
	for i, c := range cols {
		colList[i] = quoteIdent(c)
	}
	wrapper, err := pg_query.Parse("SELECT 1 FROM (SELECT 1) AS certa_locked(" + strings.Join(colList, ", ") +
		") WHERE " + strings.Join(notes, " AND ") + " OFFSET 0")
	if err != nil {
		return false, false
	}
	w := wrapper.Stmts[0].Stmt.GetSelectStmt()
	w.FromClause[0].GetRangeSubselect().Subquery = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}}
	w.TargetList = outerTargets
	moveFields(s, w)
	return true, unseen
}

// moveFields moves every field of src to dst, which must be empty, and
// leaves src empty. The values are not copied: a SELECT nested in them,
// which ParseLockingSelect may still wrap, stays the one it holds.
func moveFields(dst, src *pg_query.SelectStmt) {
	d := dst.ProtoReflect()
	src.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		d.Set(fd, v)
		return true
	})
	proto.Reset(src)
}

// starRefs reports whether rt is * or ref.*, and the FROM references it
// stands for (nil if one of them cannot be read as a whole row).
func starRefs(rt *pg_query.ResTarget, from []*pg_query.Node) (refs []string, isStar bool) {
	cr := rt.Val.GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
		return nil, false
	}
	if len(cr.Fields) == 1 {
		refs, plain, byTable := fromRefs(from)
		if !plain || !byTable {
			return nil, true
		}
		return refs, true
	}
	if len(cr.Fields) != 2 || cr.Fields[0].GetString_() == nil {
		return nil, true // schema.table.*: named by its table alone
	}
	return []string{cr.Fields[0].GetString_().Sval}, true
}

// sortsByPosition reports whether s orders by a column's position, which a
// * expanded into whole rows would move.
func sortsByPosition(s *pg_query.SelectStmt) bool {
	for _, n := range s.SortClause {
		if c := n.GetSortBy().GetNode().GetAConst(); c != nil && c.GetIval() != nil {
			return true
		}
	}
	return false
}

// parseTarget parses expr as a SELECT's one target.
func parseTarget(expr string) (*pg_query.Node, bool) {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil {
		return nil, false
	}
	return tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0], true
}

// NestedLockingSelects returns each SELECT that locks rows for update and
// is nested in sql, a SELECT, INSERT, UPDATE, DELETE or MERGE (in a
// subquery, a CTE, an INSERT's query), deparsed as a statement of its own;
// nil if sql has none, is another kind of statement, or does not parse as
// one statement. Only the outermost are returned: one nested in a returned
// one is in its text. A locking clause of sql's own top-level SELECT is not
// nested. An engine without row locks can run each returned SELECT on its
// own, at the statement's snapshot, for the rows it locks.
//
// ok is false when one of them cannot run on its own because it reads a
// WITH query of the statement around it, or cannot be printed. A nested
// SELECT that reads a column of the statement around it (correlated) is
// returned: telling that needs the schema, and such a SELECT does not
// prepare on its own.
func NestedLockingSelects(sql string) (sels []string, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, true
	}
	stmt := tree.Stmts[0].Stmt
	switch {
	case stmt.GetSelectStmt() != nil, stmt.GetInsertStmt() != nil, stmt.GetUpdateStmt() != nil,
		stmt.GetDeleteStmt() != nil, stmt.GetMergeStmt() != nil:
	default:
		return nil, true // EXPLAIN does not lock; other statements are not DML
	}
	top := stmt.GetSelectStmt()
	var nested []*pg_query.SelectStmt
	walkPruned(stmt.ProtoReflect(), func(m protoreflect.Message) bool {
		s, is := m.Interface().(*pg_query.SelectStmt)
		if is && s != top && len(lockedForUpdate(s)) > 0 {
			nested = append(nested, s)
			return false
		}
		return true
	})
	if len(nested) == 0 {
		return nil, true
	}
	ctes := cteNames(stmt.ProtoReflect())
	for _, s := range nested {
		own := cteNames(s.ProtoReflect())
		outer := false
		walkPruned(s.ProtoReflect(), func(m protoreflect.Message) bool {
			if rv, is := m.Interface().(*pg_query.RangeVar); is && rv.Schemaname == "" && ctes[rv.Relname] && !own[rv.Relname] {
				outer = true
			}
			return !outer
		})
		if outer {
			return nil, false
		}
		one := &pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{
			Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: s}},
		}}}
		text, err := pg_query.Deparse(one)
		if err != nil {
			return nil, false
		}
		sels = append(sels, text)
	}
	return sels, true
}

// TopLevelLockingSelect returns sql deparsed if it is one SELECT that locks
// rows for update at its top level: the text then ends with its locking
// clause, as a SELECT written in parentheses does not.
func TopLevelLockingSelect(sql string) (text string, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	top := tree.Stmts[0].Stmt.GetSelectStmt()
	if top == nil || len(lockedForUpdate(top)) == 0 {
		return "", false
	}
	text, err = pg_query.Deparse(tree)
	return text, err == nil
}

// cteNames returns the names of the WITH queries defined in m, at any
// depth.
func cteNames(m protoreflect.Message) map[string]bool {
	names := map[string]bool{}
	walkPruned(m, func(m protoreflect.Message) bool {
		if c, is := m.Interface().(*pg_query.CommonTableExpr); is {
			names[c.Ctename] = true
		}
		return true
	})
	return names
}

// walkPruned calls f on m and every message in it, depth first, except
// those in a message for which f returns false.
func walkPruned(m protoreflect.Message, f func(protoreflect.Message) bool) {
	if !f(m) {
		return
	}
	// Fields in the order the message declares them: Range's order is
	// left to protobuf, which varies it from one binary to the next.
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.IsMap() || !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		if fd.IsList() {
			l := v.List()
			for i := range l.Len() {
				walkPruned(l.Get(i).Message(), f)
			}
			continue
		}
		walkPruned(v.Message(), f)
	}
}
