package pgparse

import (
	"strings"
	"testing"
)

var testRows = HiddenRows{
	"pg_catalog.pg_trigger":       "tgname <> 'x'",
	"pg_catalog.pg_namespace":     "nspname <> 'certa'",
	"pg_catalog.pg_class":         "relnamespace <> 99",
	"information_schema.routines": "routine_schema <> 'certa'",
}

// A relation of the rows read as a FROM item, anywhere in a statement
// that reads, becomes a subquery that leaves them out, under the
// client's alias or the relation's name; the rest of the text stays as
// the client wrote it.
func TestHideRows(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT tgname FROM pg_trigger WHERE tgrelid = 5",
			"SELECT tgname FROM (SELECT * FROM pg_trigger WHERE tgname <> 'x') pg_trigger WHERE tgrelid = 5"},
		{"select n.nspname, c.relname from pg_catalog.pg_class c join PG_CATALOG.pg_namespace as n on n.oid = c.relnamespace",
			"select n.nspname, c.relname from (SELECT * FROM pg_catalog.pg_class WHERE relnamespace <> 99) c join (SELECT * FROM PG_CATALOG.pg_namespace WHERE nspname <> 'certa') as n on n.oid = c.relnamespace"},
		// A column named through pg_catalog loses it: the subquery has no schema.
		{"SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class",
			"SELECT pg_class.relname FROM (SELECT * FROM pg_catalog.pg_class WHERE relnamespace <> 99) pg_class"},
		// System columns the statement names come out of the subquery.
		{"SELECT n.tableoid, n.oid FROM pg_namespace n",
			"SELECT n.tableoid, n.oid FROM (SELECT *, tableoid FROM pg_namespace WHERE nspname <> 'certa') n"},
		{"SELECT tableoid, oid FROM pg_namespace",
			"SELECT tableoid, oid FROM (SELECT *, tableoid FROM pg_namespace WHERE nspname <> 'certa') pg_namespace"},
		{"SELECT p.tableoid, (SELECT 1 FROM pg_class WHERE oid = p.x) FROM pol p, pg_namespace WHERE xmin = 1",
			"SELECT p.tableoid, (SELECT 1 FROM (SELECT * FROM pg_class WHERE relnamespace <> 99) pg_class WHERE oid = p.x) FROM pol p, (SELECT * FROM pg_namespace WHERE nspname <> 'certa') pg_namespace WHERE xmin = 1"},
		{"WITH t AS (SELECT count(*) FROM pg_trigger) SELECT (SELECT 1 FROM information_schema.routines r LIMIT 1), * FROM t",
			"WITH t AS (SELECT count(*) FROM (SELECT * FROM pg_trigger WHERE tgname <> 'x') pg_trigger) SELECT (SELECT 1 FROM (SELECT * FROM information_schema.routines WHERE routine_schema <> 'certa') r LIMIT 1), * FROM t"},
		{"INSERT INTO t SELECT relname FROM pg_class; DELETE FROM t USING pg_namespace WHERE t.a = nspname",
			"INSERT INTO t SELECT relname FROM (SELECT * FROM pg_class WHERE relnamespace <> 99) pg_class; DELETE FROM t USING (SELECT * FROM pg_namespace WHERE nspname <> 'certa') pg_namespace WHERE t.a = nspname"},
		{"COPY (SELECT * FROM pg_trigger) TO STDOUT", "COPY (SELECT * FROM (SELECT * FROM pg_trigger WHERE tgname <> 'x') pg_trigger) TO STDOUT"},
		{"DECLARE c CURSOR FOR SELECT * FROM pg_class", "DECLARE c CURSOR FOR SELECT * FROM (SELECT * FROM pg_class WHERE relnamespace <> 99) pg_class"},
		// Left alone: another schema's, statements that store or show
		// their text, names that are not FROM items, routines bare.
		{"SELECT * FROM public.pg_class", ""},
		{"CREATE VIEW v AS SELECT * FROM pg_class", ""},
		{"EXPLAIN SELECT * FROM pg_class", ""},
		{"PREPARE p AS SELECT * FROM pg_class", ""},
		{"SELECT * INTO t2 FROM pg_class", ""},
		{"COPY pg_class TO STDOUT", ""},
		{"SELECT 'pg_class', pg_trigger FROM t", ""},
		{"SELECT * FROM routines", ""},
		{"SELECT * FROM my.routines r JOIN pg_trigger t ON true",
			"SELECT * FROM my.routines r JOIN (SELECT * FROM pg_trigger WHERE tgname <> 'x') t ON true"},
		{"SELECT * FROM pg_class TABLESAMPLE system (1)", ""},
		{"SELECT * FROM pg_class WHERE", ""},
	} {
		got, ok := HideRows(c.in, testRows)
		if c.want == "" {
			if ok || got.SQL != c.in {
				t.Errorf("%s: rewritten to %s", c.in, got.SQL)
			}
			continue
		}
		if !ok || got.SQL != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got.SQL, c.want)
		}
	}
}

// A position PostgreSQL reports in the rewritten text is the client's:
// after a subquery, shifted back by what it added, counted in
// characters; inside one, where the client named the relation.
func TestHideRowsClientPosition(t *testing.T) {
	client := "SELECT 'é', nope FROM pg_class c, pg_trigger WHERE oops"
	h, ok := HideRows(client, testRows)
	if !ok {
		t.Fatal("not rewritten")
	}
	for _, word := range []string{"nope", "oops"} {
		at := charIndex(h.SQL, word)
		if got, want := h.ClientPosition(at), charIndex(client, word); got != want {
			t.Errorf("%s: position %d maps to %d, want %d", word, at, got, want)
		}
	}
	if got, want := h.ClientPosition(charIndex(h.SQL, "tgname <>")), charIndex(client, "pg_trigger"); got != want {
		t.Errorf("inside a subquery: %d, want %d (the relation's name)", got, want)
	}
	if h.ClientPosition(0) != 0 {
		t.Error("no position became one")
	}
}

// charIndex is where word starts in s, as a character index from 1.
func charIndex(s, word string) int {
	return len([]rune(s[:strings.Index(s, word)])) + 1
}

// A statement is parsed only if it may name a relation of the rows: a
// table of the application's named like one of information_schema's
// views is not.
func TestNamesAny(t *testing.T) {
	for sql, want := range map[string]bool{
		"select * from views where id = 1":                  false,
		"select * from information_schema.views":            true,
		"select * from pg_trigger":                          true,
		"select tables from routines":                       false,
		"select * from \"information_schema\".\"routines\"": true,
	} {
		if got := namesAny(sql, HiddenRows{"information_schema.views": "", "information_schema.routines": "", "pg_catalog.pg_trigger": ""}); got != want {
			t.Errorf("%s: %v, want %v", sql, got, want)
		}
	}
}
