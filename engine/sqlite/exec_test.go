package sqlite

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/result"
	"certa/sqlerr"
)

// Exec refuses what a local transaction must not do, with a clear SQLSTATE,
// and the transaction stays usable.
func TestExecRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	// A table without a primary key whose column hides its rowid, as an
	// existing database might have.
	c, err := sqlite.OpenConn(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlitex.ExecuteTransient(c, "CREATE TABLE nopk (a TEXT, _rowid_ TEXT)", nil); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e := openTest(t, Config{Path: path})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL CHECK (v <> 'bad'), u TEXT UNIQUE)")
	e.commit("INSERT INTO t VALUES (1, 'a', 'u1')")
	tests := []struct {
		sql, code, msg string
	}{
		{"CREATE TABLE x (id INTEGER PRIMARY KEY)", sqlerr.FeatureNotSupported, "outside a transaction block"},
		{"DROP TABLE t", sqlerr.FeatureNotSupported, "outside a transaction block"},
		{"ALTER TABLE t ADD COLUMN z int", sqlerr.FeatureNotSupported, "outside a transaction block"},
		{"CREATE INDEX i ON t (v)", sqlerr.FeatureNotSupported, "outside a transaction block"},
		{"CREATE TEMP TABLE x (id int)", sqlerr.FeatureNotSupported, ""},
		{"BEGIN", sqlerr.FeatureNotSupported, "transaction control"},
		{"COMMIT", sqlerr.FeatureNotSupported, "transaction control"},
		{"SAVEPOINT s", sqlerr.FeatureNotSupported, "savepoints"},
		// SQLite's own statements are not PostgreSQL's.
		{"ATTACH 'other.db' AS o", sqlerr.SyntaxError, `syntax error at or near "ATTACH"`},
		{"PRAGMA user_version = 7", sqlerr.SyntaxError, `syntax error at or near "PRAGMA"`},
		{"PRAGMA table_info(t)", sqlerr.SyntaxError, `syntax error at or near "PRAGMA"`},
		{"REPLACE INTO t VALUES (4, 'dd')", sqlerr.SyntaxError, `syntax error at or near "REPLACE"`},
		{"SELECT * FROM pragma_table_info('t')", sqlerr.FeatureNotSupported, "pragma_table_info in FROM"},
		{"ANALYZE other.t", sqlerr.UndefinedTable, `relation "other.t" does not exist`},
		{"VACUUM nope", sqlerr.UndefinedTable, `relation "nope" does not exist`},
		{"VACUUM INTO 'x'", sqlerr.SyntaxError, "syntax error"},
		{"SELECT load_extension('x')", sqlerr.UndefinedFunction, "function load_extension does not exist"},
		// An alias naming too many columns is PostgreSQL's error; one
		// naming fewer than its subquery has, which PostgreSQL takes, is
		// refused.
		{"SELECT * FROM (SELECT 1) AS s (a, b)", sqlerr.InvalidColumnReference, `table "s" has 1 columns available but 2 columns specified`},
		{"SELECT * FROM (SELECT 1, 2) AS s (a)", sqlerr.FeatureNotSupported, "alias naming fewer columns"},
		{"UPDATE _certa_meta SET seqno = 99", sqlerr.FeatureNotSupported, "internal"},
		{"DELETE FROM _certa_failed", sqlerr.FeatureNotSupported, "internal"},
		{"INSERT INTO nopk VALUES ('x', 'y')", sqlerr.FeatureNotSupported, `table "nopk" has no primary key, and its column _rowid_ hides the rowid`},
		{"SELECT 1; SELECT 2", sqlerr.SyntaxError, "one statement expected"},
		{"SELEC 1", sqlerr.SyntaxError, "syntax error"},
		{"SELECT * FROM nope", sqlerr.UndefinedTable, `relation "nope" does not exist`},
		{"SELECT nope FROM t", sqlerr.UndefinedColumn, `column "nope" does not exist`},
		{"SELECT t.nope FROM t", sqlerr.UndefinedColumn, `column t.nope does not exist`},
		{"SELECT x.v FROM t", sqlerr.UndefinedTable, `missing FROM-clause entry for table "x"`},
		{"SELECT substr(t::text, 1, 3) FROM t", sqlerr.FeatureNotSupported, "whole-row reference (the table t as a value)"},
		{"SELECT * FROM t HAVING true", sqlerr.GroupingError, "HAVING and no GROUP BY"},
		{"INSERT INTO t VALUES (1, 'b', 'u2')", sqlerr.UniqueViolation, `duplicate key value violates unique constraint "t_pkey"`},
		{"INSERT INTO t VALUES (2, 'b', 'u1')", sqlerr.UniqueViolation, `duplicate key value violates unique constraint "t_u_key"`},
		{"INSERT INTO t VALUES (2, NULL, 'u2')", sqlerr.NotNullViolation, `null value in column "v" of relation "t" violates not-null constraint`},
		{"INSERT INTO t VALUES (2, 'bad', 'u2')", sqlerr.CheckViolation, `new row for relation "t" violates check constraint "t_v_check"`},
		{"INSERT INTO v VALUES (1)", sqlerr.UndefinedTable, `relation "v" does not exist`},
	}
	tx := e.begin()
	for _, tt := range tests {
		code, err := execErr(tx, tt.sql)
		if code != tt.code || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("%s: got %v, want %s %q", tt.sql, err, tt.code, tt.msg)
		}
		var se *sqlerr.Error
		if !asSQLErr(err, &se) {
			t.Errorf("%s: %T is not a *sqlerr.Error", tt.sql, err)
		}
	}
	wantRows(t, exec(t, tx, "SELECT seqno FROM _certa_meta").rows, row(int64(e.seqno)))
	// Still usable, and nothing refused happened.
	exec(t, tx, "INSERT INTO t VALUES (2, 'b', 'u2')")
	ws, err := tx.WriteSet()
	if err != nil || len(ws.Keys) != 1 {
		t.Fatalf("write set %+v, %v", ws, err)
	}
}

func asSQLErr(err error, target **sqlerr.Error) bool {
	se, ok := err.(*sqlerr.Error)
	*target = se
	return ok
}

func TestExecColumnTypes(t *testing.T) {
	e := openTest(t, Config{})
	e.legacyDDL(`CREATE TABLE t (id INTEGER PRIMARY KEY, i INT, big BIGINT, r REAL, f FLOAT, d DOUBLE PRECISION,
		b BOOLEAN, bb BOOL, bl BLOB, by BYTEA, s TEXT, vc VARCHAR(10), untyped)`)
	e.commit(`INSERT INTO t VALUES (1, 2, 3, 1.5, 2.5, 3.5, 1, 0, x'01', x'02', 's', 'vc', 'u')`,
		`INSERT INTO t VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
		`INSERT INTO t (id, i, r, b) VALUES (3, '7', 4, 'true')`)
	tx := e.begin()
	r := exec(t, tx, "SELECT * FROM t ORDER BY id")
	want := []result.Column{
		{Name: "id", Type: result.Int4}, {Name: "i", Type: result.Int4}, {Name: "big", Type: result.Int8}, {Name: "r", Type: result.Float4}, {Name: "f", Type: result.Float8},
		{Name: "d", Type: result.Float8}, {Name: "b", Type: result.Bool}, {Name: "bb", Type: result.Bool}, {Name: "bl", Type: result.Bytea}, {Name: "by", Type: result.Bytea},
		{Name: "s", Type: result.Text}, {Name: "vc", Type: result.Other(1043), Mod: 14}, {Name: "untyped", Type: result.Text},
	}
	if !reflect.DeepEqual(r.cols, want) {
		t.Fatalf("columns\n got %v\nwant %v", r.cols, want)
	}
	wantRows(t, r.rows,
		row(int64(1), int64(2), int64(3), 1.5, 2.5, 3.5, true, false, []byte{1}, []byte{2}, "s", "vc", "u"),
		row(int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil),
		row(int64(3), int64(7), nil, 4.0, nil, nil, true, nil, nil, nil, nil, nil, nil))
	if r.tag != "SELECT 3" {
		t.Fatalf("tag %q", r.tag)
	}

	// Expressions are typed as PostgreSQL types them, aliased columns by
	// their table's declaration.
	r = exec(t, tx, "SELECT 1, 1.5, 'x', x'00', NULL, i AS alias, count(*) FROM t WHERE id = 1 GROUP BY i")
	var types []result.Type
	for _, c := range r.cols {
		types = append(types, c.Type)
	}
	wantTypes := []result.Type{result.Int4, result.Numeric, result.Text, result.Bytea, result.Text, result.Int4, result.Int8}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Fatalf("expression types %v, want %v", types, wantTypes)
	}
	// No rows: declared types still apply, and the types arithmetic's
	// operands give it; the rest is text.
	r = exec(t, tx, "SELECT id, 1 + 1 AS two, 'x' AS x FROM t WHERE id < 0")
	if !reflect.DeepEqual(r.cols, []result.Column{{Name: "id", Type: result.Int4}, {Name: "two", Type: result.Int4}, {Name: "x", Type: result.Text}}) || r.tag != "SELECT 0" {
		t.Fatalf("empty result: %v %q", r.cols, r.tag)
	}
}

func TestExecTags(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	tx := e.begin()
	tests := []struct {
		sql, tag string
		rows     int
	}{
		{"INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')", "INSERT 0 3", 0},
		{"  -- comment\n insert into t values (4, 'd')", "INSERT 0 1", 0},
		{"UPDATE t SET v = 'dd' WHERE id = 4", "UPDATE 1", 0},
		{"UPDATE t SET v = v || '!' WHERE id > 1", "UPDATE 3", 0},
		{"DELETE FROM t WHERE id = 4", "DELETE 1", 0},
		{"INSERT INTO t VALUES (5, 'e') RETURNING id", "INSERT 0 1", 1},
		{"UPDATE t SET v = 'x' WHERE id IN (1, 2) RETURNING id, v", "UPDATE 2", 2},
		{"DELETE FROM t WHERE id = 5 RETURNING *", "DELETE 1", 1},
		{"WITH n(x) AS (VALUES (6), (7)) INSERT INTO t SELECT x, 'w' FROM n", "INSERT 0 2", 0},
		{"WITH n(x) AS (VALUES (6)) DELETE FROM t WHERE id IN (SELECT x FROM n)", "DELETE 1", 0},
		{"SELECT * FROM t", "SELECT 4", 4},
		{"WITH n(x) AS (VALUES (1)) SELECT x FROM n", "SELECT 1", 1},
		{"VALUES (1), (2)", "SELECT 2", 2},
		{"SELECT 1;", "SELECT 1", 1},
		{"SELECT 1; -- done", "SELECT 1", 1},
	}
	for _, tt := range tests {
		r := exec(t, tx, tt.sql)
		if r.tag != tt.tag || len(r.rows) != tt.rows {
			t.Errorf("%q: tag %q with %d rows, want %q with %d", tt.sql, r.tag, len(r.rows), tt.tag, tt.rows)
		}
	}
	for _, blank := range []string{"", "  ", ";", "-- nothing", "/* nothing */ ;"} {
		if r := exec(t, tx, blank); !r.empty || r.tag != "" {
			t.Errorf("%q: not reported as empty", blank)
		}
	}
}

func TestBaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "base.sqlite")
	b, err := OpenBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	mustExec := func(b *Baseline, sql string, args ...any) int64 {
		t.Helper()
		n, err := b.Exec(sql, args...)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	mustExec(b, "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	mustExec(b, "BEGIN IMMEDIATE")
	mustExec(b, "INSERT INTO t VALUES ($1, $2), ($3, $4)", 1, "a", 2, "b")
	// A second connection waits for the writer, then gives up as busy.
	other, err := OpenBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.c.SetBusyTimeout(10 * time.Millisecond)
	if _, err := other.Exec("BEGIN IMMEDIATE"); !IsBusy(err) {
		t.Fatalf("a second writer got %v, want busy", err)
	}
	mustExec(b, "COMMIT")
	// $n binds argument n wherever it appears.
	if n := mustExec(b, "UPDATE t SET v = $2 WHERE id = $1", 2, "c"); n != 1 {
		t.Fatalf("UPDATE changed %d rows, want 1", n)
	}
	rows, err := other.Query("SELECT id, v FROM t WHERE id >= $1 ORDER BY id", 1)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rows) != "[[1 a] [2 c]]" {
		t.Fatalf("read %v", rows)
	}
	if _, err := b.Exec("INSERT INTO t VALUES ($1, $2)", 1, "a"); err == nil {
		t.Fatal("duplicate insert succeeded")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

// failingWriter is a client that went away.
type failingWriter struct{ recorder }

var errGone = errors.New("client went away")

func (f *failingWriter) Row([]result.Value) error { return errGone }

// A Writer's error is passed on unchanged, and the transaction stays usable.
func TestExecWriterError(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1), (2)")
	tx := e.begin()
	if err := tx.Exec(context.Background(), "SELECT * FROM t", &failingWriter{}); err != errGone {
		t.Fatalf("got %v, want the writer's error", err)
	}
	wantRows(t, exec(t, tx, "SELECT count(*) FROM t").rows, row(int64(2)))
}

// VACUUM and ANALYZE are accepted and change nothing (vacuum.go).
func TestVacuumAnalyze(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1)")
	tx := e.begin()
	for sql, tag := range map[string]string{
		"VACUUM": "VACUUM", "vacuum analyze t": "VACUUM", "VACUUM (VERBOSE) public.t": "VACUUM", "ANALYZE t": "ANALYZE",
	} {
		if got := exec(t, tx, sql).tag; got != tag {
			t.Errorf("%s: tag %q, want %q", sql, got, tag)
		}
	}
	if ws, err := tx.WriteSet(); err != nil || ws != nil {
		t.Errorf("write set %+v, %v", ws, err)
	}
	wantRows(t, e.query("SELECT id FROM t"), row(int64(1)))
}

// An ON CONFLICT target that no unique constraint matches fails as in
// PostgreSQL (42P10), not as an internal error.
func TestOnConflictNoMatchingConstraint(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE u (id integer PRIMARY KEY, e text)")
	_, err := execErr(e.begin(), "INSERT INTO u VALUES (1, 'x') ON CONFLICT (e) DO NOTHING")
	wantCode(t, err, "42P10")
}

// A char(n) column's values come back padded to n characters, as
// PostgreSQL stores them; what SQLite computes from them is unpadded, as
// PostgreSQL's char(n) to text is.
func TestExecCharPadded(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE c (id integer PRIMARY KEY, code char(4), name character(3))")
	e.commit("INSERT INTO c VALUES (1, 'ab', 'é'), (2, 'abcd', NULL)")
	wantRows(t, e.query("SELECT code, name, code || '|' FROM c ORDER BY id"),
		row("ab  ", "é  ", "ab|"), row("abcd", nil, "abcd|"))
}

// A column typed by its first row keeps every later row's value as it is:
// 1 UNION 2.2 is not 1, 2.
func TestExecMixedColumnKeepsValues(t *testing.T) {
	e := openTest(t, Config{})
	got := e.query("SELECT 1 AS two UNION SELECT 2.2 ORDER BY 1")
	if len(got) != 2 || fmt.Sprint(got[1][0]) != "2.2" {
		t.Fatalf("rows %v, want 1 and 2.2", got)
	}
}

// A query of no columns has rows of no values, as in PostgreSQL.
func TestExecNoColumns(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1), (2)")
	for sql, rows := range map[string]int{"SELECT": 1, "SELECT FROM t": 2, "SELECT FROM t WHERE id > 1 UNION ALL SELECT": 2} {
		tx := e.begin()
		var buf result.Buffer
		if err := tx.Exec(context.Background(), sql, &buf); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		tx.Rollback()
		if buf.Cols == nil || len(buf.Cols) != 0 || len(buf.Rows) != rows || len(buf.Rows[0]) != 0 {
			t.Fatalf("%s: %+v", sql, buf)
		}
	}
}

// Result columns are named as PostgreSQL names them, also where two share
// a name (SQLite's names of such columns are lost through zombiezen's
// map) and where casts are nested (the outer type names the column).
func TestResultColumnNames(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE j1 (i int PRIMARY KEY, j int)")
	e.ddl("CREATE TABLE j2 (i int PRIMARY KEY, k int)")
	e.commit("INSERT INTO j1 VALUES (1, 2)", "INSERT INTO j2 VALUES (1, 3)")
	for sql, want := range map[string]string{
		"SELECT * FROM j1 JOIN j2 ON j1.i = j2.i":                                                   "i j i k",
		"SELECT * FROM j1 JOIN j2 USING (i)":                                                        "i j k",
		"SELECT 1 AS x, 2 AS x, 3 AS x -- comment":                                                  "x x x",
		`SELECT 1 AS "x:1", 2 AS x, 3 AS x`:                                                         "x:1 x x",
		"SELECT '2147483647.4'::float8::int4":                                                       "int4",
		"SELECT i::text::int, (SELECT 1), 1::int FROM j1":                                           "i ?column? int4",
		"SELECT (VALUES (1)), (SELECT i FROM j2 UNION SELECT 2), (WITH c AS (SELECT 1) VALUES (2))": "column1 i column1",
		"SELECT CASE i WHEN 1 THEN 2 ELSE j END, CASE WHEN true THEN j END, CASE WHEN true THEN 1 ELSE 1::int END FROM j1": "j case case",
	} {
		tx := e.begin()
		r := exec(t, tx, sql)
		_, cols, err := tx.Describe(context.Background(), sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		var got, described []string
		for i := range r.cols {
			got = append(got, r.cols[i].Name)
			described = append(described, cols[i].Name)
		}
		if strings.Join(got, " ") != want || strings.Join(described, " ") != want {
			t.Errorf("%s: columns %q, described %q, want %s", sql, got, described, want)
		}
		tx.Rollback()
	}
}

// CASE, COALESCE, GREATEST and NULLIF have the type PostgreSQL resolves
// for them, also where their value is NULL or a number SQLite would
// type otherwise.
func TestConditionalExpressionTypes(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	r := exec(t, tx, "SELECT CASE WHEN 1 > 2 THEN 3 END, coalesce(NULL, 2.5), greatest(1, 2::int8), CASE WHEN true THEN 'a' END, nullif(1, 1), CASE WHEN true THEN 1 ELSE 0.5 END")
	var types []result.Type
	for _, c := range r.cols {
		types = append(types, c.Type)
	}
	want := []result.Type{result.Int4, result.Numeric, result.Int8, result.Text, result.Int4, result.Numeric}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("types %v, want %v", types, want)
	}
	wantRows(t, r.rows, row(nil, "2.5", int64(2), "a", nil, "1"))
}

// A string constant compared with a number that is no column is read as
// that number, as PostgreSQL reads it (SQLite finds text and a number
// unequal), or refused as PostgreSQL refuses it.
func TestStringConstantsComparedWithNumbers(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE w (id int PRIMARY KEY, name text)")
	e.commit("INSERT INTO w VALUES (1, 'abcde'), (2, 'ab')")
	wantRows(t, e.query("SELECT id FROM w WHERE length(name) = '5'"), row(int64(1)))
	wantRows(t, e.query("SELECT 1 = '1', 2.5 > ' 2 ', count(*) > '1' FROM w"), row(true, true, true))
	tx := e.begin()
	code, _ := execErr(tx, "SELECT id FROM w WHERE length(name) = '5.0'")
	if code != sqlerr.InvalidTextRepresentation {
		t.Fatalf("an integer compared with '5.0': %s, want 22P02", code)
	}
}

// A double made an integer is rounded half to even, as PostgreSQL's rint
// rounds it, also a subquery's or VALUES' column of doubles.
func TestSubqueryDoublesRoundToEven(t *testing.T) {
	e := openTest(t, Config{})
	wantRows(t, e.query("SELECT x::int4, x::int8 FROM (VALUES (-2.5::float8), (0.5::float8), (1.5::float8)) t(x)"),
		row(int64(-2), int64(-2)), row(int64(0), int64(0)), row(int64(2), int64(2)))
}

// Integer arithmetic fails past its type's range, as PostgreSQL's
// operators do, where SQLite would compute in 64 bits (int4 * int2 past
// 2^31) or turn an overflow into a double (int8 * int8); in range it has
// its type: int4 * int2 is an integer, int8 + int4 a bigint.
func TestIntegerArithmeticOverflow(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE nums (id int PRIMARY KEY, i2 int2, i4 int4, i8 int8)")
	e.commit("INSERT INTO nums VALUES (1, 32767, 2147483647, 4567890123456789), (2, 1, 1, 1)")
	for _, c := range []struct{ sql, msg string }{
		{"SELECT i4 * int2 '2' FROM nums", "integer out of range"},
		{"SELECT i4 + 1 FROM nums", "integer out of range"},
		{"SELECT i2 + int2 '2' FROM nums", "smallint out of range"},
		{"SELECT -i2 - i2 FROM nums", "smallint out of range"},
		{"SELECT i8 * i8 FROM nums", "bigint out of range"},
		{"SELECT 32767::int2 + 1::int2", "smallint out of range"},
		{"SELECT (-2147483648)::int4 * (-1)::int2", "integer out of range"},
		{"SELECT '-100'::int2 - '9223372036854775800'::int8", "bigint out of range"},
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), c.sql, &recorder{})
		tx.Rollback()
		wantCode(t, err, sqlerr.NumericValueOutOfRange)
		if !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.msg)
		}
	}
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT (i2 + 1) * 2, i4::int8 * 2, i8 + i4 FROM nums WHERE id = 1")
	wantRows(t, r.rows, row(int64(65536), int64(4294967294), int64(4567892270940436)))
	for i, want := range []result.Type{result.Int4, result.Int8, result.Int8} {
		if r.cols[i].Type != want {
			t.Errorf("column %d: type %v, want %v", i+1, r.cols[i].Type, want)
		}
	}
}

// Arithmetic on what is no number (a date, a timestamp, text, jsonb) is
// refused, in any clause: SQLite would compute on the text ('2020-01-01'
// + 1 is 2021). Numbers, and string constants that take the other
// operand's type, are computed.
func TestArithmeticOnlyOnNumbers(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE things (id int PRIMARY KEY, d date, ts timestamp, s text, j jsonb, n numeric, i int8)")
	e.commit("INSERT INTO things VALUES (1, '2020-01-01', '2020-01-01 10:00', '5', '{\"a\": 1}', 1.5, 7)")
	for _, sql := range []string{
		"SELECT d + 1 FROM things",
		"SELECT id FROM things WHERE d - 1 > 0",
		"SELECT ts - ts FROM things",
		"SELECT s * 2 FROM things",
		"SELECT j - 'a' FROM things",
		"SELECT date '2020-01-01' + 1",
		"SELECT now() - now()",
		"UPDATE things SET d = d + 1",
		"SELECT t.d * 2 FROM things t",
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), sql, &recorder{})
		tx.Rollback()
		wantCode(t, err, sqlerr.FeatureNotSupported)
		if !strings.Contains(err.Error(), "arithmetic on") {
			t.Errorf("%s: %v, want a refusal of arithmetic", sql, err)
		}
	}
	wantRows(t, e.query("SELECT n + 1, '5' + 1, i * 2, -i, (i + 1) % 3 FROM things"),
		row(2.5, int64(6), int64(14), int64(-7), int64(2)))
}

// Division and modulo by zero fail with 22012, as in PostgreSQL, where
// SQLite's give NULL: in results, in WHERE, in an UPDATE, which then
// changes nothing.
func TestDivisionByZero(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE dz (id int PRIMARY KEY, n int, f float8, d numeric)")
	e.commit("INSERT INTO dz VALUES (1, 0, 0, 0), (2, 2, 2.5, 1.5)")
	for _, sql := range []string{
		"SELECT 1 / 0",
		"SELECT 1.0 / 0",
		"SELECT 5 % 0",
		"SELECT 1 / '0'",
		"SELECT id / n FROM dz",
		"SELECT 1 / f FROM dz",
		"SELECT d % n FROM dz",
		"SELECT id FROM dz WHERE 10 / n > 1",
		"UPDATE dz SET n = 10 / n",
		// Folded when PostgreSQL plans it: fails though not reached.
		"SELECT CASE WHEN id > 100 THEN 1 / 0 ELSE 0 END FROM dz",
		"SELECT id FROM dz WHERE id > 100 AND n = -1.5 % 0.0",
	} {
		tx := e.begin()
		rec := &recorder{}
		err := tx.Exec(context.Background(), sql, rec)
		tx.Rollback()
		wantCode(t, err, sqlerr.DivisionByZero)
		if rec.tag != "" {
			// A row its WHERE then left out failed: the statement
			// fails, it does not complete first.
			t.Errorf("%s: completed with %q before failing", sql, rec.tag)
		}
	}
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT 10 / n, NULL / 0, n / NULL FROM dz WHERE id = 2")
	wantRows(t, r.rows, row(int64(5), nil, nil))
	r = exec(t, tx, "SELECT n FROM dz ORDER BY id")
	wantRows(t, r.rows, row(int64(0)), row(int64(2)))
}

// Mathematical functions fail where PostgreSQL's do, where SQLite's
// return NULL: a logarithm of zero, a square root of a negative number,
// an undefined power, an overflow.
func TestMathFunctionErrors(t *testing.T) {
	e := openTest(t, Config{})
	for _, c := range []struct{ sql, code, msg string }{
		{"SELECT ln(0)", sqlerr.InvalidArgumentForLog, "cannot take logarithm of zero"},
		{"SELECT log(-1.5)", sqlerr.InvalidArgumentForLog, "cannot take logarithm of a negative number"},
		{"SELECT sqrt(-1::float8)", sqlerr.InvalidArgumentForPower, "cannot take square root of a negative number"},
		{"SELECT power(0::float8, -1)", sqlerr.InvalidArgumentForPower, "zero raised to a negative power is undefined"},
		{"SELECT (-8.0) ^ 0.5", sqlerr.InvalidArgumentForPower, "a negative number raised to a non-integer power yields a complex result"},
		{"SELECT exp(1000::float8)", sqlerr.NumericValueOutOfRange, "value out of range: overflow"},
		{"SELECT mod(5, 0)", sqlerr.DivisionByZero, "division by zero"},
		// Products SQLite would turn into a double, infinity or zero.
		{"SELECT 1e200::float8 * 1e200", sqlerr.NumericValueOutOfRange, "value out of range: overflow"},
		{"SELECT 1e-200::float8 * 1e-200::float8", sqlerr.NumericValueOutOfRange, "value out of range: underflow"},
		{"SELECT 9223372036854775807 * 2", sqlerr.NumericValueOutOfRange, "bigint out of range"},
		{"SELECT (-9223372036854775807 - 1) * -1", sqlerr.NumericValueOutOfRange, "bigint out of range"},
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), c.sql, &recorder{})
		tx.Rollback()
		wantCode(t, err, c.code)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want %q", c.sql, err, c.msg)
		}
	}
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT sqrt(16), ln(1), power(2, 10), (-8.0) ^ 3, mod(-7, 3), exp(0), sqrt(NULL)")
	wantRows(t, r.rows, row(4.0, 0.0, 1024.0, -512.0, int64(-1), 1.0, nil))
	r = exec(t, tx, "SELECT 3 * 4, 0.5::float8 * 3, NULL * 2, '2' * 3, float8 'infinity' * 2, -4611686018427387904 * 2")
	wantRows(t, r.rows, row(int64(12), 1.5, nil, int64(6), math.Inf(1), int64(math.MinInt64)))
	// A string compared with a function's double is read as a number
	// (PostgreSQL's unknown-typed constant), not compared as text.
	r = exec(t, tx, "SELECT power(float8 '-inf', float8 '-2') = '0', sqrt(4) = '2.0', ln(1) <> '0'")
	wantRows(t, r.rows, row(true, true, false))
}

// An INSERT ... ON CONFLICT DO UPDATE whose rows share a conflict key
// fails (21000) and changes nothing, as in PostgreSQL, where SQLite
// would update the row the first of them inserted.
func TestUpsertRowTwice(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE up (f1 int PRIMARY KEY, f2 int)")
	e.ddl("CREATE TABLE up2 (a int, b text, v int, PRIMARY KEY (a, b))")
	e.commit("INSERT INTO up VALUES (1, 1)")
	for _, sql := range []string{
		"INSERT INTO up (f1, f2) VALUES (4, 1), (4, 2) ON CONFLICT (f1) DO UPDATE SET f2 = 0",
		"INSERT INTO up (f2, f1) VALUES (5, 1), (5, 2), (6, 1) ON CONFLICT (f1) DO UPDATE SET f2 = excluded.f2",
		"INSERT INTO up2 (a, b, v) VALUES (1, 'x', 1), (1, 'x', 2) ON CONFLICT (a, b) DO UPDATE SET v = 0",
		"INSERT INTO up VALUES (4, 1), (4, 2) ON CONFLICT (f1) DO UPDATE SET f2 = 0", // no column list
		"insert into up2 values (1, 'x'), (1, 'x') on conflict (b, a) do update set v = 0",
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), sql, &recorder{})
		wantCode(t, err, sqlerr.CardinalityViolation)
		r := exec(t, tx, "SELECT f1, f2 FROM up ORDER BY f1")
		wantRows(t, r.rows, row(int64(1), int64(1)))
		tx.Rollback()
	}
	tx := e.begin()
	defer tx.Rollback()
	exec(t, tx, "INSERT INTO up (f1, f2) VALUES (1, 7), (2, 8), (2, 9) ON CONFLICT (f1) DO NOTHING")
	exec(t, tx, "INSERT INTO up (f1, f2) VALUES (1, 9), (3, 9) ON CONFLICT (f1) DO UPDATE SET f2 = excluded.f2")
	exec(t, tx, "INSERT INTO up2 (a, b, v) VALUES (1, 'x', 1), (1, 'y', 2) ON CONFLICT (a, b) DO UPDATE SET v = 0")
	exec(t, tx, "INSERT INTO up VALUES (3, 10), (4, 11) ON CONFLICT (f1) DO UPDATE SET f2 = excluded.f2")
	r := exec(t, tx, "SELECT f1, f2 FROM up ORDER BY f1")
	wantRows(t, r.rows, row(int64(1), int64(9)), row(int64(2), int64(8)), row(int64(3), int64(10)), row(int64(4), int64(11)))
}

// Numbers in forms PostgreSQL 16 added (1_000, 0x1F, 0o17, 0b101) are
// syntax errors, as PostgreSQL 15 reads them, where the parser certa
// uses would read them as numbers; names and strings that look alike are
// not.
func TestNewerNumberLiterals(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	for _, sql := range []string{"SELECT 1_2_3", "SELECT 0x1F", "SELECT 1 + 0o17", "SELECT 0b101"} {
		err := tx.Exec(context.Background(), sql, &recorder{})
		wantCode(t, err, sqlerr.SyntaxError)
		if err == nil || !strings.Contains(err.Error(), "trailing junk after numeric literal") {
			t.Errorf("%s: %v", sql, err)
		}
	}
	r := exec(t, tx, "SELECT 10 AS x_1, '0x1F', 'a_1_2' AS t0xb, 2 - 1")
	wantRows(t, r.rows, row(int64(10), "0x1F", "a_1_2", int64(1)))
	for sql, want := range map[string]bool{
		"SELECT 1_000": true, "SELECT 0x1F": true, "SELECT (0b1)": true, "SELECT 12_3": true,
		"SELECT * FROM events_2024_01": false, "SELECT a0x1, t10b FROM t": false, "SELECT 10 AS x_1": false, "SELECT 100x": false,
	} {
		if got := newerLiteral(sql); got != want {
			t.Errorf("newerLiteral(%q) = %v", sql, got)
		}
	}
}

// A CHECK without a name gets PostgreSQL's (table_column_check where its
// condition names one column, on the column or on the table, else
// table_check, numbered where taken), and a row that violates it fails
// with PostgreSQL's message naming it: SQLite named a table's unnamed
// check after the type check of the column before it (22P02).
func TestCheckNamesAsPostgreSQL(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE ckn (id int PRIMARY KEY, a int, b int CHECK (a + b > 0), c int CHECK (c > 0), CHECK (a > 0), CHECK (a < 100 AND a > -5))")
	e.ddl("ALTER TABLE ckn ADD CHECK (b < 1000 AND c < 1000)")
	for _, c := range []struct{ row, name string }{
		{"1, 1, -5, 1", "ckn_check"},
		{"2, 0, 5, 1", "ckn_a_check"},
		{"3, 1, 5, 0", "ckn_c_check"},
		{"4, 200, 5, 1", "ckn_a_check1"},
		{"5, 1, 5, 5000", "ckn_check1"},
	} {
		tx := e.begin()
		err := tx.Exec(context.Background(), "INSERT INTO ckn VALUES ("+c.row+")", &recorder{})
		tx.Rollback()
		wantCode(t, err, sqlerr.CheckViolation)
		if want := fmt.Sprintf("new row for relation \"ckn\" violates check constraint %q", c.name); !strings.Contains(err.Error(), want) {
			t.Errorf("(%s): %v, want %s", c.row, err, want)
		}
	}
}
