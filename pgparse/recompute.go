package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"certa/sqlerr"
)

// Recompute is a part of a schema statement that computes values when the
// statement runs: over the rows a table holds then (a column added with a
// default, a type changed with USING), or the rows of a new relation
// (CREATE TABLE AS, SELECT INTO, CREATE MATERIALIZED VIEW). A replicated
// schema statement runs again on every node, so such a part gives every
// node the same values only if what it computes depends on nothing but
// the rows: the engine decides that from what Recompute lists (the
// volatility of Funcs is the catalog's).
type Recompute struct {
	// Table is the table whose existing rows get the values, as a
	// PostgreSQL name (quoted: "s"."t" or "t"); "" for a new relation's
	// rows.
	Table string
	// What names the part for messages: "the default of column x".
	What string
	// Funcs are the functions it calls, as written (schema.name or name).
	Funcs []string
	// Context: it reads the moment or the session it runs in
	// (CURRENT_TIMESTAMP, LOCALTIME, CURRENT_DATE, SESSION_USER, 'now'
	// read as a timestamp ...).
	Context bool
	// Numbering: it numbers rows in their physical order (a serial or
	// identity column added to a table).
	Numbering bool
	// Type is, for a column added without a default of its own, its type
	// as written (quoted, "s"."d"): if it is a domain with a default, the
	// engine reads that default with DomainDefault.
	Type string
	// Domain: the default is Type's, a domain's (DomainDefault).
	Domain bool
	// Bound: it is a partition's bound, which PostgreSQL computes once,
	// when it makes or attaches the partition.
	Bound bool
	// Catalog: it reads a system catalog (pg_catalog's relations,
	// information_schema's views), whose rows are each node's own.
	Catalog bool
	// Order: which rows it keeps, or what it computes of them, depends on
	// their physical order (LIMIT, OFFSET, FETCH, DISTINCT ON,
	// TABLESAMPLE, array_agg or row_number() without ORDER BY, or with an
	// ORDER BY that may tie and is not a list of one table's columns).
	Order bool
	// Unique are orderings what it computes depends on (an ordered
	// aggregate's, a window's that numbers or picks rows): each gives
	// every node the same result only if no two rows tie on it, which the
	// engine decides from the table's unique indexes.
	Unique []UniqueOrder
	// Column is, for a column added with a default of its own, its name.
	// PostgreSQL gives every row there is one value of a default that
	// calls no VOLATILE function (now(), CURRENT_DATE): the engine can
	// read it and replicate the statement with that value pinned
	// (PinDefaults).
	Column string
	// IfNotExists: the column is added IF NOT EXISTS. If it was there
	// before, PostgreSQL computes nothing.
	IfNotExists bool
	// Added is, for a column added with a default of its own (not a
	// timestamp read from 'now' as written) or numbered (serial,
	// identity), its name: values the engine cannot pin may instead
	// travel as rows after the statement.
	Added string
	// NeverNull: the values are never NULL (numbered rows, or a default
	// that is only a call of a function that never returns NULL), so a
	// NOT NULL column holds on every node whatever values it computes.
	NeverNull bool
	// typed is, for a column added without a default of its own (Type),
	// its name: Added of its domain's default (DomainDefault).
	typed string
}

// neverNullFuncs are functions of PostgreSQL's (and of its uuid-ossp
// extension) that never return NULL.
var neverNullFuncs = map[string]bool{
	"gen_random_uuid": true, "random": true, "clock_timestamp": true, "timeofday": true,
	"nextval": true, "uuid_generate_v1": true, "uuid_generate_v1mc": true, "uuid_generate_v4": true,
}

// neverNull says whether n is a call (perhaps cast) of one of
// neverNullFuncs.
func neverNull(n *pg_query.Node) bool {
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	fc := n.GetFuncCall()
	if fc == nil {
		return false
	}
	return neverNullFuncs[functionName(fc.Funcname)] // bare, or pg_catalog's
}

// UniqueOrder is an ordering by columns of one table (with the columns
// that partition or group the rows it orders).
type UniqueOrder struct {
	Table   string   // as a PostgreSQL name, quoted: "s"."t" or "t"
	Columns []string // column names
}

// Reason says why r computes values that may differ between nodes
// whatever functions it calls (numbering rows, the clock or session, row
// order), or "": then only its Funcs can, as the engine finds.
func (r Recompute) Reason() string {
	switch {
	case r.Numbering:
		return "numbers the rows in the order this node stores them"
	case r.Context:
		return "reads the time or the session it runs in"
	case r.Order:
		return "depends on the order this node stores rows in (LIMIT, OFFSET, DISTINCT ON, TABLESAMPLE, an aggregate or window function without ORDER BY, or with one that may tie)"
	case r.Catalog:
		return "reads the system catalogs, which differ from node to node (object ids, a session's temporary objects)"
	}
	return ""
}

// Refusal is the error (0A000, with a hint) that refuses a statement
// for r, why saying what in it differs between nodes (Reason, or what the
// engine found of a function).
func (r Recompute) Refusal(why string) *sqlerr.Error {
	e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: %s %s: every node runs a schema change again and would store other values", r.What, why)
	switch {
	case r.Bound:
		e = sqlerr.New(sqlerr.FeatureNotSupported, "certa: %s %s: every node runs a schema change again and would compute another bound", r.What, why)
		e.Hint = "Write the bound as constants (the values this node computes now: SELECT them first)."
	case r.Table == "":
		e.Hint = "Create the table, then fill it with INSERT ... SELECT: inserted rows are computed once and replicated."
	case r.Numbering:
		e.Hint = "Add the column as a plain integer, number the rows with UPDATE (rows are replicated as computed), then give it a default."
	case r.Domain:
		e.Hint = "Add the column with DEFAULT NULL, fill it with UPDATE (rows are replicated as computed), then DROP DEFAULT: new rows then get the domain's default."
	default:
		e.Hint = "Add the column without a default, fill it with UPDATE (rows are replicated as computed), then SET DEFAULT: a default then applies to new rows only."
	}
	return e
}

// Recomputes returns the parts of sql's statements that compute values
// when they run (see Recompute); nil for a statement that does not parse.
func Recomputes(sql string) []Recompute {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil
	}
	var out []Recompute
	for _, raw := range tree.Stmts {
		switch s := raw.Stmt.Node.(type) {
		case *pg_query.Node_AlterTableStmt:
			out = append(out, alterRecomputes(s.AlterTableStmt)...)
			for _, c := range s.AlterTableStmt.Cmds {
				if pc := c.GetAlterTableCmd().GetDef().GetPartitionCmd(); pc != nil && pc.Name != nil && pc.Bound != nil {
					out = append(out, boundRecompute(pc.Name.Relname, pc.Bound))
				}
			}
		case *pg_query.Node_CreateStmt:
			if s.CreateStmt.Partbound != nil && s.CreateStmt.Relation != nil {
				out = append(out, boundRecompute(s.CreateStmt.Relation.Relname, s.CreateStmt.Partbound))
			}
		case *pg_query.Node_CreateTableAsStmt:
			what := "the query of CREATE TABLE AS"
			if s.CreateTableAsStmt.Objtype == pg_query.ObjectType_OBJECT_MATVIEW {
				what = "the query of the materialized view"
			}
			if s.CreateTableAsStmt.Into != nil && s.CreateTableAsStmt.Into.SkipData {
				continue // WITH NO DATA
			}
			out = append(out, exprRecompute("", what, s.CreateTableAsStmt.Query))
		case *pg_query.Node_SelectStmt:
			if s.SelectStmt.IntoClause != nil {
				out = append(out, exprRecompute("", "the query of SELECT INTO", raw.Stmt))
			}
		}
	}
	return out
}

// boundRecompute is the bound of partition name, its values as written
// (a node computes current_timestamp when it runs the statement).
func boundRecompute(name string, b *pg_query.PartitionBoundSpec) Recompute {
	list := &pg_query.List{}
	for _, d := range [][]*pg_query.Node{b.Listdatums, b.Lowerdatums, b.Upperdatums} {
		list.Items = append(list.Items, d...)
	}
	r := exprRecompute("", "the bound of partition "+name, &pg_query.Node{Node: &pg_query.Node_List{List: list}})
	r.Bound = true
	return r
}

// alterRecomputes returns the parts of an ALTER TABLE that compute values
// for the table's rows: columns added with a default, a serial type or an
// identity, and types changed with USING.
func alterRecomputes(s *pg_query.AlterTableStmt) []Recompute {
	if s.Relation == nil || s.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return nil
	}
	table := quoteIdent(s.Relation.Relname)
	if s.Relation.Schemaname != "" {
		table = quoteIdent(s.Relation.Schemaname) + "." + table
	}
	var out []Recompute
	for _, c := range s.Cmds {
		cmd := c.GetAlterTableCmd()
		if cmd == nil {
			continue
		}
		def := cmd.Def.GetColumnDef()
		switch {
		case cmd.Subtype == pg_query.AlterTableType_AT_AddColumn && def != nil:
			r := Recompute{Table: table, What: "the default of column " + def.Colname}
			switch typeName(def.TypeName) {
			case "serial", "serial4", "bigserial", "serial8", "smallserial", "serial2":
				r.Numbering = true
			}
			hasDefault := false
			for _, cn := range def.Constraints {
				k := cn.GetConstraint()
				switch {
				case k == nil:
				case k.Contype == pg_query.ConstrType_CONSTR_IDENTITY:
					r.Numbering = true
				case k.Contype == pg_query.ConstrType_CONSTR_DEFAULT:
					hasDefault = true
					e := exprRecompute(table, r.What, k.RawExpr)
					r.Funcs, r.Context, r.Order = e.Funcs, e.Context, e.Order
					frozen := clockTypes[typeName(def.TypeName)] && readsClock(k.RawExpr) || castsClock(k.RawExpr)
					if frozen {
						r.Context = true // DEFAULT 'now' for a timestamp column
					}
					if !frozen {
						// (PostgreSQL stores 'now' as the moment it read it:
						// its rows and default would be this node's.)
						r.Column, r.IfNotExists = def.Colname, cmd.MissingOk
						r.Added, r.NeverNull = def.Colname, neverNull(k.RawExpr)
					}
				}
			}
			if r.Numbering && !hasDefault {
				r.Added, r.NeverNull = def.Colname, true
			}
			if !hasDefault && !r.Numbering && def.TypeName != nil && len(def.TypeName.ArrayBounds) == 0 {
				parts := names(def.TypeName.Names)
				for i, p := range parts {
					parts[i] = quoteIdent(p)
				}
				r.Type, r.typed = strings.Join(parts, "."), def.Colname
			}
			out = append(out, r)
		case cmd.Subtype == pg_query.AlterTableType_AT_AlterColumnType && def != nil && def.RawDefault != nil:
			out = append(out, exprRecompute(table, "the USING expression of column "+cmd.Name, def.RawDefault))
		case cmd.Subtype == pg_query.AlterTableType_AT_ColumnDefault && cmd.Def != nil:
			// SET DEFAULT computes nothing for the rows there are.
		}
	}
	return out
}

// exprRecompute returns what the expression or query n computes with.
func exprRecompute(table, what string, n *pg_query.Node) Recompute {
	r := Recompute{Table: table, What: what}
	if n == nil {
		return r
	}
	walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
		switch v := m.Interface().(type) {
		case *pg_query.RangeVar:
			if v.Schemaname == "pg_catalog" || v.Schemaname == "information_schema" || v.Schemaname == "" && strings.HasPrefix(v.Relname, "pg_") {
				r.Catalog = true
			}
		case *pg_query.FuncCall:
			r.Funcs = append(r.Funcs, functionName(v.Funcname))
			if v.Over == nil && orderSensitive(v) {
				r.Order = true
			}
		case *pg_query.TypeCast:
			if clockTypes[typeName(v.TypeName)] && readsClock(v.Arg) {
				r.Context = true
			}
		case *pg_query.SQLValueFunction:
			switch v.Op {
			case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER,
				pg_query.SQLValueFunctionOp_SVFOP_USER, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG,
				pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
				// The client role and the database: the same everywhere.
			default:
				r.Context = true
			}
		case *pg_query.SelectStmt:
			if v.LimitCount != nil || v.LimitOffset != nil || len(v.DistinctClause) > 0 && v.DistinctClause[0].Node != nil {
				r.Order = true
			}
			r.orderedCalls(v)
		case *pg_query.RangeTableSample:
			r.Order = true
		}
	})
	return r
}

// DomainDefault returns what the default of a domain (its text, as
// pg_type.typdefault holds it) computes, for the column r adds.
func (r Recompute) DomainDefault(expr string) Recompute {
	d := Recompute{Table: r.Table, What: r.What + " (its domain's)", Domain: true, Added: r.typed}
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		d.Context = true // unreadable: refuse rather than guess
		return d
	}
	val := tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val
	e := exprRecompute(r.Table, d.What, val)
	d.Funcs, d.Context, d.Order, d.NeverNull = e.Funcs, e.Context, e.Order, neverNull(val)
	return d
}

// clockTypes are the types whose input reads the clock for the special
// values readsClock knows: DEFAULT 'now' is the moment the statement ran,
// which differs on each node.
var clockTypes = map[string]bool{"date": true, "timestamp": true, "timestamptz": true, "time": true, "timetz": true}

// readsClock reports whether n is a string constant that a date or time
// type reads as the moment it is read ('now', 'today', 'tomorrow',
// 'yesterday').
func readsClock(n *pg_query.Node) bool {
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(c.GetSval().Sval)) {
	case "now", "today", "tomorrow", "yesterday":
		return true
	}
	return false
}

// castsClock reports whether n casts a string that a date or time type
// reads as the moment (readsClock) to such a type: a constant PostgreSQL
// computes when it reads the expression.
func castsClock(n *pg_query.Node) bool {
	found := false
	walkMessages(n.ProtoReflect(), func(m protoreflect.Message) {
		if c, ok := m.Interface().(*pg_query.TypeCast); ok && clockTypes[typeName(c.TypeName)] && readsClock(c.Arg) {
			found = true
		}
	})
	return found
}

// orderSensitive reports whether aggregate f's result depends on the
// order rows come in: it collects values in input order without an ORDER
// BY of its own.
func orderSensitive(f *pg_query.FuncCall) bool {
	return collectingAggregates[functionName(f.Funcname)] && len(f.AggOrder) == 0
}

// collectingAggregates collect their values in the order rows come in.
var collectingAggregates = map[string]bool{"array_agg": true, "string_agg": true, "json_agg": true, "jsonb_agg": true,
	"json_object_agg": true, "jsonb_object_agg": true, "xmlagg": true, "json_agg_strict": true, "jsonb_agg_strict": true,
	"json_arrayagg": true, "json_objectagg": true}

// pickingWindows number or pick rows in window order, so rows that tie
// in it get values that depend on the order they came in (rank and the
// like give ties one value).
var pickingWindows = map[string]bool{"row_number": true, "ntile": true, "lag": true, "lead": true,
	"first_value": true, "last_value": true, "nth_value": true,
	"rank": false, "dense_rank": false, "percent_rank": false, "cume_dist": false}

// frameRows is PostgreSQL's FRAMEOPTION_ROWS: a frame of so many rows
// around the current one, whatever ties.
const frameRows = 0x4

// orderedCalls records what the window functions and ordered aggregates
// of s (not of queries nested in it) depend on: a window function that
// numbers or picks rows without ORDER BY (r.Order), and every ordering
// whose ties would change a result (r.Unique, or r.Order when it is not
// a list of columns of s's one table).
func (r *Recompute) orderedCalls(s *pg_query.SelectStmt) {
	walkPruned(s.ProtoReflect(), func(m protoreflect.Message) bool {
		switch v := m.Interface().(type) {
		case *pg_query.SelectStmt:
			return v == s
		case *pg_query.FuncCall:
			name := functionName(v.Funcname)
			var order, with []*pg_query.Node
			switch {
			case v.Over != nil:
				def := windowOf(s, v.Over)
				sensitive, known := pickingWindows[name]
				if !sensitive && (known || def.FrameOptions&frameRows == 0) {
					return true
				}
				if len(def.OrderClause) == 0 {
					if known {
						r.Order = true
					}
					return true
				}
				order, with = def.OrderClause, def.PartitionClause
			case collectingAggregates[name] && len(v.AggOrder) > 0:
				order, with = v.AggOrder, s.GroupClause
			default:
				return true
			}
			if u, ok := uniqueOrder(s, order, with); ok {
				r.Unique = append(r.Unique, u)
			} else {
				r.Order = true
			}
		}
		return true
	})
}

// windowOf returns the window over names, with what it takes from a
// window of s's WINDOW clause that it refers to.
func windowOf(s *pg_query.SelectStmt, over *pg_query.WindowDef) *pg_query.WindowDef {
	ref := over.Refname
	if ref == "" && len(over.OrderClause) == 0 && len(over.PartitionClause) == 0 && over.FrameOptions&frameNonDefault == 0 {
		ref = over.Name
	}
	if ref == "" {
		return over
	}
	for _, n := range s.WindowClause {
		if w := n.GetWindowDef(); w != nil && w.Name == ref {
			def := &pg_query.WindowDef{PartitionClause: w.PartitionClause, OrderClause: w.OrderClause, FrameOptions: w.FrameOptions}
			if len(over.OrderClause) > 0 {
				def.OrderClause = over.OrderClause
			}
			if over.FrameOptions&frameNonDefault != 0 {
				def.FrameOptions = over.FrameOptions
			}
			return def
		}
	}
	return over
}

// uniqueOrder returns the ordering by order (with the columns of with)
// as columns of s's one table; false if s reads more than one table, or
// an item is not a column of it.
func uniqueOrder(s *pg_query.SelectStmt, order, with []*pg_query.Node) (UniqueOrder, bool) {
	if len(s.FromClause) != 1 || s.FromClause[0].GetRangeVar() == nil {
		return UniqueOrder{}, false
	}
	rv := s.FromClause[0].GetRangeVar()
	u := UniqueOrder{Table: quoteIdent(rv.Relname)}
	if rv.Schemaname != "" {
		u.Table = quoteIdent(rv.Schemaname) + "." + u.Table
	}
	ref := rv.Relname
	if rv.Alias != nil {
		ref = rv.Alias.Aliasname
	}
	for _, n := range append(order, with...) {
		if sb := n.GetSortBy(); sb != nil {
			n = sb.Node
		}
		col := n.GetColumnRef()
		if col == nil {
			return UniqueOrder{}, false
		}
		parts := names(col.Fields)
		if len(parts) != len(col.Fields) || len(parts) > 2 || len(parts) == 2 && parts[0] != ref {
			return UniqueOrder{}, false // *, or another table's
		}
		u.Columns = append(u.Columns, parts[len(parts)-1])
	}
	return u, true
}

// walkMessages calls f for m and every message below it.
func walkMessages(m protoreflect.Message, f func(protoreflect.Message)) {
	walkPruned(m, func(m protoreflect.Message) bool {
		f(m)
		return true
	})
}
