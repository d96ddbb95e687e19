package pgparse

import "testing"

// WhereOffset finds the statement's WHERE, not one in a comment, a
// string, a dollar-quoted string or a quoted name.
func TestWhereOffset(t *testing.T) {
	for _, c := range []struct {
		sql  string
		rest string // what follows the WHERE; "-" for none
	}{
		{"UPDATE t SET v = 2 WHERE id = 1", " id = 1"},
		{"UPDATE t SET v = 2 /* where id = 2 */ WHERE id = 1", " id = 1"},
		{"UPDATE t SET v = 'where' -- where\n WHERE id = 1", " id = 1"},
		{`UPDATE t SET v = $$where$$, "where" = 1 WHERE id = 1`, " id = 1"},
		{"DELETE FROM t", "-"},
	} {
		at, ok := WhereOffset(c.sql)
		if got := "-"; ok {
			got = c.sql[at:]
			if got != c.rest {
				t.Errorf("%q: %q, want %q", c.sql, got, c.rest)
			}
		} else if c.rest != "-" {
			t.Errorf("%q: no WHERE found", c.sql)
		}
	}
}
