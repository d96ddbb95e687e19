package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Types of the expressions of a catalog query, as PostgreSQL would give
// them (typnames; "" where certa cannot tell, which the engine then types
// by the values). The printer needs them to print arrays, subscripts and
// reg* casts, and the result columns carry them to the client.

// CatalogFunctions are the functions a catalog query may call besides the
// SQLite printer's, by name, with their result types. The engine registers
// every one on the connection that answers catalog queries.
var CatalogFunctions = map[string]string{
	"pg_get_expr": "text", "pg_get_indexdef": "text", "pg_get_constraintdef": "text",
	"pg_get_triggerdef": "text", "pg_get_viewdef": "text", "pg_get_partkeydef": "text", "pg_get_ruledef": "text",
	"pg_get_statisticsobjdef_columns": "text", "pg_get_userbyid": "name", "pg_get_serial_sequence": "text",
	"format_type": "text", "pg_table_is_visible": "bool", "pg_type_is_visible": "bool",
	"pg_function_is_visible": "bool", "pg_encoding_to_char": "name", "obj_description": "text",
	"col_description": "text", "shobj_description": "text", "pg_relation_size": "int8",
	"pg_table_size": "int8", "pg_total_relation_size": "int8", "pg_indexes_size": "int8",
	"pg_database_size": "int8", "pg_size_pretty": "text", "has_table_privilege": "bool",
	"has_schema_privilege": "bool", "has_database_privilege": "bool", "has_column_privilege": "bool",
	"has_sequence_privilege": "bool", "pg_has_role": "bool", "pg_relation_is_publishable": "bool",
	"current_schemas": "_name", "quote_ident": "text", "to_regtype": "regtype", "to_regclass": "regclass",
	"pg_is_in_recovery": "bool", "pg_backend_pid": "int4", "pg_partition_root": "regclass",
	"pg_get_function_result": "text", "pg_get_function_arguments": "text", "pg_get_function_identity_arguments": "text",
	"pg_char_to_encoding": "int4", "pg_get_keywords": "text", "pg_partition_ancestors": "regclass",
	"set_config": "text", "acldefault": "_aclitem", "quote_literal": "text",
}

// catalogRenames are catalog functions SQLite has under another name.
var catalogRenames = map[string]string{"json_build_object": "json_object", "jsonb_build_object": "json_object"}

// fixedTypes are the result types of functions whose result is not the
// type of an argument.
var fixedTypes = map[string]string{
	"count": "int8", "length": "int4", "char_length": "int4", "character_length": "int4", "octet_length": "int4",
	"strpos": "int4", "position": "int4", "lower": "text", "upper": "text", "replace": "text", "concat": "text",
	"concat_ws": "text", "string_agg": "text", "substring": "text", "substr": "text", "btrim": "text",
	"ltrim": "text", "rtrim": "text", "repeat": "text", "lpad": "text", "rpad": "text", "left": "text",
	"right": "text", "reverse": "text", "initcap": "text", "split_part": "text", "chr": "text",
	"ascii": "int4", "starts_with": "bool", "bool_and": "bool", "bool_or": "bool", "every": "bool", "avg": "numeric",
	"now": "timestamptz", "version": "text", "current_database": "name", "current_schema": "name",
	"array_length": "int4", "array_upper": "int4", "array_lower": "int4", "cardinality": "int4",
	"array_to_string": "text", "array_position": "int4", "row_number": "int8", "rank": "int8",
	"json_build_object": "json", "jsonb_build_object": "jsonb", "generate_series": "int8",
}

// typeOf is the type of expression n in the printer's current scope.
func (p *printer) typeOf(n *pg_query.Node) string {
	if n == nil {
		return ""
	}
	switch e := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		f := names(e.ColumnRef.Fields)
		var col scopeCol
		var ok bool
		switch len(f) {
		case 1:
			col, ok = p.scope.resolve("", f[0])
		case 0:
			return ""
		default:
			col, ok = p.scope.resolve(f[len(f)-2], f[len(f)-1])
		}
		if ok {
			return col.typ
		}
	case *pg_query.Node_AConst:
		switch e.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return "int4"
		case *pg_query.A_Const_Fval:
			return "numeric"
		case *pg_query.A_Const_Boolval:
			return "bool"
		case *pg_query.A_Const_Sval:
			return "text"
		}
	case *pg_query.Node_TypeCast:
		if t, ok := LookupType(typeString(e.TypeCast.TypeName)); ok {
			return t.Typname
		}
		if t, ok := LookupType(typeName(e.TypeCast.TypeName)); ok {
			return t.Typname // varchar(20)
		}
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return "bool"
	case *pg_query.Node_AExpr:
		a := e.AExpr
		if a.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return p.typeOf(a.Lexpr)
		}
		if a.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return "bool"
		}
		switch op := operator(a.Name); op {
		case "||":
			return "text"
		case "+", "-", "*", "/", "%":
			if a.Lexpr == nil {
				return p.typeOf(a.Rexpr)
			}
			return p.typeOf(a.Lexpr)
		case "->", "->>":
			return "text"
		}
		return "bool"
	case *pg_query.Node_SubLink:
		switch e.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXPR_SUBLINK:
			if cols := p.selectColumns(e.SubLink.Subselect); len(cols) == 1 {
				return cols[0].Type
			}
			return ""
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			if cols := p.selectColumns(e.SubLink.Subselect); len(cols) == 1 {
				return arrayOf(cols[0].Type)
			}
			return "_text"
		}
		return "bool"
	case *pg_query.Node_CaseExpr:
		for _, w := range e.CaseExpr.Args {
			if t := p.typeOf(w.GetCaseWhen().Result); t != "" && !isNullConst(w.GetCaseWhen().Result) {
				return t
			}
		}
		return p.typeOf(e.CaseExpr.Defresult)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range e.CoalesceExpr.Args {
			if t := p.typeOf(a); t != "" && t != "text" {
				return t
			}
		}
		return p.typeOf(e.CoalesceExpr.Args[0])
	case *pg_query.Node_MinMaxExpr:
		return p.typeOf(e.MinMaxExpr.Args[0])
	case *pg_query.Node_CollateClause:
		return p.typeOf(e.CollateClause.Arg)
	case *pg_query.Node_AArrayExpr:
		if len(e.AArrayExpr.Elements) > 0 {
			return arrayOf(p.typeOf(e.AArrayExpr.Elements[0]))
		}
		return "_text"
	case *pg_query.Node_AIndirection:
		if f := e.AIndirection.Indirection; len(f) == 1 && f[0].GetString_() != nil {
			if f[0].GetString_().GetSval() == "n" {
				return "int4" // _pg_expandarray's position
			}
			return "int2" // its element: the int2vectors PgJDBC expands
		}
		t := p.typeOf(e.AIndirection.Arg)
		if t == "name" {
			return "char"
		}
		if el := elemType(t); el != "" {
			return el
		}
	case *pg_query.Node_SqlvalueFunction:
		switch sqlValueName(e.SqlvalueFunction.Op) {
		case "current_date":
			return "date"
		case "current_timestamp":
			return "timestamptz"
		case "localtimestamp":
			return "timestamp"
		case "localtime":
			return "time"
		}
		return "name"
	case *pg_query.Node_FuncCall:
		return p.funcType(e.FuncCall)
	}
	return ""
}

// funcType is the result type of a function call.
func (p *printer) funcType(f *pg_query.FuncCall) string {
	name := functionName(f.Funcname)
	if t, ok := CatalogFunctions[name]; ok {
		return t
	}
	if t, ok := fixedTypes[name]; ok {
		return t
	}
	switch name {
	case "array_agg":
		if len(f.Args) == 1 {
			return arrayOf(p.typeOf(f.Args[0]))
		}
	case "array_remove":
		if len(f.Args) == 2 {
			return p.typeOf(f.Args[0])
		}
	case "unnest":
		if len(f.Args) == 1 {
			return elemType(p.typeOf(f.Args[0]))
		}
	case "sum":
		if len(f.Args) == 1 && p.typeOf(f.Args[0]) != "" {
			if t := p.typeOf(f.Args[0]); t == "int2" || t == "int4" {
				return "int8"
			}
			return "numeric"
		}
	case "coalesce", "min", "max", "nullif", "first_value", "last_value", "lag", "lead", "abs", "round", "trunc":
		if len(f.Args) > 0 {
			return p.typeOf(f.Args[0])
		}
	}
	return ""
}

// typeName is a type's name without modifiers or array bounds.
func typeName(tn *pg_query.TypeName) string {
	return lastName(tn.Names)
}

func isNullConst(n *pg_query.Node) bool {
	c := n.GetAConst()
	return c != nil && c.Isnull
}
