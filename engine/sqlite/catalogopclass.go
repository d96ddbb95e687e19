package sqlite

// The btree operator classes of PostgreSQL 15 for the types a column of
// the embedded engine has (pg_opclass), by the type's oid: an index's
// columns name theirs in pg_index.indclass, as tools that read index
// definitions (drizzle's introspection) join them. A varchar column's is
// text_ops, as in PostgreSQL.
var btreeOpclasses = map[int64]struct {
	oid, family int64
	name        string
}{
	16: {10003, 424, "bool_ops"}, 17: {10006, 428, "bytea_ops"}, 19: {10028, 1994, "name_ops"},
	20: {3124, 1976, "int8_ops"}, 21: {1979, 1976, "int2_ops"}, 23: {1978, 1976, "int4_ops"},
	25: {3126, 1994, "text_ops"}, 26: {1981, 1989, "oid_ops"}, 700: {10012, 1970, "float4_ops"},
	701: {3123, 1970, "float8_ops"}, 1042: {10004, 426, "bpchar_ops"}, 1082: {3122, 434, "date_ops"},
	1083: {10038, 1996, "time_ops"}, 1114: {3128, 434, "timestamp_ops"}, 1184: {3127, 434, "timestamptz_ops"},
	1700: {3125, 1988, "numeric_ops"}, 2950: {10065, 2968, "uuid_ops"}, 3802: {10088, 4033, "jsonb_ops"},
}

// fillOpclasses writes pg_opclass.
func fillOpclasses(w *rowWriter) {
	for typ, oc := range btreeOpclasses {
		w.row("pg_opclass", map[string]any{"oid": oc.oid, "opcmethod": oidBtreeAM, "opcname": oc.name, "opcnamespace": oidPgCatalog,
			"opcowner": oidUser, "opcfamily": oc.family, "opcintype": typ, "opcdefault": 1, "opckeytype": 0})
	}
}

// opclassOf is the btree operator class of a column of type typ (0 if
// none).
func opclassOf(typ int64) int64 {
	if typ == 1043 { // varchar
		typ = 25
	}
	return btreeOpclasses[typ].oid
}
