package sqlite

import (
	"context"
	"testing"

	"certa/sqlerr"
)

// A grouped query may read a column outside its aggregates only if the
// column is grouped or its table's primary key is, as in PostgreSQL;
// SQLite would answer with some row's value.
func TestGroupingErrors(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE g (id int PRIMARY KEY, a int, b int)")
	e.ddl("CREATE TABLE h (x int, y int)")
	e.commit("INSERT INTO g VALUES (1, 1, 1), (2, 1, 2)", "INSERT INTO h VALUES (1, 1), (1, 2), (2, 3)")
	for _, sql := range []string{
		"SELECT count(*) FROM h GROUP BY x ORDER BY y",
		"SELECT y, count(*) FROM h GROUP BY x",
		"SELECT x, count(*) FROM h",
		"SELECT x FROM h GROUP BY y HAVING count(*) > 0",
		"SELECT h.y + 1 FROM h GROUP BY h.x",
		"SELECT g.b, count(*) FROM g JOIN h ON h.x = g.id GROUP BY g.a",
		"SELECT h.y, count(*) FROM g JOIN h ON h.x = g.id GROUP BY g.id",
		// An aggregate of the outer query's columns in a subquery groups
		// the outer query.
		"SELECT x, (SELECT count(h.y)) FROM h",
		"SELECT x, (SELECT count(hh.y) FROM g) FROM h hh",
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), sql, &recorder{})
		tx.Rollback()
		wantCode(t, err, sqlerr.GroupingError)
	}
	for _, sql := range []string{
		"SELECT a, b, count(*) FROM g GROUP BY id",
		"SELECT g.a, h.y FROM g JOIN h ON h.x = g.id GROUP BY g.id, h.y",
		"SELECT x, count(*) FROM h GROUP BY 1",
		"SELECT x AS k, count(*) FROM h GROUP BY k",
		"SELECT x + 1, sum(y) FROM h GROUP BY x ORDER BY x",
		"SELECT x FROM h GROUP BY x ORDER BY count(*)",
		"SELECT x, (SELECT max(y) FROM h h2 WHERE h2.x = h.x) FROM h GROUP BY x",
		"SELECT count(*), max(y) FROM h",
		"SELECT x + y FROM h GROUP BY x + y",
		"SELECT x, row_number() OVER (ORDER BY x) FROM h GROUP BY x",
		"SELECT x, y FROM h",
		"SELECT (SELECT count(h.y)) FROM h",
		"SELECT x, (SELECT count(h.y) FROM h) FROM h",
		"SELECT x, (SELECT sum(h.y + g.a) FROM g) FROM h",
		"SELECT x, (SELECT count(g.a) FROM g WHERE g.id = h.x) FROM h",
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), sql, &recorder{})
		tx.Rollback()
		if err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
