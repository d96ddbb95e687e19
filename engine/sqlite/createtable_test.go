package sqlite

import (
	"context"
	"errors"
	"strings"
	"testing"

	"certa/sqlerr"
)

// What PostgreSQL's column types refuse, certa refuses with PostgreSQL's
// SQLSTATE and message; SQLite would store it (it ignores lengths, and
// its integers are all 64 bits).
func TestTypeLimits(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE t (id integer PRIMARY KEY, v varchar(5), c char(2), s smallint, "Odd col" character varying(3), b bigint, d date)`)
	for _, c := range []struct{ stmt, code, msg string }{
		{"INSERT INTO t (id, v) VALUES (1, 'abcdef')", sqlerr.StringDataRightTruncation, "value too long for type character varying(5)"},
		{"INSERT INTO t (id, c) VALUES (2, 'abc')", sqlerr.StringDataRightTruncation, "value too long for type character(2)"},
		{`INSERT INTO t (id, "Odd col") VALUES (3, 'abcd')`, sqlerr.StringDataRightTruncation, "value too long for type character varying(3)"},
		{"INSERT INTO t (id) VALUES (3000000000)", sqlerr.NumericValueOutOfRange, "integer out of range"},
		{"INSERT INTO t (id, s) VALUES (4, 40000)", sqlerr.NumericValueOutOfRange, "smallint out of range"},
		// Integer affinity keeps what is no integer as it came.
		{"INSERT INTO t (id) VALUES ('34.5')", sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer: "34.5"`},
		{"INSERT INTO t (id, s) VALUES (5, 'abc')", sqlerr.InvalidTextRepresentation, `invalid input syntax for type smallint: "abc"`},
		{"INSERT INTO t (id, b) VALUES (6, 2.5)", sqlerr.InvalidTextRepresentation, "invalid input syntax for type bigint"},
		// SQLite keeps any text in a date column.
		// (A constant is read as a date first: storedform.go.)
		{"INSERT INTO t (id, d) VALUES (7, '1997-02-29')", sqlerr.DatetimeFieldOverflow, `date/time field value out of range: "1997-02-29"`},
		{"INSERT INTO t (id, d) VALUES (8, '02/28/1997')", sqlerr.FeatureNotSupported, `date input "02/28/1997" is not in a form the embedded engine reads: write it as ISO 8601 (2024-01-31 13:45:00+02)`},
		{"INSERT INTO t (id, d) VALUES (9, '1997-02-2' || '9')", sqlerr.FeatureNotSupported, dateForm},
	} {
		tx := e.begin()
		code, err := execErr(tx, c.stmt)
		var se *sqlerr.Error
		if code != c.code || !errors.As(err, &se) || se.Message != c.msg {
			t.Errorf("%s: %s %v, want %s %q", c.stmt, code, err, c.code, c.msg)
		}
		tx.Rollback()
	}
	e.ddl("ALTER TABLE t ADD COLUMN w varchar(2);")
	tx := e.begin()
	if code, err := execErr(tx, "INSERT INTO t (id, w) VALUES (9, 'abc')"); code != sqlerr.StringDataRightTruncation {
		t.Errorf("added column: %s %v", code, err)
	}
	tx.Rollback()
	e.commit("INSERT INTO t VALUES (2147483647, 'abcde', 'ab', -32768, 'äöü', ' 12 ', '2024-02-29', 'xy')")
	e.commit("INSERT INTO t (id, d) VALUES (10, current_date), (11, 'infinity'), (12, '2024-01-02'::date)")
	tx = e.begin()
	if code, err := execErr(tx, "UPDATE t SET v = v || 'x'"); code != sqlerr.StringDataRightTruncation {
		t.Errorf("update past the length: %s %v", code, err)
	}
	tx.Rollback()
}

// A translated CREATE TABLE translated again (as every node does with
// the replicated statement) is unchanged.
func TestTranslateCreateTableIdempotent(t *testing.T) {
	for _, sql := range []string{
		`CREATE TABLE t (id serial PRIMARY KEY, v varchar(5), n integer, s smallint, c char(3))`,
		`CREATE TABLE u (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k integer)`,
		`CREATE TABLE f (id int PRIMARY KEY, a int, b int, FOREIGN KEY (a, b) REFERENCES p (x, y) MATCH FULL)`,
		`CREATE TABLE n (id int PRIMARY KEY, a numeric(18,4), b numeric, c decimal(10, 2), d numeric(5))`,
		`CREATE TABLE d (id int PRIMARY KEY, c timestamptz DEFAULT now(), t text DEFAULT 'a'::text, n int DEFAULT 1 + 2)`,
		`CREATE TABLE s (id int PRIMARY KEY, filler char(84)) WITH (fillfactor=100) TABLESPACE pg_default;`,
	} {
		once, err := translateCreateTable(sql)
		if err != nil {
			t.Fatal(err)
		}
		twice, err := translateCreateTable(once)
		if err != nil || twice != once {
			t.Errorf("translated again: %v\n%s\n%s", err, once, twice)
		}
		if strings.Count(once, "CHECK") == 0 && strings.Contains(sql, "varchar") {
			t.Errorf("no length check: %s", once)
		}
	}
	if got, _ := translateCreateTable("CREATE TABLE s (id int PRIMARY KEY) WITHOUT OIDS"); strings.Contains(got, "fillfactor") || strings.Contains(got, "OIDS") {
		t.Errorf("storage parameters kept: %s", got)
	}
	for _, sql := range []string{
		"CREATE TABLE c (id int PRIMARY KEY) INHERITS (p)",
		"CREATE TABLE m (id int PRIMARY KEY) PARTITION BY RANGE (id)",
		"CREATE TABLE h (id int PRIMARY KEY) USING columnar",
	} {
		if _, err := translateCreateTable(sql); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", sql, err)
		}
	}
	add := translateAddColumn("ALTER TABLE t ADD COLUMN w varchar(2)")
	if again := translateAddColumn(add); again != add || !strings.Contains(add, "CHECK (length(\"w\") <= 2)") {
		t.Errorf("ADD COLUMN: %s\nagain: %s", add, again)
	}
}

// A foreign key MATCH FULL refuses a key that is partly NULL, as
// PostgreSQL does; SQLite alone would take it unchecked. MATCH PARTIAL is
// refused as PostgreSQL refuses it.
func TestForeignKeyMatchFull(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE p (x int, y int, PRIMARY KEY (x, y))`)
	e.ddl(`CREATE TABLE c (id int PRIMARY KEY, a int, b int, FOREIGN KEY (a, b) REFERENCES p MATCH FULL)`)
	e.ddl(`CREATE TABLE s (id int PRIMARY KEY, a int, b int, FOREIGN KEY (a, b) REFERENCES p)`)
	e.commit("INSERT INTO p VALUES (1, 1)")
	for _, c := range []struct{ stmt, code string }{
		{"INSERT INTO c VALUES (1, 1, NULL)", sqlerr.ForeignKeyViolation},
		{"INSERT INTO c VALUES (2, NULL, 7)", sqlerr.ForeignKeyViolation},
		{"INSERT INTO c VALUES (3, 2, 2)", sqlerr.ForeignKeyViolation},
		{"INSERT INTO c VALUES (4, NULL, NULL)", ""},
		{"INSERT INTO c VALUES (5, 1, 1)", ""},
		{"INSERT INTO s VALUES (1, 1, NULL)", ""}, // MATCH SIMPLE: not checked
	} {
		tx := e.begin()
		code, err := execErr(tx, c.stmt)
		if code != c.code {
			t.Errorf("%s: %s %v, want %q", c.stmt, code, err, c.code)
		}
		var se *sqlerr.Error
		if c.stmt == "INSERT INTO c VALUES (1, 1, NULL)" && (!errors.As(err, &se) ||
			se.Message != `insert or update on table "c" violates foreign key constraint "c_a_b_fkey"` || se.Detail != matchFullDetail) {
			t.Errorf("partly NULL key: %#v", se)
		}
		tx.Rollback()
	}
	tx := e.begin()
	defer tx.Rollback()
	if code, err := execErr(tx, `CREATE TABLE q (id int PRIMARY KEY, a int, b int, FOREIGN KEY (a, b) REFERENCES p MATCH PARTIAL)`); code != sqlerr.FeatureNotSupported {
		t.Errorf("MATCH PARTIAL: %s %v", code, err)
	}
}

// ALTER TABLE ... ADD FOREIGN KEY ... MATCH FULL holds as the one made
// by CREATE TABLE: rows already partly NULL refuse it (23503, with
// PostgreSQL's detail), and rows written after it are checked.
func TestAddForeignKeyMatchFull(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE p (x int, y int, PRIMARY KEY (x, y))`)
	e.ddl(`CREATE TABLE c (id int PRIMARY KEY, a int, b int)`)
	e.commit("INSERT INTO p VALUES (1, 1)", "INSERT INTO c VALUES (1, 1, NULL)")
	const add = `ALTER TABLE c ADD FOREIGN KEY (a, b) REFERENCES p MATCH FULL`
	_, err := e.CheckDDL(context.Background(), add)
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.ForeignKeyViolation || se.Detail != matchFullDetail ||
		se.Message != `insert or update on table "c" violates foreign key constraint "c_a_b_fkey"` {
		t.Fatalf("over a partly NULL key: %v", err)
	}
	e.commit("DELETE FROM c")
	e.ddl(add)
	for stmt, code := range map[string]string{
		"INSERT INTO c VALUES (2, 1, NULL)":    sqlerr.ForeignKeyViolation,
		"INSERT INTO c VALUES (3, 2, 2)":       sqlerr.ForeignKeyViolation,
		"INSERT INTO c VALUES (4, NULL, NULL)": "",
		"INSERT INTO c VALUES (5, 1, 1)":       "",
	} {
		tx := e.begin()
		if got, err := execErr(tx, stmt); got != code {
			t.Errorf("%s: %s %v, want %q", stmt, got, err, code)
		}
		tx.Rollback()
	}
}

// NUMERIC keeps the digits it was given and numeric(p,s) prints with s
// decimals, as PostgreSQL does; what SQLite's doubles cannot keep exactly
// is refused rather than altered.
func TestNumeric(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE n (id int PRIMARY KEY, a numeric(18,4), b numeric, c decimal(10, 2), d numeric(5))`)
	e.commit(
		"INSERT INTO n VALUES (1, 1234567890.5678, 1.50, 3.14, 12345)",
		"INSERT INTO n VALUES (2, 1.5, 1e-7, 1, -7)",
		"INSERT INTO n VALUES (3, -0.25, 123456789012345, '2.5', 0)",
		"INSERT INTO n VALUES (4, 99999999999.9999, 1e15, -0.0, NULL)",
		"INSERT INTO n VALUES (5, 0.1, 0.1, 0.1, 1)")
	wantRows(t, e.query("SELECT a, b, c, d FROM n ORDER BY id"),
		row("1234567890.5678", "1.5", "3.14", "12345"),
		row("1.5000", "0.0000001", "1.00", "-7"),
		row("-0.2500", "123456789012345", "2.50", "0"),
		row("99999999999.9999", "1000000000000000", "0.00", nil),
		row("0.1000", "0.1", "0.10", "1"))
	for _, c := range []struct{ stmt, code, msg string }{
		{"INSERT INTO n (id, a) VALUES (10, 12345678901234.5678)", sqlerr.FeatureNotSupported, "the number 12345678901234.5678 has more significant digits than the embedded engine keeps: it would become 12345678901234.568"},
		{"INSERT INTO n (id, b) VALUES (11, 0.1 + 0.2)", sqlerr.FeatureNotSupported, numericDigits},
		{"INSERT INTO n (id, b) VALUES (12, 1234567890123456)", sqlerr.FeatureNotSupported, numericDigits},
		// Its double, 9511118389679540, has 15 digits: only its size tells.
		{"INSERT INTO n (id, b) VALUES (18, 9511118389679541)", sqlerr.FeatureNotSupported, numericMagnitude},
		{"INSERT INTO n (id, b) SELECT 19, 9511118389679541 + id FROM n WHERE id = 1", sqlerr.FeatureNotSupported, numericMagnitude},
		{"INSERT INTO n (id, b) VALUES (20, 1e20)", sqlerr.FeatureNotSupported, numericMagnitude},
		{"INSERT INTO n (id, c) VALUES (13, 3.14159)", sqlerr.FeatureNotSupported, "numeric value with more decimal places than numeric(10,2) keeps: round it to 2 places first"},
		{"INSERT INTO n (id, c) VALUES (14, 100000000)", sqlerr.NumericValueOutOfRange, numericOverflow},
		{"INSERT INTO n (id, d) VALUES (15, 123456)", sqlerr.NumericValueOutOfRange, numericOverflow},
		{"INSERT INTO n (id, d) VALUES (16, 1.5)", sqlerr.FeatureNotSupported, "numeric value with more decimal places than numeric(5,0) keeps: round it to 0 places first"},
		{"INSERT INTO n (id, b) VALUES (17, 'abc')", sqlerr.InvalidTextRepresentation, numericSyntax + `: "abc"`},
		{"UPDATE n SET c = c / 3 WHERE id = 1", sqlerr.FeatureNotSupported, "numeric value with more decimal places than numeric(10,2) keeps: round it to 2 places first"},
	} {
		tx := e.begin()
		code, err := execErr(tx, c.stmt)
		var se *sqlerr.Error
		if code != c.code || !errors.As(err, &se) || se.Message != c.msg {
			t.Errorf("%s: %s %v, want %s %q", c.stmt, code, err, c.code, c.msg)
		}
		tx.Rollback()
	}
	// Rounded by the client, the same values are kept.
	e.commit("UPDATE n SET c = round(c / 3, 2) WHERE id = 1")
	wantRows(t, e.query("SELECT c FROM n WHERE id = 1"), row("1.05"))
	// The type modifier travels with the column, as PostgreSQL's atttypmod.
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT a, b, c, d, a + 1 AS e FROM n WHERE id = 1")
	for i, want := range []int32{18<<16 | 4 + 4, 0, 10<<16 | 2 + 4, 5<<16 + 4, 0} {
		if r.cols[i].Mod != want {
			t.Errorf("column %s: typmod %d, want %d", r.cols[i].Name, r.cols[i].Mod, want)
		}
	}
}

// TestNumericExact: numbers that SQLite would turn into other numbers before
// a column's CHECK constraints see them are refused, as constants, as
// strings given to a numeric column and as parameters; arithmetic on
// numeric columns is never SQLite's integer arithmetic.
func TestNumericExact(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE n (id int PRIMARY KEY, a numeric(10,2), b numeric, t text)`)
	e.commit("INSERT INTO n VALUES (1, 3.00, 3, '12345678901234.500001')",
		"INSERT INTO n VALUES (2, '1.5', 7, NULL)")
	wantRows(t, e.query("SELECT a / 2, b / 2, a, b, t FROM n ORDER BY id"),
		row(1.5, 1.5, "3.00", "3", "12345678901234.500001"),
		row(0.75, 3.5, "1.50", "7", nil))
	e.commit("UPDATE n SET a = a / 2, b = b / 2 WHERE id = 1")
	wantRows(t, e.query("SELECT a, b FROM n WHERE id = 1"), row("1.50", "1.5"))

	changed := func(stmt string, args []any, want string) {
		t.Helper()
		tx := e.begin()
		defer tx.Rollback()
		err := tx.Exec(context.Background(), stmt, &recorder{}, args...)
		var se *sqlerr.Error
		if !errors.As(err, &se) || se.Code != sqlerr.FeatureNotSupported || !strings.Contains(se.Message, want) {
			t.Errorf("%s %v: %v, want 0A000 with %q", stmt, args, err, want)
		}
	}
	changed("INSERT INTO n (id, b) VALUES (10, 0.10000000000000001)", nil, "the number 0.10000000000000001 has more significant digits than the embedded engine keeps: it would become 0.1")
	changed("SELECT 3.141592653589793238", nil, "it would become 3.141592653589793")
	changed("INSERT INTO n (id, b) VALUES (11, 12345678901234567890)", nil, "it would become 12345678901234567000")
	changed("INSERT INTO n (id, b) VALUES (12, '12345678901234.500001')", nil, `the number 12345678901234.500001 for column "b"`)
	changed("UPDATE n SET b = '0.10000000000000001' WHERE id = 1", nil, "it would become 0.1")
	changed("INSERT INTO n (id, b) VALUES (13, $1)", []any{"12345678901234.500001"}, "(parameter $1) has more significant digits")
	changed("UPDATE n SET a = 1, b = $2 WHERE id = $1", []any{int64(1), "0.10000000000000001"}, "(parameter $2)")
	changed("INSERT INTO n (id, b) VALUES (14, 1e400)", nil, "beyond the range")
	changed("SELECT CAST('1.23456789012345678' AS numeric)", nil, "it would become 1.2345678901234567")

	// What a double holds exactly passes, whatever its spelling; text
	// columns take any text; a cast to numeric(p,s) rounds the digits
	// written, as PostgreSQL does.
	wantRows(t, e.query("SELECT 0.30000000000000004 > 0.3"), row(true))
	tx := e.begin()
	defer tx.Rollback()
	if err := tx.Exec(context.Background(), "INSERT INTO n (id, b, t) VALUES ($1, $2, $3)", &recorder{}, int64(21), "1.25", "0.10000000000000001"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, exec(t, tx, "SELECT CAST('1.23456789012345678' AS numeric(10,2)), CAST('2.675' AS numeric(10,2)), b, t FROM n WHERE id = 21").rows,
		row("1.23", "2.68", "1.25", "0.10000000000000001"))
}

// Column defaults are PostgreSQL expressions (now(), casts, arithmetic),
// converted to the column's type as PostgreSQL converts them, in CREATE
// TABLE and ALTER COLUMN SET DEFAULT; ADD COLUMN with one SQLite cannot
// add is refused with 0A000 saying what to do instead.
func TestColumnDefaults(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE d (id int PRIMARY KEY, c timestamptz DEFAULT now(), t text DEFAULT 'a'::text,
		v varchar(3) DEFAULT 'x'::character varying, n int DEFAULT (1 + 2), ts timestamp DEFAULT now(), z int DEFAULT -1)`)
	e.commit("INSERT INTO d (id) VALUES (1)")
	got := e.query("SELECT t, v, n, z, c LIKE '____-__-__ __:__:__%+00', ts NOT LIKE '%+00' FROM d")
	wantRows(t, got, row("a", "x", int64(3), int64(-1), true, true))
	e.ddl("ALTER TABLE d ALTER COLUMN n SET DEFAULT 2 * 5")
	e.commit("INSERT INTO d (id) VALUES (2)")
	wantRows(t, e.query("SELECT n FROM d WHERE id = 2"), row(int64(10)))
	_, err := e.CheckDDL(context.Background(), "ALTER TABLE d ADD COLUMN e timestamptz DEFAULT now()")
	wantCode(t, err, sqlerr.FeatureNotSupported)
}

// String constants given a date, time, timestamp, timestamptz or uuid
// column are stored in the form the engine keeps (the form parameters and
// casts are stored in): one instant is one text, whatever form it was
// written in, and a form the engine does not read is refused as the
// parameter would be.
func TestStoredForms(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE ev (id int PRIMARY KEY, at timestamptz, local timestamp, d date, tm time, u uuid)")
	e.commit("INSERT INTO ev VALUES (1, '2006-08-13 12:34:56', '2006-08-13T12:34:56', '2006-08-13', '12:34:56.50', 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11')",
		"INSERT INTO ev (id, at) VALUES (2, '2006-08-13 14:34:56+02'), (3, 'Infinity'), (4, '2024-01-01 00:00+00')")
	e.commit("UPDATE ev SET local = '2006-08-13 12:34:56+05' WHERE id = 2")
	wantRows(t, e.query("SELECT id, at::text, local::text, tm::text, u::text FROM ev ORDER BY id"),
		row(int64(1), "2006-08-13 12:34:56+00", "2006-08-13 12:34:56", "12:34:56.5", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
		row(int64(2), "2006-08-13 12:34:56+00", "2006-08-13 12:34:56", nil, nil),
		row(int64(3), "infinity", nil, nil, nil),
		row(int64(4), "2024-01-01 00:00:00+00", nil, nil, nil))
	wantRows(t, e.query("SELECT count(*) FROM ev WHERE at = '2006-08-13 12:34:56+00'"), row(int64(2)))
	for stmt, code := range map[string]string{
		"INSERT INTO ev (id, at) VALUES (4, 'Jan 31 2024')": sqlerr.FeatureNotSupported,
		"INSERT INTO ev (id, d) VALUES (5, '2024-02-30')":   sqlerr.DatetimeFieldOverflow,
		"UPDATE ev SET u = 'not-a-uuid' WHERE id = 1":       sqlerr.InvalidTextRepresentation,
		"INSERT INTO ev (id, tm) VALUES (6, '25:61:00')":    sqlerr.DatetimeFieldOverflow,
	} {
		tx := e.begin()
		if got, err := execErr(tx, stmt); got != code {
			t.Errorf("%s: %s %v, want %s", stmt, got, err, code)
		}
		tx.Rollback()
	}
}

// Rows older than a column (ADD COLUMN) keep the value they read when the
// column's default changes: SQLite stores no value of the column in them
// and would read the new default (PostgreSQL's fast_default test).
func TestAddedColumnKeepsValuesWhenDefaultChanges(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (pk int PRIMARY KEY)")
	e.commit("INSERT INTO t VALUES (1)")
	e.ddl("ALTER TABLE t ADD COLUMN n int NOT NULL DEFAULT -1")
	e.ddl("ALTER TABLE t ADD COLUMN s text DEFAULT 'hello'")
	e.ddl("ALTER TABLE t ADD COLUMN z text")
	e.commit("INSERT INTO t VALUES (2)")
	e.ddl("ALTER TABLE t ALTER COLUMN n SET DEFAULT 1, ALTER COLUMN s SET DEFAULT 'world', ALTER COLUMN z SET DEFAULT 'x'")
	e.commit("INSERT INTO t (pk) VALUES (3)")
	e.ddl("ALTER TABLE t ALTER COLUMN s DROP DEFAULT")
	wantRows(t, e.query("SELECT pk, n, s, z FROM t ORDER BY pk"),
		row(int64(1), int64(-1), "hello", nil), row(int64(2), int64(-1), "hello", nil), row(int64(3), int64(1), "world", "x"))
}
