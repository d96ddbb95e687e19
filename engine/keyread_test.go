package engine

import (
	"math"
	"slices"
	"strings"
	"testing"

	"certa/pgparse"
	"certa/writeset"
)

// KeyReads turns a statement's key conditions into the keys or ranges it
// read, or says it read the whole table.
func TestKeyReads(t *testing.T) {
	key, rng, pre := writeset.EncodeKey, writeset.KeyRangeOf, writeset.KeyPrefixRange
	intCol, textCol := KeyColumn{"id", KeyInt}, KeyColumn{"a", KeyText}
	for _, c := range []struct {
		sql    string
		cols   []KeyColumn
		args   []any
		keys   []writeset.Key
		ranges []writeset.KeyRange
		ok     bool
	}{
		{"SELECT * FROM t WHERE id IN (1, $1) AND id = 3", []KeyColumn{intCol}, []any{"2"}, []writeset.Key{key("t", int64(1)), key("t", int64(2))}, nil, true},
		{"SELECT * FROM t WHERE a IN ('x', 'y') AND id BETWEEN 1 AND 5 AND id <> 3", []KeyColumn{textCol, intCol}, nil, nil,
			[]writeset.KeyRange{rng("t", []any{"x", int64(1)}, []any{"x", int64(5)}), rng("t", []any{"y", int64(1)}, []any{"y", int64(5)})}, true},
		{"SELECT * FROM t WHERE a = 'x' AND id = 2", []KeyColumn{textCol, intCol}, nil, []writeset.Key{key("t", "x", int64(2))}, nil, true},
		{"SELECT * FROM t WHERE a = 'x'", []KeyColumn{textCol, intCol}, nil, nil, []writeset.KeyRange{rng("t", []any{"x"}, []any{"x"})}, true},
		{"SELECT * FROM t WHERE id < -9223372036854775807", []KeyColumn{intCol}, nil, nil, []writeset.KeyRange{rng("t", nil, []any{int64(math.MinInt64)})}, true},
		{"SELECT * FROM t WHERE id >= 5 AND id <= 4", []KeyColumn{intCol}, nil, nil, nil, true},
		{"INSERT INTO t VALUES (1)", []KeyColumn{intCol}, nil, nil, nil, true},
		{"SELECT * FROM t WHERE a LIKE 'ab%c_'", []KeyColumn{textCol}, nil, nil, []writeset.KeyRange{pre("t", nil, "ab")}, true},
		{`SELECT * FROM t WHERE a LIKE $1 AND a LIKE 'a%'`, []KeyColumn{textCol}, []any{`a\%b\_c\\d\`}, nil, []writeset.KeyRange{pre("t", nil, `a%b_c\d`)}, true},
		{"SELECT * FROM t WHERE a LIKE 'héllo' AND id = 1", []KeyColumn{textCol, intCol}, nil, nil, []writeset.KeyRange{pre("t", nil, "héllo")}, true},
		{"SELECT * FROM t WHERE id IN (1, 2) AND a LIKE 'x%'", []KeyColumn{intCol, textCol}, nil, nil,
			[]writeset.KeyRange{pre("t", []any{int64(1)}, "x"), pre("t", []any{int64(2)}, "x")}, true},
		{"INSERT INTO t (id, v) VALUES ($1, 'a'), (7, $2) ON CONFLICT (id) DO NOTHING", []KeyColumn{intCol}, []any{int64(6), "b"},
			[]writeset.Key{key("t", int64(6)), key("t", int64(7))}, nil, true},
		// The whole table.
		{"SELECT * FROM t WHERE a > 'x'", []KeyColumn{textCol}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE a LIKE '%x'", []KeyColumn{textCol}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE a LIKE $1", []KeyColumn{textCol}, []any{int64(1)}, nil, nil, false},
		{"SELECT * FROM t WHERE id LIKE '1%'", []KeyColumn{intCol}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE id = $1", []KeyColumn{intCol}, []any{1.5}, nil, nil, false},
		{"SELECT * FROM t WHERE id = $2", []KeyColumn{intCol}, []any{int64(1)}, nil, nil, false},
		{"SELECT * FROM t WHERE id = 'x'", []KeyColumn{intCol}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE a = 1", []KeyColumn{textCol}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE v = 1", []KeyColumn{{"v", KeyOther}}, nil, nil, nil, false},
		{"SELECT * FROM t WHERE id = 1", nil, nil, nil, nil, false},
		{"INSERT INTO t (v) VALUES (1) ON CONFLICT (id) DO NOTHING", []KeyColumn{intCol}, nil, nil, nil, false},
		{"INSERT INTO t VALUES (1) ON CONFLICT (id) DO NOTHING", []KeyColumn{intCol}, nil, nil, nil, false}, // no column list
		{"INSERT INTO t (id, e) VALUES (1, 'x') ON CONFLICT (e) DO NOTHING", []KeyColumn{intCol}, nil, nil, nil, false},
	} {
		kr := pgparse.ParseKeyRead(c.sql)
		if kr == nil {
			t.Fatalf("%s: no KeyRead", c.sql)
		}
		keys, ranges, ok := KeyReads(kr, "t", c.cols, c.args, strings.EqualFold)
		if ok != c.ok || !slices.Equal(keys, c.keys) || !slices.Equal(ranges, c.ranges) {
			t.Errorf("%s: %q %q %v, want %q %q %v", c.sql, keys, ranges, ok, c.keys, c.ranges, c.ok)
		}
	}
}
