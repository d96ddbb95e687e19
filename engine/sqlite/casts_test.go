package sqlite

import (
	"context"
	"testing"

	"certa/result"
	"certa/sqlerr"
)

func TestRewriteCasts(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT CAST(a AS integer) FROM t":                          "SELECT pg_cast(a , 'int4') FROM t",
		"SELECT cast(cast(b as text) as numeric(10, 2))":            "SELECT pg_cast(pg_cast(b , 'text') , 'numeric', 10, 2)",
		"SELECT 'CAST(x AS int)', x FROM t -- CAST(y AS date)":      "SELECT 'CAST(x AS int)', x FROM t -- CAST(y AS date)",
		"SELECT CAST(x AS pg_catalog.timestamptz), CAST(y AS uuid)": "SELECT pg_cast(x , 'timestamptz'), pg_cast(y , 'uuid')",
	} {
		got, err := rewriteCasts(in)
		if err != nil || got != want {
			t.Errorf("rewriteCasts(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for sql, code := range map[string]string{
		"SELECT CAST(x AS interval)": sqlerr.FeatureNotSupported,
		"SELECT CAST(x AS int[])":    sqlerr.FeatureNotSupported,
		"SELECT CAST(x AS blob)":     sqlerr.UndefinedObject,
		"SELECT CAST(x AS real)":     sqlerr.FeatureNotSupported,
	} {
		_, err := rewriteCasts(sql)
		wantCode(t, err, code)
	}
}

// A result column that is only a cast is named and typed as PostgreSQL
// names and types it.
func TestCastColumns(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT CAST('yes' AS boolean), CAST(3 AS numeric(10,2)), CAST('7' AS bigint) + 1 AS x, CAST('2024-01-01 10:00:00+02' AS timestamptz)")
	want := []result.Column{{Name: "bool", Type: result.Bool}, {Name: "numeric", Type: result.Numeric, Mod: 10<<16 | 2 + 4},
		{Name: "x", Type: result.Int8}, {Name: "timestamptz", Type: result.Timestamptz}}
	for i, w := range want {
		if r.cols[i] != w {
			t.Errorf("column %d: %+v, want %+v", i, r.cols[i], w)
		}
	}
	wantRows(t, r.rows, row(true, "3.00", int64(8), "2024-01-01 08:00:00+00"))
	if code, err := execErr(tx, "SELECT CAST('12abc' AS integer)"); code != sqlerr.InvalidTextRepresentation {
		t.Errorf("12abc: %s %v", code, err)
	}
}

// A cast that fails on a row fails the statement before that row reaches
// the client (the row would hold a NULL where the value failed), in a
// transaction and in a read alike.
func TestFailedCastSendsNoRow(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE vals (id int PRIMARY KEY, v text)")
	e.commit("INSERT INTO vals VALUES (1, '7'), (2, 'x')")
	tx := e.begin()
	r := &recorder{}
	err := tx.Exec(context.Background(), "SELECT id, v::int FROM vals ORDER BY id", r)
	if sqlerr.Code(err) != sqlerr.InvalidTextRepresentation || len(r.rows) != 1 {
		t.Errorf("in a transaction: rows %v, error %v; want the first row and 22P02", r.rows, err)
	}
	r = &recorder{}
	err = e.Read(context.Background(), "SELECT '02/28/1997'::date", r)
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported || len(r.rows) != 0 {
		t.Errorf("read: rows %v, error %v; want no row and 0A000", r.rows, err)
	}
}

func TestRoundHalfAway(t *testing.T) {
	for _, c := range []struct {
		f    float64
		s    int
		want float64
	}{{3.145, 2, 3.15}, {-3.145, 2, -3.15}, {2.5, 0, 3}, {-2.5, 0, -3}, {0.125, 2, 0.13}, {1.005, 2, 1.01}, {1234.5, 0, 1235}} {
		if got := roundHalfAway(c.f, c.s); got != c.want {
			t.Errorf("roundHalfAway(%v, %d) = %v, want %v", c.f, c.s, got, c.want)
		}
	}
}

// uuid input is read as PostgreSQL's uuid_in reads it (the cases of its
// regression test, uuid.sql).
func TestParseUUID(t *testing.T) {
	for in, ok := range map[string]bool{
		"11111111-1111-1111-1111-111111111111":    true,
		"{22222222-2222-2222-2222-222222222222}":  true,
		"3f3e3c3b3a3039383736353433a2313e":        true,
		"3f3e-3c3b-3a30-3938-3736-3534-33a2-313e": true,
		"11111111-1111-1111-1111-111111111111F":   false,
		"{11111111-1111-1111-1111-11111111111}":   false,
		"111-11111-1111-1111-1111-111111111111":   false,
		"{22222222-2222-2222-2222-222222222222 ":  false,
		"11111111-1111-1111-G111-111111111111":    false,
		"11+11111-1111-1111-1111-111111111111":    false,
		" 11111111-1111-1111-1111-111111111111":   false,
		"11111111-1111-1111-1111-111111111111-":   false,
		"{11111111-1111-1111-1111-111111111111":   false,
	} {
		if _, got := parseUUID(in); got != ok {
			t.Errorf("parseUUID(%q) ok = %v, PostgreSQL's %v", in, got, ok)
		}
	}
}

// Special numbers of numeric's and float8's input: what the engine
// cannot keep is refused (numeric NaN was read as NULL, Infinity written
// +Inf), and a float8 that underflows to 0 is out of range, as
// PostgreSQL's strtod-based input says.
func TestSpecialNumberInput(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	for sql, want := range map[string]string{
		"SELECT 'NaN'::numeric":      sqlerr.FeatureNotSupported,
		"SELECT ' -inf '::numeric":   sqlerr.FeatureNotSupported,
		"SELECT 'Infinity'::numeric": sqlerr.FeatureNotSupported,
		"SELECT '+nan'::numeric":     sqlerr.InvalidTextRepresentation,
		"SELECT '0x10'::numeric":     sqlerr.InvalidTextRepresentation,
		"SELECT '10e-400'::float8":   sqlerr.NumericValueOutOfRange,
		"SELECT '-1e400'::float8":    sqlerr.NumericValueOutOfRange,
	} {
		if code, err := execErr(tx, sql); code != want {
			t.Errorf("%s: %s %v, want %s", sql, code, err, want)
		}
	}
	r := exec(t, tx, "SELECT '1e-310'::float8 > 0, '0e-400'::float8 = 0, ' 12.5 '::numeric")
	wantRows(t, r.rows, row(true, true, "12.5"))
}
