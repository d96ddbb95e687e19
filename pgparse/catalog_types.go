package pgparse

import "strings"

// PostgreSQL's built-in types as its catalogs list them, with their OIDs:
// the catalog printer types expressions with them, and the embedded engine
// fills pg_type from them and reports result columns by their OIDs.

// TypeInfo is one built-in type.
type TypeInfo struct {
	OID      uint32
	Typname  string // pg_type.typname ("int4")
	Name     string // as format_type prints it ("integer")
	Len      int    // typlen: bytes, -1 for variable length
	Category byte   // typcategory
	// ArrayOID is the OID of the type's array type (typarray), 0 if none.
	ArrayOID uint32
	// Elem is the element type of an array type (typelem), 0 otherwise.
	Elem uint32
}

// Types lists the built-in types, element types before their arrays.
var Types = []TypeInfo{
	{OID: 16, Typname: "bool", Name: "boolean", Len: 1, Category: 'B', ArrayOID: 1000},
	{OID: 17, Typname: "bytea", Name: "bytea", Len: -1, Category: 'U', ArrayOID: 1001},
	{OID: 18, Typname: "char", Name: `"char"`, Len: 1, Category: 'Z', ArrayOID: 1002},
	{OID: 19, Typname: "name", Name: "name", Len: 64, Category: 'S', ArrayOID: 1003},
	{OID: 20, Typname: "int8", Name: "bigint", Len: 8, Category: 'N', ArrayOID: 1016},
	{OID: 21, Typname: "int2", Name: "smallint", Len: 2, Category: 'N', ArrayOID: 1005},
	{OID: 22, Typname: "int2vector", Name: "int2vector", Len: -1, Category: 'A', ArrayOID: 1006, Elem: 21},
	{OID: 23, Typname: "int4", Name: "integer", Len: 4, Category: 'N', ArrayOID: 1007},
	{OID: 24, Typname: "regproc", Name: "regproc", Len: 4, Category: 'N', ArrayOID: 1008},
	{OID: 25, Typname: "text", Name: "text", Len: -1, Category: 'S', ArrayOID: 1009},
	{OID: 26, Typname: "oid", Name: "oid", Len: 4, Category: 'N', ArrayOID: 1028},
	{OID: 27, Typname: "tid", Name: "tid", Len: 6, Category: 'U', ArrayOID: 1010},
	{OID: 28, Typname: "xid", Name: "xid", Len: 4, Category: 'U', ArrayOID: 1011},
	{OID: 29, Typname: "cid", Name: "cid", Len: 4, Category: 'U', ArrayOID: 1012},
	{OID: 30, Typname: "oidvector", Name: "oidvector", Len: -1, Category: 'A', ArrayOID: 1013, Elem: 26},
	{OID: 114, Typname: "json", Name: "json", Len: -1, Category: 'U', ArrayOID: 199},
	{OID: 194, Typname: "pg_node_tree", Name: "pg_node_tree", Len: -1, Category: 'Z'},
	{OID: 700, Typname: "float4", Name: "real", Len: 4, Category: 'N', ArrayOID: 1021},
	{OID: 701, Typname: "float8", Name: "double precision", Len: 8, Category: 'N', ArrayOID: 1022},
	{OID: 1033, Typname: "aclitem", Name: "aclitem", Len: 12, Category: 'U', ArrayOID: 1034},
	{OID: 1042, Typname: "bpchar", Name: "character", Len: -1, Category: 'S', ArrayOID: 1014},
	{OID: 1043, Typname: "varchar", Name: "character varying", Len: -1, Category: 'S', ArrayOID: 1015},
	{OID: 1082, Typname: "date", Name: "date", Len: 4, Category: 'D', ArrayOID: 1182},
	{OID: 1083, Typname: "time", Name: "time without time zone", Len: 8, Category: 'D', ArrayOID: 1183},
	{OID: 1114, Typname: "timestamp", Name: "timestamp without time zone", Len: 8, Category: 'D', ArrayOID: 1115},
	{OID: 1184, Typname: "timestamptz", Name: "timestamp with time zone", Len: 8, Category: 'D', ArrayOID: 1185},
	{OID: 1186, Typname: "interval", Name: "interval", Len: 16, Category: 'T', ArrayOID: 1187},
	{OID: 1700, Typname: "numeric", Name: "numeric", Len: -1, Category: 'N', ArrayOID: 1231},
	{OID: 2205, Typname: "regclass", Name: "regclass", Len: 4, Category: 'N', ArrayOID: 2210},
	{OID: 2206, Typname: "regtype", Name: "regtype", Len: 4, Category: 'N', ArrayOID: 2211},
	{OID: 2277, Typname: "anyarray", Name: "anyarray", Len: -1, Category: 'P'},
	{OID: 2950, Typname: "uuid", Name: "uuid", Len: 16, Category: 'U', ArrayOID: 2951},
	{OID: 3220, Typname: "pg_lsn", Name: "pg_lsn", Len: 8, Category: 'U', ArrayOID: 3221},
	{OID: 3734, Typname: "regconfig", Name: "regconfig", Len: 4, Category: 'N', ArrayOID: 3735},
	{OID: 3802, Typname: "jsonb", Name: "jsonb", Len: -1, Category: 'U', ArrayOID: 3807},
	{OID: 4089, Typname: "regnamespace", Name: "regnamespace", Len: 4, Category: 'N', ArrayOID: 4090},
	{OID: 4096, Typname: "regrole", Name: "regrole", Len: 4, Category: 'N', ArrayOID: 4097},
}

// typeAliases are the names PostgreSQL's grammar and users give types
// other than their typname.
var typeAliases = map[string]string{
	"boolean": "bool", "smallint": "int2", "integer": "int4", "int": "int4", "bigint": "int8",
	"real": "float4", "double precision": "float8", "float": "float8", "decimal": "numeric",
	"character varying": "varchar", "character": "bpchar", "timestamp without time zone": "timestamp",
	"timestamp with time zone": "timestamptz", "time without time zone": "time", `"char"`: "char",
	"regprocedure": "regproc",
}

var typesByName = func() map[string]TypeInfo {
	m := map[string]TypeInfo{}
	for _, t := range Types {
		m[t.Typname] = t
		if t.ArrayOID != 0 {
			m["_"+t.Typname] = TypeInfo{OID: t.ArrayOID, Typname: "_" + t.Typname, Name: t.Name + "[]", Len: -1, Category: 'A', Elem: t.OID}
		}
	}
	return m
}()

// LookupType returns the built-in type a name names: its typname
// ("int4", "_text" for text[]), a name format_type prints ("integer",
// "text[]"), or a name the grammar takes ("int"), with or without
// pg_catalog.; ok is false for any other name.
func LookupType(name string) (TypeInfo, bool) {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
	array := strings.HasSuffix(name, "[]")
	name = strings.TrimSpace(strings.TrimSuffix(name, "[]"))
	if a, ok := typeAliases[name]; ok {
		name = a
	}
	if array {
		name = "_" + name
	}
	t, ok := typesByName[name]
	return t, ok
}

var typesByOID = func() map[uint32]TypeInfo {
	m := map[uint32]TypeInfo{}
	for _, t := range typesByName {
		m[t.OID] = t
	}
	return m
}()

// TypeByOID returns the built-in type (or array of one) of oid.
func TypeByOID(oid uint32) (TypeInfo, bool) {
	t, ok := typesByOID[oid]
	return t, ok
}

// elemType is the typname of the elements of an array or vector type, ""
// for another type.
func elemType(typ string) string {
	t, ok := typesByName[typ]
	if !ok || t.Elem == 0 {
		return ""
	}
	e, _ := TypeByOID(t.Elem)
	return e.Typname
}

// arrayOf is the typname of the array of typ ("_text" for an unknown).
func arrayOf(typ string) string {
	if t, ok := typesByName["_"+typ]; ok {
		return t.Typname
	}
	return "_text"
}
