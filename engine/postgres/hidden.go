package postgres

import "certa/pgparse"

// certaRows are the rows of PostgreSQL's catalogs that are certa's own
// (its schema, what is in it, its triggers, event triggers, roles,
// prepared statements and portals): a client's reads of these relations leave them
// out (pgparse.HideRows), as they would not be there on a plain
// PostgreSQL. Its capture triggers are also internal triggers
// (certa.hide_trigger), which psql's \d leaves out by itself. What a
// client's own functions and views read is not rewritten.
var certaRows = pgparse.HiddenRows{
	"pg_catalog.pg_namespace":           "nspname <> 'certa'",
	"pg_catalog.pg_proc":                "pronamespace <> " + certaSchema,
	"pg_catalog.pg_class":               "relnamespace <> " + certaSchema,
	"pg_catalog.pg_type":                "typnamespace <> " + certaSchema,
	"pg_catalog.pg_constraint":          "connamespace <> " + certaSchema,
	"pg_catalog.pg_trigger":             "tgfoid NOT IN (" + certaFunctions + ")",
	"pg_catalog.pg_event_trigger":       "evtfoid NOT IN (" + certaFunctions + ")",
	"pg_catalog.pg_prepared_statements": "name !~ '^certa_[0-9]+$'",
	// certa runs a client's statement outside a block as the extended
	// protocol's unnamed portal, which PostgreSQL lists (a simple
	// query's it does not).
	"pg_catalog.pg_cursors": "name <> ''",
	// The capture's writes and reads in a client's transaction lock
	// certa's tables.
	"pg_catalog.pg_locks":                  "relation IS NULL OR relation NOT IN (SELECT c.oid FROM pg_catalog.pg_class c WHERE c.relnamespace = " + certaSchema + ")",
	"pg_catalog.pg_roles":                  "rolname NOT IN " + certaRoles,
	"pg_catalog.pg_user":                   "usename NOT IN " + certaRoles,
	"pg_catalog.pg_auth_members":           "roleid NOT IN (" + certaRoleOIDs + ") AND member NOT IN (" + certaRoleOIDs + ")",
	"pg_catalog.pg_tables":                 "schemaname <> 'certa'",
	"pg_catalog.pg_views":                  "schemaname <> 'certa'",
	"pg_catalog.pg_indexes":                "schemaname <> 'certa'",
	"pg_catalog.pg_sequences":              "schemaname <> 'certa'",
	"pg_catalog.pg_stat_all_tables":        "schemaname <> 'certa'",
	"pg_catalog.pg_stat_user_tables":       "schemaname <> 'certa'",
	"pg_catalog.pg_statio_all_tables":      "schemaname <> 'certa'",
	"pg_catalog.pg_statio_user_tables":     "schemaname <> 'certa'",
	"pg_catalog.pg_stat_all_indexes":       "schemaname <> 'certa'",
	"pg_catalog.pg_stat_user_indexes":      "schemaname <> 'certa'",
	"information_schema.schemata":          "schema_name <> 'certa'",
	"information_schema.tables":            "table_schema <> 'certa'",
	"information_schema.columns":           "table_schema <> 'certa'",
	"information_schema.views":             "table_schema <> 'certa'",
	"information_schema.sequences":         "sequence_schema <> 'certa'",
	"information_schema.table_constraints": "constraint_schema <> 'certa'",
	"information_schema.routines":          "routine_schema <> 'certa'",
	"information_schema.parameters":        "specific_schema <> 'certa'",
	"information_schema.triggers":          "action_statement NOT LIKE 'EXECUTE FUNCTION certa.%'",
}

const (
	certaSchema    = "'certa'::pg_catalog.regnamespace"
	certaFunctions = "SELECT p.oid FROM pg_catalog.pg_proc p WHERE p.pronamespace = " + certaSchema
	certaRoles     = "('certa_applier', 'certa_roles')"
	certaRoleOIDs  = "SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname IN " + certaRoles
)

// withoutCertaRows returns a client's statement with its reads of
// catalogs rewritten to leave certa's rows out (certaRows).
func withoutCertaRows(sql string) pgparse.Hidden {
	h, _ := pgparse.HideRows(sql, certaRows)
	return h
}
