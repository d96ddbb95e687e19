package pgparse

import "testing"

func TestFoldIdentifiers(t *testing.T) {
	for sql, want := range map[string]string{
		`CREATE TABLE MixT (Id int PRIMARY KEY, ColA INT)`:                         `CREATE TABLE mixt (id int PRIMARY key, cola int)`,
		`CREATE TABLE "Quoted" ("Big" int, Name text, "Type" text)`:                `CREATE TABLE "Quoted" ("Big" int, name text, "Type" text)`,
		`CREATE TABLE t (v text DEFAULT 'Abc' CHECK (v <> 'X'), /* Keep */ w int)`: `CREATE TABLE t (v text DEFAULT 'Abc' CHECK (v <> 'X'), /* Keep */ w int)`,
		`ALTER TABLE T ADD COLUMN Ünï int`:                                         `alter TABLE t add COLUMN Ünï int`,
		`CREATE VIEW V AS SELECT $$Dollar$$ AS D, E'Esc' FROM T`:                   `CREATE view v AS SELECT $$Dollar$$ AS d, E'Esc' FROM t`,
		`CREATE INDEX Ix ON T (U&"A")`:                                             `CREATE index ix ON t (U&"A")`,
		`not sql at all 'Unterminated`:                                             `not sql at all 'Unterminated`,
	} {
		if got := FoldIdentifiers(sql); got != want {
			t.Errorf("%s:\n got %s\nwant %s", sql, got, want)
		}
	}
}
