package sqlite

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// bytea: '\x…'::bytea and the escape form are read as PostgreSQL reads
// them; text given for a bytea column is refused rather than kept as text.
func TestByteaInput(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE b (id int PRIMARY KEY, v bytea)")
	e.commit(`INSERT INTO b VALUES (1, '\xdeadbeef'::bytea), (2, 'a\\b\001'::bytea), (3, NULL)`)
	wantRows(t, e.query("SELECT id, v, length(v) FROM b ORDER BY id"),
		row(int64(1), []byte{0xde, 0xad, 0xbe, 0xef}, int64(4)), row(int64(2), []byte{'a', '\\', 'b', 1}, int64(4)), row(int64(3), nil, nil))
	for sql, code := range map[string]string{
		`INSERT INTO b VALUES (4, '\xdeadbeef')`:  sqlerr.FeatureNotSupported,
		`INSERT INTO b VALUES (5, '\xzz'::bytea)`: sqlerr.InvalidTextRepresentation,
		`INSERT INTO b VALUES (6, 'x\q'::bytea)`:  sqlerr.InvalidTextRepresentation,
	} {
		if got, err := execErr(e.begin(), sql); got != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
}

// Columns of types whose values the engine would keep as unchecked text
// and read back as another type are refused, in CREATE TABLE, ADD COLUMN
// and ALTER COLUMN TYPE.
func TestRefusedColumnTypes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id int PRIMARY KEY, v text)")
	for sql, code := range map[string]string{
		"CREATE TABLE i (id int PRIMARY KEY, d interval)":      sqlerr.FeatureNotSupported,
		"CREATE TABLE p (id int PRIMARY KEY, at point)":        sqlerr.FeatureNotSupported,
		"CREATE TABLE r (id int PRIMARY KEY, span int4range)":  sqlerr.FeatureNotSupported,
		"ALTER TABLE t ADD COLUMN d interval":                  sqlerr.FeatureNotSupported,
		"ALTER TABLE t ALTER COLUMN v TYPE money":              sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, ip inet)":         sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, r real)":          sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, n name)":          sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, x xml)":           sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, t timetz)":        sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, ns int[])":        sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, vs varchar(3)[])": sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, at timestamp(0))": sqlerr.FeatureNotSupported,
		"ALTER TABLE t ADD COLUMN ip cidr":                     sqlerr.FeatureNotSupported,
		"ALTER TABLE t ALTER COLUMN v TYPE real":               sqlerr.FeatureNotSupported,
		"CREATE TABLE a (id int PRIMARY KEY, b blob)":          sqlerr.UndefinedObject,
		"CREATE TABLE a (id int PRIMARY KEY, d datetime)":      sqlerr.UndefinedObject,
		"ALTER TABLE t ADD COLUMN w nosuchtype":                sqlerr.UndefinedObject,
	} {
		if _, err := e.CheckDDL(context.Background(), sql); sqlerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE k (id int PRIMARY KEY, b boolean, f double precision, n numeric(10,2), s varchar(5), c char(2), tags text[], " +
			"names varchar[], bt bytea, u uuid, j json, jb jsonb, d date, tm time, ts timestamp(6), tz timestamptz, big bigserial)",
	} {
		if _, err := e.CheckDDL(context.Background(), sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

// Values of the kept types are kept as PostgreSQL keeps them: a boolean
// written as text compares as the boolean it names, a double is a number
// (or refused as PostgreSQL refuses it), json is checked and jsonb kept
// as PostgreSQL writes it back, as constants and as parameters.
func TestKeptValues(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE k (id int PRIMARY KEY, b boolean, f double precision, jb jsonb, j json)")
	e.commit(`INSERT INTO k VALUES (1, 't', '1.5', '{"b": 1,  "a": [2, {"d": 1, "c": 2}]}', '{"b": 1,  "a": 2}'),
		(2, true, 2, NULL, NULL), (3, 'yes', 'Infinity', '{"a": 1, "a": 2}', NULL), (4, 'off', ' -4 ', NULL, NULL)`)
	e.commit(`UPDATE k SET b = 'no' WHERE id = 2`)
	wantRows(t, e.query("SELECT id FROM k WHERE b = true ORDER BY id"), row(int64(1)), row(int64(3)))
	// A string constant compared with a column is read as its type.
	wantRows(t, e.query("SELECT id FROM k WHERE b = 't' ORDER BY id"), row(int64(1)), row(int64(3)))
	wantRows(t, e.query("SELECT k.id FROM k WHERE 'no' = k.b AND k.id IN (SELECT id FROM k WHERE b IN ('off', 'f')) ORDER BY id"), row(int64(2)), row(int64(4)))
	wantRows(t, e.query(`SELECT id FROM k WHERE jb = '{"b":1,"a":[2,{"c":2,"d":1}]}' OR f = 'inf' ORDER BY id`), row(int64(1)), row(int64(3)))
	wantRows(t, e.query("SELECT id FROM k WHERE f BETWEEN '1' AND ' 2 ' ORDER BY id"), row(int64(1)), row(int64(2)))
	// A column of a subquery or WITH query is not its table's: compared
	// as its own type (text here), as in PostgreSQL.
	wantRows(t, e.query("SELECT count(*) FROM (SELECT b::text AS b FROM k) s WHERE b = 'true'"), row(int64(2)))
	wantRows(t, e.query("WITH k AS (SELECT 'yes'::text AS b) SELECT count(*) FROM k WHERE b = 'yes' AND k.b = 'yes'"), row(int64(1)))
	if got, err := execErr(e.begin(), "SELECT id FROM k WHERE b = 'maybe'"); got != sqlerr.InvalidTextRepresentation {
		t.Errorf("b = 'maybe': %v", err)
	}
	// A cast of a column knows the column's type: a boolean made text is
	// true or false, a double is written as float8 is and rounded half
	// to even to an integer.
	e.ddl("CREATE TABLE cst (id int PRIMARY KEY, b boolean, f double precision)")
	e.commit("INSERT INTO cst VALUES (1, true, 2.5), (2, false, 3.4e39), (3, NULL, 'Infinity')")
	wantRows(t, e.query("SELECT b::text, c.f::text, CAST(f AS varchar) FROM cst c ORDER BY id"),
		row("true", "2.5", "2.5"), row("false", "3.4e+39", "3.4e+39"), row(nil, "Infinity", "Infinity"))
	wantRows(t, e.query("SELECT f::int4, f::bigint FROM cst WHERE id = 1"), row(int64(2), int64(2)))
	e.ddl("CREATE TABLE arr (id int PRIMARY KEY, tags text[])")
	e.commit(`INSERT INTO arr VALUES (1, '{ b , "a c" , NULL, "x"}')`)
	wantRows(t, e.query(`SELECT tags FROM arr WHERE tags = '{b,"a c",NULL,x}'`), row(`{b,"a c",NULL,x}`))
	if got, err := execErr(e.begin(), `INSERT INTO arr VALUES (2, '{{a},{b}}')`); got != sqlerr.FeatureNotSupported {
		t.Errorf("a two-dimensional array: %v, want 0A000", err)
	}
	e.ddl("CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, u uuid)")
	e.commit("INSERT INTO ev VALUES (1, '2024-01-31 15:45:00+02', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')")
	for _, q := range []string{
		"SELECT id FROM ev WHERE at = '2024-01-31 13:45:00+00'",
		"SELECT id FROM ev WHERE at = '2024-01-31 14:45+01'",
		"SELECT id FROM ev WHERE at > '2024-01-31 13:44:59Z' AND u = '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'",
	} {
		wantRows(t, e.query(q), row(int64(1)))
	}
	wantRows(t, e.query("SELECT id FROM k WHERE NOT b ORDER BY id"), row(int64(2)), row(int64(4)))
	wantRows(t, e.query("SELECT id, f FROM k WHERE f > 1 ORDER BY f"), row(int64(1), 1.5), row(int64(2), 2.0), row(int64(3), math.Inf(1)))
	wantRows(t, e.query("SELECT jb, j FROM k WHERE id IN (1, 3) ORDER BY id"),
		row(`{"a": [2, {"c": 2, "d": 1}], "b": 1}`, `{"b": 1,  "a": 2}`), row(`{"a": 2}`, nil))
	for sql, code := range map[string]string{
		"INSERT INTO k (id, f) VALUES (5, 'xyz')":       sqlerr.InvalidTextRepresentation,
		"INSERT INTO k (id, f) VALUES (5, 'NaN')":       sqlerr.FeatureNotSupported,
		"INSERT INTO k (id, b) VALUES (5, 'maybe')":     sqlerr.InvalidTextRepresentation,
		"INSERT INTO k (id, b) VALUES (5, 2)":           sqlerr.FeatureNotSupported,
		"INSERT INTO k (id, b) SELECT 5, 'yes'":         sqlerr.FeatureNotSupported,
		"INSERT INTO k (id, jb) VALUES (5, 'nope')":     sqlerr.InvalidTextRepresentation,
		"INSERT INTO k (id, j) VALUES (5, '{\"a\": }')": sqlerr.InvalidTextRepresentation,
		"UPDATE k SET f = 'abc' WHERE id = 1":           sqlerr.InvalidTextRepresentation,
		"INSERT INTO k (id, f) SELECT 5, 'abc'":         sqlerr.InvalidTextRepresentation,
	} {
		if got, err := execErr(e.begin(), sql); got != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
	// COPY reads its fields as parameters are read (pgtext.ParseValue).
	if got, err := pgtext.ParseValue(result.JSONB, `{"z": 1, "y": null}`); err != nil || got != `{"y": null, "z": 1}` {
		t.Errorf("jsonb parameter read as %v, %v", got, err)
	}
	if got, err := pgtext.ParseValue(pgtext.TextArray, `{"a", b}`); err != nil || got != `{a,b}` {
		t.Errorf("text[] parameter read as %v, %v", got, err)
	}
}

func TestMD5(t *testing.T) {
	e := openTest(t, Config{})
	wantRows(t, e.query("SELECT md5('abc'), md5(''), md5(NULL)"),
		row("900150983cd24fb0d6963f7d28e17f72", "d41d8cd98f00b204e9800998ecf8427e", nil))
}

// A column of a subquery or VALUES list in FROM has the kind its
// expressions say (a boolean, a cast), as in PostgreSQL, where SQLite's
// value alone would make a boolean 1.
func TestSubqueryColumnKinds(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT v.column1, flag, n FROM (VALUES (true, 1), (NULL, 2)) v, (SELECT false AS flag, '7'::int8 AS n) s ORDER BY v.column2")
	if got := []result.Type{r.cols[0].Type, r.cols[1].Type, r.cols[2].Type}; got[0] != result.Bool || got[1] != result.Bool || got[2] != result.Int8 {
		t.Errorf("column types %v, want bool, bool, int8", got)
	}
	wantRows(t, r.rows, row(true, false, int64(7)), row(nil, false, int64(7)))
	r = exec(t, tx, "VALUES (true), (false)")
	if r.cols[0].Type != result.Bool {
		t.Errorf("VALUES of booleans typed %v", r.cols[0].Type)
	}
	wantRows(t, r.rows, row(true), row(false))
	// SELECT * of one: its columns, named by the alias.
	r = exec(t, tx, "SELECT * FROM (VALUES (3 NOT IN (SELECT 1), 1), (false, 2)) ss (ok, n)")
	if r.cols[0].Type != result.Bool || r.cols[0].Name != "ok" || r.cols[1].Name != "n" {
		t.Errorf("SELECT * of VALUES: columns %+v", r.cols)
	}
	wantRows(t, r.rows, row(true, int64(1)), row(false, int64(2)))
}

// A CASE, COALESCE, NULLIF, GREATEST or LEAST of table columns has the
// columns' type, as in PostgreSQL, also when its first value is NULL
// (it was typed by SQLite's values: text, or int8 for an int4), and its
// string constants are read as values of that type.
func TestCommonKindOfColumns(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE ck (id int PRIMARY KEY, i int, s smallint, b boolean, ts timestamptz, f double precision)")
	e.commit("INSERT INTO ck VALUES (1, NULL, NULL, NULL, NULL, NULL), (2, 3, 4, true, '2024-01-31 15:45+02', 2.5)")
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, `SELECT CASE WHEN id > 1 THEN i END, COALESCE(b, 'f'), NULLIF(s, 4), GREATEST(s, i),
		COALESCE(ts, '2000-01-01'), COALESCE(i, f), CASE b WHEN 't' THEN 'yes' END FROM ck ORDER BY id`)
	want := []result.Type{result.Int4, result.Bool, result.Int2, result.Int4, result.Timestamptz, result.Float8, result.Text}
	for i, c := range r.cols {
		if c.Type != want[i] {
			t.Errorf("column %d (%s) typed %v, want %v", i+1, c.Name, c.Type, want[i])
		}
	}
	wantRows(t, r.rows[1:], row(int64(3), true, nil, int64(4), "2024-01-31 13:45:00+00", float64(3), "yes"))
	if ts := fmt.Sprint(r.rows[0][4]); !strings.HasPrefix(ts, "2000-01-01") || ts == "2000-01-01" {
		t.Errorf("COALESCE(ts, '2000-01-01') of NULL: %v, want the timestamptz", ts)
	}
	if got, err := execErr(e.begin(), "SELECT COALESCE(b, 'maybe') FROM ck"); got != sqlerr.InvalidTextRepresentation {
		t.Errorf("COALESCE(b, 'maybe'): %v", err)
	}
}

// A string constant in a set operation's column of numbers is read as a
// number of the column's type, as PostgreSQL does: SQLite would mix the
// text with the numbers ('3.4'::numeric UNION SELECT 'foo' had two rows).
func TestSetOperationConstants(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	wantRows(t, exec(t, tx, "SELECT 1 AS a UNION SELECT '2' UNION SELECT '1' ORDER BY 1").rows, row(int64(1)), row(int64(2)))
	wantRows(t, exec(t, tx, "SELECT 1.5 UNION ALL SELECT ' 2 ' ORDER BY 1").rows, row("1.5"), row("2"))
	wantRows(t, exec(t, tx, "SELECT 'a' UNION SELECT 'b' ORDER BY 1").rows, row("a"), row("b"))
	for _, sql := range []string{"SELECT '3.4'::numeric UNION SELECT 'foo'", "SELECT 1 UNION SELECT 2 EXCEPT SELECT 'x'"} {
		if got, err := execErr(e.begin(), sql); got != sqlerr.InvalidTextRepresentation {
			t.Errorf("%s: %v, want 22P02", sql, err)
		}
	}
}

// A WITH query named more than once is evaluated once, as in
// PostgreSQL: its random() values are the same for every reference.
func TestWithEvaluatedOnce(t *testing.T) {
	e := openTest(t, Config{})
	wantRows(t, e.query(`SELECT count(*) FROM (
		WITH q1(x) AS (SELECT random() FROM generate_series(1, 5))
		SELECT * FROM q1 UNION SELECT * FROM q1) ss`), row(int64(5)))
}

// ceil, floor, round, trunc, abs and sign of numeric are numeric, which
// has no negative zero (ceil(-0.5) is 0, SQLite's double -0); of double
// precision double, and round of a double rounds half to even as
// PostgreSQL's rint does (round(2.5::float8) is 2, numeric's 3).
func TestNumericFunctions(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, `SELECT ceil(-0.5::numeric), round(-0.000001::numeric), trunc(-0.4::numeric), floor(1.5::numeric),
		round(2.5::float8), round(-2.5::float8), round(3.5::float8), round(2.5::numeric), ceil(-0.5::float8)`)
	want := []result.Type{result.Numeric, result.Numeric, result.Numeric, result.Numeric, result.Float8, result.Float8, result.Float8, result.Numeric, result.Float8}
	for i, c := range r.cols {
		if c.Type != want[i] {
			t.Errorf("column %d typed %v, want %v", i+1, c.Type, want[i])
		}
	}
	wantRows(t, r.rows, row("0", "0", "0", "1", float64(2), float64(-2), float64(4), "3", math.Copysign(0, -1)))
}
