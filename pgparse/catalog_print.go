package pgparse

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// What the catalog printer writes otherwise than the SQLite printer:
// catalog relations, arrays (JSON arrays inside the query) and reg* casts.

// catalogRangeVar writes a relation of a catalog query: a common table
// expression, or a catalog relation under the name the engine keeps it
// by, aliased by its PostgreSQL name so that qualified references work.
func (p *printer) catalogRangeVar(rv *pg_query.RangeVar) {
	alias := rv.Relname
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	if _, ok := p.ctes[rv.Relname]; ok && rv.Schemaname == "" {
		p.ident(rv.Relname)
	} else if table, _, ok := p.cat.Relation(rv.Schemaname, rv.Relname); ok {
		p.ident(table)
	} else if rv.Schemaname == "pg_catalog" || rv.Schemaname == "information_schema" {
		p.fail(sqlerr.New(sqlerr.FeatureNotSupported, "certa's catalog has no %s.%s (the embedded engine answers the parts of pg_catalog and information_schema that drivers and tools commonly read; the PostgreSQL engine has them all)", rv.Schemaname, rv.Relname))
		return
	} else {
		p.refuse("a query over the system catalogs that also reads table " + quoteIdent(rv.Relname))
		return
	}
	p.w(" AS ")
	p.ident(alias)
}

// functionColumns names the FROM item a function in FROM makes and its
// columns, as catalogFunctionFrom prints it.
func (p *printer) functionColumns(rf *pg_query.RangeFunction) (string, []scopeCol) {
	f := rangeFunc(rf)
	if f == nil {
		return "", nil
	}
	name := functionName(f.Funcname)
	alias := name
	if i := strings.LastIndexByte(alias, '.'); i >= 0 {
		alias = alias[i+1:]
	}
	if rf.Alias != nil {
		alias = rf.Alias.Aliasname
	}
	colName := func(i int, def string) string {
		if rf.Alias != nil && i < len(rf.Alias.Colnames) {
			return rf.Alias.Colnames[i].GetString_().GetSval()
		}
		if i == 0 && rf.Alias != nil && len(rf.Alias.Colnames) == 0 && name != "information_schema._pg_expandarray" {
			return rf.Alias.Aliasname
		}
		return def
	}
	q := quoteIdent(alias)
	var cols []scopeCol
	arrType := ""
	if len(f.Args) > 0 {
		arrType = p.typeOf(f.Args[0])
	}
	switch name {
	case "unnest":
		// Several arrays go in step, by the first one's places.
		cols = []scopeCol{{name: colName(0, alias), typ: elemType(arrType), sql: q + ".\"value\""}}
		for i, a := range f.Args[1:] {
			arr := p.sub(func() { p.arrayValue(a) })
			cols = append(cols, scopeCol{name: colName(i+1, alias), typ: elemType(p.typeOf(a)),
				sql: "json_extract(" + arr + ", '$[' || " + q + ".\"key\" || ']')"})
		}
	case "generate_subscripts":
		cols = []scopeCol{{name: colName(0, alias), typ: "int4", sql: "(" + q + ".\"key\" + " + strconv.Itoa(lowerBound(arrType)) + ")"}}
	case "pg_options_to_table":
		// "name=value" elements; one without "=" has no value.
		v, eq := q+".\"value\"", "instr("+q+".\"value\", '=')"
		return alias, []scopeCol{
			{name: colName(0, "option_name"), typ: "text", sql: "(CASE WHEN " + eq + " > 0 THEN substr(" + v + ", 1, " + eq + " - 1) ELSE " + v + " END)"},
			{name: colName(1, "option_value"), typ: "text", sql: "(CASE WHEN " + eq + " > 0 THEN substr(" + v + ", " + eq + " + 1) END)"},
		}
	case "information_schema._pg_expandarray":
		return alias, []scopeCol{
			{name: colName(0, "x"), typ: elemType(arrType), sql: q + ".\"value\""},
			{name: colName(1, "n"), typ: "int4", sql: "(" + q + ".\"key\" + 1)"},
		}
	case "pg_get_keywords":
		_, rel, _ := p.cat.Relation("", name)
		return alias, renamed(plainCols(rel), rf.Alias)
	case "pg_partition_ancestors":
		cols = []scopeCol{{name: colName(0, alias), typ: "regclass"}}
		if rf.Ordinality {
			cols = append(cols, scopeCol{name: colName(1, "ordinality"), typ: "int8"})
		}
		return alias, cols
	default:
		t := p.funcType(f)
		if name == "generate_series" {
			t = "int8"
		}
		cols = []scopeCol{{name: colName(0, alias), typ: t}}
	}
	if rf.Ordinality {
		cols = append(cols, scopeCol{name: colName(len(cols), "ordinality"), typ: "int8", sql: "(" + q + ".\"key\" + 1)"})
	}
	return alias, cols
}

// rangeFunc is the one function call of a function in FROM, or nil.
func rangeFunc(rf *pg_query.RangeFunction) *pg_query.FuncCall {
	if rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		return nil
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 {
		return nil
	}
	return items[0].GetFuncCall()
}

// catalogFunctionFrom writes a function in a catalog query's FROM: the
// array functions as SQLite's json_each over the array, whose key and
// value the columns' references print (functionColumns). It returns false
// for a function the SQLite printer writes.
func (p *printer) catalogFunctionFrom(rf *pg_query.RangeFunction) bool {
	f := rangeFunc(rf)
	if f == nil {
		return false
	}
	name := functionName(f.Funcname)
	switch name {
	case "unnest", "generate_subscripts", "information_schema._pg_expandarray", "pg_options_to_table":
	case "pg_get_keywords":
		// A relation of the catalogs.
		alias, _ := p.functionColumns(rf)
		table, _, _ := p.cat.Relation("", name)
		p.ident(table)
		p.w(" AS ")
		p.ident(alias)
		return true
	case "pg_partition_ancestors":
		// No partitions: the relation itself, at depth 1.
		alias, cols := p.functionColumns(rf)
		p.w("(SELECT pg_partition_ancestors(")
		p.list(f.Args, p.expr)
		p.w(") AS ", quoteIdent(cols[0].name))
		if len(cols) > 1 {
			p.w(", 1 AS ", quoteIdent(cols[1].name))
		}
		p.w(") AS ", quoteIdent(alias))
		return true
	default:
		if rf.Ordinality {
			p.refuse("WITH ORDINALITY over " + name)
		}
		return false
	}
	if len(f.Args) == 0 || len(f.Args) > 2 && name == "generate_subscripts" ||
		(name == "information_schema._pg_expandarray" || name == "pg_options_to_table") && len(f.Args) != 1 {
		p.refuse(name + " with these arguments")
		return true
	}
	alias, _ := p.functionColumns(rf)
	p.w("json_each(")
	p.arrayValue(f.Args[0])
	p.w(") AS ")
	p.ident(alias)
	return true
}

// arrayValue writes an array expression as a JSON array: a parameter or a
// constant arrives in PostgreSQL's text form.
func (p *printer) arrayValue(n *pg_query.Node) {
	if n.GetParamRef() != nil || n.GetAConst() != nil {
		p.w("certa_array_in(")
		p.expr(n)
		p.w(")")
		return
	}
	p.expr(n)
}

// lowerBound is the first subscript of an array type's values: 0 for
// int2vector and oidvector, 1 for arrays.
func lowerBound(typ string) int {
	if typ == "int2vector" || typ == "oidvector" {
		return 0
	}
	return 1
}

// catalogFuncCall writes the array functions and those CatalogFunctions
// lists; it returns false for others, which the SQLite printer writes.
func (p *printer) catalogFuncCall(f *pg_query.FuncCall) bool {
	name := functionName(f.Funcname)
	arg := func(i int) *pg_query.Node {
		if i < len(f.Args) {
			return f.Args[i]
		}
		p.fail(sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(f.Args)))
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}
	}
	switch name {
	case "array_agg":
		// Of no rows, NULL: a JSON array of some rows is never empty.
		p.w("nullif(json_group_array(")
		if f.AggDistinct {
			p.w("DISTINCT ")
		}
		p.expr(arg(0))
		p.orderBy(f.AggOrder)
		p.w(")")
		if f.AggFilter != nil {
			p.w(" FILTER (WHERE ")
			p.expr(f.AggFilter)
			p.w(")")
		}
		p.w(", '[]')")
	case "array_length", "array_upper":
		p.w("nullif(json_array_length(")
		p.arrayValue(arg(0))
		p.w("), 0)")
	case "array_lower":
		p.w("CASE WHEN json_array_length(")
		p.arrayValue(arg(0))
		p.w(") > 0 THEN ", strconv.Itoa(lowerBound(p.typeOf(arg(0)))), " END")
	case "cardinality":
		p.w("json_array_length(")
		p.arrayValue(arg(0))
		p.w(")")
	case "array_to_string":
		p.w("(SELECT group_concat(\"value\", ")
		p.expr(arg(1))
		p.w(") FROM json_each(")
		p.arrayValue(arg(0))
		p.w("))")
	case "array_remove":
		// Of a NULL array, NULL; else the other elements, in order.
		arr := p.sub(func() { p.arrayValue(arg(0)) })
		p.w("CASE WHEN ", arr, " IS NOT NULL THEN (SELECT json_group_array(\"value\" ORDER BY \"key\") FROM json_each(", arr, ") WHERE \"value\" IS NOT ")
		p.expr(arg(1))
		p.w(") END")
	case "array_position":
		p.w("(SELECT \"key\" + 1 FROM json_each(")
		p.arrayValue(arg(0))
		p.w(") WHERE \"value\" = ")
		p.expr(arg(1))
		p.w(" LIMIT 1)")
	case "unnest", "generate_subscripts", "information_schema._pg_expandarray":
		if sql, ok := p.srfs[f]; ok {
			p.w(sql)
			return true
		}
		p.refuse(name + " outside FROM and the select list")
	default:
		if sqlite, ok := catalogRenames[name]; ok {
			p.call(sqlite, f.Args...)
			return true
		}
		if _, ok := CatalogFunctions[name]; !ok {
			return false
		}
		p.call(name, f.Args...)
	}
	return true
}

// catalogCast writes a cast in a catalog query where its type is one of
// the catalogs' own (oids, reg* types, names, arrays) or its operand's
// type needs printing (certa_out); it returns false for the casts the
// SQLite printer writes.
func (p *printer) catalogCast(tc *pg_query.TypeCast) bool {
	t, ok := LookupType(typeString(tc.TypeName))
	if !ok {
		t, ok = LookupType(typeName(tc.TypeName))
	}
	if !ok {
		return false
	}
	from := p.typeOf(tc.Arg)
	textual := from == "" || from == "text" || from == "name" || from == "varchar" || tc.Arg.GetParamRef() != nil
	switch to := t.Typname; {
	case to == "regclass" || to == "regtype" || to == "regnamespace" || to == "regrole" || to == "regproc":
		if textual {
			p.w("certa_" + to + "_in(")
			p.expr(tc.Arg)
			p.w(")")
			return true
		}
		p.expr(tc.Arg) // from an oid: the same number
	case elemType(to) != "":
		if textual {
			p.w("certa_array_in(")
			p.expr(tc.Arg)
			p.w(")")
			return true
		}
		p.expr(tc.Arg)
	case to == "oid" || to == "int4" || to == "int8" || to == "int2":
		if textual && to == "oid" {
			// '16386'::oid: an unsigned 32-bit number, read as int8.
			p.w("pg_cast(")
			p.expr(tc.Arg)
			p.w(", 'int8')")
			return true
		}
		if textual {
			return false
		}
		p.expr(tc.Arg)
	case to == "text" || to == "name" || to == "varchar" || to == "char" || to == "bpchar":
		if needsOut(from) {
			p.w("certa_out(")
			p.expr(tc.Arg)
			p.w(", '", from, "')")
			return true
		}
		if from == "bool" {
			p.w("CASE WHEN ")
			p.expr(tc.Arg)
			p.w(" THEN 'true' WHEN NOT ")
			p.expr(tc.Arg)
			p.w(" THEN 'false' END")
			return true
		}
		p.w("CAST(")
		p.expr(tc.Arg)
		p.w(" AS TEXT)")
	case to == "pg_node_tree" || to == "aclitem":
		p.expr(tc.Arg)
	default:
		return false
	}
	return true
}

// catalogAnyAll writes x op ANY (array) and x op ALL (array) over an array
// expression of a catalog query (a column, a function's result); it
// returns false for the forms anyAll writes.
func (p *printer) catalogAnyAll(op string, all bool, l, r *pg_query.Node) bool {
	if r.GetAArrayExpr() != nil || arrayConstant(r) != nil || r.GetParamRef() != nil ||
		r.GetTypeCast() != nil && r.GetTypeCast().Arg.GetParamRef() != nil {
		return false
	}
	if !sameOperators[op] || op == "||" || op == "->" || op == "->>" {
		p.refuse("operator " + op + " with ANY or ALL")
		return true
	}
	// EXISTS (SELECT 1 FROM json_each(r) WHERE l op value) for ANY;
	// NOT EXISTS (... WHERE NOT (l op value)) for ALL.
	if all {
		p.w("(NOT EXISTS (SELECT 1 FROM json_each(")
	} else {
		p.w("(EXISTS (SELECT 1 FROM json_each(")
	}
	p.arrayValue(r)
	p.w(") WHERE ")
	if all {
		p.w("NOT ")
	}
	p.w("(")
	p.expr(l)
	p.w(" ", op, " \"value\")))")
	return true
}

// subscript writes arr[i] of a catalog query: the element, NULL past the
// ends.
func (p *printer) subscript(ind *pg_query.A_Indirection) {
	if len(ind.Indirection) == 1 && ind.Indirection[0].GetString_() != nil {
		// A field of a composite value: only _pg_expandarray's (x, n),
		// a JSON object here (targetSRFs).
		field := ind.Indirection[0].GetString_().GetSval()
		if field != "x" && field != "n" {
			p.refuse("this field selection")
			return
		}
		p.w("json_extract(")
		p.expr(ind.Arg)
		p.w(", '$.", field, "')")
		return
	}
	if len(ind.Indirection) != 1 || ind.Indirection[0].GetAIndices() == nil || ind.Indirection[0].GetAIndices().IsSlice {
		p.refuse("this subscript or field selection")
		return
	}
	i := ind.Indirection[0].GetAIndices().Uidx
	if p.typeOf(ind.Arg) == "name" {
		// A name is an array of 64 "char" from 0 (pg_dump: typname[0] =
		// '_'): its character there, "" past its end.
		p.w("CASE WHEN (")
		p.expr(i)
		p.w(") BETWEEN 0 AND 63 THEN substr(")
		p.expr(ind.Arg)
		p.w(", (")
		p.expr(i)
		p.w(") + 1, 1) END")
		return
	}
	lower := strconv.Itoa(lowerBound(p.typeOf(ind.Arg)))
	p.w("CASE WHEN ")
	p.expr(i)
	p.w(" >= ", lower, " THEN json_extract(")
	p.arrayValue(ind.Arg)
	p.w(", '$[' || (")
	p.expr(i)
	p.w(" - ", lower, ") || ']') END")
}

// arraySubquery writes ARRAY(SELECT x ...): the rows' x as a JSON array, in
// the subquery's order.
func (p *printer) arraySubquery(s *pg_query.SubLink) {
	p.w("(WITH \"certa_array\"(\"elem\") AS (")
	p.stmt(s.Subselect)
	p.w(") SELECT json_group_array(\"elem\") FROM \"certa_array\")")
}

// targetSRFs finds the set-returning functions of a target list (unnest,
// generate_subscripts), which PostgreSQL runs in step: one row for each
// element of the first one's array. That array becomes a json_each in
// FROM, "certa_srf", which targetSRFs returns; each function prints a
// column of it, or the element of its own array at the same place.
func (p *printer) targetSRFs(list []*pg_query.Node) string {
	return p.srfsOver(list, "certa_srf")
}

// srfsOver is targetSRFs with the json_each named alias.
func (p *printer) srfsOver(list []*pg_query.Node, alias string) string {
	q := quoteIdent(alias)
	driver := ""
	for _, n := range list {
		rt := n.GetResTarget()
		if rt == nil {
			continue
		}
		f := srfCall(rt.Val)
		if f == nil {
			continue
		}
		name := strings.TrimPrefix(functionName(f.Funcname), "information_schema.")
		arr := p.sub(func() { p.arrayValue(f.Args[0]) })
		if driver == "" {
			driver = arr
		}
		if p.srfs == nil {
			p.srfs = map[*pg_query.FuncCall]string{}
		}
		switch {
		case name == "_pg_expandarray":
			// information_schema's (x, n): the element and its position
			// from 1, a JSON object here (fieldSelection reads it).
			if arr != driver {
				p.refuse("_pg_expandarray over another array than the first set-returning function's")
			}
			p.srfs[f] = "json_object('x', " + q + ".\"value\", 'n', " + q + ".\"key\" + 1)"
		case name == "generate_subscripts":
			p.srfs[f] = "(" + q + ".\"key\" + " + strconv.Itoa(lowerBound(p.typeOf(f.Args[0]))) + ")"
		case arr == driver:
			p.srfs[f] = "" + q + ".\"value\""
		default:
			p.srfs[f] = "json_extract(" + arr + ", '$[' || " + q + ".\"key\" || ']')"
		}
	}
	return driver
}

// srfCall returns the set-returning function (unnest, generate_subscripts,
// _pg_expandarray) a target is, or takes a field of, or is an operand of
// (generate_subscripts(a, 1) + 1); nil if none.
func srfCall(n *pg_query.Node) *pg_query.FuncCall {
	if ind := n.GetAIndirection(); ind != nil {
		n = ind.Arg // (information_schema._pg_expandarray(a)).n
	}
	if e := n.GetAExpr(); e != nil {
		if f := srfCall(e.Lexpr); f != nil {
			return f
		}
		return srfCall(e.Rexpr)
	}
	f := n.GetFuncCall()
	if f == nil || len(f.Args) == 0 {
		return nil
	}
	switch strings.TrimPrefix(functionName(f.Funcname), "information_schema.") {
	case "unnest", "generate_subscripts", "_pg_expandarray":
		return f
	}
	return nil
}

// boolConstant returns a string constant compared with a boolean of the
// catalogs ('f', 'true') as the boolean it stands for: the catalogs hold
// booleans as 0 and 1.
func (p *printer) boolConstant(n, other *pg_query.Node) *pg_query.Node {
	c := n.GetAConst()
	if c == nil || c.GetSval() == nil || p.typeOf(other) != "bool" {
		return n
	}
	switch strings.ToLower(strings.TrimSpace(c.GetSval().GetSval())) {
	case "t", "true", "y", "yes", "on", "1":
		return pg_query.MakeAConstIntNode(1, 0)
	case "f", "false", "n", "no", "off", "0":
		return pg_query.MakeAConstIntNode(0, 0)
	}
	return n
}
