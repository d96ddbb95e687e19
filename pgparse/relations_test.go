package pgparse

import (
	"slices"
	"testing"
)

func TestRelations(t *testing.T) {
	for _, c := range []struct {
		sql  string
		want []string
	}{
		{"CREATE TABLE vistest (LIKE testeoc)", []string{`"vistest"`, `"testeoc"`}},
		{`CREATE TABLE s.a (id int REFERENCES "B"(id)) INHERITS (c)`, []string{`"s"."a"`, `"B"`, `"c"`}},
		{"CREATE VIEW v AS SELECT * FROM t JOIN u USING (id) WHERE id IN (SELECT id FROM w)", []string{`"v"`, `"t"`, `"u"`, `"w"`}},
		{"SELEC 1", nil},
	} {
		if got := Relations(c.sql); !slices.Equal(got, c.want) {
			t.Errorf("Relations(%q) = %q, want %q", c.sql, got, c.want)
		}
	}
}
