package sqlite

import (
	"context"
	"math"
	"slices"
	"testing"

	"certa/writeset"
)

// A serializable transaction's statements read keys, key ranges or whole
// tables: keys and ranges only where the statement touches one table
// keyed by its primary key and selects rows by its leading key columns
// with values of their types; every other read is of whole tables.
func TestReadsGrain(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, k integer, v text)")
	e.ddl("CREATE TABLE c (a text, b bigint, v text, PRIMARY KEY (a, b))")
	e.ddl("CREATE TABLE r (b integer, a text, PRIMARY KEY (a, b))") // key in table order: b, a
	e.ddl("CREATE TABLE n (v text)")                                // keyed by rowid
	e.ddl("CREATE TABLE ch (id char(3) PRIMARY KEY)")
	e.ddl("CREATE VIEW tv AS SELECT * FROM t")
	e.ddl("CREATE TABLE u (id integer PRIMARY KEY, e text UNIQUE)")
	key := writeset.EncodeKey
	rng := writeset.KeyRangeOf
	for _, c := range []struct {
		sql    string
		args   []any
		tables []string
		keys   []writeset.Key
		ranges []writeset.KeyRange
	}{
		{"SELECT v FROM t WHERE id = 1", nil, nil, []writeset.Key{key("t", int64(1))}, nil},
		{"SELECT v FROM t WHERE id = $1 AND v = 'x'", []any{int64(7)}, nil, []writeset.Key{key("t", int64(7))}, nil},
		{"SELECT v FROM t WHERE id IN (3, 2, $1)", []any{int64(9)}, nil,
			[]writeset.Key{key("t", int64(3)), key("t", int64(2)), key("t", int64(9))}, nil},
		{"SELECT count(*) FROM t WHERE id BETWEEN 5 AND 10 AND id < $1", []any{int64(8)}, nil, nil,
			[]writeset.KeyRange{rng("t", []any{int64(5)}, []any{int64(7)})}},
		{"SELECT * FROM t WHERE id > 100", nil, nil, nil, []writeset.KeyRange{rng("t", []any{int64(101)}, nil)}},
		{"SELECT * FROM t WHERE id > 5 AND id < 3", nil, nil, nil, nil}, // no row
		{"UPDATE t SET v = 'y' WHERE id <= 3", nil, nil, nil, []writeset.KeyRange{rng("t", nil, []any{int64(3)})}},
		{"DELETE FROM t WHERE id = 99", nil, nil, []writeset.Key{key("t", int64(99))}, nil},
		{"INSERT INTO t VALUES (50, 1, 'a')", nil, nil, nil, nil},
		{"SELECT * FROM c WHERE a = 'x' AND b = 2", nil, nil, []writeset.Key{key("c", "x", int64(2))}, nil},
		{"SELECT * FROM c WHERE a = $1 AND b >= 2", []any{"x"}, nil, nil, []writeset.KeyRange{rng("c", []any{"x", int64(2)}, []any{"x"})}},
		{"SELECT * FROM c WHERE a = 'x'", nil, nil, nil, []writeset.KeyRange{rng("c", []any{"x"}, []any{"x"})}},
		{"SELECT * FROM r WHERE a = 'x' AND b = 1", nil, nil, []writeset.Key{key("r", int64(1), "x")}, nil},
		{"SELECT * FROM c WHERE a LIKE 'x\\_y%'", nil, nil, nil, []writeset.KeyRange{writeset.KeyPrefixRange("c", nil, "x_y")}},
		{"SELECT * FROM ch WHERE id LIKE 'a%'", nil, []string{"ch"}, nil, nil}, // char(n) pads
		{"SELECT * FROM c WHERE a ILIKE 'x%'", nil, []string{"c"}, nil, nil},
		// Whole tables.
		{"SELECT * FROM t WHERE k = 1", nil, []string{"t"}, nil, nil},
		{"SELECT * FROM t WHERE id = 1 OR id = 2", nil, []string{"t"}, nil, nil},
		{"SELECT * FROM t WHERE id = '1'", nil, nil, []writeset.Key{key("t", int64(1))}, nil},
		{"SELECT * FROM t WHERE id = $1", []any{"-12"}, nil, []writeset.Key{key("t", int64(-12))}, nil}, // untyped
		{"SELECT * FROM t WHERE id = ' 1'", nil, []string{"t"}, nil, nil},                               // not canonical
		{"SELECT * FROM t WHERE id = $1", []any{"01"}, []string{"t"}, nil, nil},
		{"SELECT * FROM c WHERE a = $1 AND b = $2", []any{int64(1), int64(2)}, []string{"c"}, nil, nil}, // text = integer
		{"SELECT * FROM t WHERE id = 1.0", nil, []string{"t"}, nil, nil},                                // not an integer constant
		{"SELECT * FROM tv WHERE id = 1", nil, []string{"t"}, nil, nil},                                 // a view
		{"SELECT * FROM t WHERE id = (SELECT max(id) FROM t)", nil, []string{"t"}, nil, nil},            // a subquery
		{"SELECT * FROM c WHERE b = 2", nil, []string{"c"}, nil, nil},                                   // not the leading column
		{"SELECT * FROM r WHERE a = 'x'", nil, []string{"r"}, nil, nil},                                 // nor here
		{"SELECT * FROM n WHERE v = 'x'", nil, []string{"n"}, nil, nil},
		{"SELECT * FROM ch WHERE id = 'ab'", nil, []string{"ch"}, nil, nil}, // char(n) pads
		{"INSERT INTO t SELECT id + 1000, k, v FROM t WHERE id = 1", nil, []string{"t"}, nil, nil},
		{"INSERT INTO t VALUES (60, 1, 'a'), ($1, 2, 'b') ON CONFLICT (id) DO NOTHING", []any{"61"}, nil,
			[]writeset.Key{key("t", int64(60)), key("t", int64(61))}, nil},
		{"INSERT INTO t AS x (v, id) VALUES ('a', 62) ON CONFLICT (id) DO UPDATE SET v = x.v || excluded.v", nil, nil,
			[]writeset.Key{key("t", int64(62))}, nil},
		{"INSERT INTO r VALUES (1, 'x') ON CONFLICT (a, b) DO NOTHING", nil, nil, []writeset.Key{key("r", int64(1), "x")}, nil},
		{"INSERT INTO t VALUES (63, 1, 'a') ON CONFLICT DO NOTHING", nil, []string{"t"}, nil, nil},
		{"INSERT INTO t VALUES (64 + 1, 1, 'a') ON CONFLICT (id) DO NOTHING", nil, []string{"t"}, nil, nil},
		{"INSERT INTO u VALUES (1, 'x') ON CONFLICT (e) DO NOTHING", nil, []string{"u"}, nil, nil},
	} {
		t.Run(c.sql, func(t *testing.T) {
			tx := e.begin()
			defer tx.Rollback()
			if err := tx.TrackReads(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := tx.Exec(context.Background(), c.sql, &recorder{}, c.args...); err != nil {
				t.Fatal(err)
			}
			got, err := tx.Reads(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(got.Tables)
			if !slices.Equal(got.Tables, c.tables) || !slices.Equal(got.Keys, c.keys) || !slices.Equal(got.Ranges, c.ranges) {
				t.Fatalf("reads %q %q %q, want %q %q %q", got.Tables, got.Keys, got.Ranges, c.tables, c.keys, c.ranges)
			}
		})
	}
}

// The ranges' ends are exact at the extremes of bigint.
func TestReadsRangeExtremes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id bigint PRIMARY KEY)")
	tx := e.begin()
	tx.TrackReads(context.Background())
	exec(t, tx, "SELECT * FROM t WHERE id > 9223372036854775806")
	exec(t, tx, "SELECT * FROM t WHERE id > 9223372036854775807")
	got, err := tx.Reads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Ranges) != 1 || !got.Ranges[0].Contains(writeset.EncodeKey("t", int64(math.MaxInt64))) ||
		got.Ranges[0].Contains(writeset.EncodeKey("t", int64(math.MaxInt64-1))) || len(got.Tables) != 0 {
		t.Fatalf("reads %+v", got)
	}
}

// Key writes, which a transaction may run in image mode (rowimage.go),
// read the keys they name: a DELETE of a row that is not there too.
func TestReadsKeyWrites(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	e.commit("INSERT INTO t VALUES (1, 'a')")
	tx := e.begin()
	tx.TrackReads(context.Background())
	exec(t, tx, "SELECT v FROM t WHERE id = 1")
	exec(t, tx, "DELETE FROM t WHERE id = 5")
	exec(t, tx, "UPDATE t SET v = 'b' WHERE id = 1")
	got, err := tx.Reads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got.Keys)
	if want := []writeset.Key{writeset.EncodeKey("t", int64(1)), writeset.EncodeKey("t", int64(5))}; !slices.Equal(slices.Compact(got.Keys), want) || len(got.Tables) != 0 {
		t.Fatalf("reads %q %q, want keys %q", got.Tables, got.Keys, want)
	}
}
