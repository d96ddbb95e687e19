package pgparse

import (
	"reflect"
	"testing"
)

func TestRecomputes(t *testing.T) {
	for _, tc := range []struct {
		sql  string
		want []Recompute
	}{
		{"ALTER TABLE t ADD COLUMN created_at timestamptz DEFAULT now()",
			[]Recompute{{Table: `"t"`, What: "the default of column created_at", Funcs: []string{"now"}, Column: "created_at", Added: "created_at"}}},
		{"ALTER TABLE s.t ADD COLUMN id uuid DEFAULT gen_random_uuid(), ADD COLUMN n serial",
			[]Recompute{{Table: `"s"."t"`, What: "the default of column id", Funcs: []string{"gen_random_uuid"}, Column: "id", Added: "id", NeverNull: true},
				{Table: `"s"."t"`, What: "the default of column n", Numbering: true, Added: "n", NeverNull: true}}},
		{"ALTER TABLE t ADD COLUMN d date DEFAULT CURRENT_DATE",
			[]Recompute{{Table: `"t"`, What: "the default of column d", Context: true, Column: "d", Added: "d"}}},
		{"ALTER TABLE t ADD COLUMN u text DEFAULT CURRENT_USER",
			[]Recompute{{Table: `"t"`, What: "the default of column u", Column: "u", Added: "u"}}},
		{"ALTER TABLE t ADD COLUMN i int GENERATED ALWAYS AS IDENTITY",
			[]Recompute{{Table: `"t"`, What: "the default of column i", Numbering: true, Added: "i", NeverNull: true}}},
		{"ALTER TABLE t ADD COLUMN r float8 DEFAULT pg_catalog.random()::float8, ADD COLUMN k int DEFAULT (CASE WHEN random() < 2 THEN 1 END)",
			[]Recompute{{Table: `"t"`, What: "the default of column r", Funcs: []string{"random"}, Column: "r", Added: "r", NeverNull: true},
				{Table: `"t"`, What: "the default of column k", Funcs: []string{"random"}, Column: "k", Added: "k"}}},
		{"ALTER TABLE t ADD COLUMN x int DEFAULT 7",
			[]Recompute{{Table: `"t"`, What: "the default of column x", Column: "x", Added: "x"}}},
		{"ALTER TABLE t ALTER COLUMN v TYPE int USING pg_catalog.length(v)",
			[]Recompute{{Table: `"t"`, What: "the USING expression of column v", Funcs: []string{"length"}}}},
		{"ALTER TABLE t ALTER COLUMN v SET DEFAULT now()", nil},
		{"CREATE TABLE r AS SELECT random() AS x", []Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"random"}}}},
		{"CREATE TABLE r AS SELECT * FROM t LIMIT 3", []Recompute{{What: "the query of CREATE TABLE AS", Order: true}}},
		{"CREATE TABLE r AS SELECT DISTINCT ON (a) a, b FROM t", []Recompute{{What: "the query of CREATE TABLE AS", Order: true}}},
		{"CREATE TABLE r AS SELECT DISTINCT a FROM t", []Recompute{{What: "the query of CREATE TABLE AS"}}},
		// The catalogs are each node's own (the regression suite's
		// create_index made a table of its temporary indexes' names).
		{"CREATE TABLE r AS SELECT oid, relname FROM pg_class WHERE relname LIKE 'x%'", []Recompute{{What: "the query of CREATE TABLE AS", Catalog: true}}},
		{"SELECT table_name INTO r FROM information_schema.tables", []Recompute{{What: "the query of SELECT INTO", Catalog: true}}},
		{"CREATE MATERIALIZED VIEW m AS SELECT * FROM t JOIN pg_catalog.pg_namespace n ON n.nspname = t.s", []Recompute{{What: "the query of the materialized view", Catalog: true}}},
		{"CREATE TABLE r AS SELECT * FROM t WITH NO DATA", nil},
		{"CREATE MATERIALIZED VIEW m AS SELECT a, my.f(a) FROM t TABLESAMPLE SYSTEM (10)",
			[]Recompute{{What: "the query of the materialized view", Funcs: []string{"my.f"}, Order: true}}},
		{"SELECT a, clock_timestamp() INTO r FROM t", []Recompute{{What: "the query of SELECT INTO", Funcs: []string{"clock_timestamp"}}}},
		{"CREATE TABLE t (id int PRIMARY KEY, at timestamptz DEFAULT now())", nil},
		// A partition's bound is computed where the statement runs.
		{"CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (current_timestamp) TO (MAXVALUE)",
			[]Recompute{{What: "the bound of partition p1", Context: true, Bound: true}}},
		{"CREATE TABLE p2 PARTITION OF p FOR VALUES IN (1, 2)", []Recompute{{What: "the bound of partition p2", Bound: true}}},
		{"ALTER TABLE p ATTACH PARTITION s.p3 FOR VALUES FROM (now()) TO ('2030-01-01')",
			[]Recompute{{What: "the bound of partition p3", Funcs: []string{"now"}, Bound: true}}},
		{"SELECT now()", nil},
		{`ALTER TABLE t ADD COLUMN c "My".d, ADD COLUMN e int[], ADD COLUMN f text DEFAULT 'x'`,
			[]Recompute{{Table: `"t"`, What: "the default of column c", Type: `"My"."d"`, typed: "c"},
				{Table: `"t"`, What: "the default of column e"}, {Table: `"t"`, What: "the default of column f", Column: "f", Added: "f"}}},
		{"ALTER TABLE t ADD COLUMN at timestamptz DEFAULT 'now'",
			[]Recompute{{Table: `"t"`, What: "the default of column at", Context: true}}},
		{"ALTER TABLE t ADD COLUMN d date DEFAULT ' Today'::date",
			[]Recompute{{Table: `"t"`, What: "the default of column d", Context: true}}},
		{"ALTER TABLE t ADD COLUMN note text DEFAULT 'now'",
			[]Recompute{{Table: `"t"`, What: "the default of column note", Column: "note", Added: "note"}}},
		{"CREATE TABLE r AS SELECT 'tomorrow'::timestamp AS x", []Recompute{{What: "the query of CREATE TABLE AS", Context: true}}},
		{"CREATE TABLE r AS SELECT 'epoch'::timestamp AS x", []Recompute{{What: "the query of CREATE TABLE AS"}}},
		{"CREATE TABLE r AS SELECT string_agg(name, ',') AS names FROM t",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"string_agg"}, Order: true}}},
		{"CREATE TABLE r AS SELECT string_agg(name, ',' ORDER BY name) AS names, count(*) FROM t",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"string_agg", "count"},
				Unique: []UniqueOrder{{Table: `"t"`, Columns: []string{"name"}}}}}},
		{"CREATE TABLE r AS SELECT g, array_agg(x.v ORDER BY x.at DESC) FROM s.t AS x GROUP BY g",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"array_agg"},
				Unique: []UniqueOrder{{Table: `"s"."t"`, Columns: []string{"at", "g"}}}}}},
		{"CREATE TABLE r AS SELECT array_agg(t.v ORDER BY u.at) FROM t JOIN u USING (id)",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"array_agg"}, Order: true}}},
		{"CREATE TABLE r AS SELECT array_agg(v ORDER BY lower(v)) FROM t",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"array_agg", "lower"}, Order: true}}},
		{"CREATE TABLE r AS SELECT rank() OVER (ORDER BY score), sum(score) OVER (ORDER BY day), max(a) OVER w FROM t WINDOW w AS (ORDER BY b)",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"rank", "sum", "max"}}}},
		{"CREATE TABLE r AS SELECT sum(score) OVER (PARTITION BY g ORDER BY day ROWS 2 PRECEDING), lag(a) OVER w FROM t WINDOW w AS (PARTITION BY h ORDER BY b)",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"sum", "lag"},
				Unique: []UniqueOrder{{Table: `"t"`, Columns: []string{"day", "g"}}, {Table: `"t"`, Columns: []string{"b", "h"}}}}}},
		{"CREATE TABLE r AS SELECT row_number() OVER w FROM t WINDOW w AS (PARTITION BY g)",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"row_number"}, Order: true}}},
		{"CREATE TABLE r AS SELECT (SELECT string_agg(v, ',' ORDER BY v) FROM u) FROM t",
			[]Recompute{{What: "the query of CREATE TABLE AS", Funcs: []string{"string_agg"},
				Unique: []UniqueOrder{{Table: `"u"`, Columns: []string{"v"}}}}}},
		{"CREATE MATERIALIZED VIEW m AS SELECT row_number() OVER () AS n, a FROM t",
			[]Recompute{{What: "the query of the materialized view", Funcs: []string{"row_number"}, Order: true}}},
		{"CREATE MATERIALIZED VIEW m AS SELECT row_number() OVER (ORDER BY a) AS n, sum(a) OVER () FROM t",
			[]Recompute{{What: "the query of the materialized view", Funcs: []string{"row_number", "sum"},
				Unique: []UniqueOrder{{Table: `"t"`, Columns: []string{"a"}}}}}},
		{"not sql at all", nil},
	} {
		if got := Recomputes(tc.sql); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Recomputes(%q)\n got %+v\nwant %+v", tc.sql, got, tc.want)
		}
	}
}

// A domain's default is read as the default of the column it gives.
func TestDomainDefault(t *testing.T) {
	r := Recompute{Table: `"t"`, What: "the default of column c", Type: `"d"`, typed: "c"}
	got := r.DomainDefault("clock_timestamp()")
	want := Recompute{Table: `"t"`, What: "the default of column c (its domain's)", Funcs: []string{"clock_timestamp"}, Domain: true, Added: "c", NeverNull: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := r.DomainDefault("'now'::timestamp with time zone"); !got.Context {
		t.Errorf("'now': %+v", got)
	}
}
