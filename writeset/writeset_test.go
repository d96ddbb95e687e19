package writeset

import (
	"bytes"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// samples are write sets covering every field, empty and not.
func samples() []WriteSet {
	return []WriteSet{
		{},
		{Origin: "n1", TxID: 1, Snapshot: 0},
		{
			Origin:   "node-a",
			TxID:     math.MaxUint64,
			Snapshot: 1<<63 + 5,
			Keys:     []Key{EncodeKey("t", int64(1)), EncodeKey("t", "x"), EncodeKey("u", nil, []byte{0, 0xff})},
			Tables:   []string{"t", "u"},
			Changes:  []byte{0, 1, 2, 0x80, 0xff},
		},
		{Origin: "n2", TxID: 300, Snapshot: 299, DDL: "CREATE TABLE t (id INTEGER PRIMARY KEY)", Tables: []string{"t"}},
		{Origin: "n3", DDL: "DROP TABLE x"},
		{Origin: "n1", TxID: 7, Snapshot: 6, Keys: []Key{EncodeKey("t", int64(2))}, Tables: []string{"t", "u"}, Changes: []byte{1, 'S'}, Schema: SchemaTables},
		{Origin: "n1", TxID: 8, Snapshot: 6, Changes: []byte{1, 'S'}, Schema: SchemaAll},
		{Keys: []Key{""}, Tables: []string{""}, Changes: bytes.Repeat([]byte{0x80}, 300)},
		{Origin: "n2", TxID: 9, Snapshot: 8, Keys: []Key{EncodeKey("t", int64(3))}, Tables: []string{"t"}, ReadTables: []string{"doctors", "t"}},
		{Origin: "n3", TxID: 10, Snapshot: 9, Keys: []Key{EncodeKey("child", int64(1))}, Tables: []string{"child", "parent"},
			SharedKeys: []Key{EncodeKey("parent", int64(1)), EncodeKey("parent", int64(2))}},
		{Origin: "n1", TxID: 11, Snapshot: 10, Keys: []Key{EncodeKey("t", int64(4))}, Tables: []string{"t"},
			ReadTables: []string{"u"}, ReadKeys: []Key{EncodeKey("doctors", int64(1)), EncodeKey("doctors", int64(2))},
			ReadRanges: []KeyRange{KeyRangeOf("t", []any{int64(1)}, []any{int64(9)}), KeyRangeOf("t", []any{int64(20)}, nil),
				KeyPrefixRange("s", nil, "ab"), KeyPrefixRange(IndexTable("t", "name"), nil, "x")}},
		{Origin: "n2", TxID: 12, Snapshot: 11, Keys: []Key{EncodeKey("t", int64(5))}, Tables: []string{"t"},
			ReadFilter: NewFilter([]Key{EncodeKey("v", int64(1))}, 0.01)},
		{Origin: "n3", TxID: 13, Snapshot: 12, Keys: []Key{EncodeKey("t", int64(6))}, Tables: []string{"t"},
			IndexKeys: []Key{IndexKey("t", "k", int64(3)), IndexKey("t", "name", "x")}},
	}
}

func TestAppendDecode(t *testing.T) {
	for i, w := range samples() {
		b := w.Append([]byte("prefix"))
		if string(b[:6]) != "prefix" {
			t.Fatalf("%d: Append changed the prefix", i)
		}
		got, rest, err := Decode(b[6:])
		if err != nil {
			t.Fatalf("%d: Decode: %v", i, err)
		}
		if len(rest) != 0 {
			t.Fatalf("%d: %d bytes left", i, len(rest))
		}
		if !equalWS(got, w) {
			t.Fatalf("%d: Decode(Append(w)) = %+v, want %+v", i, got, w)
		}
		// The result does not alias the input.
		for j := range b {
			b[j] = 0xee
		}
		if !equalWS(got, w) {
			t.Fatalf("%d: decoded write set changed with its input", i)
		}
	}
}

// Size is the length of the encoding, and a batch adds at most
// MaxBatchOverhead to its write sets' sizes.
func TestSize(t *testing.T) {
	var batch []*WriteSet
	total := 0
	for i, w := range samples() {
		if got, want := w.Size(), len(w.Append(nil)); got != want {
			t.Fatalf("%d: Size() = %d, encoding has %d bytes", i, got, want)
		}
		batch = append(batch, &w)
		total += w.Size()
	}
	big := WriteSet{Keys: make([]Key, 200), Changes: make([]byte, 1<<21), DDL: string(make([]byte, 130))}
	if got, want := big.Size(), len(big.Append(nil)); got != want {
		t.Fatalf("big: Size() = %d, encoding has %d bytes", got, want)
	}
	if n := len(EncodeBatch(batch)); n > total+MaxBatchOverhead || n <= total {
		t.Fatalf("batch of write sets of %d bytes encodes in %d", total, n)
	}
}

func TestDecodeSeveral(t *testing.T) {
	var b []byte
	ss := samples()
	for i := range ss {
		b = ss[i].Append(b)
	}
	for i := range ss {
		w, rest, err := Decode(b)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if !equalWS(w, ss[i]) {
			t.Fatalf("%d: got %+v, want %+v", i, w, ss[i])
		}
		b = rest
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left", len(b))
	}
}

func TestDecodeTruncated(t *testing.T) {
	for i, w := range samples() {
		b := w.Append(nil)
		for n := range len(b) {
			if _, _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%d: truncated to %d of %d bytes: err = %v", i, n, len(b), err)
			}
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0x80}, // unterminated varint
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02}, // varint overflow
		{0, 0, 0, 0xff, 0x7f}, // key count beyond the input
		{5, 'a'},              // string beyond the input
	} {
		if _, _, err := Decode(b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(%x): err = %v", b, err)
		}
	}
}

func TestEncodeBatchDecodeEntry(t *testing.T) {
	ss := samples()
	ptrs := func(ws []WriteSet) []*WriteSet {
		var p []*WriteSet
		for i := range ws {
			p = append(p, &ws[i])
		}
		return p
	}
	for _, batch := range [][]WriteSet{nil, ss[:1], ss[2:3], ss} {
		b := EncodeBatch(ptrs(batch))
		if b[0] != kindBatchV7 {
			t.Fatalf("kind %d", b[0])
		}
		e, err := DecodeEntry(b)
		if err != nil {
			t.Fatalf("DecodeEntry: %v", err)
		}
		if e.Kind != KindBatch || len(e.Batch) != len(batch) || e.Member != (Member{}) {
			t.Fatalf("got %+v", e)
		}
		for i := range batch {
			if !equalWS(e.Batch[i], batch[i]) {
				t.Fatalf("write set %d: got %+v, want %+v", i, e.Batch[i], batch[i])
			}
		}
		if !bytes.Equal(EncodeBatch(ptrs(e.Batch)), b) {
			t.Fatal("re-encoding differs")
		}
		for n := range len(b) {
			if _, err := DecodeEntry(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated to %d of %d: err = %v", n, len(b), err)
			}
		}
		if _, err := DecodeEntry(append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("trailing byte: err = %v", err)
		}
	}
}

func TestEncodeMember(t *testing.T) {
	for _, m := range []Member{
		{},
		{ID: "n1", PGAddr: "127.0.0.1:5432", RaftAddr: "127.0.0.1:7000", HTTPAddr: "[::1]:8080"},
		{ID: "ü\x00x", HTTPAddr: string(bytes.Repeat([]byte("a"), 200))},
	} {
		b := EncodeMember(m)
		if b[0] != KindMember {
			t.Fatalf("kind %d", b[0])
		}
		e, err := DecodeEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		if e.Kind != KindMember || e.Member != m || e.Batch != nil {
			t.Fatalf("got %+v, want member %+v", e, m)
		}
		for n := range len(b) {
			if _, err := DecodeEntry(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("truncated to %d of %d: err = %v", n, len(b), err)
			}
		}
		if _, err := DecodeEntry(append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("trailing byte: err = %v", err)
		}
	}
}

func TestDecodeEntryUnknownKind(t *testing.T) {
	for _, k := range []byte{0, 9, 0xff} {
		if _, err := DecodeEntry([]byte{k, 0}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("kind %d: err = %v", k, err)
		}
	}
}

func TestEncodeKeyDistinct(t *testing.T) {
	keys := map[string][]any{
		"t/int 1":            {"t", int64(1)},
		"t/text 1":           {"t", "1"},
		"t/blob 1":           {"t", []byte("1")},
		"t/float 1.5":        {"t", 1.5},
		"t/null":             {"t", nil},
		"t/no pk":            {"t"},
		"t1/int 1":           {"t1", int64(1)},
		"t1/no pk":           {"t1"},
		"t/int 1, int 2":     {"t", int64(1), int64(2)},
		"t/int 12":           {"t", int64(12)},
		"t/int 2, int 1":     {"t", int64(2), int64(1)},
		"t/text ab":          {"t", "ab"},
		"t/text a, text b":   {"t", "a", "b"},
		"t/text '', text ab": {"t", "", "ab"},
		"t/text ab, text ''": {"t", "ab", ""},
		"t/text ''":          {"t", ""},
		"t/blob ''":          {"t", []byte{}},
		"t/null, null":       {"t", nil, nil},
		"t/int 0":            {"t", int64(0)},
		"t/int -1":           {"t", int64(-1)},
		"t/int min":          {"t", int64(math.MinInt64)},
		"t/int max":          {"t", int64(math.MaxInt64)},
		"t/float 0.5":        {"t", 0.5},
		"t/float 2^63":       {"t", math.Ldexp(1, 63)},
		"t/float inf":        {"t", math.Inf(1)},
		"t/text with NUL":    {"t", "a\x00b"},
		"t/text a, int 1":    {"t", "a", int64(1)},
		"t/int 1, text a":    {"t", int64(1), "a"},
		"empty table/int 1":  {"", int64(1)},
		"tt/text x":          {"tt", "x"},
		"t/text t":           {"t", "t"},
		"long text":          {"t", string(bytes.Repeat([]byte("x"), 300))},
		"long text, int":     {"t", string(bytes.Repeat([]byte("x"), 299)), int64(7)},
	}
	seen := map[Key]string{}
	for name, v := range keys {
		table := v[0].(string)
		k := EncodeKey(table, v[1:]...)
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s encode the same: %q", name, other, k)
		}
		seen[k] = name
		if got := k.Table(); got != table {
			t.Errorf("%s: Table() = %q, want %q", name, got, table)
		}
		// Deterministic.
		if EncodeKey(table, v[1:]...) != k {
			t.Errorf("%s: encodes differently twice", name)
		}
	}
}

// Values SQLite's BINARY comparison finds equal are one key (issue 16: 1 and
// 1.0 inserted on two nodes into a key column without a type both passed
// certification, then diverged the nodes).
func TestEncodeKeyEqualAsSQLite(t *testing.T) {
	for _, c := range []struct {
		name string
		a, b any
	}{
		{"1 and 1.0", int64(1), 1.0},
		{"0 and -0.0", int64(0), math.Copysign(0, -1)},
		{"0.0 and -0.0", 0.0, math.Copysign(0, -1)},
		{"-2^63", int64(math.MinInt64), -math.Ldexp(1, 63)},
		{"2^53+0", int64(1 << 53), math.Ldexp(1, 53)},
	} {
		if EncodeKey("t", c.a) != EncodeKey("t", c.b) {
			t.Errorf("%s: different keys", c.name)
		}
	}
	if EncodeKey("t", int64(math.MaxInt64)) == EncodeKey("t", math.Ldexp(1, 63)) {
		t.Errorf("max int64 and 2^63 share a key; SQLite finds them different")
	}
}

func TestEncodeKeyUnsupportedPanics(t *testing.T) {
	for _, v := range []any{1, int32(1), true, float32(1), struct{}{}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("EncodeKey with %T did not panic", v)
				}
			}()
			EncodeKey("t", v)
		}()
	}
}

func TestKeyTableWithoutSeparator(t *testing.T) {
	if got := Key("abc").Table(); got != "abc" {
		t.Fatalf("Table() = %q", got)
	}
}

func TestNormalize(t *testing.T) {
	a, b := EncodeKey("a", int64(1)), EncodeKey("b", int64(1))
	w := WriteSet{Keys: []Key{b, a, b, a}, Tables: []string{"b", "a", "b"}}
	w.Normalize()
	if !reflect.DeepEqual(w.Keys, []Key{a, b}) || !reflect.DeepEqual(w.Tables, []string{"a", "b"}) {
		t.Fatalf("got %q %q", w.Keys, w.Tables)
	}
	var empty WriteSet
	empty.Normalize()
	if len(empty.Keys) != 0 || len(empty.Tables) != 0 {
		t.Fatal("empty write set changed")
	}
}

// Entries written before write sets had a Schema field (V1),
// ReadTables (V2), SharedKeys (V3) or finer reads (V4) still decode, as
// write sets without a schema change, reads to certify or shared keys; a
// Schema the decoder does not know, or one set with DDL, is corrupt.
func TestDecodeEntryV1V2AndBadSchema(t *testing.T) {
	for _, c := range []struct {
		kind byte
		cut  int // bytes of the V6 encoding's end the older one lacks
	}{{kindBatchV1, 7}, {kindBatchV2, 6}, {kindBatchV3, 5}, {kindBatchV4, 4}, {kindBatchV5, 1}, {kindBatchV6, 0}} {
		var old []byte
		var want []WriteSet
		for _, w := range samples() {
			if w.Schema != SchemaNone && c.kind == kindBatchV1 || len(w.ReadTables) > 0 && c.kind < kindBatchV3 ||
				len(w.SharedKeys) > 0 && c.kind < kindBatchV4 || (len(w.ReadKeys) > 0 || w.ReadFilter != nil) && c.kind < kindBatchV5 || len(w.ReadRanges) > 0 || len(w.IndexKeys) > 0 && c.kind < kindBatchV6 {
				continue
			}
			enc := w.Append(nil)
			old = append(old, enc[:len(enc)-c.cut]...)
			want = append(want, w)
		}
		old = append([]byte{c.kind, byte(len(want))}, old...)
		e, err := DecodeEntry(old)
		if err != nil || e.Kind != KindBatch || len(e.Batch) != len(want) {
			t.Fatalf("kind %d entry: %+v, %v", c.kind, e, err)
		}
		for i := range want {
			if !equalWS(e.Batch[i], want[i]) {
				t.Fatalf("kind %d write set %d: got %+v, want %+v", c.kind, i, e.Batch[i], want[i])
			}
		}
	}
	for _, w := range []WriteSet{{Schema: SchemaAll + 1}, {DDL: "DROP TABLE t", Schema: SchemaTables}} {
		if _, _, err := Decode(w.Append(nil)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%+v: err = %v", w, err)
		}
	}
}

// Before ranges had a Prefix (V5, V6), a range was its two bounds.
func TestDecodeRangesWithoutPrefix(t *testing.T) {
	w := WriteSet{Origin: "n1", ReadRanges: []KeyRange{KeyRangeOf("t", []any{int64(1)}, []any{int64(9)})}}
	enc := w.Append(nil)
	// ... Lo, Hi, Prefix "" (one zero byte), no filter (0), no IndexKeys (0).
	v6 := append(bytes.Clone(enc[:len(enc)-3]), enc[len(enc)-2:]...)
	for _, kind := range []byte{kindBatchV5, kindBatchV6} {
		b := v6
		if kind == kindBatchV5 {
			b = b[:len(b)-1]
		}
		e, err := DecodeEntry(append([]byte{kind, 1}, b...))
		if err != nil || len(e.Batch) != 1 || !equalWS(e.Batch[0], w) {
			t.Fatalf("kind %d: %+v, %v", kind, e, err)
		}
	}
}

func TestKeyPrefixRangeContains(t *testing.T) {
	r := KeyPrefixRange("t", []any{int64(1)}, "ab")
	for _, c := range []struct {
		key  Key
		want bool
	}{
		{EncodeKey("t", int64(1), "ab"), true},
		{EncodeKey("t", int64(1), "abc", int64(7)), true},
		{EncodeKey("t", int64(1), "a"), false},
		{EncodeKey("t", int64(1), "b"), false},
		{EncodeKey("t", int64(1), "xab"), false},
		{EncodeKey("t", int64(2), "abc"), false},
		{EncodeKey("t", int64(1), []byte("abc")), false},
		{EncodeKey("t", int64(1)), false},
		{EncodeKey("u", int64(1), "abc"), false},
		{EncodeKey("t", int64(1), strings.Repeat("ab", 200)), true},
	} {
		if got := r.Contains(c.key); got != c.want {
			t.Errorf("Contains(%q) = %v", c.key, got)
		}
	}
}

func TestIsDDL(t *testing.T) {
	if (&WriteSet{}).IsDDL() || !(&WriteSet{DDL: "x"}).IsDDL() {
		t.Fatal("IsDDL")
	}
}

// equalWS compares write sets, taking nil and empty slices as equal (the
// encoding does not tell them apart).
func equalWS(a, b WriteSet) bool {
	norm := func(w WriteSet) WriteSet {
		if len(w.Keys) == 0 {
			w.Keys = nil
		}
		if len(w.Tables) == 0 {
			w.Tables = nil
		}
		if len(w.Changes) == 0 {
			w.Changes = nil
		}
		return w
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// Normalize sorts and deduplicates SharedKeys and drops those the write
// set writes: a row both written and relied on is written.
func TestNormalizeSharedKeys(t *testing.T) {
	p1, p2, c1 := EncodeKey("parent", int64(1)), EncodeKey("parent", int64(2)), EncodeKey("child", int64(1))
	w := WriteSet{Keys: []Key{p2, c1}, SharedKeys: []Key{p2, p1, p1}}
	w.Normalize()
	if !reflect.DeepEqual(w.SharedKeys, []Key{p1}) || !reflect.DeepEqual(w.Keys, []Key{c1, p2}) {
		t.Fatalf("keys %q, shared %q", w.Keys, w.SharedKeys)
	}
}
