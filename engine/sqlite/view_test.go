package sqlite

import (
	"context"
	"strings"
	"testing"

	"certa/sqlerr"
)

// A view's query means what it means in PostgreSQL (it is printed for
// SQLite as a client's query is), its columns are fixed when it is made,
// and it goes to the log as the client wrote it.
func TestViews(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE b (a int PRIMARY KEY, s text, f boolean)")
	e.commit("INSERT INTO b VALUES (1, 'abc', true), (2, 'Abd', false), (3, 'xyz', true)")
	ddl, err := e.CheckDDL(context.Background(), "CREATE VIEW v_like AS SELECT a, s FROM b WHERE s LIKE 'a%' AND f = 'true'")
	if err != nil || ddl.Statement != "CREATE VIEW v_like AS SELECT a, s FROM b WHERE s LIKE 'a%' AND f = 'true'" {
		t.Fatalf("CheckDDL: %q, %v", ddl.Statement, err)
	}
	e.ddl(ddl.Statement)
	wantRows(t, e.query("SELECT * FROM v_like"), row(int64(1), "abc")) // not 'Abd': LIKE minds case
	e.ddl("CREATE VIEW v_star AS SELECT * FROM b WHERE a > 1")
	e.ddl("CREATE VIEW v_named (x) AS SELECT a::text, s FROM b")
	e.ddl("ALTER TABLE b ADD COLUMN n int")
	wantRows(t, e.query("SELECT * FROM v_star ORDER BY a"), row(int64(2), "Abd", false), row(int64(3), "xyz", true))
	wantRows(t, e.query("SELECT x, s FROM v_named WHERE x = '3'"), row("3", "xyz"))

	e.ddl("CREATE OR REPLACE VIEW v_like AS SELECT a, s, f FROM b WHERE s ILIKE 'a%'")
	wantRows(t, e.query("SELECT a, f FROM v_like ORDER BY a"), row(int64(1), true), row(int64(2), false))
	for sql, code := range map[string]string{
		"CREATE OR REPLACE VIEW v_like AS SELECT a FROM b":                   sqlerr.InvalidTableDefinition,
		"CREATE OR REPLACE VIEW v_like AS SELECT s, a, f FROM b":             sqlerr.InvalidTableDefinition,
		"CREATE OR REPLACE VIEW v_like AS SELECT a::numeric, s, f FROM b":    sqlerr.InvalidTableDefinition,
		"CREATE OR REPLACE VIEW v_like AS SELECT a, s::varchar(3), f FROM b": sqlerr.InvalidTableDefinition,
		"CREATE OR REPLACE VIEW b AS SELECT 1":                               sqlerr.WrongObjectType,
		"CREATE VIEW dup AS SELECT 1 AS x, 2 AS x":                           sqlerr.DuplicateColumn,
		"CREATE VIEW two (x, y) AS SELECT 1":                                 sqlerr.SyntaxError,
		"CREATE VIEW chk AS SELECT * FROM b WITH CHECK OPTION":               sqlerr.FeatureNotSupported,
		"CREATE VIEW sim AS SELECT * FROM b WHERE s SIMILAR TO 'a%'":         sqlerr.FeatureNotSupported,
		"CREATE TEMP VIEW tv AS SELECT 1":                                    sqlerr.FeatureNotSupported,
		"ALTER TABLE b RENAME COLUMN s TO t":                                 sqlerr.FeatureNotSupported,
		"ALTER TABLE b RENAME TO c":                                          sqlerr.FeatureNotSupported,
	} {
		_, err := e.CheckDDL(context.Background(), sql)
		wantCode(t, err, code)
	}

	// The catalog has them, with the definitions pg_dump makes them
	// again from, and what they read, which pg_dump makes first.
	wantLines(t, "pg_views", e.catalog("SELECT viewname, definition FROM pg_views ORDER BY 1"),
		"v_like| SELECT a, s, f FROM b WHERE s ILIKE 'a%';",
		"v_named| SELECT a::text AS x, s FROM b;",
		`v_star| SELECT "a", "s", "f" FROM (SELECT * FROM b WHERE a > 1) "v_star";`)
	wantLines(t, "information_schema", e.catalog(`SELECT t.table_name, t.table_type, v.is_updatable FROM information_schema.tables t
		LEFT JOIN information_schema.views v USING (table_name) ORDER BY 1`),
		"b|BASE TABLE|<nil>", "v_like|VIEW|NO", "v_named|VIEW|NO", "v_star|VIEW|NO")
	wantLines(t, "dependencies", e.catalog(`SELECT DISTINCT v.relname, t.relname FROM pg_rewrite r JOIN pg_class v ON v.oid = r.ev_class
		JOIN pg_depend d ON d.objid = r.oid AND d.classid = 'pg_rewrite'::regclass AND d.deptype = 'n'
		JOIN pg_class t ON t.oid = d.refobjid ORDER BY 1`),
		"v_like|b", "v_named|b", "v_star|b")
	if got := e.catalog("SELECT pg_get_viewdef('v_named'), pg_get_viewdef('v_named'::regclass, true)"); len(got) != 1 || !strings.HasPrefix(got[0], " SELECT a::text AS x") {
		t.Fatalf("pg_get_viewdef: %q", got)
	}
	// Computed columns have the types their query says (psql's \d).
	e.ddl("CREATE VIEW v_kinds AS SELECT a, a > 1 AS big, 'x'::varchar(3) AS c, count(*) OVER () AS n, s || 'x' AS t FROM b")
	wantLines(t, "column types", e.catalog(`SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attrelid = 'v_kinds'::regclass AND a.attnum > 0 ORDER BY a.attnum`),
		"a|integer", "big|boolean", "c|character varying(3)", "n|bigint", "t|text")
}
