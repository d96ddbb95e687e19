package clustertest

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
	"certa/sqlerr"
)

// The queries PostgreSQL applications send, run on the embedded engine
// and on a real PostgreSQL with the same rows: each must return the same
// column names, types and values, or fail with the same SQLSTATE
// (differential testing of pgparse's SQLite printer and the functions the
// engine adds).

var queryTables = []string{
	"CREATE TABLE q (id integer PRIMARY KEY, name text, n integer, x double precision, d numeric(10,2), b boolean)",
	`INSERT INTO q VALUES
		(1, 'Alice', 10, 1.5, 12.50, true),
		(2, 'bob', NULL, -2.25, 0.10, false),
		(3, 'ALICE_2', 30, NULL, NULL, NULL),
		(4, '50% off', 40, 0, 99.99, true),
		(5, NULL, 50, 1e10, -1.00, false),
		(6, 'o''brien', 10, 3.75, 7.00, true),
		(7, 'Ünïcode', 20, 2, 1.00, NULL)`,
	"CREATE TABLE qc (id integer PRIMARY KEY, qid integer REFERENCES q (id), tag varchar(10))",
	"INSERT INTO qc VALUES (1, 1, 'red'), (2, 1, 'blue'), (3, 2, 'red'), (4, NULL, 'none')",
}

// typedQueries must give the same result on both, with the same types
// of result columns.
var typedQueries = []string{
	"SELECT 1, 'x', true, NULL::text, 2.5, 3000000000",
	"SELECT count(*), count(name), sum(n), min(name), max(x) FROM q",
	"SELECT id AS \"Key\", name, b, x, d FROM q ORDER BY id",
	"SELECT version() LIKE 'PostgreSQL%', 1 < 2, NOT b, b AND true, n IS NULL, EXISTS (SELECT 1) FROM q WHERE id = 1",
	"SELECT '42'::int, '42'::bigint, 42::text, '1.5'::numeric(5,2), '2024-01-02'::date, 't'::boolean",
	"SELECT CAST(n AS text), CAST(d AS integer) FROM q ORDER BY id",
	"SELECT '2024-01-01 10:00:00+02'::timestamptz",
	"SELECT 'abc'::int",
}

// sameQueries must give the same result on both: column names and
// values. (The types of expressions' results may differ: SQLite's
// integers are all int8, its text columns all text.)
var sameQueries = []string{
	"SELECT id AS \"Key\", name, n + 1, n * 2 AS twice FROM q ORDER BY id",
	"SELECT current_schema(), current_database() IS NOT NULL",
	"SELECT * FROM current_schema()",
	// ANY / ALL over arrays.
	"SELECT id FROM q WHERE name = ANY (ARRAY['Alice', 'bob']) ORDER BY id",
	"SELECT id FROM q WHERE id <> ALL ('{1,2,3}'::int[]) ORDER BY id",
	"SELECT id FROM q WHERE name <> ALL ('{Alice,NULL}'::text[]) ORDER BY id",
	"SELECT id FROM q WHERE n > ANY (ARRAY[20, 35]) ORDER BY id",
	"SELECT id FROM q WHERE id = ANY ('{}'::int[])",
	// LIKE minds case and escapes with \; ILIKE does not mind case.
	"SELECT id FROM q WHERE name LIKE 'A%' ORDER BY id",
	"SELECT id FROM q WHERE name ILIKE 'a%' ORDER BY id",
	"SELECT id FROM q WHERE name LIKE '%\\_%' ORDER BY id",
	"SELECT id FROM q WHERE name LIKE '50!%%' ESCAPE '!' ORDER BY id",
	"SELECT id FROM q WHERE name NOT LIKE '%e%' ORDER BY id",
	"SELECT id FROM q WHERE name NOT ILIKE '%E%' ORDER BY id",
	"SELECT name LIKE NULL, NULL LIKE 'a' FROM q WHERE id = 1",
	"SELECT id FROM q WHERE name ~ '^[A-Z]' ORDER BY id",
	"SELECT id FROM q WHERE name ~* 'alice' ORDER BY id",
	"SELECT id FROM q WHERE name !~ 'i' ORDER BY id",
	// Strings.
	"SELECT E'tab\\there', $$dollar 'quoted'$$, 'it''s', U&'\\0041'",
	"SELECT upper(name), lower(name), length(name), name || '!' FROM q ORDER BY id",
	"SELECT substring(name from 2 for 3), substring(name, 0, 3), substring(name from -1 for 3), substr(name, 3) FROM q ORDER BY id",
	"SELECT position('b' in name), strpos(name, 'i'), replace(name, 'l', 'L') FROM q ORDER BY id",
	"SELECT concat(name, '-', n), concat_ws(',', name, n, NULL) FROM q ORDER BY id",
	"SELECT btrim('  x  '), ltrim('xxa', 'x'), rtrim('ayy', 'y'), trim(both 'x' from 'xxaxx')",
	"SELECT string_agg(name, ',' ORDER BY name) FROM q",
	// Numbers and NULLs.
	"SELECT greatest(n, 25), least(n, 25), greatest(NULL, 1), coalesce(n, -1), nullif(n, 10) FROM q ORDER BY id",
	"SELECT abs(-3), mod(7, 3), 7 % 3, 7 / 2, -7 / 2, 2 ^ 10, round(2.5), round(3.14159, 2)",
	"SELECT id FROM q WHERE n BETWEEN 15 AND 40 ORDER BY id",
	"SELECT id FROM q WHERE n NOT BETWEEN 15 AND 40 ORDER BY id",
	"SELECT id, n IS DISTINCT FROM 10, n IS NOT DISTINCT FROM NULL FROM q ORDER BY id",
	"SELECT id, b IS TRUE, b IS NOT FALSE, b IS UNKNOWN FROM q ORDER BY id",
	"SELECT id, CASE WHEN n > 20 THEN 'big' WHEN n IS NULL THEN 'none' ELSE 'small' END FROM q ORDER BY id",
	"SELECT id, CASE n WHEN 10 THEN 'ten' ELSE 'other' END FROM q ORDER BY id",
	// Ordering, limits.
	"SELECT id, n FROM q ORDER BY n, id",
	"SELECT id, n FROM q ORDER BY n DESC, id",
	"SELECT id, n FROM q ORDER BY n NULLS FIRST, id",
	"SELECT id FROM q ORDER BY id FETCH FIRST 3 ROWS ONLY",
	"SELECT id FROM q ORDER BY id OFFSET 5",
	"SELECT id FROM q ORDER BY id LIMIT 2 OFFSET 1",
	"SELECT id FROM q ORDER BY id LIMIT ALL",
	// Grouping, joins, subqueries, set operations.
	"SELECT n, count(*) FROM q GROUP BY n HAVING count(*) > 1 ORDER BY n",
	"SELECT DISTINCT n FROM q ORDER BY n",
	"SELECT DISTINCT ON (n) id FROM q ORDER BY n, id",
	"SELECT DISTINCT ON (n) n, name AS who FROM q ORDER BY n, id DESC",
	"SELECT DISTINCT ON (b) b, id FROM q ORDER BY b DESC, id LIMIT 2",
	"SELECT DISTINCT ON (1) n, id FROM q ORDER BY 1, 2 DESC",
	"SELECT DISTINCT ON (qid) qid, tag FROM qc WHERE qid IS NOT NULL ORDER BY qid, tag",
	"WITH w AS (SELECT * FROM q WHERE id > 1) SELECT DISTINCT ON (n) n, x FROM w ORDER BY n NULLS FIRST, x DESC",
	"SELECT count(DISTINCT n) FROM q",
	"SELECT q.id, qc.tag FROM q JOIN qc ON qc.qid = q.id ORDER BY q.id, qc.tag",
	"SELECT q.id, qc.tag FROM q LEFT JOIN qc ON qc.qid = q.id ORDER BY q.id, qc.tag",
	"SELECT qc.id, q.name FROM q RIGHT JOIN qc ON qc.qid = q.id ORDER BY qc.id",
	"SELECT id FROM q WHERE EXISTS (SELECT 1 FROM qc WHERE qc.qid = q.id) ORDER BY id",
	"SELECT id FROM q WHERE id IN (SELECT qid FROM qc) ORDER BY id",
	"SELECT id, (SELECT count(*) FROM qc WHERE qc.qid = q.id) AS tags FROM q ORDER BY id",
	"SELECT id FROM q WHERE id < 3 UNION SELECT qid FROM qc WHERE qid IS NOT NULL ORDER BY 1",
	"SELECT n FROM q UNION ALL SELECT id FROM qc ORDER BY 1 NULLS FIRST",
	"WITH big AS (SELECT id, n FROM q WHERE n > 20) SELECT count(*) FROM big",
	"WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 5) SELECT sum(i) FROM r",
	"VALUES (1, 'a'), (2, 'b')",
	"SELECT * FROM generate_series(1, 5)",
	"SELECT g FROM generate_series(10, 1, -3) AS g",
	"SELECT s.i FROM generate_series(1, 3) AS s(i)",
	"SELECT id, row_number() OVER (ORDER BY id DESC), rank() OVER (PARTITION BY n ORDER BY id) FROM q ORDER BY id",
	"SELECT public.q.id FROM public.q WHERE public.q.id = 1",
	"SELECT count(*) FILTER (WHERE n > 15) FROM q",
	// Errors.
	"SELECT nosuch FROM q",
	"SELECT * FROM nosuch",
	"SELECT 1 +",
	"SELECT name FROM q WHERE name ~ '('",
	"SELECT substring('abc', 1, -1)",
}

// refusedQueries are PostgreSQL features the embedded engine refuses
// rather than answer differently.
var refusedQueries = []string{
	"SELECT DISTINCT ON (n) * FROM q ORDER BY n, id",
	"SELECT 'x'::interval",
	"SELECT ARRAY[1, 2]",
	"SELECT id FROM q WHERE name SIMILAR TO 'A%'",
	"SELECT x FROM q GROUP BY ROLLUP (x)",
	"SELECT now() - interval '1 day'",
	"SELECT current_date + 1",
	"SELECT id FROM q WHERE name - 1 > 0",
}

func TestQueriesAgainstPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	writer, reader := syncConn(t, c, 0), syncConn(t, c, 1)
	for _, sql := range queryTables {
		mustExec(t, ref, sql)
		mustExec(t, writer, sql)
	}
	for _, sql := range typedQueries {
		want := describedOutcome(ctx, ref, sql, true)
		if got := describedOutcome(ctx, reader, sql, true); got != want {
			t.Errorf("%s\n  certa:      %s\n  PostgreSQL: %s", sql, got, want)
		}
	}
	for _, sql := range sameQueries {
		want := describedOutcome(ctx, ref, sql, false)
		if got := describedOutcome(ctx, reader, sql, false); got != want {
			t.Errorf("%s\n  certa:      %s\n  PostgreSQL: %s", sql, got, want)
		}
	}
	// The level asked for (the default, READ COMMITTED), though it runs
	// as snapshot isolation, as PostgreSQL shows READ UNCOMMITTED.
	for _, sql := range []string{"SHOW TRANSACTION ISOLATION LEVEL", "SHOW transaction_read_only"} {
		if got, want := describedOutcome(ctx, reader, sql, true), describedOutcome(ctx, ref, sql, true); got != want {
			t.Errorf("%s\n  certa:      %s\n  PostgreSQL: %s", sql, got, want)
		}
	}
	// The user the client authenticated as (the reference's is another).
	if got := describedOutcome(ctx, reader, "SELECT current_user, session_user, user", false); got != "current_user,session_user,user [[certa certa certa]]" {
		t.Errorf("CURRENT_USER: %s", got)
	}
	for _, sql := range refusedQueries {
		if _, err := reader.QueryDescribed(ctx, sql); pgclient.SQLState(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
}

// describedOutcome is a query's result as one line: its columns (names,
// and type OIDs if typed) and rows, or its error's SQLSTATE.
func describedOutcome(ctx context.Context, c *pgclient.Conn, sql string, typed bool) string {
	d, err := c.QueryDescribed(ctx, sql)
	if err != nil {
		return "ERROR " + pgclient.SQLState(err)
	}
	var cols []string
	for i, name := range d.Names {
		if typed {
			name += fmt.Sprintf(":%d", d.OIDs[i])
		}
		cols = append(cols, name)
	}
	rows := fmt.Sprint(d.Rows)
	if reflect.DeepEqual(d.Rows, [][]any(nil)) {
		rows = "[]"
	}
	return strings.Join(cols, ",") + " " + rows
}
