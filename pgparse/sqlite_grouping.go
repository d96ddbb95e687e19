package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// GroupCheck is a column a grouped query reads outside an aggregate.
// PostgreSQL takes it only if it is grouped, or its table's primary key
// is; SQLite takes any column and gives some row's value. The engine,
// which knows the keys, checks (SQLite.Ungrouped).
type GroupCheck struct {
	Name    string     // as PostgreSQL's error names it: table.column
	Column  KindPart   // the column (Tables, Column)
	Grouped []KindPart // the columns of the GROUP BY
	// Position is where the reference stands in the statement, counting
	// characters from 1 (0: not known).
	Position int
}

// checkGrouping notes the columns of s, a SELECT that groups or
// aggregates, read outside its aggregates (SQLite.Ungrouped). It notes
// none where it cannot tell what is grouped: a GROUP BY of expressions,
// grouping sets, a * among the targets.
func (p *printer) checkGrouping(s *pg_query.SelectStmt) {
	if !p.columnTypes || p.cat != nil {
		return
	}
	if len(s.GroupClause) == 0 && s.HavingClause == nil && !anyAggregate(s.TargetList) && !outerAggregate(s) {
		return
	}
	aliases := map[string]*pg_query.Node{}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil || rt.Val == nil {
			return
		}
		if cr := rt.Val.GetColumnRef(); cr != nil && cr.Fields[len(cr.Fields)-1].GetAStar() != nil {
			return
		}
		if rt.Name != "" {
			aliases[rt.Name] = rt.Val
		}
	}
	var grouped []KindPart
	for _, g := range s.GroupClause {
		if c := g.GetAConst(); c != nil && c.GetIval() != nil {
			i := int(c.GetIval().Ival)
			if i < 1 || i > len(s.TargetList) {
				return
			}
			g = s.TargetList[i-1].GetResTarget().Val
		} else if cr := g.GetColumnRef(); cr != nil && len(cr.Fields) == 1 {
			// An output column's name (PostgreSQL takes an input
			// column of that name first: then this check is lenient).
			if v, ok := aliases[cr.Fields[0].GetString_().GetSval()]; ok {
				g = v
			}
		}
		cr := g.GetColumnRef()
		if cr == nil {
			return
		}
		tables, column, ok := p.columnOf(cr)
		if !ok {
			return
		}
		grouped = append(grouped, KindPart{Tables: tables, Column: column})
	}
	var read []*pg_query.ColumnRef
	for _, t := range s.TargetList {
		read = append(read, ungroupedRefs(t.GetResTarget().Val)...)
	}
	if s.HavingClause != nil {
		read = append(read, ungroupedRefs(s.HavingClause)...)
	}
	for _, sb := range s.SortClause {
		n := sb.GetSortBy().Node
		if cr := n.GetColumnRef(); cr != nil && len(cr.Fields) == 1 && aliases[cr.Fields[0].GetString_().GetSval()] != nil {
			continue // an output column
		}
		if n.GetAConst() != nil {
			continue
		}
		read = append(read, ungroupedRefs(n)...)
	}
	for _, cr := range read {
		tables, column, ok := p.columnOf(cr)
		if !ok {
			continue
		}
		name := column
		if parts := columnParts(cr); len(parts) == 2 {
			name = parts[0] + "." + parts[1]
		} else if len(p.scopes) > 0 && len(p.scopes[len(p.scopes)-1].tables) == 1 {
			name = tables + "." + column
		}
		p.ungrouped = append(p.ungrouped, GroupCheck{Name: name, Column: KindPart{Tables: tables, Column: column}, Grouped: grouped, Position: int(p.position(cr.Location))})
	}
}

// readsNoColumn reports whether nodes name no column, at any level.
func readsNoColumn(nodes []*pg_query.Node) bool {
	found := false
	for _, n := range nodes {
		walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
			if _, ok := m.Interface().(*pg_query.ColumnRef); ok {
				found = true
			}
		})
	}
	return !found
}

// anyAggregate reports whether an aggregate is called among targets,
// outside subqueries.
func anyAggregate(targets []*pg_query.Node) bool {
	found := false
	for _, t := range targets {
		walkPruned(t.ProtoReflect(), func(m protoreflect.Message) bool {
			switch n := m.Interface().(type) {
			case *pg_query.SubLink:
				return false
			case *pg_query.FuncCall:
				if n.Over == nil && aggregates[functionName(n.Funcname)] {
					found = true
					return false
				}
			}
			return true
		})
	}
	return found
}

// outerAggregate reports whether a subquery among s's targets calls an
// aggregate of s: one whose arguments read only columns of s's tables
// (named by them; a subquery's table of the same name shadows them), as
// in SELECT f1, (SELECT count(t.f1)) FROM t, which PostgreSQL makes a
// grouped query (and refuses, as f1 is not grouped).
func outerAggregate(s *pg_query.SelectStmt) bool {
	outer := fromNames(s.FromClause)
	found := false
	for _, t := range s.TargetList {
		walkPruned(t.ProtoReflect(), func(m protoreflect.Message) bool {
			sl, ok := m.Interface().(*pg_query.SubLink)
			if !ok || found {
				return !found
			}
			sub := sl.Subselect.GetSelectStmt()
			if sub == nil {
				return false
			}
			inner := fromNames(sub.FromClause)
			walkPruned(sub.ProtoReflect(), func(m protoreflect.Message) bool {
				switch n := m.Interface().(type) {
				case *pg_query.SubLink:
					return false
				case *pg_query.FuncCall:
					if n.Over == nil && aggregates[functionName(n.Funcname)] && readsOnly(n.Args, outer, inner) {
						found = true
					}
					return !found
				}
				return true
			})
			return false
		})
	}
	return found
}

// fromNames returns the names a FROM list's tables are known by: their
// aliases, or their names.
func fromNames(from []*pg_query.Node) map[string]bool {
	names := map[string]bool{}
	for _, f := range from {
		walkPruned(f.ProtoReflect(), func(m protoreflect.Message) bool {
			switch n := m.Interface().(type) {
			case *pg_query.RangeVar:
				if n.Alias != nil {
					names[n.Alias.Aliasname] = true
				} else {
					names[n.Relname] = true
				}
				return false
			case *pg_query.RangeSubselect:
				if n.Alias != nil {
					names[n.Alias.Aliasname] = true
				}
				return false
			}
			return true
		})
	}
	return names
}

// readsOnly reports whether args read at least one column and only
// columns named by a table of outer that inner does not shadow.
func readsOnly(args []*pg_query.Node, outer, inner map[string]bool) bool {
	outerRead, only := false, true
	for _, a := range args {
		walkPruned(a.ProtoReflect(), func(m protoreflect.Message) bool {
			switch n := m.Interface().(type) {
			case *pg_query.SubLink:
				only = false
				return false
			case *pg_query.ColumnRef:
				parts := columnParts(n)
				if len(parts) == 2 && outer[parts[0]] && !inner[parts[0]] {
					outerRead = true
				} else {
					only = false
				}
				return false
			}
			return true
		})
	}
	return outerRead && only
}

// ungroupedRefs returns the column references of n outside aggregates,
// window functions and subqueries (whose references are checked by
// rules this check does not know).
func ungroupedRefs(n *pg_query.Node) []*pg_query.ColumnRef {
	var out []*pg_query.ColumnRef
	if n == nil {
		return nil
	}
	walkPruned(n.ProtoReflect(), func(m protoreflect.Message) bool {
		switch x := m.Interface().(type) {
		case *pg_query.SubLink:
			return false
		case *pg_query.FuncCall:
			if x.Over != nil || aggregates[functionName(x.Funcname)] {
				return false
			}
		case *pg_query.ColumnRef:
			if x.Fields[len(x.Fields)-1].GetAStar() == nil {
				out = append(out, x)
			}
			return false
		}
		return true
	})
	return out
}
