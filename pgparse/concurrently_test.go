package pgparse

import "testing"

func TestParseConcurrently(t *testing.T) {
	for _, c := range []struct {
		sql string
		ok  bool
		cc  Concurrently
	}{
		{"CREATE INDEX CONCURRENTLY i ON t (a)", true,
			Concurrently{SQL: "CREATE INDEX              i ON t (a)", Kind: "index on", Relation: `"t"`, RelName: "t"}},
		{"create unique index concurrently if not exists i on s.t using btree (a)", true,
			Concurrently{SQL: "create unique index              if not exists i on s.t using btree (a)", Kind: "index on", Relation: `"s"."t"`, RelName: "t"}},
		{`DROP INDEX CONCURRENTLY IF EXISTS "I"`, true,
			Concurrently{SQL: `DROP INDEX              IF EXISTS "I"`, Kind: "drop index", Relation: `"I"`, RelName: "I"}},
		{"DROP INDEX CONCURRENTLY a, b", true,
			Concurrently{SQL: "DROP INDEX              a, b", Kind: "drop index", Refusal: "DROP INDEX CONCURRENTLY does not support dropping multiple objects"}},
		{"DROP INDEX CONCURRENTLY s.a CASCADE", true,
			Concurrently{SQL: "DROP INDEX              s.a CASCADE", Kind: "drop index", Refusal: "DROP INDEX CONCURRENTLY does not support CASCADE"}},
		{"ALTER TABLE p DETACH PARTITION p1 CONCURRENTLY", true,
			Concurrently{SQL: "ALTER TABLE p DETACH PARTITION p1             ", Kind: "detach from", Relation: `"p"`, RelName: "p"}},
		{"CREATE INDEX i ON t (a)", false, Concurrently{}},
		{"CREATE INDEX \"concurrently\" ON t (a)", false, Concurrently{}},
		{"REFRESH MATERIALIZED VIEW CONCURRENTLY m", false, Concurrently{}},
		{"SELECT 'CONCURRENTLY'", false, Concurrently{}},
		{"CREATE INDEX CONCURRENTLY i ON t (a); SELECT 1", false, Concurrently{}},
	} {
		cc, ok := ParseConcurrently(c.sql)
		if cc != c.cc || ok != c.ok {
			t.Errorf("ParseConcurrently(%q) = %+v, %v; want %+v, %v", c.sql, cc, ok, c.cc, c.ok)
		}
	}
}
