package postgres

import (
	"errors"
	"testing"

	"certa/writeset"
)

// ddlText returns a DDL write set's statement for sql, with no settings.
func ddlText(sql string) string { return schemaChange{SQL: sql}.encode() }

// A replicated schema statement decodes to what was encoded; text in any
// other form, or naming a setting that does not travel, fails to decode
// (alike on every node).
func TestSchemaChangeEncoding(t *testing.T) {
	sc := schemaChange{Settings: map[string]string{"DateStyle": "ISO, DMY", "search_path": `"$user", public`}, SQL: "CREATE TABLE t (x int) -- note"}
	got, err := decodeSchemaChange(sc.encode())
	if err != nil || got.SQL != sc.SQL || len(got.Settings) != 2 || got.Settings["DateStyle"] != "ISO, DMY" {
		t.Fatalf("decode(encode(%+v)) = %+v, %v", sc, got, err)
	}
	for _, bad := range []string{
		"CREATE TABLE t (x int)",
		`{"settings": {}, "sql": ""}`,
		`{"settings": {"session_replication_role": "origin"}, "sql": "CREATE TABLE t (x int)"}`,
		`{"settings": {"role": "postgres"}, "sql": "CREATE TABLE t (x int)"}`,
		`{"sql": 1}`,
	} {
		if _, err := decodeSchemaChange(bad); !errors.Is(err, errBadSchemaChange) {
			t.Errorf("decode(%q) = %v, want errBadSchemaChange", bad, err)
		}
	}
}

// certa's own SQL never shares a string with a client's statement: a
// schema statement ending in a line comment applies and the applier goes
// on (it commented out certa's RESET ROLE, and every node then failed to
// record its position); a forged one that carries a second statement, or a
// setting that does not travel, fails alike on every node and runs
// nothing; the settings a statement ran under on its origin are the ones
// it runs under here.
func TestSchemaChangeApplied(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE zz (id int PRIMARY KEY) -- a migration's note")}); err != nil {
		t.Fatal(err)
	}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE z2 (id int PRIMARY KEY)")}); err != nil {
		t.Fatalf("the applier after a statement ending in a comment: %v", err)
	}
	for _, forged := range []string{
		ddlText("CREATE TABLE f1 (id int PRIMARY KEY); CREATE TABLE f2 (id int PRIMARY KEY)"),
		ddlText("CREATE TABLE f1 (id int PRIMARY KEY)); RESET ROLE; CREATE TABLE f2 (id int PRIMARY KEY"),
		`{"settings": {"session_replication_role": "origin"}, "sql": "CREATE TABLE f1 (id int PRIMARY KEY)"}`,
		"SELECT 1; CREATE TABLE f1 (id int PRIMARY KEY)",
	} {
		if err := f.apply(&writeset.WriteSet{DDL: forged}); err == nil {
			t.Errorf("forged %q applied", forged)
		}
	}
	if rows := query(t, e, "SELECT count(*) FROM pg_class WHERE relname IN ('f1', 'f2')"); rows[0][0] != int64(0) {
		t.Fatalf("a forged statement made %v tables", rows[0][0])
	}

	// A default computed under the origin's settings.
	sc := schemaChange{Settings: map[string]string{"DateStyle": "SQL, DMY", "search_path": "public"},
		SQL: "CREATE TABLE d (id int PRIMARY KEY, day date DEFAULT '03/04/2025')"}
	if err := f.apply(&writeset.WriteSet{DDL: sc.encode()}); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	defer s.Close()
	f.exec(s, "INSERT INTO d (id) VALUES (1)")
	if rows := mustRead(t, s, "SELECT day::text FROM d"); rows[0][0] != "2025-04-03" {
		t.Fatalf("default applied as %v, want 2025-04-03 (DMY on the origin)", rows[0][0])
	}
}
