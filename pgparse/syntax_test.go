package pgparse

import (
	"testing"

	"certa/sqlerr"
)

// PostgreSQL's parser says where a query string goes wrong, over all of
// its statements.
func TestCheckSyntax(t *testing.T) {
	for _, c := range []struct {
		sql, msg string
		pos      int32
	}{
		{"SELECT 1", "", 0},
		{"SELECT 1 + ;", `syntax error at or near ";"`, 12},
		{"SELECT 1 AS one ; SELECT 2 +;", `syntax error at or near ";"`, 29},
		{"SELECT 'é' ; SELEC 2", `syntax error at or near "SELEC"`, 14},
		{"SELECT 1 +", "syntax error at end of input", 11},
	} {
		err := CheckSyntax(c.sql)
		if c.msg == "" {
			if err != nil {
				t.Errorf("CheckSyntax(%q) = %v", c.sql, err)
			}
			continue
		}
		se, ok := err.(*sqlerr.Error)
		if !ok || se.Code != sqlerr.SyntaxError || se.Message != c.msg || se.Position != c.pos {
			t.Errorf("CheckSyntax(%q) = %#v, want 42601 %q at %d", c.sql, err, c.msg, c.pos)
		}
	}
}

// Casts of any expression print without the columns' types (the embedded
// engine's queries have none): a cast of a subquery in an upsert's SET
// panicked the printer, which asked for them.
func TestCastsOfAnyExpression(t *testing.T) {
	for _, sql := range []string{
		"INSERT INTO t (a, b) VALUES (1, 2) ON CONFLICT (a) DO UPDATE SET b = (SELECT max(b) FROM t)::int + 1",
		"SELECT (SELECT b FROM t LIMIT 1)::text, a::text || ' ' || (a > 1), (a = 1)::text FROM t",
		"UPDATE t SET b = (SELECT count(*) FROM u WHERE u.a = t.a)::int",
	} {
		if _, err := ToSQLite(sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func TestCopyFreeze(t *testing.T) {
	for sql, want := range map[string]bool{
		"COPY t FROM STDIN":                            false,
		"COPY t FROM STDIN WITH (FREEZE)":              true,
		"copy t from stdin with (freeze on)":           true,
		"COPY t FROM STDIN (FORMAT csv, FREEZE false)": false,
		"COPY t FROM STDIN FREEZE":                     true,
	} {
		c, ok := ParseCopy(sql)
		if !ok || c.Freeze() != want {
			t.Errorf("%s: Freeze %v (parsed %v), want %v", sql, c.Freeze(), ok, want)
		}
	}
}
