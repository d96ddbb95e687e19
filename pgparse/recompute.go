package pgparse

import (
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
	// (CURRENT_TIMESTAMP, LOCALTIME, CURRENT_DATE, SESSION_USER ...).
	Context bool
	// Numbering: it numbers rows in their physical order (a serial or
	// identity column added to a table).
	Numbering bool
	// Order: which rows it keeps depends on their physical order (LIMIT,
	// OFFSET, FETCH, DISTINCT ON, TABLESAMPLE).
	Order bool
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
		return "keeps rows by the order this node stores them (LIMIT, OFFSET, DISTINCT ON, TABLESAMPLE)"
	}
	return ""
}

// Refusal is the error (0A000, with a hint) that refuses a statement
// for r, why saying what in it differs between nodes (Reason, or what the
// engine found of a function).
func (r Recompute) Refusal(why string) *sqlerr.Error {
	e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: %s %s: every node runs a schema change again and would store other values", r.What, why)
	switch {
	case r.Table == "":
		e.Hint = "Create the table, then fill it with INSERT ... SELECT: inserted rows are computed once and replicated."
	case r.Numbering:
		e.Hint = "Add the column as a plain integer, number the rows with UPDATE (rows are replicated as computed), then give it a default."
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
			for _, cn := range def.Constraints {
				k := cn.GetConstraint()
				switch {
				case k == nil:
				case k.Contype == pg_query.ConstrType_CONSTR_IDENTITY:
					r.Numbering = true
				case k.Contype == pg_query.ConstrType_CONSTR_DEFAULT:
					e := exprRecompute(table, r.What, k.RawExpr)
					r.Funcs, r.Context, r.Order = e.Funcs, e.Context, e.Order
				}
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
		case *pg_query.FuncCall:
			r.Funcs = append(r.Funcs, functionName(v.Funcname))
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
		case *pg_query.RangeTableSample:
			r.Order = true
		}
	})
	return r
}

// walkMessages calls f for m and every message below it.
func walkMessages(m protoreflect.Message, f func(protoreflect.Message)) {
	f(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := range l.Len() {
				walkMessages(l.Get(i).Message(), f)
			}
		case fd.Message() != nil && !fd.IsMap():
			walkMessages(v.Message(), f)
		}
		return true
	})
}
