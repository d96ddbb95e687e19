package sqlite

import "testing"

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
