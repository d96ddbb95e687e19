package pgparse

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Set is a SET or RESET of one run-time parameter, as PostgreSQL reads it.
type Set struct {
	Name  string // lower case, as PostgreSQL names it: SET TIME ZONE is "timezone"
	Local bool   // SET LOCAL
	Reset bool   // RESET name, SET name TO DEFAULT
	All   bool   // RESET ALL
	// Value is the value set when it is one string or name (SET ROLE r,
	// SET SESSION AUTHORIZATION 'u', SET search_path TO s), else "".
	Value string
	// Items are the values of a list (SET search_path TO a, 'b c'), each
	// a string, name or number as written; nil for another value.
	Items []string
}

// ParseSet returns the SET or RESET of sql if sql is one such statement
// of a parameter (not SET TRANSACTION, SET SESSION CHARACTERISTICS).
func ParseSet(sql string) (s Set, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return s, false
	}
	vs := tree.Stmts[0].Stmt.GetVariableSetStmt()
	if vs == nil {
		return s, false
	}
	s = Set{Name: strings.ToLower(vs.Name), Local: vs.IsLocal}
	switch vs.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE, pg_query.VariableSetKind_VAR_SET_CURRENT:
		if len(vs.Args) == 1 {
			if c := vs.Args[0].GetAConst(); c != nil && c.GetSval() != nil {
				s.Value = c.GetSval().Sval
			}
		}
		s.Items = constItems(vs.Args)
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		s.Reset = true
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		s.Reset, s.All = true, true
	default:
		return Set{}, false
	}
	return s, true
}

// ParseShow returns the parameter sql shows if sql is one SHOW statement,
// named as PostgreSQL names it: SHOW TRANSACTION ISOLATION LEVEL is
// "transaction_isolation", SHOW TIME ZONE "timezone".
func ParseShow(sql string) (name string, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return "", false
	}
	vs := tree.Stmts[0].Stmt.GetVariableShowStmt()
	if vs == nil {
		return "", false
	}
	return strings.ToLower(vs.Name), true
}

// SetConfig is a SELECT set_config(name, value, is_local) of constants, as
// pg_dump and psql send it: what SET name TO value (SET LOCAL if Local)
// does, returning the value in one column named Column.
type SetConfig struct {
	Name, Value, Column string
	Local               bool
}

// ParseSetConfig returns the set_config call of sql if sql is one such
// SELECT with nothing else (no FROM, no other column).
func ParseSetConfig(sql string) (sc SetConfig, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return sc, false
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) != 0 || sel.WhereClause != nil ||
		sel.GroupClause != nil || sel.HavingClause != nil || sel.SortClause != nil || sel.LimitCount != nil ||
		sel.LimitOffset != nil || sel.WithClause != nil || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return sc, false
	}
	rt := sel.TargetList[0].GetResTarget()
	fc := rt.GetVal().GetFuncCall()
	if fc == nil || len(fc.Args) != 3 || fc.AggStar || fc.Over != nil || fc.AggFilter != nil {
		return sc, false
	}
	var names []string
	for _, n := range fc.Funcname {
		names = append(names, n.GetString_().GetSval())
	}
	if name := strings.Join(names, "."); name != "set_config" && name != "pg_catalog.set_config" {
		return sc, false
	}
	var strs [2]string
	for i := range strs {
		c := fc.Args[i].GetAConst()
		if c == nil || c.GetSval() == nil {
			return sc, false
		}
		strs[i] = c.GetSval().GetSval()
	}
	local := fc.Args[2].GetAConst()
	if local == nil || local.GetBoolval() == nil {
		return sc, false
	}
	sc = SetConfig{Name: strings.ToLower(strs[0]), Value: strs[1], Column: "set_config", Local: local.GetBoolval().GetBoolval()}
	if rt.Name != "" {
		sc.Column = rt.Name
	}
	return sc, true
}

// SetsConstraints reports whether sql is one SET CONSTRAINTS statement,
// which is no run-time parameter: it changes when the open transaction's
// deferrable constraints are checked (and checks them at once when made
// IMMEDIATE).
func SetsConstraints(sql string) bool {
	tree, err := pg_query.Parse(sql)
	return err == nil && len(tree.Stmts) == 1 && tree.Stmts[0].Stmt.GetConstraintsSetStmt() != nil
}

// constItems returns args as text if each is a constant (string, name,
// number), else nil.
func constItems(args []*pg_query.Node) []string {
	var out []string
	for _, a := range args {
		c := a.GetAConst()
		switch {
		case c == nil:
			return nil
		case c.GetSval() != nil:
			out = append(out, c.GetSval().Sval)
		case c.GetIval() != nil:
			out = append(out, strconv.Itoa(int(c.GetIval().Ival)))
		case c.GetFval() != nil:
			out = append(out, c.GetFval().Fval)
		case c.GetBoolval() != nil:
			out = append(out, strconv.FormatBool(c.GetBoolval().Boolval))
		default:
			return nil
		}
	}
	return out
}
