package pgparse

import (
	"encoding/json"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// The catalog printer: a query over PostgreSQL's system catalogs
// (pg_catalog, information_schema) printed for the tables an engine
// answers them from. It is the SQLite printer with more: every expression
// has a PostgreSQL type (catalog_typeof.go), arrays are JSON arrays inside
// the query (unnest, array_agg, ARRAY(subquery), subscripts, = ANY), reg*
// types are oids, and the result's arrays and reg* values are printed as
// PostgreSQL prints them by certa_out(value, typname), which the engine
// registers with the functions CatalogFunctions lists.

// CatalogRelations tells the catalog printer the relations of the system
// catalogs. The engine that answers catalog queries implements it.
type CatalogRelations interface {
	// Relation returns the table that holds relation name of schema
	// ("pg_catalog", "information_schema", or "" when the query names no
	// schema) and its columns in order; ok is false when schema.name is
	// no catalog relation the engine keeps.
	Relation(schema, name string) (table string, columns []CatalogColumn, ok bool)
}

// CatalogColumn is a column of a catalog relation, or of a catalog query's
// result: its name and its type's typname ("oid", "_int2", "" unknown).
// A system column (a catalog table's tableoid) is named, never part of *.
type CatalogColumn struct {
	Name, Type string
	System     bool
}

// CatalogToSQLite prints a query over the system catalogs for the tables
// rels names. Result columns carry their types (ResultColumn.Type).
func CatalogToSQLite(sql string, rels CatalogRelations) (*SQLite, error) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, parseError(err)
	}
	if len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a statement over PostgreSQL's system catalogs must be one SELECT on the embedded engine (SQLite)")
	}
	s := tree.Stmts[0].Stmt.GetSelectStmt()
	p := &printer{cat: rels, ctes: map[string][]CatalogColumn{}}
	p.selectStmt(s, true)
	if p.err != nil {
		return nil, p.err
	}
	cols := p.resultColumns(s)
	if len(p.topColumns) > 0 {
		cols = make([]ResultColumn, len(p.topColumns))
		for i, c := range p.topColumns {
			cols[i] = ResultColumn{Name: c.Name, Type: c.Type}
		}
	}
	return &SQLite{SQL: p.b.String(), Columns: cols, Params: p.params}, nil
}

// scope is what the names of a SELECT's FROM items mean, inside the
// scopes of the queries it is nested in.
type scope struct {
	outer *scope
	items []scopeItem
}

// scopeItem is one FROM item: its name (alias) and columns.
type scopeItem struct {
	alias string
	cols  []scopeCol
}

// scopeCol is a column of a FROM item. sql is what a reference to it
// prints when that is not alias.name (a column of unnest is a column of
// json_each).
type scopeCol struct {
	name, typ, sql string
	system         bool // not part of *
}

// resolve finds the column a reference names: qualified by a FROM item's
// name, or unqualified, innermost scope first.
func (s *scope) resolve(qual, name string) (scopeCol, bool) {
	for ; s != nil; s = s.outer {
		for _, it := range s.items {
			if qual != "" && it.alias != qual {
				continue
			}
			for _, c := range it.cols {
				if c.name == name {
					return c, true
				}
			}
		}
	}
	return scopeCol{}, false
}

// item finds a FROM item by name.
func (s *scope) item(alias string) (scopeItem, bool) {
	for ; s != nil; s = s.outer {
		for _, it := range s.items {
			if it.alias == alias {
				return it, true
			}
		}
	}
	return scopeItem{}, false
}

// pushScope makes the FROM items of a SELECT the innermost scope.
func (p *printer) pushScope(from []*pg_query.Node) {
	s := &scope{outer: p.scope}
	p.scope = s // a LATERAL item reads the items before it (lateralSRFs)
	for _, n := range from {
		s.items = append(s.items, p.fromItems(n)...)
	}
}

func (p *printer) popScope() { p.scope = p.scope.outer }

// fromItems returns the scope items of a FROM item.
func (p *printer) fromItems(n *pg_query.Node) []scopeItem {
	switch f := n.Node.(type) {
	case *pg_query.Node_RangeVar:
		rv := f.RangeVar
		alias := rv.Relname
		if rv.Alias != nil {
			alias = rv.Alias.Aliasname
		}
		cols, ok := p.ctes[rv.Relname]
		if !ok || rv.Schemaname != "" {
			_, cols, ok = p.cat.Relation(rv.Schemaname, rv.Relname)
		}
		if !ok {
			return nil
		}
		return []scopeItem{{alias: alias, cols: renamed(plainCols(cols), rv.Alias)}}
	case *pg_query.Node_JoinExpr:
		left := p.fromItems(f.JoinExpr.Larg)
		// Visible, for the moment, to a LATERAL item on the right
		// (lateralSRFs); the caller adds them for good.
		n := len(p.scope.items)
		p.scope.items = append(p.scope.items, left...)
		right := p.fromItems(f.JoinExpr.Rarg)
		p.scope.items = p.scope.items[:n]
		return append(left, right...)
	case *pg_query.Node_RangeSubselect:
		rs := f.RangeSubselect
		if rs.Alias == nil {
			return nil
		}
		if targets, ok := lateralSRFs(rs); ok {
			// Its columns are those of the json_each the item is
			// (fromItem), as its targets print over it.
			p.srfsOver(targets, rs.Alias.Aliasname)
			var cols []scopeCol
			for i, n := range targets {
				rt := n.GetResTarget()
				name := rt.Name
				if i < len(rs.Alias.Colnames) {
					name = rs.Alias.Colnames[i].GetString_().GetSval()
				} else if name == "" {
					name = figureColname(rt.Val)
				}
				cols = append(cols, scopeCol{name: name, typ: p.typeOf(rt.Val), sql: p.sub(func() { p.expr(rt.Val) })})
			}
			return []scopeItem{{alias: rs.Alias.Aliasname, cols: cols}}
		}
		return []scopeItem{{alias: rs.Alias.Aliasname, cols: renamed(plainCols(p.selectColumns(rs.Subquery)), rs.Alias)}}
	case *pg_query.Node_RangeFunction:
		alias, cols := p.functionColumns(f.RangeFunction)
		return []scopeItem{{alias: alias, cols: cols}}
	}
	return nil
}

func plainCols(cols []CatalogColumn) []scopeCol {
	out := make([]scopeCol, len(cols))
	for i, c := range cols {
		out[i] = scopeCol{name: c.Name, typ: c.Type, system: c.System}
	}
	return out
}

// renamed applies an alias's column names.
func renamed(cols []scopeCol, a *pg_query.Alias) []scopeCol {
	if a == nil {
		return cols
	}
	for i, n := range a.Colnames {
		if i < len(cols) {
			cols[i].name = n.GetString_().GetSval()
		}
	}
	return cols
}

// selectColumns are the result columns of a query nested in a catalog
// query, with their types, computed in the scope it would run in.
func (p *printer) selectColumns(n *pg_query.Node) []CatalogColumn {
	s := n.GetSelectStmt()
	if s == nil {
		return nil
	}
	for s.Larg != nil {
		s = s.Larg
	}
	if s.WithClause != nil {
		saved := p.ctes
		p.ctes = map[string][]CatalogColumn{}
		for k, v := range saved {
			p.ctes[k] = v
		}
		p.noteCTEs(s.WithClause)
		defer func() { p.ctes = saved }()
	}
	if len(s.ValuesLists) > 0 {
		var cols []CatalogColumn
		for i, v := range s.ValuesLists[0].GetList().GetItems() {
			cols = append(cols, CatalogColumn{Name: "column" + strconv.Itoa(i+1), Type: p.typeOf(v)})
		}
		return cols
	}
	p.pushScope(s.FromClause)
	defer p.popScope()
	var cols []CatalogColumn
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		if star, qual := starOf(rt.Val); star {
			for _, c := range p.starColumns(qual) {
				cols = append(cols, CatalogColumn{Name: c.name, Type: c.typ})
			}
			continue
		}
		name := rt.Name
		if name == "" {
			name = figureColname(rt.Val)
		}
		cols = append(cols, CatalogColumn{Name: name, Type: p.typeOf(rt.Val)})
	}
	return cols
}

// noteCTEs records the columns of a WITH clause's queries.
func (p *printer) noteCTEs(w *pg_query.WithClause) {
	for _, n := range w.Ctes {
		cte := n.GetCommonTableExpr()
		cols := p.selectColumns(cte.Ctequery)
		for i, a := range cte.Aliascolnames {
			if i < len(cols) {
				cols[i].Name = a.GetString_().GetSval()
			}
		}
		p.ctes[cte.Ctename] = cols
	}
}

// starOf tells a target that is * or alias.*, and the alias.
func starOf(n *pg_query.Node) (bool, string) {
	cr := n.GetColumnRef()
	if cr == nil || cr.Fields[len(cr.Fields)-1].GetAStar() == nil {
		return false, ""
	}
	if len(cr.Fields) == 2 {
		return true, cr.Fields[0].GetString_().GetSval()
	}
	return true, ""
}

// starColumns are the columns * (qual "") or qual.* stands for, with the
// FROM item each comes from.
func (p *printer) starColumns(qual string) []starColumn {
	var out []starColumn
	if p.scope == nil {
		return nil
	}
	for _, it := range p.scope.items {
		if qual != "" && it.alias != qual {
			continue
		}
		for _, c := range it.cols {
			if !c.system {
				out = append(out, starColumn{scopeCol: c, alias: it.alias})
			}
		}
	}
	return out
}

type starColumn struct {
	scopeCol
	alias string
}

// catalogTargets writes the target list of a SELECT of a catalog query:
// * expanded (a FROM item's columns may be expressions of json_each's),
// every column named. In the outermost SELECT (top), values PostgreSQL
// prints otherwise than SQLite holds them (arrays, reg* types) pass
// through certa_out, and the first such SELECT's columns are the
// result's.
func (p *printer) catalogTargets(list []*pg_query.Node, top bool) {
	var cols []CatalogColumn
	first := true
	out := func(sql, name, typ string) {
		if !first {
			p.w(", ")
		}
		first = false
		if top && needsOut(typ) {
			p.w("certa_out(", sql, ", '", typ, "')")
		} else {
			p.w(sql)
		}
		p.w(" AS ")
		p.ident(name)
		cols = append(cols, CatalogColumn{Name: name, Type: typ})
	}
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil {
			p.refuse("this target")
			return
		}
		if star, qual := starOf(rt.Val); star {
			for _, c := range p.starColumns(qual) {
				sql := c.sql
				if sql == "" {
					sql = quoteIdent(c.alias) + "." + quoteIdent(c.name)
				}
				out(sql, c.name, c.typ)
			}
			continue
		}
		name := rt.Name
		if name == "" {
			name = figureColname(rt.Val)
		}
		out(p.sub(func() { p.expr(rt.Val) }), name, p.typeOf(rt.Val))
	}
	if top && p.topColumns == nil {
		p.topColumns = cols
	}
}

// needsOut tells the types whose values certa_out prints.
func needsOut(typ string) bool {
	if elemType(typ) != "" {
		return true
	}
	switch typ {
	case "regclass", "regtype", "regproc", "regnamespace", "regrole":
		return true
	}
	return false
}

// ReadsCatalog reports whether sql reads the system catalogs: names a
// relation of pg_catalog or information_schema (qualified, or a pg_*
// catalog unqualified), or calls a function qualified with either schema,
// but for the sequence functions (pg_dump writes pg_catalog.setval), which
// change data. A statement the parser refuses counts as reading them (the
// catalog reports the error).
func ReadsCatalog(sql string) bool {
	js, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return true
	}
	var tree any
	if err := json.Unmarshal([]byte(js), &tree); err != nil {
		return true
	}
	return readsCatalog(tree)
}

func readsCatalog(n any) bool {
	switch x := n.(type) {
	case []any:
		for _, v := range x {
			if readsCatalog(v) {
				return true
			}
		}
	case map[string]any:
		if rv, ok := x["RangeVar"].(map[string]any); ok {
			schema, _ := rv["schemaname"].(string)
			name, _ := rv["relname"].(string)
			if schema == "pg_catalog" || schema == "information_schema" || schema == "" && strings.HasPrefix(name, "pg_") {
				return true
			}
		}
		if tc, ok := x["TypeCast"].(map[string]any); ok {
			// 'name'::regclass and the like look names up in the catalog.
			if tn, ok := tc["typeName"].(map[string]any); ok {
				parts := asList(tn["names"])
				if len(parts) > 0 {
					if s, ok := parts[len(parts)-1].(map[string]any)["String"].(map[string]any); ok {
						if v, _ := s["sval"].(string); strings.HasPrefix(v, "reg") {
							return true
						}
					}
				}
			}
		}
		if fc, ok := x["FuncCall"].(map[string]any); ok {
			var names []string
			for _, part := range asList(fc["funcname"]) {
				if s, ok := part.(map[string]any)["String"].(map[string]any); ok {
					v, _ := s["sval"].(string)
					names = append(names, v)
				}
			}
			if len(names) == 2 && (names[0] == "pg_catalog" || names[0] == "information_schema") && !sequenceFunctions[names[1]] {
				return true
			}
			if len(names) == 1 && catalogOnly(names[0]) {
				return true // obj_description(...), format_type(...)
			}
		}
		for _, v := range x {
			if readsCatalog(v) {
				return true
			}
		}
	}
	return false
}

// catalogOnly reports whether name is a function only the catalog has.
func catalogOnly(name string) bool {
	_, catalog := CatalogFunctions[name]
	_, data := sqliteFunctions[name]
	return catalog && !data
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// sequenceFunctions change sequences: they run on the data, never in the
// catalog.
var sequenceFunctions = map[string]bool{"nextval": true, "currval": true, "setval": true, "lastval": true}

// lateralSRFs returns the targets of a LATERAL subquery in FROM that only
// runs set-returning functions over an array of the items before it
// ((SELECT unnest(i.indkey), generate_subscripts(i.indkey, 1) + 1) AS
// k(attnum, i), as drizzle reads index columns): a catalog query writes it
// as SQLite's json_each over the array, which may read the items before
// it. ok is false for any other subquery.
func lateralSRFs(rs *pg_query.RangeSubselect) ([]*pg_query.Node, bool) {
	sel := rs.Subquery.GetSelectStmt()
	if !rs.Lateral || rs.Alias == nil || sel == nil || len(sel.FromClause) > 0 || sel.WhereClause != nil ||
		len(sel.GroupClause) > 0 || sel.HavingClause != nil || len(sel.SortClause) > 0 || sel.LimitCount != nil ||
		len(sel.TargetList) == 0 || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return nil, false
	}
	for _, n := range sel.TargetList {
		if rt := n.GetResTarget(); rt == nil || srfCall(rt.Val) == nil {
			return nil, false
		}
	}
	return sel.TargetList, true
}
