package pgparse

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"certa/sqlerr"
)

var update = flag.Bool("update", false, "rewrite testdata/sqlite.golden from the printer's output")

// TestToSQLiteGolden prints every statement of testdata/sqlite.golden and
// compares with what the file says it prints: the SQLite text, or the
// error's SQLSTATE and message. Each case is a "-- pg" line, the
// PostgreSQL text, a "-- sqlite" line and the expected output. Run with
// -update to rewrite the file, then read the diff.
func TestToSQLiteGolden(t *testing.T) {
	const path = "testdata/sqlite.golden"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cases := strings.Split(string(data), "-- pg\n")
	out.WriteString(cases[0])
	for _, c := range cases[1:] {
		pg, want, ok := strings.Cut(c, "-- sqlite\n")
		if !ok {
			t.Fatalf("case without -- sqlite: %q", c)
		}
		got := goldenOutput(strings.TrimSpace(pg))
		if strings.TrimSpace(want) != got {
			t.Errorf("%s\n  printed: %s\n  want:    %s", strings.TrimSpace(pg), got, strings.TrimSpace(want))
		}
		out.WriteString("-- pg\n" + strings.TrimSpace(pg) + "\n-- sqlite\n" + got + "\n\n")
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// goldenOutput is the printer's output for sql as the golden file writes it.
func goldenOutput(sql string) string {
	s, err := ToSQLite(sql)
	switch {
	case errors.Is(err, ErrNotPrinted):
		return "(not printed)"
	case err != nil:
		e := sqlerr.As(err)
		return "ERROR " + e.Code + ": " + e.Message
	}
	out := s.SQL
	if len(s.Columns) > 0 {
		var cols []string
		for _, c := range s.Columns {
			col := c.Name
			if c.Cast != "" {
				col += " " + c.Cast
			}
			cols = append(cols, col)
		}
		out += "\n   columns: " + strings.Join(cols, ", ")
	}
	if len(s.Params) > 0 {
		var params []string
		for i, prm := range s.Params {
			desc := "?"
			switch {
			case prm.Kind != "":
				desc = prm.Kind
			case prm.Column != "" && prm.Table != "":
				desc = prm.Table + "." + prm.Column
			case prm.Column != "":
				desc = prm.Column + " of " + strings.Join(s.Tables, "/")
			case prm.Position >= 0:
				desc = fmt.Sprintf("%s column %d", prm.Table, prm.Position+1)
			}
			params = append(params, fmt.Sprintf("$%d %s", i+1, desc))
		}
		out += "\n   params: " + strings.Join(params, ", ")
	}
	if s.Rest != "" {
		out += "\n   rest: " + s.Rest
	}
	return out
}

// A statement printed from its shape's template is the statement printed
// from its own parse tree: for every statement of the corpus, a variant
// with other constants, printed after the original filled the cache.
func TestSQLiteCacheTemplates(t *testing.T) {
	data, err := os.ReadFile("testdata/sqlite.golden")
	if err != nil {
		t.Fatal(err)
	}
	templated := 0
	for _, c := range strings.Split(string(data), "-- pg\n")[1:] {
		sql, _, _ := strings.Cut(c, "-- sqlite\n")
		sql = strings.TrimSpace(sql)
		for _, v := range []string{sql, sql + " -- again", "  " + sql} {
			variant := otherConstants(v)
			cache := &SQLiteCache{}
			cache.ToSQLite(sql)
			if len(cache.templates) > 0 {
				templated++
			}
			got, gotErr := cache.ToSQLite(variant)
			want, wantErr := ToSQLite(variant)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
				t.Errorf("%s\nvariant %s\n  from the cache: %+v %v\n  printed:        %+v %v", sql, variant, got, gotErr, want, wantErr)
			}
		}
	}
	if templated < 20 {
		t.Fatalf("only %d statements got a template", templated)
	}
}

// otherConstants returns sql with each constant replaced by another of
// its kind.
func otherConstants(sql string) string {
	_, consts, ok := shapeOf(sql)
	if !ok {
		return sql
	}
	var b strings.Builder
	last := 0
	for i, c := range consts {
		b.WriteString(sql[last:c.start])
		switch {
		case c.text[0] == '\'':
			fmt.Fprintf(&b, "'v%d''q'", i)
		case strings.ContainsAny(c.text, ".eE"):
			fmt.Fprintf(&b, "%d.25", i+3)
		case len(c.text) > 9:
			fmt.Fprintf(&b, "%d", 4000000000+i)
		default:
			fmt.Fprintf(&b, "%d", i+17)
		}
		last = c.start + len(c.text)
	}
	b.WriteString(sql[last:])
	return b.String()
}

// What PostgreSQL has no function or operator for, for want of an
// implicit cast to text, is refused with its 42883, where SQLite would
// take the value's text.
func TestNoImplicitText(t *testing.T) {
	for sql, msg := range map[string]string{
		"SELECT length(42)":         "function length(integer) does not exist",
		"SELECT upper(true)":        "function upper(boolean) does not exist",
		"SELECT lower(1.5::float8)": "function lower(double precision) does not exist",
		"SELECT 3 || 4.0":           "operator does not exist: integer || numeric",
		"SELECT 1.5 || false":       "operator does not exist: numeric || boolean",
	} {
		_, err := ToSQLite(sql)
		if sqlerr.Code(err) != sqlerr.UndefinedFunction || err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want 42883 %q", sql, err, msg)
		}
	}
	for _, sql := range []string{"SELECT length('abc')", "SELECT 3 || 'a'", "SELECT 'a' || 4", "SELECT length(42::text)"} {
		if _, err := ToSQLite(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

// A column named twice in one INSERT's list or one UPDATE's SET fails as
// in PostgreSQL; SQLite would keep the last value.
func TestColumnAssignedTwice(t *testing.T) {
	for sql, want := range map[string]string{
		"INSERT INTO t (a, b, a) VALUES (1, 2, 3)":                                sqlerr.DuplicateColumn + ` column "a" specified more than once`,
		"UPDATE t SET a = 1, a = 2":                                               sqlerr.SyntaxError + ` multiple assignments to same column "a"`,
		"UPDATE t SET (c, b) = ('car', a + b), b = a + 1 WHERE a = 10":            sqlerr.SyntaxError + ` multiple assignments to same column "b"`,
		"INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = 1, b = 2": sqlerr.SyntaxError + ` multiple assignments to same column "b"`,
	} {
		_, err := ToSQLite(sql)
		if got := sqlerr.Code(err) + " " + fmt.Sprint(err); err == nil || !strings.HasPrefix(got, strings.SplitN(want, " ", 2)[0]) || !strings.Contains(got, strings.SplitN(want, " ", 2)[1]) {
			t.Errorf("%s: %v, want %s", sql, err, want)
		}
	}
	for _, sql := range []string{"INSERT INTO t (a, b) VALUES (1, 2)", "UPDATE t SET (a, b) = (1, 2), c = 3"} {
		if _, err := ToSQLite(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}
