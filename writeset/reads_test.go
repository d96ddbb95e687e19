package writeset

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

// A range over a leading integer column holds exactly the keys whose
// column is within it, whatever the other columns, negative numbers and
// open ends included, and no key of another table.
func TestKeyRangeContains(t *testing.T) {
	ints := []int64{math.MinInt64, -1000, -2, -1, 0, 1, 2, 9, 10, 11, 1 << 40, math.MaxInt64}
	bounds := []*int64{nil}
	for i := range ints {
		bounds = append(bounds, &ints[i])
	}
	vals := func(p *int64) []any {
		if p == nil {
			return nil
		}
		return []any{*p}
	}
	for _, lo := range bounds {
		for _, hi := range bounds {
			r := KeyRangeOf("t", vals(lo), vals(hi))
			for _, v := range ints {
				want := (lo == nil || v >= *lo) && (hi == nil || v <= *hi)
				for _, k := range []Key{EncodeKey("t", v), EncodeKey("t", v, "x"), EncodeKey("t", v, int64(-5), []byte{0xff})} {
					if got := r.Contains(k); got != want {
						t.Fatalf("range %v..%v contains %d (key %q): %v, want %v", fmtBound(lo), fmtBound(hi), v, k, got, want)
					}
				}
				for _, other := range []string{"", "s", "t2", "u", "ta"} {
					if r.Contains(EncodeKey(other, v)) {
						t.Fatalf("range of t contains a key of %q", other)
					}
				}
			}
		}
	}
	// A range on the first two columns of a composite key.
	r := KeyRangeOf("t", []any{int64(1), int64(5)}, []any{int64(1), int64(7)})
	for _, c := range []struct {
		a, b int64
		want bool
	}{{1, 5, true}, {1, 7, true}, {1, 6, true}, {1, 4, false}, {1, 8, false}, {0, 6, false}, {2, 6, false}} {
		if got := r.Contains(EncodeKey("t", c.a, c.b, "z")); got != c.want {
			t.Errorf("(%d,%d): %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func fmtBound(p *int64) string {
	if p == nil {
		return "open"
	}
	return fmt.Sprint(*p)
}

// A filter finds every key it was built from, and others at about the
// rate it was sized for.
func TestFilter(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 10, 300, 5000} {
		for _, rate := range []float64{0.01, 0.05} {
			keys := make([]Key, n)
			for i := range keys {
				keys[i] = EncodeKey("t", rng.Int64())
			}
			f := NewFilter(keys, rate)
			for _, k := range keys {
				if !f.MayContain(k) {
					t.Fatalf("n=%d: key %q added but not found", n, k)
				}
			}
			const probes = 100000
			fp := 0
			for range probes {
				if f.MayContain(EncodeKey("u", rng.Int64())) {
					fp++
				}
			}
			if got := float64(fp) / probes; got > 2*rate {
				t.Errorf("n=%d rate %.2f: false positives %.4f", n, rate, got)
			}
		}
	}
}

// CompactReads turns many keys into a filter (keeping the exact keys for
// the origin), and too many ranges into their tables.
func TestCompactReads(t *testing.T) {
	w := WriteSet{ReadTables: []string{"b"}}
	for i := range FilterMinKeys + 1 {
		w.ReadKeys = append(w.ReadKeys, EncodeKey("a", int64(i)))
	}
	for i := range MaxReadRanges + 1 {
		w.ReadRanges = append(w.ReadRanges, KeyRangeOf("c", []any{int64(i)}, []any{int64(i + 1)}))
	}
	w.Normalize()
	exact := w.CompactReads(DefaultFilterFPRate)
	if len(exact) != FilterMinKeys+1 || w.ReadKeys != nil || w.ReadFilter == nil || w.ReadRanges != nil ||
		!reflect.DeepEqual(w.ReadTables, []string{"b", "c"}) {
		t.Fatalf("after CompactReads: %d exact, keys %d, filter %v, ranges %d, tables %v",
			len(exact), len(w.ReadKeys), w.ReadFilter != nil, len(w.ReadRanges), w.ReadTables)
	}
	if IsFilterFalsePositive(exact, EncodeKey("a", int64(3))) || !IsFilterFalsePositive(exact, EncodeKey("a", int64(-3))) {
		t.Fatal("IsFilterFalsePositive")
	}
	few := WriteSet{ReadKeys: []Key{EncodeKey("a", int64(1))}}
	if few.CompactReads(DefaultFilterFPRate) != nil || few.ReadFilter != nil || len(few.ReadKeys) != 1 {
		t.Fatal("a few keys were filtered")
	}
}

// Normalize drops reads that writes, shared keys or whole tables cover.
func TestNormalizeReads(t *testing.T) {
	a1, a2, b1 := EncodeKey("a", int64(1)), EncodeKey("a", int64(2)), EncodeKey("b", int64(1))
	c1 := EncodeKey("c", int64(1))
	rb := KeyRangeOf("b", []any{int64(1)}, nil)
	rc := KeyRangeOf("c", nil, []any{int64(5)})
	w := WriteSet{Keys: []Key{a1}, SharedKeys: []Key{a2}, ReadTables: []string{"b"},
		ReadKeys: []Key{c1, b1, a2, a1, c1}, ReadRanges: []KeyRange{rc, rb, rc}}
	w.Normalize()
	if !reflect.DeepEqual(w.ReadKeys, []Key{c1}) || !reflect.DeepEqual(w.ReadRanges, []KeyRange{rc}) {
		t.Fatalf("keys %q, ranges %v", w.ReadKeys, w.ReadRanges)
	}
}

// A range whose bounds name two tables, or whose Lo is above its Hi, is
// corrupt.
func TestDecodeBadRange(t *testing.T) {
	for _, r := range []KeyRange{
		{Lo: EncodeKey("a", int64(1)), Hi: EncodeKey("b", int64(1))},
		{Lo: EncodeKey("a", int64(2)), Hi: EncodeKey("a", int64(1))},
		{Lo: "a", Hi: "a"},
	} {
		w := WriteSet{ReadRanges: []KeyRange{r}}
		if _, _, err := Decode(w.Append(nil)); err == nil {
			t.Errorf("range %q..%q decoded", r.Lo, r.Hi)
		}
	}
}

// Equal leading values select the keys that start with them, whatever
// their type, with the next column bounded or open.
func TestKeyRangePrefix(t *testing.T) {
	r := KeyRangeOf("t", []any{"ab"}, []any{"ab"})
	for _, c := range []struct {
		k    Key
		want bool
	}{{EncodeKey("t", "ab", int64(1)), true}, {EncodeKey("t", "ab"), true}, {EncodeKey("t", "abc", int64(1)), false},
		{EncodeKey("t", "a", int64(1)), false}, {EncodeKey("u", "ab", int64(1)), false}} {
		if got := r.Contains(c.k); got != c.want {
			t.Errorf("%q: %v, want %v", c.k, got, c.want)
		}
	}
	r = KeyRangeOf("t", []any{"ab", int64(3)}, []any{"ab"}) // b >= 3
	if !r.valid() || r.Contains(EncodeKey("t", "ab", int64(2))) || !r.Contains(EncodeKey("t", "ab", int64(3), "z")) || !r.Contains(EncodeKey("t", "ab", int64(math.MaxInt64))) {
		t.Error("open upper end after a prefix")
	}
}

// An index table's keys are its own, and ranges over them hold the
// entries of its values; its base table is the table's.
func TestIndexTable(t *testing.T) {
	it := IndexTable("t", "k")
	if BaseTable(it) != "t" || BaseTable("t") != "t" || IndexKey("t", "k", int64(5)).Table() != it {
		t.Fatal("index table names")
	}
	r := KeyRangeOf(it, []any{int64(1)}, []any{int64(9)})
	if !r.Contains(IndexKey("t", "k", int64(5))) || r.Contains(IndexKey("t", "k", int64(10))) ||
		r.Contains(IndexKey("t", "j", int64(5))) || r.Contains(EncodeKey("t", int64(5))) {
		t.Fatal("range over an index table")
	}
}
