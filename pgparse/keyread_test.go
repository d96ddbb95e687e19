package pgparse

import (
	"reflect"
	"testing"
)

func TestParseKeyRead(t *testing.T) {
	i := func(v int64) Operand { return Operand{IsInt: true, Int: v} }
	p := func(n int) Operand { return Operand{Param: n} }
	s := func(v string) Operand { return Operand{Text: v} }
	for _, c := range []struct {
		sql  string
		want *KeyRead
	}{
		{"SELECT * FROM t WHERE id = 1", &KeyRead{Table: "t", Conds: []KeyCond{{"id", "=", []Operand{i(1)}}}}},
		{"SELECT v FROM public.t x WHERE x.id = $1 AND v > 'a' FOR UPDATE", &KeyRead{Schema: "public", Table: "t",
			Conds: []KeyCond{{"id", "=", []Operand{p(1)}}, {"v", ">", []Operand{s("a")}}}}},
		{"select count(*) from t where 0 < id and id <= 9999999999 and (k = 1 or k = 2)", &KeyRead{Table: "t",
			Conds: []KeyCond{{"id", ">", []Operand{i(0)}}, {"id", "<=", []Operand{i(9999999999)}}}}},
		{"SELECT * FROM t WHERE id IN (1, -2, $3) ORDER BY id LIMIT 1", &KeyRead{Table: "t",
			Conds: []KeyCond{{"id", "in", []Operand{i(1), i(-2), p(3)}}}}},
		{"SELECT * FROM t WHERE id BETWEEN $1 AND 10", &KeyRead{Table: "t", Conds: []KeyCond{{"id", "between", []Operand{p(1), i(10)}}}}},
		{"UPDATE t SET v = v || 'x' WHERE a = 'k' AND b >= 3 RETURNING *", &KeyRead{Table: "t",
			Conds: []KeyCond{{"a", "=", []Operand{s("k")}}, {"b", ">=", []Operand{i(3)}}}}},
		{"DELETE FROM t WHERE id = 5", &KeyRead{Table: "t", Conds: []KeyCond{{"id", "=", []Operand{i(5)}}}}},
		{"SELECT * FROM t WHERE name LIKE 'ab%' AND t.code LIKE $2", &KeyRead{Table: "t",
			Conds: []KeyCond{{"name", "like", []Operand{s("ab%")}}, {"code", "like", []Operand{p(2)}}}}},
		{"SELECT * FROM t WHERE name NOT LIKE 'ab%' AND name ILIKE 'ab%' AND name LIKE 'a#%' ESCAPE '#' AND 'ab' LIKE name AND name SIMILAR TO 'a%'", &KeyRead{Table: "t"}},
		{"SELECT * FROM t", &KeyRead{Table: "t"}},
		{"SELECT * FROM t WHERE id = 1 OR id = 2", &KeyRead{Table: "t"}},
		{"SELECT * FROM t WHERE id NOT IN (1) AND id NOT BETWEEN 1 AND 2 AND id = 1.5 AND id = $1::int AND u.id = 3 AND id <> 4", &KeyRead{Table: "t"}},
		{"INSERT INTO t (id, v) VALUES (1, 'a'), ($1, $2) RETURNING id", &KeyRead{Table: "t", Insert: true}},
		// Statements that may read any row.
		{"SELECT * FROM t WHERE id = (SELECT max(id) FROM t)", nil},
		{"SELECT * FROM t WHERE id = 1 AND EXISTS (SELECT 1 FROM u)", nil},
		{"SELECT * FROM t, u WHERE t.id = 1", nil},
		{"SELECT * FROM t JOIN u USING (id) WHERE id = 1", nil},
		{"WITH c AS (SELECT 1) SELECT * FROM t WHERE id = 1", nil},
		{"SELECT * FROM t WHERE id = 1 UNION SELECT * FROM t WHERE id = 2", nil},
		{"SELECT * FROM generate_series(1, 3) g", nil},
		{"UPDATE t SET v = u.v FROM u WHERE t.id = 1", nil},
		{"DELETE FROM t USING u WHERE t.id = 1", nil},
		{"INSERT INTO t SELECT * FROM u", nil},
		{"INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING", nil},
		{"INSERT INTO t VALUES ((SELECT 1))", nil},
		{"SELECT * FROM other.t WHERE id = 1", nil},
		{"SELECT 1; SELECT 2", nil},
		{"SELECT * INTO n FROM t WHERE id = 1", nil},
	} {
		if got := ParseKeyRead(c.sql); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.sql, got, c.want)
		}
	}
	if got := ParseKeyRead("SELECT * FROM t WHERE id = 0"); got == nil || len(got.Conds) != 1 || got.Conds[0].Values[0] != i(0) {
		t.Errorf("id = 0: %+v", got)
	}
}

func TestParseKeyReadUpsert(t *testing.T) {
	kr := ParseKeyRead("INSERT INTO t AS x (v, id) VALUES ('a', $1), (now(), 2) ON CONFLICT (id) DO UPDATE SET v = x.v || excluded.v")
	want := &KeyRead{Table: "t", Insert: true, Upsert: true, ConflictColumns: []string{"id"}, Columns: []string{"v", "id"},
		Rows: [][]Operand{{{Text: "a"}, {Param: 1}}, {{Unknown: true}, {IsInt: true, Int: 2}}}}
	if !reflect.DeepEqual(kr, want) {
		t.Fatalf("got %+v\nwant %+v", kr, want)
	}
	for _, sql := range []string{
		"INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING",
		"INSERT INTO t VALUES (1) ON CONFLICT ON CONSTRAINT t_pkey DO NOTHING",
		"INSERT INTO t VALUES (1) ON CONFLICT ((id + 1)) DO NOTHING",
		"INSERT INTO t VALUES (1) ON CONFLICT (id) WHERE id > 0 DO NOTHING",
		"INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET v = (SELECT v FROM u)",
		"INSERT INTO t SELECT 1 ON CONFLICT (id) DO NOTHING",
	} {
		if kr := ParseKeyRead(sql); kr != nil {
			t.Errorf("%s: %+v", sql, kr)
		}
	}
}

func TestRelationNames(t *testing.T) {
	rels, ok := RelationNames("WITH c AS (SELECT * FROM s.a) SELECT * FROM c JOIN b ON true WHERE x IN (SELECT y FROM d); UPDATE e SET v = 1")
	want := []Relation{{"", "c"}, {"", "b"}, {"", "d"}, {"s", "a"}, {"", "e"}}
	if !ok || !reflect.DeepEqual(rels, want) {
		t.Fatalf("got %v %v, want %v", rels, ok, want)
	}
	if rels, ok := RelationNames("COPY t TO STDOUT"); !ok || !reflect.DeepEqual(rels, []Relation{{"", "t"}}) {
		t.Fatalf("COPY: %v %v", rels, ok)
	}
	for _, sql := range []string{
		"SELECT * FROM f()", "SELECT * FROM t, LATERAL g(t.x)", "DO $$ BEGIN END $$", "CALL p()", "EXECUTE s(1)",
		"EXPLAIN ANALYZE SELECT 1", "SET search_path = s", "RESET ALL", "SELECT set_config('search_path', 's', true)",
		"SELECT * FROM XMLTABLE('/r' PASSING '<r/>' COLUMNS a int)", "not sql",
	} {
		if _, ok := RelationNames(sql); ok {
			t.Errorf("%s: ok", sql)
		}
	}
	if rels, ok := RelationNames("SET statement_timeout = 5"); !ok || len(rels) != 0 {
		t.Errorf("SET: %v %v", rels, ok)
	}
}
