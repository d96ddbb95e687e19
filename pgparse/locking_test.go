package pgparse

import (
	"reflect"
	"testing"
)

// Nested SELECTs that lock for update come out as statements of their own,
// the outermost only; a top-level clause, shared locks and statements that
// do not run their query (EXPLAIN) give none.
func TestNestedLockingSelects(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{`UPDATE doctors SET on_call = false WHERE id = 2 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2`,
			[]string{`SELECT id FROM doctors WHERE on_call FOR UPDATE`}},
		{`WITH x AS (SELECT id FROM doctors WHERE id = 1 FOR UPDATE) SELECT * FROM x`,
			[]string{`SELECT id FROM doctors WHERE id = 1 FOR UPDATE`}},
		{`SELECT * FROM doctors WHERE id IN (SELECT id FROM doctors FOR NO KEY UPDATE)`,
			[]string{`SELECT id FROM doctors FOR NO KEY UPDATE`}},
		{`INSERT INTO log SELECT id FROM doctors d WHERE d.id = $1 FOR UPDATE OF d`,
			[]string{`SELECT id FROM doctors d WHERE d.id = $1 FOR UPDATE OF d`}},
		{`DELETE FROM t WHERE id IN (SELECT id FROM t WHERE v IN (SELECT v FROM u FOR UPDATE) FOR UPDATE) OR id = (SELECT max(id) FROM u FOR UPDATE)`,
			[]string{`SELECT id FROM t WHERE v IN (SELECT v FROM u FOR UPDATE) FOR UPDATE`, `SELECT max(id) FROM u FOR UPDATE`}},
		{`SELECT * FROM t WHERE id IN (SELECT id FROM u FOR UPDATE) FOR UPDATE`,
			[]string{`SELECT id FROM u FOR UPDATE`}},
		{`SELECT * FROM t FOR UPDATE`, nil},
		{`SELECT * FROM t WHERE id IN (SELECT id FROM u FOR SHARE)`, nil},
		{`SELECT * FROM t WHERE id IN (SELECT id FROM u FOR KEY SHARE)`, nil},
		{`EXPLAIN SELECT * FROM t WHERE id IN (SELECT id FROM u FOR UPDATE)`, nil},
		{`SELECT 'for update'`, nil},
		{`not sql for update`, nil},
	} {
		got, ok := NestedLockingSelects(c.sql)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q, %v\nwant %q", c.sql, got, ok, c.want)
		}
	}
}

// A nested locking SELECT that reads a WITH query of the statement around
// it cannot run on its own.
func TestNestedLockingSelectsOuterCTE(t *testing.T) {
	if got, ok := NestedLockingSelects(`WITH a AS (SELECT 1 AS id) SELECT * FROM t WHERE id IN (SELECT d.id FROM doctors d JOIN a ON a.id = d.id FOR UPDATE OF d)`); ok {
		t.Errorf("got %q, want refused", got)
	}
	// Its own WITH queries are its own.
	got, ok := NestedLockingSelects(`SELECT * FROM t WHERE id IN (WITH a AS (SELECT 1 AS id) SELECT d.id FROM doctors d JOIN a ON a.id = d.id FOR UPDATE OF d)`)
	if !ok || len(got) != 1 {
		t.Errorf("got %q, %v", got, ok)
	}
}
