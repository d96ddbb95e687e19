package replica

import (
	"reflect"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		sql   string
		want  []string
		kinds []kind
	}{
		{"", nil, nil},
		{" ; ;", nil, nil},
		{"SELECT 1", []string{"SELECT 1"}, []kind{kindOther}},
		{"select 1; BEGIN;commit", []string{"select 1", "BEGIN", "commit"}, []kind{kindOther, kindBegin, kindCommit}},
		{"SELECT 'a;b'; SELECT \"x;y\"", []string{"SELECT 'a;b'", "SELECT \"x;y\""}, []kind{kindOther, kindOther}},
		{"SELECT 'it''s;'; END", []string{"SELECT 'it''s;'", "END"}, []kind{kindOther, kindCommit}},
		{"SELECT E'\\';'; ABORT", []string{"SELECT E'\\';'", "ABORT"}, []kind{kindOther, kindRollback}},
		{"-- c;\nSELECT 1 /* ; /* nested; */ */; ROLLBACK", []string{"-- c;\nSELECT 1 /* ; /* nested; */ */", "ROLLBACK"}, []kind{kindOther, kindRollback}},
		{"SELECT $$a;b$$; SELECT $t$;$t$", []string{"SELECT $$a;b$$", "SELECT $t$;$t$"}, []kind{kindOther, kindOther}},
		{"UPDATE t SET v = $1; SET x = 1", []string{"UPDATE t SET v = $1", "SET x = 1"}, []kind{kindOther, kindSet}},
		{"create table t (id int primary key); show certa.consistency", []string{"create table t (id int primary key)", "show certa.consistency"}, []kind{kindDDL, kindShow}},
		{"START TRANSACTION ISOLATION LEVEL REPEATABLE READ", []string{"START TRANSACTION ISOLATION LEVEL REPEATABLE READ"}, []kind{kindBegin}},
		{"/* only a comment */", nil, nil},
		{"(SELECT 1 AS a) UNION (SELECT 2) ORDER BY 1; -- x\n(VALUES (1), (2))", []string{"(SELECT 1 AS a) UNION (SELECT 2) ORDER BY 1", "-- x\n(VALUES (1), (2))"}, []kind{kindOther, kindOther}},
		{"/* c */ (TABLE t)", []string{"/* c */ (TABLE t)"}, []kind{kindOther}},
		// As psql splits: parentheses, BEGIN ATOMIC ... END, CASE ... END.
		{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END; SELECT f()",
			[]string{"CREATE FUNCTION f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT CASE WHEN true THEN 2 END; END", "SELECT f()"}, []kind{kindDDL, kindOther}},
		{"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); DELETE FROM v); begin; end",
			[]string{"CREATE RULE r AS ON INSERT TO t DO ALSO (INSERT INTO u VALUES (1); DELETE FROM v)", "begin", "end"}, []kind{kindDDL, kindBegin, kindCommit}},
		// Schema changes no row trigger sees, whatever their first word.
		{"REASSIGN OWNED BY a TO b; SECURITY LABEL ON TABLE t IS 'x'", []string{"REASSIGN OWNED BY a TO b", "SECURITY LABEL ON TABLE t IS 'x'"}, []kind{kindDDL, kindDDL}},
		{"refresh materialized view m; REFRESH MATERIALIZED VIEW CONCURRENTLY m", []string{"refresh materialized view m", "REFRESH MATERIALIZED VIEW CONCURRENTLY m"}, []kind{kindDDL, kindDDL}},
		// Statements whose text PostgreSQL shows keep their ';'.
		{"PREPARE q AS SELECT 1 ; declare c cursor for select 2;  FETCH c;", []string{"PREPARE q AS SELECT 1 ;", "declare c cursor for select 2;", "FETCH c"}, []kind{kindOther, kindOther, kindOther}},
		{"SELECT CASE x WHEN 1 THEN 'a' END FROM t; SELECT ')'; SELECT 2", []string{"SELECT CASE x WHEN 1 THEN 'a' END FROM t", "SELECT ')'", "SELECT 2"}, []kind{kindOther, kindOther, kindOther}},
	}
	for _, c := range cases {
		got := splitStatements(c.sql)
		var sqls []string
		var kinds []kind
		for _, s := range got {
			sqls = append(sqls, s.sql)
			kinds = append(kinds, s.kind)
		}
		if !reflect.DeepEqual(sqls, c.want) || !reflect.DeepEqual(kinds, c.kinds) {
			t.Errorf("splitStatements(%q) = %q %v, want %q %v", c.sql, sqls, kinds, c.want, c.kinds)
		}
	}
}

func TestParseSet(t *testing.T) {
	for sql, want := range map[string][2]string{
		"SET certa.consistency = 'sync'":  {"certa.consistency", "sync"},
		"SET certa.consistency TO local":  {"certa.consistency", "local"},
		"set SESSION certa.wait_for = 42": {"certa.wait_for", "42"},
		"SET application_name='psql'":     {"application_name", "psql"},
		"RESET certa.wait_for":            {"certa.wait_for", ""},
		"SET extra_float_digits = 3":      {"extra_float_digits", "3"},
	} {
		name, value, _, err := parseSet(sql)
		if err != nil || name != want[0] || value != want[1] {
			t.Errorf("parseSet(%q) = %q, %q, %v; want %q, %q", sql, name, value, err, want[0], want[1])
		}
	}
	if _, _, _, err := parseSet("SET"); err == nil {
		t.Error("parseSet(SET) succeeded")
	}
}

func FuzzSplitStatements(f *testing.F) {
	for _, s := range []string{"SELECT 1; SELECT 2", "SELECT 'a;b'", "$$;$$", "/* /* */", "E'\\'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		for _, s := range splitStatements(sql) {
			if s.kind == kindEmpty || s.sql == "" {
				t.Fatalf("empty statement returned for %q", sql)
			}
		}
	})
}

// Only the plain forms of COMMIT and ROLLBACK end a block: ROLLBACK TO
// SAVEPOINT taken for ROLLBACK would end it, and the COMMIT that follows
// would answer COMMIT for work that is gone.
func TestTransactionControlKinds(t *testing.T) {
	for sql, want := range map[string]kind{
		"COMMIT": kindCommit, "END": kindCommit, "commit work": kindCommit, "END TRANSACTION": kindCommit,
		"COMMIT AND NO CHAIN": kindCommit, "ROLLBACK": kindRollback, "ABORT": kindRollback,
		"rollback transaction": kindRollback, "ROLLBACK AND NO CHAIN": kindRollback,
		"SAVEPOINT a": kindSavepoint, "release a": kindSavepoint, "RELEASE SAVEPOINT a": kindSavepoint,
		"ROLLBACK TO a": kindSavepoint, "rollback to savepoint a": kindSavepoint,
		"ROLLBACK WORK TO SAVEPOINT a": kindSavepoint, "ROLLBACK TRANSACTION TO a": kindSavepoint,
		"COMMIT AND CHAIN": kindCommit, "ROLLBACK AND CHAIN": kindRollback, "end and chain": kindCommit,
		"COMMIT PREPARED 'x'": kindRefused, "ROLLBACK PREPARED 'x'": kindRefused, "PREPARE TRANSACTION 'x'": kindRefused,
		"ABORT TO a": kindOther, "PREPARE q AS SELECT 1": kindOther,
	} {
		if got := newStatement(sql).kind; got != want {
			t.Errorf("%q: kind %d, want %d", sql, got, want)
		}
	}
}

func TestIsCatalogQuery(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT relname FROM pg_catalog.pg_class":                                     true,
		"SELECT * FROM information_schema.tables WHERE table_schema = 'public'":       true,
		`SELECT * FROM "information_schema"."tables" WHERE "table_schema" = 'public'`: true, // TypeORM
		`SELECT * FROM "pg_catalog"."pg_class"`:                                       true,
		"SELECT oid FROM pg_type WHERE typname = 'int4'":                              true,
		"SELECT * FROM books WHERE title = 'pg_catalog'":                              false,
		"SELECT * FROM my_information_schema_copy":                                    false,
		"INSERT INTO t SELECT * FROM information_schema.tables":                       false,
		"SELECT obj_description('t'::regclass, 'pg_class')":                           true,
		"SELECT format_type(23, NULL)":                                                true,
		"SELECT 't'::regclass":                                                        true,
		"SELECT pg_catalog.setval('public.t_id_seq', 5)":                              false,
		"SELECT lower(name) FROM t":                                                   false,
	} {
		if got := IsCatalogQuery(sql); got != want {
			t.Errorf("%s: %v, want %v", sql, got, want)
		}
	}
}
