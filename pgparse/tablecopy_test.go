package pgparse

import (
	"strings"
	"testing"
)

func TestParseTableCopy(t *testing.T) {
	cases := []struct {
		sql            string
		schema, name   string
		create, insert string
	}{
		{sql: "CREATE TABLE t AS SELECT a FROM x", name: "t",
			create: "CREATE TABLE t AS SELECT a FROM x\nWITH NO DATA",
			insert: "INSERT INTO T  SELECT a FROM x"},
		{sql: "create table if not exists s.\"Tê\" (b) as (select 1) with data;", schema: "s", name: "Tê",
			create: "create table if not exists s.\"Tê\" (b) as (select 1)           \nWITH NO DATA",
			insert: "INSERT INTO T  (select 1)           "},
		{sql: "CREATE UNLOGGED TABLE t WITH (fillfactor = 50) AS WITH w AS (SELECT 1) SELECT * FROM w -- done", name: "t",
			create: "CREATE UNLOGGED TABLE t WITH (fillfactor = 50) AS WITH w AS (SELECT 1) SELECT * FROM w -- done\nWITH NO DATA",
			insert: "INSERT INTO T  WITH w AS (SELECT 1) SELECT * FROM w -- done"},
		{sql: "SELECT a, b INTO TABLE tmp FROM onek WHERE (SELECT 1) = 1", name: "tmp",
			create: `CREATE TABLE "tmp" AS SELECT a, b                FROM onek WHERE (SELECT 1) = 1` + "\nWITH NO DATA",
			insert: "INSERT INTO T SELECT a, b                FROM onek WHERE (SELECT 1) = 1"},
		{sql: "WITH w AS (SELECT 1 AS a) SELECT * INTO UNLOGGED s.t\nFROM w UNION SELECT 2", schema: "s", name: "t",
			create: `CREATE UNLOGGED TABLE "s"."t" AS WITH w AS (SELECT 1 AS a) SELECT *                  ` + "\nFROM w UNION SELECT 2\nWITH NO DATA",
			insert: "INSERT INTO T WITH w AS (SELECT 1 AS a) SELECT *                  \nFROM w UNION SELECT 2"},
	}
	for _, c := range cases {
		tc, ok := ParseTableCopy(c.sql)
		if !ok {
			t.Errorf("%q: not a table copy", c.sql)
			continue
		}
		if tc.Schema != c.schema || tc.Name != c.name {
			t.Errorf("%q: table %q.%q, want %q.%q", c.sql, tc.Schema, tc.Name, c.schema, c.name)
		}
		if tc.Create.SQL != c.create {
			t.Errorf("%q: create\n%q\nwant\n%q", c.sql, tc.Create.SQL, c.create)
		}
		if got := tc.Insert("T").SQL; got != c.insert {
			t.Errorf("%q: insert\n%q\nwant\n%q", c.sql, got, c.insert)
		}
	}
	for _, sql := range []string{
		"CREATE TABLE t AS SELECT 1 WITH NO DATA",
		"CREATE TEMP TABLE t AS SELECT 1",
		"CREATE TABLE t AS EXECUTE p",
		"CREATE MATERIALIZED VIEW v AS SELECT 1",
		"SELECT 1 INTO TEMP t",
		"SELECT 1",
		"INSERT INTO t SELECT 1",
		"CREATE TABLE t (a int)",
		"SELECT 1 AS a; SELECT 2 INTO t",
	} {
		if _, ok := ParseTableCopy(sql); ok {
			t.Errorf("%q taken for a table copy", sql)
		}
	}
}

// Positions in the rewritten statements map back to the same characters
// of the client's text.
func TestTableCopyPositions(t *testing.T) {
	for _, sql := range []string{
		"SELECT 'é', nope INTO tê FROM onek",
		"CREATE TABLE tê AS SELECT 'é', nope FROM onek WITH DATA",
	} {
		tc, ok := ParseTableCopy(sql)
		if !ok {
			t.Fatalf("%q: not a table copy", sql)
		}
		client := []rune(sql)
		want := strings.Index(sql, "nope")
		wantPos := len([]rune(sql[:want])) + 1
		for _, r := range []Rewritten{tc.Create, tc.Insert(`"public"."tê"`)} {
			text := []rune(r.SQL)
			p := len([]rune(r.SQL[:strings.Index(r.SQL, "nope")])) + 1
			if got := r.ClientPosition(p); got != wantPos || string(client[got-1:got+3]) != string(text[p-1:p+3]) {
				t.Errorf("%q: position %d of %q maps to %d, want %d", sql, p, r.SQL, got, wantPos)
			}
			if got := r.ClientPosition(1); got != 0 && r.prefix > 0 {
				t.Errorf("%q: position 1 of %q (certa's) maps to %d, want 0", sql, r.SQL, got)
			}
		}
	}
}

func TestOfPrepared(t *testing.T) {
	for sql, want := range map[string]bool{
		"CREATE TABLE t AS EXECUTE q":                      true,
		"create table t as execute q(1, 'x') with no data": true,
		"CREATE TABLE t AS SELECT 'execute'":               false,
		"EXECUTE q":                                        false,
		"CREATE TABLE execute (a int)":                     false,
	} {
		if got := OfPrepared(sql); got != want {
			t.Errorf("%s: %v, want %v", sql, got, want)
		}
	}
}
