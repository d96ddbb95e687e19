package pgparse

import "testing"

// Calls of currval and lastval, bare or pg_catalog's, anywhere in the
// statement, become the session's functions with its values; nothing
// else changes, and a statement that only mentions the names stays as
// it is.
func TestRewriteSequenceReads(t *testing.T) {
	r := SequenceReads{Currval: "certa.currval", Lastval: "certa.lastval", Known: `{"16390":5}`, Last: "5", LastSeq: "16390"}
	for _, c := range []struct{ in, want string }{
		{"SELECT currval('s')", `SELECT certa.currval('s', '{"16390":5}')`},
		{"select CURRVAL($1)", `SELECT certa.currval($1, '{"16390":5}')`},
		{"SELECT pg_catalog.lastval()", "SELECT certa.lastval('5', '16390')"},
		{"INSERT INTO c VALUES (currval('public.s'::regclass), 1)", `INSERT INTO c VALUES (certa.currval('public.s'::regclass, '{"16390":5}'), 1)`},
		{"SELECT x FROM t WHERE id = (SELECT lastval())", "SELECT x FROM t WHERE id = (SELECT certa.lastval('5', '16390'))"},
		{"SELECT 'currval', lastval_at FROM t", ""},
		{"SELECT myschema.currval('s')", ""},
		{"SELECT currval('a', 'b')", ""},
	} {
		checkRewrite(t, c.in, c.want, func(sql string) (string, bool) { return RewriteSequenceReads(sql, r) })
	}
	r.Last, r.LastSeq = "", ""
	if got, _ := RewriteSequenceReads("SELECT lastval()", r); got != "SELECT certa.lastval(NULL, NULL)" {
		t.Errorf("lastval with no value of the session's: %q", got)
	}
}

// current_setting of a parameter named, bare or pg_catalog's, in any
// case, becomes the function given its value; other calls and names stay.
func TestRewriteSettingReads(t *testing.T) {
	shown := map[string]string{"transaction_isolation": "read committed", "transaction_read_only": "off"}
	for _, c := range []struct{ in, want string }{
		{"SELECT current_setting('transaction_isolation')", "SELECT certa.current_setting('read committed')"},
		{"select pg_catalog.current_setting('Transaction_Isolation', true) = 'read committed'",
			"SELECT certa.current_setting('read committed') = 'read committed'"},
		{"SELECT current_setting('transaction_read_only') AS ro, current_setting('work_mem')",
			"SELECT certa.current_setting('off') AS ro, current_setting('work_mem')"},
		{"SELECT current_setting('default_transaction_isolation')", ""},
		{"SELECT 'transaction_isolation'", ""},
		{"SELECT current_setting($1)", ""},
	} {
		checkRewrite(t, c.in, c.want, func(sql string) (string, bool) {
			return RewriteSettingReads(sql, "certa.current_setting", shown)
		})
	}
}

// checkRewrite checks that rewrite gives want for in, or leaves in alone
// if want is "".
func checkRewrite(t *testing.T, in, want string, rewrite func(string) (string, bool)) {
	t.Helper()
	got, ok := rewrite(in)
	if want == "" {
		if ok || got != in {
			t.Errorf("%s: rewritten to %q", in, got)
		}
		return
	}
	if !ok || got != want {
		t.Errorf("%s: %q (%v), want %q", in, got, ok, want)
	}
}
