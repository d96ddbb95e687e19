package pgparse

import "testing"

func TestWithoutConcurrently(t *testing.T) {
	for _, c := range []struct {
		sql, want string
		ok        bool
	}{
		{"CREATE INDEX CONCURRENTLY i ON t (a)", "CREATE INDEX              i ON t (a)", true},
		{"create unique index concurrently if not exists i on t using btree (a)", "create unique index              if not exists i on t using btree (a)", true},
		{"DROP INDEX CONCURRENTLY IF EXISTS i", "DROP INDEX              IF EXISTS i", true},
		{"ALTER TABLE p DETACH PARTITION p1 CONCURRENTLY", "ALTER TABLE p DETACH PARTITION p1             ", true},
		{"CREATE INDEX i ON t (a)", "CREATE INDEX i ON t (a)", false},
		{"CREATE INDEX \"concurrently\" ON t (a)", "CREATE INDEX \"concurrently\" ON t (a)", false},
		{"REFRESH MATERIALIZED VIEW CONCURRENTLY m", "REFRESH MATERIALIZED VIEW CONCURRENTLY m", false},
		{"SELECT 'CONCURRENTLY'", "SELECT 'CONCURRENTLY'", false},
		{"CREATE INDEX CONCURRENTLY i ON t (a); SELECT 1", "CREATE INDEX CONCURRENTLY i ON t (a); SELECT 1", false},
	} {
		got, ok := WithoutConcurrently(c.sql)
		if got != c.want || ok != c.ok {
			t.Errorf("WithoutConcurrently(%q) = %q, %v; want %q, %v", c.sql, got, ok, c.want, c.ok)
		}
	}
}
