package sqlite

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"certa/sqlerr"
	"certa/writeset"
)

func TestCheckDDLTables(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.ddl("CREATE TABLE u (id INTEGER PRIMARY KEY, t_id INTEGER)")
	e.ddl("CREATE INDEX u_t ON u (t_id)")
	tests := []struct {
		stmt   string
		tables []string
	}{
		{"CREATE TABLE n (a TEXT PRIMARY KEY, b INT)", []string{"n"}},
		{"CREATE TABLE n (id INTEGER PRIMARY KEY, v TEXT UNIQUE)", []string{"n"}},
		{"CREATE INDEX t_v ON t (v)", []string{"t"}},
		{"DROP INDEX u_t", []string{"u"}},
		{"DROP TABLE u", []string{"u"}},
		{"ALTER TABLE t ADD COLUMN w DOUBLE PRECISION", []string{"t"}},
		{"ALTER TABLE t RENAME TO t2", []string{"t", "t2"}},
		{"CREATE VIEW v AS SELECT id FROM t", []string{"v"}},
		{"CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY)", []string{}},
	}
	for _, tt := range tests {
		ddl, err := e.CheckDDL(context.Background(), tt.stmt)
		got := ddl.Tables
		if err != nil {
			t.Errorf("%s: %v", tt.stmt, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.tables) {
			t.Errorf("%s: tables %q, want %q", tt.stmt, got, tt.tables)
		}
	}
	// Nothing was changed.
	wantRows(t, e.query("SELECT name FROM sqlite_schema WHERE name NOT LIKE '\\_certa%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name"),
		row("t"), row("u"), row("u_t"))
}

// Statements that would break replication are refused, and nothing is created.
func TestCheckDDLRefusals(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	tests := []struct {
		stmt, code, msg string
	}{
		{"CREATE TABLE ai (id INTEGER PRIMARY KEY AUTOINCREMENT)", sqlerr.SyntaxError, `syntax error at or near "AUTOINCREMENT"`},
		{"CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET v = 'x'; END", sqlerr.SyntaxError, "syntax error"},
		{"CREATE TEMP TABLE tmp (id INTEGER PRIMARY KEY)", sqlerr.FeatureNotSupported, "TEMP"},
		{"CREATE TEMP VIEW tv AS SELECT 1", sqlerr.FeatureNotSupported, "TEMP"},
		{"CREATE VIRTUAL TABLE vt USING fts5(x)", sqlerr.SyntaxError, "syntax error"},
		{"DROP TABLE _certa_meta", sqlerr.FeatureNotSupported, "internal"},
		{"CREATE INDEX m ON _certa_failed (seqno)", sqlerr.FeatureNotSupported, "internal"},
		{"INSERT INTO t VALUES (1, 'a')", sqlerr.FeatureNotSupported, "CREATE, ALTER and DROP"},
		{"BEGIN", sqlerr.FeatureNotSupported, ""},
		{"ATTACH 'x.db' AS x", sqlerr.SyntaxError, "syntax error"},
		{"CREATE TABLE h (a int PRIMARY KEY, b int AS (a * 2))", sqlerr.SyntaxError, "syntax error"},
		{"CREATE TABLE h (a int PRIMARY KEY, b blob) WITHOUT ROWID", sqlerr.SyntaxError, "syntax error"},
		{"CREATE TABLE h (LIKE t)", sqlerr.FeatureNotSupported, "(LIKE ...)"},
		{"CREATE TABLE h (a int PRIMARY KEY, b int GENERATED ALWAYS AS (a * 2) STORED)", sqlerr.FeatureNotSupported, "generated columns"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()", sqlerr.FeatureNotSupported, "triggers"},
		{"CREATE MATERIALIZED VIEW mv AS SELECT id FROM t", sqlerr.FeatureNotSupported, "CREATE MATERIALIZED VIEW is not supported"},
		{"refresh materialized view mv", sqlerr.FeatureNotSupported, "REFRESH MATERIALIZED VIEW is not supported"},
		{"CREATE TABLE a (id INTEGER PRIMARY KEY); CREATE TABLE b (id INTEGER PRIMARY KEY)", sqlerr.SyntaxError, "one statement"},
		{"CREATE TABLE t (id INTEGER PRIMARY KEY)", sqlerr.DuplicateTable, `relation "t" already exists`},
		{"CREATE VIEW t AS SELECT 1", sqlerr.DuplicateTable, `relation "t" already exists`},
		{"DROP TABLE nope", sqlerr.UndefinedTable, `table "nope" does not exist`},
		{"DROP INDEX nope", sqlerr.UndefinedObject, `index "nope" does not exist`},
		{"DROP VIEW t", sqlerr.WrongObjectType, `"t" is not a view`},
		{"DROP INDEX IF EXISTS t", sqlerr.WrongObjectType, `"t" is not an index`},
		{"DROP TABLE t, nope", sqlerr.UndefinedTable, `table "nope" does not exist`},
		{"CREATE TABLEX", sqlerr.SyntaxError, "syntax error"},
	}
	for _, tt := range tests {
		_, err := e.CheckDDL(context.Background(), tt.stmt)
		if sqlerr.Code(err) != tt.code || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: got %v, want %s %q", tt.stmt, err, tt.code, tt.msg)
		}
	}
	wantRows(t, e.query("SELECT name FROM sqlite_schema WHERE name NOT LIKE '\\_certa%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name"),
		row("t"))
	// The lock was released each time.
	e.commit("INSERT INTO t VALUES (1, 'a')")
}

// CREATE INDEX and DROP are checked by preparing them, not by running them:
// on a big table the trial run took longer than replication waits and was
// brute-force aborted every time (issue 16). What fails only when the
// statement runs fails at its position, as an item error.
func TestCheckDDLPreparesIndexes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.commit("INSERT INTO t VALUES (1, 'a'), (2, 'a')")
	ctx := context.Background()
	ddl, err := e.CheckDDL(ctx, "CREATE UNIQUE INDEX t_v ON t (v)")
	if err != nil || !reflect.DeepEqual(ddl.Tables, []string{"t"}) {
		t.Fatalf("check: %v %v", ddl, err)
	}
	items := e.apply(&writeset.WriteSet{DDL: ddl.Statement, Tables: ddl.Tables})
	if sqlerr.Code(items[0].Err) != sqlerr.UniqueViolation {
		t.Fatalf("apply: %v", items[0].Err)
	}
	for stmt, code := range map[string]string{
		"CREATE INDEX x ON nope (v)": sqlerr.UndefinedTable,
		"CREATE INDEX x ON t (nope)": sqlerr.UndefinedColumn,
		"DROP TABLE nope":            sqlerr.UndefinedTable,
		"":                           sqlerr.SyntaxError,
	} {
		if _, err := e.CheckDDL(ctx, stmt); sqlerr.Code(err) != code {
			t.Errorf("%q: %v, want %s", stmt, err, code)
		}
	}
}

// DROP ... IF EXISTS of what does not exist says so, as PostgreSQL does,
// and names nothing that exists; in a block too.
func TestDropIfExistsNotices(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id int PRIMARY KEY)")
	e.ddl("CREATE SEQUENCE s")
	var got []string
	ctx := sqlerr.WithNotices(context.Background(), func(n *sqlerr.Error) { got = append(got, n.Severity+" "+n.Code+" "+n.Message) })
	for _, stmt := range []string{"DROP TABLE IF EXISTS nope, t", "DROP VIEW IF EXISTS v", "DROP INDEX IF EXISTS i",
		"DROP SEQUENCE IF EXISTS s", "DROP SEQUENCE IF EXISTS q", "DROP TABLE t"} {
		if _, err := e.CheckDDL(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	tx := e.begin()
	if err := tx.ExecSchema(ctx, "DROP TABLE IF EXISTS gone", &recorder{}); err != nil {
		t.Fatal(err)
	}
	want := []string{`NOTICE 00000 table "nope" does not exist, skipping`, `NOTICE 00000 view "v" does not exist, skipping`,
		`NOTICE 00000 index "i" does not exist, skipping`, `NOTICE 00000 sequence "q" does not exist, skipping`,
		`NOTICE 00000 table "gone" does not exist, skipping`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("notices\n%q\nwant\n%q", got, want)
	}
}
