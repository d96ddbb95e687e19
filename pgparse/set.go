package pgparse

import (
	"fmt"
	"strconv"
	"strings"

	"certa/pgtext"
	"certa/sqlerr"

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

// SetConfig is a SELECT set_config(name, value, is_local) of constants or
// parameters, as pg_dump, psql and Flyway send it: what SET name TO value
// (SET LOCAL if Local) does, returning the value in one column named
// Column. Params holds, for name, value and is_local in turn, the number
// of the parameter ($1 is 1) that gives it, or 0 where the text gave a
// constant; Bind fills those in.
type SetConfig struct {
	Name, Value, Column string
	Local               bool
	Reset               bool // value NULL: the parameter's default, as RESET
	Params              [3]int
	nullName            bool // the name is NULL: an error when it runs
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
	sc.Column = "set_config"
	if rt.Name != "" {
		sc.Column = rt.Name
	}
	for i, arg := range fc.Args {
		if p := arg.GetParamRef(); p != nil {
			sc.Params[i] = int(p.Number)
			continue
		}
		c := arg.GetAConst()
		switch {
		case c == nil:
			return SetConfig{}, false
		case c.Isnull && i == 0:
			sc.nullName = true
		case c.Isnull && i == 1:
			sc.Reset = true
		case c.Isnull: // is_local NULL is false
		case i < 2 && c.GetSval() != nil:
			if i == 0 {
				sc.Name = strings.ToLower(c.GetSval().GetSval())
			} else {
				sc.Value = c.GetSval().GetSval()
			}
		case i == 2 && c.GetBoolval() != nil:
			sc.Local = c.GetBoolval().GetBoolval()
		case i == 2 && c.GetSval() != nil:
			// 'f', as pgx's simple protocol sends false: boolean input.
			b, ok := pgtext.ParseBool(c.GetSval().GetSval())
			if !ok {
				return SetConfig{}, false
			}
			sc.Local = b
		default:
			return SetConfig{}, false
		}
	}
	return sc, true
}

// Bind returns sc with its parameters' values from args ($1 is args[0]):
// text, or for is_local a boolean; NULL as set_config reads it (no name
// is an error, no value the default, is_local false).
func (sc SetConfig) Bind(args []any) (SetConfig, error) {
	if sc.nullName {
		return sc, sqlerr.New(sqlerr.NullValueNotAllowed, "SET requires parameter name")
	}
	for i, n := range sc.Params {
		if n == 0 {
			continue
		}
		if n > len(args) {
			return sc, sqlerr.New(sqlerr.ProtocolViolation, "set_config: there is no parameter $%d", n)
		}
		v := args[n-1]
		switch i {
		case 0, 1:
			var text string
			switch v := v.(type) {
			case nil:
				if i == 0 {
					return sc, sqlerr.New(sqlerr.NullValueNotAllowed, "SET requires parameter name")
				}
				sc.Reset = true
			case string:
				text = v
			case []byte:
				text = string(v)
			default:
				text = fmt.Sprint(v)
			}
			if i == 0 {
				sc.Name = strings.ToLower(text)
			} else {
				sc.Value = text
			}
		case 2:
			switch v := v.(type) {
			case nil:
				sc.Local = false
			case bool:
				sc.Local = v
			case string:
				b, ok := pgtext.ParseBool(v)
				if !ok {
					return sc, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", v)
				}
				sc.Local = b
			default:
				return sc, sqlerr.New(sqlerr.DatatypeMismatch, "set_config: is_local must be a boolean, not %T", v)
			}
		}
	}
	return sc, nil
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
