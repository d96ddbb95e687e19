package pgparse

import "testing"

// Calls of currval and lastval, bare or pg_catalog's, anywhere in the
// statement, become the session's functions with its values; nothing
// else changes, and a statement that only mentions the names stays as
// it is.
func TestRewriteSequenceReads(t *testing.T) {
	r := SequenceReads{Currval: "certa.currval", Lastval: "certa.lastval", Known: `{"16390":5}`, Last: "5"}
	for _, c := range []struct{ in, want string }{
		{"SELECT currval('s')", `SELECT certa.currval('s', '{"16390":5}')`},
		{"select CURRVAL($1)", `SELECT certa.currval($1, '{"16390":5}')`},
		{"SELECT pg_catalog.lastval()", "SELECT certa.lastval('5')"},
		{"INSERT INTO c VALUES (currval('public.s'::regclass), 1)", `INSERT INTO c VALUES (certa.currval('public.s'::regclass, '{"16390":5}'), 1)`},
		{"SELECT x FROM t WHERE id = (SELECT lastval())", "SELECT x FROM t WHERE id = (SELECT certa.lastval('5'))"},
		{"SELECT 'currval', lastval_at FROM t", ""},
		{"SELECT myschema.currval('s')", ""},
		{"SELECT currval('a', 'b')", ""},
	} {
		got, ok := RewriteSequenceReads(c.in, r)
		if c.want == "" {
			if ok || got != c.in {
				t.Errorf("%s: rewritten to %q", c.in, got)
			}
			continue
		}
		if !ok || got != c.want {
			t.Errorf("%s: %q (%v), want %q", c.in, got, ok, c.want)
		}
	}
	r.Last = ""
	if got, _ := RewriteSequenceReads("SELECT lastval()", r); got != "SELECT certa.lastval(NULL)" {
		t.Errorf("lastval with no value of the session's: %q", got)
	}
}
