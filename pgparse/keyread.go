package pgparse

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// KeyRead describes a statement whose reads of its one table depend only
// on rows that some conditions of its WHERE select: a SELECT from one
// table, or an UPDATE or DELETE of one, whose WHERE is a conjunction
// with conditions on plain columns compared with constants or parameters
// (=, <, <=, >, >=, IN, BETWEEN, LIKE). Rows outside what any one of Conds
// selects cannot change the statement's outcome, whatever the other
// conjuncts say, so a serializable transaction may certify the keys or
// key ranges Conds give instead of the whole table (engine.Tx.Reads). A
// plain INSERT ... VALUES (Insert) reads no rows at all; with ON CONFLICT
// (columns) (Upsert) it reads the rows its values name by those columns:
// Columns lists the columns the values are for (nil: the table's, in
// order) and Rows the values, each a constant, a parameter or unknown
// (Operand.Unknown).
//
// A statement with a subquery, a join, a CTE, a set operation, a
// function in FROM or an INSERT of another form is no KeyRead: it may
// read any row. The caller must still check that the engine saw the
// statement read no other table (a view's name is not its table's).
type KeyRead struct {
	Schema string // "public" when the statement says so, else ""
	Table  string // the relation named, unqualified
	Insert bool   // an INSERT ... VALUES
	Conds  []KeyCond
	// Upsert, for an INSERT with ON CONFLICT (ConflictColumns): the
	// columns and rows of its VALUES.
	Upsert          bool
	ConflictColumns []string
	Columns         []string
	Rows            [][]Operand
}

// KeyCond is one condition of a KeyRead's WHERE: Column Op Values, with
// Op one of "=", "<", "<=", ">", ">=", "like" (one value: the pattern,
// which escapes with \), "in" (the listed values) or "between" (two:
// low, high).
type KeyCond struct {
	Column string
	Op     string
	Values []Operand
}

// Operand is a constant or a parameter: Param is n for $n; else Int for an
// integer constant (IsInt) or Text for a string constant. Unknown marks
// any other expression.
type Operand struct {
	Param   int
	IsInt   bool
	Int     int64
	Text    string
	Unknown bool
}

// maxKeyReadValues bounds an IN list read as keys.
const maxKeyReadValues = 1000

// ParseKeyRead returns the KeyRead of sql, or nil when sql is not one.
func ParseKeyRead(sql string) *KeyRead {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	stmt := tree.Stmts[0].Stmt
	opaque := false
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		switch m.Interface().(type) {
		case *pg_query.SubLink, *pg_query.RangeSubselect, *pg_query.RangeFunction, *pg_query.JoinExpr,
			*pg_query.CommonTableExpr, *pg_query.WithClause, *pg_query.RangeTableSample, *pg_query.RangeTableFunc:
			opaque = true
		}
	})
	if opaque {
		return nil
	}
	var rel *pg_query.RangeVar
	var where *pg_query.Node
	insert := false
	switch {
	case stmt.GetSelectStmt() != nil:
		s := stmt.GetSelectStmt()
		if s.Op != pg_query.SetOperation_SETOP_NONE || len(s.FromClause) != 1 || s.IntoClause != nil {
			return nil
		}
		rel, where = s.FromClause[0].GetRangeVar(), s.WhereClause
	case stmt.GetUpdateStmt() != nil:
		u := stmt.GetUpdateStmt()
		if len(u.FromClause) != 0 {
			return nil
		}
		rel, where = u.Relation, u.WhereClause
	case stmt.GetDeleteStmt() != nil:
		d := stmt.GetDeleteStmt()
		if len(d.UsingClause) != 0 {
			return nil
		}
		rel, where = d.Relation, d.WhereClause
	case stmt.GetInsertStmt() != nil:
		in := stmt.GetInsertStmt()
		sel := in.SelectStmt.GetSelectStmt()
		if sel == nil || len(sel.ValuesLists) == 0 || len(sel.FromClause) != 0 {
			return nil
		}
		rel, insert = in.Relation, true
		if oc := in.OnConflictClause; oc != nil {
			return upsert(rel, in, oc, sel)
		}
	default:
		return nil
	}
	if rel == nil || rel.Catalogname != "" || rel.Schemaname != "" && rel.Schemaname != "public" {
		return nil
	}
	kr := &KeyRead{Schema: rel.Schemaname, Table: rel.Relname, Insert: insert}
	alias := rel.Relname
	if rel.Alias != nil {
		alias = rel.Alias.Aliasname
	}
	for _, c := range conjuncts(where) {
		if kc, ok := keyCond(c, alias); ok {
			kr.Conds = append(kr.Conds, kc)
		}
	}
	return kr
}

// upsert is ParseKeyRead of INSERT ... VALUES ... ON CONFLICT.
func upsert(rel *pg_query.RangeVar, in *pg_query.InsertStmt, oc *pg_query.OnConflictClause, sel *pg_query.SelectStmt) *KeyRead {
	infer := oc.Infer
	if rel == nil || rel.Catalogname != "" || rel.Schemaname != "" && rel.Schemaname != "public" ||
		infer == nil || infer.Conname != "" || infer.WhereClause != nil || len(infer.IndexElems) == 0 {
		return nil // no target, a constraint by name, or a partial index
	}
	kr := &KeyRead{Schema: rel.Schemaname, Table: rel.Relname, Insert: true, Upsert: true}
	for _, n := range infer.IndexElems {
		ie := n.GetIndexElem()
		if ie == nil || ie.Name == "" || ie.Expr != nil || len(ie.Collation) > 0 || len(ie.Opclass) > 0 {
			return nil
		}
		kr.ConflictColumns = append(kr.ConflictColumns, ie.Name)
	}
	for _, n := range in.Cols {
		rt := n.GetResTarget()
		if rt == nil || len(rt.Indirection) > 0 {
			return nil
		}
		kr.Columns = append(kr.Columns, rt.Name)
	}
	for _, vl := range sel.ValuesLists {
		var row []Operand
		for _, item := range vl.GetList().GetItems() {
			o, ok := operand(item)
			if !ok {
				o = Operand{Unknown: true}
			}
			row = append(row, o)
		}
		kr.Rows = append(kr.Rows, row)
	}
	return kr
}

// conjuncts returns the terms of an AND (n itself if it is none).
func conjuncts(n *pg_query.Node) []*pg_query.Node {
	if n == nil {
		return nil
	}
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

// flipped is the operator that means the same with its operands swapped.
var flipped = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// keyCond reads a condition column op value (either way round), column
// IN (values) or column BETWEEN low AND high, the column unqualified or
// qualified by alias.
func keyCond(n *pg_query.Node, alias string) (KeyCond, bool) {
	e := n.GetAExpr()
	if e == nil {
		return KeyCond{}, false
	}
	op := operator(e.Name)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if _, ok := flipped[op]; !ok {
			return KeyCond{}, false
		}
		col, ok := plainColumn(e.Lexpr, alias)
		val, isVal := operand(e.Rexpr)
		if !ok || !isVal {
			col, ok = plainColumn(e.Rexpr, alias)
			val, isVal = operand(e.Lexpr)
			op = flipped[op]
		}
		if !ok || !isVal {
			return KeyCond{}, false
		}
		return KeyCond{Column: col, Op: op, Values: []Operand{val}}, true
	case pg_query.A_Expr_Kind_AEXPR_LIKE:
		col, ok := plainColumn(e.Lexpr, alias)
		val, isVal := operand(e.Rexpr) // not like_escape(...): an ESCAPE clause
		if op != "~~" || !ok || !isVal || val.IsInt {
			return KeyCond{}, false // NOT LIKE
		}
		return KeyCond{Column: col, Op: "like", Values: []Operand{val}}, true
	case pg_query.A_Expr_Kind_AEXPR_IN, pg_query.A_Expr_Kind_AEXPR_BETWEEN:
		if (e.Kind == pg_query.A_Expr_Kind_AEXPR_IN) != (op == "=") || e.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN && op != "BETWEEN" {
			return KeyCond{}, false // NOT IN, NOT BETWEEN, BETWEEN SYMMETRIC
		}
		col, ok := plainColumn(e.Lexpr, alias)
		list := e.Rexpr.GetList()
		if !ok || list == nil || len(list.Items) > maxKeyReadValues {
			return KeyCond{}, false
		}
		kc := KeyCond{Column: col, Op: "in"}
		if e.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN {
			kc.Op = "between"
		}
		for _, item := range list.Items {
			v, ok := operand(item)
			if !ok {
				return KeyCond{}, false
			}
			kc.Values = append(kc.Values, v)
		}
		return kc, kc.Op == "in" || len(kc.Values) == 2
	}
	return KeyCond{}, false
}

// plainColumn returns the column n names: col or alias.col.
func plainColumn(n *pg_query.Node, alias string) (string, bool) {
	ref := n.GetColumnRef()
	if ref == nil {
		return "", false
	}
	parts := names(ref.Fields)
	if len(parts) != len(ref.Fields) { // a * among them
		return "", false
	}
	switch {
	case len(parts) == 1:
		return parts[0], true
	case len(parts) == 2 && parts[0] == alias:
		return parts[1], true
	}
	return "", false
}

// operand reads a parameter, an integer constant or a string constant,
// without casts (whose meaning depends on the type).
func operand(n *pg_query.Node) (Operand, bool) {
	if p := n.GetParamRef(); p != nil {
		return Operand{Param: int(p.Number)}, p.Number > 0
	}
	c := n.GetAConst()
	switch {
	case c == nil || c.Isnull:
		return Operand{}, false
	case c.GetIval() != nil:
		return Operand{IsInt: true, Int: int64(c.GetIval().Ival)}, true
	case c.GetFval() != nil: // an integer too large for int32 is a Float node
		i, err := strconv.ParseInt(c.GetFval().Fval, 10, 64)
		return Operand{IsInt: true, Int: i}, err == nil
	case c.GetSval() != nil:
		return Operand{Text: c.GetSval().Sval}, true
	}
	return Operand{}, false
}

// Relation is a relation a statement names: Schema "" when unqualified.
type Relation struct {
	Schema, Name string
}

// RelationNames returns the relations sql's statements name (FROM items,
// targets of writes, COPY's table, CTE names too), or ok false when what
// they read cannot be told from their text: a function in FROM (an SQL
// function's body may be inlined into the query, uncounted), DO, CALL,
// EXECUTE, EXPLAIN, or a change of search_path (which would make names
// mean other tables).
func RelationNames(sql string) (rels []Relation, ok bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, false
	}
	ok = true
	for _, raw := range tree.Stmts {
		walkMessages(raw.Stmt.ProtoReflect(), func(m protoreflect.Message) {
			switch n := m.Interface().(type) {
			case *pg_query.RangeVar:
				rels = append(rels, Relation{Schema: n.Schemaname, Name: n.Relname})
			case *pg_query.RangeFunction, *pg_query.DoStmt, *pg_query.CallStmt, *pg_query.ExecuteStmt,
				*pg_query.ExplainStmt, *pg_query.RangeTableFunc:
				ok = false
			case *pg_query.VariableSetStmt:
				if n.Name == "search_path" || n.Kind == pg_query.VariableSetKind_VAR_RESET_ALL {
					ok = false
				}
			case *pg_query.FuncCall:
				if lastName(n.Funcname) == "set_config" {
					ok = false
				}
			}
		})
	}
	return rels, ok
}
