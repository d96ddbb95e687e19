package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// castOutcome runs SELECT CAST(expr AS type) and returns its value as
// text, or its SQLSTATE.
func castOutcome(ctx context.Context, c *pgclient.Conn, expr, typ string) string {
	rows, err := c.QueryText(ctx, fmt.Sprintf("SELECT CAST(%s AS %s)", expr, typ))
	if err != nil {
		return "ERROR " + pgclient.SQLState(err)
	}
	return fmt.Sprint(rows[0][0])
}

// Issue 16: CAST to PostgreSQL's type names gives PostgreSQL's results or
// is refused. Each cast runs on a real PostgreSQL 15 and on a node: the
// value (as text) or SQLSTATE must be PostgreSQL's, unless the node
// refuses the cast with 0A000.
func TestDifferentialCasts(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	mustExec(t, ref, "SET TimeZone = 'UTC'")
	node := c.Conn(0)
	casts := map[string][]string{
		"integer":                  {"'42'", "' 42 '", "'-7'", "'+7'", "'12abc'", "''", "'4.5'", "2.5", "-2.5", "3.5", "0.5", "1e10", "NULL", "'2147483648'", "7", "2.5::float8", "3.5::float8", "(-2.5)::float8", "0.5::real"},
		"smallint":                 {"70000", "'-32768'", "'32768'", "1.5"},
		"bigint":                   {"'9223372036854775807'", "'9223372036854775808'", "' 1 '", "'1 2'", "'4.5'::float8"},
		"int4":                     {"'3'"},
		"numeric(10,2)":            {"'3.14159'", "3.145", "-3.145", "'12.50'", "3", "'abc'", "123456789", "99999999.995", "NULL"},
		"numeric(5)":               {"12345.5", "'-2.5'"},
		"numeric":                  {"'abc'", "' 12 '", "'1e3'", "2.5"},
		"decimal(4,1)":             {"'1.25'"},
		"double precision":         {"'abc'", "'1.5'", "' -2 '", "'Infinity'", "3"},
		"float8":                   {"'1e308'"},
		"text":                     {"42", "'abc'", "2.5", "1e20", "0.1", "-0.25", "true", "false", "1 < 2", "NULL::boolean"},
		"varchar(2)":               {"'abc'", "'ab'", "12345"},
		"character varying(3)":     {"'abcdef'"},
		"boolean":                  {"'yes'", "'no'", "'t'", "'f'", "'on'", "'off'", "'of'", "'1'", "'0'", "'maybe'", "' TRUE '", "'o'", "1", "0", "2", "2.5", "NULL"},
		"bool":                     {"'y'"},
		"date":                     {"'2024-01-31'", "'2024-02-30'", "'2024-01-31 10:00:00'", "'abc'"},
		"timestamp":                {"'2024-01-31 10:00:00'", "'2024-01-31T10:00:00.123456'", "'2024-01-31 25:00:00'"},
		"timestamptz":              {"'2024-01-01 10:00:00+02'", "'2024-01-01 10:00:00'", "'2024-01-01T10:00:00Z'", "'2024-01-01 10:00:00-05:30'"},
		"timestamp with time zone": {"'2024-06-01 12:00:00+00'"},
		"time":                     {"'10:11:12'", "'25:00:00'"},
		"uuid":                     {"'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'", "'{a0eebc99-9c0b4ef8-bb6d6bb9bd380a11}'", "'a0eebc999c0b4ef8bb6d6bb9bd380a11'", "'xyz'", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1'"},
		"json":                     {`'{"a": [1, 2]}'`, "'{bad'", "'3'"},
		"interval":                 {"'1 day'"},
		"int[]":                    {"'{1,2}'"},
		"real":                     {"'1.5'"},
		"character(3)":             {"'ab'"},
	}
	refused := 0
	for typ, exprs := range casts {
		for _, expr := range exprs {
			want := castOutcome(ctx, ref, expr, typ)
			got := castOutcome(ctx, node, expr, typ)
			switch {
			case got == "ERROR 0A000":
				refused++
				t.Logf("CAST(%s AS %s): refused (PostgreSQL: %s)", expr, typ, want)
			case got != want:
				t.Errorf("CAST(%s AS %s): certa %s, PostgreSQL %s", expr, typ, got, want)
			}
		}
	}
	// Nested, and inside a statement that writes.
	mustExec(t, node, "CREATE TABLE ct (id int PRIMARY KEY, n numeric(8,2), b boolean, ts timestamptz)")
	mustExec(t, node, "INSERT INTO ct VALUES (CAST(CAST('7' AS int) AS int), CAST('2.345' AS numeric(8,2)), CAST('yes' AS boolean), CAST('2024-01-01 10:00:00+02' AS timestamptz))")
	// (A boolean column's value made text in an expression is SQLite's 1
	// on the embedded engine, which does not know the column's type
	// there: known, not asserted here.)
	if got := values(t, node, "SELECT id, n || ' ' || (b IS TRUE) || ' ' || ts FROM ct"); got != "7=2.35 true 2024-01-01 08:00:00+00" {
		t.Errorf("stored casts: %s", got)
	}
	mustFail(t, node, "22P02", "INSERT INTO ct (id) VALUES (CAST('x8' AS int))")
	if got := values(t, node, "SELECT count(*), 0 FROM ct"); got != "1=0" {
		t.Errorf("a failed cast left rows: %s", got)
	}
	if refused > 8 {
		t.Errorf("%d casts refused", refused)
	}
}
