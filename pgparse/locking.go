package pgparse

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// LockingSelect describes a SELECT that locks rows for update (FOR UPDATE,
// FOR NO KEY UPDATE) at its top level, rewritten to also return, per row,
// each such locked table's row: after the statement's own columns come,
// for each of Tables, its tableoid and its row as JSON (by the function
// ParseLockingSelect is given, such as to_jsonb). Shared locks
// (FOR SHARE, FOR KEY SHARE) are left out: they block writers, as reads
// do not, but snapshot isolation does not count them as writes.
type LockingSelect struct {
	SQL    string   // the rewritten statement
	Tables []string // the FROM references (alias or name) of the locked tables
}

// ParseLockingSelect returns the rewrite of sql if it is one SELECT with
// a locking clause at its top level whose locked relations are plain
// table references; nil otherwise (ok false when a locking clause locks
// something it cannot name: a subquery, a function).
func ParseLockingSelect(sql, rowJSON string) (ls *LockingSelect, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, true
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.LockingClause) == 0 {
		return nil, true
	}
	// The references in FROM, by the name a target list would use.
	refs := map[string]bool{}
	var order []string
	plain := true
	var walk func(n *pg_query.Node)
	walk = func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil:
			rv := n.GetRangeVar()
			name := rv.Relname
			if rv.Alias != nil {
				name = rv.Alias.Aliasname
			}
			if !refs[name] {
				refs[name] = true
				order = append(order, name)
			}
		case n.GetJoinExpr() != nil:
			walk(n.GetJoinExpr().Larg)
			walk(n.GetJoinExpr().Rarg)
		default:
			plain = false // a subquery or function: locked too, without a key
		}
	}
	for _, f := range sel.FromClause {
		walk(f)
	}
	var locked []string
	for _, lc := range sel.LockingClause {
		l := lc.GetLockingClause()
		if l.Strength != pg_query.LockClauseStrength_LCS_FORUPDATE && l.Strength != pg_query.LockClauseStrength_LCS_FORNOKEYUPDATE {
			continue
		}
		if len(l.LockedRels) == 0 {
			if !plain {
				return nil, false
			}
			locked = order
			break
		}
		for _, r := range l.LockedRels {
			rv := r.GetRangeVar()
			if rv == nil || !refs[rv.Relname] {
				return nil, false
			}
			locked = append(locked, rv.Relname)
		}
	}
	if len(locked) == 0 {
		return nil, true
	}
	seen := map[string]bool{}
	ls = &LockingSelect{}
	for _, ref := range locked {
		if seen[ref] {
			continue
		}
		seen[ref] = true
		ls.Tables = append(ls.Tables, ref)
		q := `"` + strings.ReplaceAll(ref, `"`, `""`) + `"`
		for _, expr := range []string{q + ".tableoid", rowJSON + "(" + q + ".*)"} {
			extra, err := pg_query.Parse("SELECT " + expr)
			if err != nil {
				return nil, false
			}
			target := extra.Stmts[0].Stmt.GetSelectStmt().TargetList[0]
			target.GetResTarget().Name = fmt.Sprintf("certa_locked_%d", len(sel.TargetList))
			sel.TargetList = append(sel.TargetList, target)
		}
	}
	if ls.SQL, err = pg_query.Deparse(tree); err != nil {
		return nil, false
	}
	return ls, true
}
