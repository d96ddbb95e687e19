package pgparse

import (
	"fmt"
	"testing"
)

// The statements whose sequences' bounds may change: ALTER SEQUENCE, and
// ALTER TABLE that retypes a column or sets identity options; not other
// ALTER TABLEs, nor text that does not parse.
func TestSequencesRebounded(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"ALTER SEQUENCE s.q AS smallint", []string{`"s"."q"`}},
		{"ALTER TABLE t ALTER COLUMN id TYPE smallint", []string{`"t"`}},
		{`ALTER TABLE "T" ALTER COLUMN id SET MAXVALUE 10`, []string{`"T"`}},
		{"ALTER TABLE t ADD COLUMN x int", nil},
		{"alter table rename;", nil},
		{"CREATE SEQUENCE s", nil},
	} {
		if got := SequencesRebounded(c.sql); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}
