package sqlite

import (
	"context"
	"testing"

	"certa/sqlerr"
)

// DEFAULT anywhere else is PostgreSQL's syntax error.
func TestDefaultElsewhere(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE d (id int PRIMARY KEY, v text DEFAULT 'x')")
	tx := e.begin()
	for _, sql := range []string{
		"INSERT INTO d (id, v) SELECT 1, DEFAULT",
		"INSERT INTO d SELECT * FROM (VALUES (1, DEFAULT)) t",
		"SELECT DEFAULT",
		"UPDATE d SET v = coalesce(DEFAULT, 'y')",
	} {
		if code, err := execErr(tx, sql); code != "42601" {
			t.Errorf("%s: %v, want 42601", sql, err)
		}
	}
}

// A default that is a string constant the column's type does not read is
// refused when it is made, as in PostgreSQL (22P02), not when a row
// first takes it; one it reads is taken.
func TestDefaultStringOfTheColumnsType(t *testing.T) {
	e := openTest(t, Config{})
	for stmt, code := range map[string]string{
		"CREATE TABLE d (c int DEFAULT 'wrong_datatype')": "22P02",
		"CREATE TABLE d (c boolean DEFAULT 'maybe')":      "22P02",
		"CREATE TABLE d (c smallint DEFAULT '40000')":     "22003",
		"CREATE TABLE d (c date DEFAULT '2024-02-30')":    "22008",
	} {
		if _, err := e.CheckDDL(context.Background(), stmt); sqlerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", stmt, err, code)
		}
	}
	e.ddl("CREATE TABLE d (id int PRIMARY KEY, c int DEFAULT '12', b boolean DEFAULT 'yes', v text DEFAULT 'x')")
	if _, err := e.CheckDDL(context.Background(), "ALTER TABLE d ALTER COLUMN c SET DEFAULT 'wrong'"); sqlerr.Code(err) != "22P02" {
		t.Errorf("SET DEFAULT 'wrong': %v, want 22P02", err)
	}
	e.ddl("ALTER TABLE d ALTER COLUMN c SET DEFAULT ' 7 '")
	e.commit("INSERT INTO d (id) VALUES (1)")
	wantRows(t, e.query("SELECT c, b, v FROM d"), row(int64(7), true, "x"))
	// Values SQLite keeps in another form than their text.
	e.ddl(`CREATE TABLE o (id int PRIMARY KEY, f float8 DEFAULT '-Infinity', y bytea DEFAULT '\x0102', t timestamptz DEFAULT '2024-01-01 10:00:00+02')`)
	e.commit("INSERT INTO o (id) VALUES (1)")
	wantRows(t, e.query("SELECT f < -1e308, y = '\\x0102'::bytea, t = '2024-01-01 08:00:00+00'::timestamptz FROM o"), row(true, true, true))
}
