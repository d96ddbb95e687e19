package writeset

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"sort"
	"strings"
)

// A serializable transaction's reads travel in its write set at three
// grains, finest first: rows read by key (ReadKeys, or ReadFilter when
// they are many), key ranges scanned (ReadRanges), and whole tables
// (ReadTables). The certifier fails the transaction if a write set
// committed after its snapshot wrote a key that any of them covers.

// KeyRange is the set of a table's keys from Lo to Hi, both included,
// compared as byte strings on the prefix each bound has: Lo and Hi are
// EncodeKey of the table and the leading primary-key values of the range's
// ends (KeyRangeOf), so a key k is in it iff k >= Lo and k's first len(Hi)
// bytes are <= Hi. Encoded integers keep their order, so a range over a
// leading integer key column holds exactly the keys whose column is within
// it; equal leading values of any type (a prefix of the key) select the
// keys that start with them. Engines give ranges with unequal ends only
// over columns whose keys all encode as integers (other values'
// encodings do not keep their order).
//
// A range with a Prefix (a text prefix predicate: k LIKE 'abc%') has
// Lo = Hi and holds the keys that start with Lo and whose next value is
// text that starts with Prefix (bytes of UTF-8): text keys encode their
// length first, so those keys are no interval of bytes.
type KeyRange struct {
	Lo, Hi Key
	Prefix string
}

// KeyRangeOf returns the range of table's keys whose leading primary-key
// values are from lo to hi, both included: a bound with fewer values than
// the key has columns takes in every key that starts with them, so a nil
// bound is open (every key of the table on that side), and lo = hi =
// [a] is every key whose first column is a. Values are as for EncodeKey.
func KeyRangeOf(table string, lo, hi []any) KeyRange {
	return KeyRange{Lo: EncodeKey(table, lo...), Hi: EncodeKey(table, hi...)}
}

// indexSep separates a table's name from its column's in the name of an
// index table: a byte table names do not hold in practice (a name that
// did would only share keys with it, which costs aborts, never misses).
const indexSep = "\x01"

// IndexTable names the keys of the index entries of table's column
// (IndexKey), as the table of keys and ranges.
func IndexTable(table, column string) string { return table + indexSep + column }

// IndexKey is the index entry of a row of table whose column holds value
// (as for EncodeKey).
func IndexKey(table, column string, value any) Key {
	return EncodeKey(IndexTable(table, column), value)
}

// BaseTable is the table an index table (IndexTable) belongs to, and any
// other table itself: its schema changes are the index's.
func BaseTable(table string) string {
	if i := strings.Index(table, indexSep); i >= 0 {
		return table[:i]
	}
	return table
}

// IndexColumn returns the column whose index entries the index table t
// (IndexTable) holds; ok is false for any other table.
func IndexColumn(t string) (column string, ok bool) {
	if i := strings.Index(t, indexSep); i >= 0 {
		return t[i+len(indexSep):], true
	}
	return "", false
}

// Table returns the table of r.
func (r KeyRange) Table() string { return r.Lo.Table() }

// KeyPrefixRange returns the range of table's keys whose leading
// primary-key values are lead and whose next value is text that starts
// with prefix.
func KeyPrefixRange(table string, lead []any, prefix string) KeyRange {
	k := EncodeKey(table, lead...)
	return KeyRange{Lo: k, Hi: k, Prefix: prefix}
}

// Contains reports whether key k (of any table) is in r.
func (r KeyRange) Contains(k Key) bool {
	if r.Prefix != "" {
		return r.holdsPrefixed(k)
	}
	if k < r.Lo {
		return false
	}
	if len(k) > len(r.Hi) {
		k = k[:len(r.Hi)]
	}
	return k <= r.Hi
}

// holdsPrefixed is Contains of a range with a Prefix.
func (r KeyRange) holdsPrefixed(k Key) bool {
	if len(k) <= len(r.Lo) || k[:len(r.Lo)] != r.Lo || k[len(r.Lo)] != tagText {
		return false
	}
	rest := string(k[len(r.Lo)+1:])
	n, w := binary.Uvarint([]byte(rest[:min(len(rest), binary.MaxVarintLen64)]))
	return w > 0 && n >= uint64(len(r.Prefix)) && strings.HasPrefix(rest[w:], r.Prefix)
}

// valid reports whether r's bounds name one table and r holds Lo (so it
// is not empty), or for a Prefix range whether Lo = Hi names a table.
func (r KeyRange) valid() bool {
	t := r.Lo.Table()
	if r.Prefix != "" {
		return len(t) < len(r.Lo) && r.Hi == r.Lo
	}
	return len(t) < len(r.Lo) && len(t) < len(r.Hi) && r.Hi[:len(t)+1] == r.Lo[:len(t)+1] && r.Contains(r.Lo)
}

// Filter is a Bloom filter of keys with fixed hashing, so that every node
// finds the same keys in it: the bits of key k are mix(h + i*γ) mod m for
// i = 1..K, where h is FNV-1a (64 bits) of k, mix SplitMix64's finaliser,
// γ = 0x9e3779b97f4a7c15 and m = 8*len(Bits) (bit b is Bits[b/8]'s bit
// b%8). A key added is always found; a key not added is found with
// probability about the rate the filter was sized for.
type Filter struct {
	K    uint8
	Bits []byte
}

// NewFilter returns a filter holding keys, sized for a false-positive rate
// of fpRate (0 < fpRate < 1): about -n ln(fpRate) / ln(2)^2 bits for n keys.
func NewFilter(keys []Key, fpRate float64) *Filter {
	n := float64(max(len(keys), 1))
	bits := math.Ceil(-n * math.Log(fpRate) / (math.Ln2 * math.Ln2))
	k := math.Round(bits / n * math.Ln2)
	f := &Filter{K: uint8(min(max(k, 1), 32)), Bits: make([]byte, (int(bits)+7)/8)}
	for _, key := range keys {
		f.add(key)
	}
	return f
}

// bits calls visit with each of k's bits until visit returns false.
func (f *Filter) bits(k Key, visit func(bit uint64) bool) {
	h := fnv.New64a()
	h.Write([]byte(k))
	x, m := h.Sum64(), uint64(len(f.Bits))*8
	for range f.K {
		x += 0x9e3779b97f4a7c15
		z := (x ^ x>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		if !visit((z ^ z>>31) % m) {
			return
		}
	}
}

func (f *Filter) add(k Key) {
	f.bits(k, func(b uint64) bool { f.Bits[b/8] |= 1 << (b % 8); return true })
}

// MayContain reports whether k may have been added to f: always true for a
// key that was, and rarely for one that was not.
func (f *Filter) MayContain(k Key) bool {
	found := true
	f.bits(k, func(b uint64) bool { found = f.Bits[b/8]&(1<<(b%8)) != 0; return found })
	return found
}

// Read-set limits. A serializable transaction's keys read beyond
// FilterMinKeys travel as a Filter (sized for DefaultFilterFPRate unless
// the origin says otherwise); ranges beyond MaxReadRanges, and keys beyond
// MaxReadKeys, fall back to their tables (coarser, never unchecked).
const (
	FilterMinKeys       = 256
	DefaultFilterFPRate = 0.01
	MaxReadRanges       = 256
	MaxReadKeys         = 1 << 20
)

// CompactReads bounds w's read set for the log (call it after Normalize):
// more than MaxReadRanges ranges become their tables, more than
// MaxReadKeys keys their tables, and more than FilterMinKeys keys a
// Filter sized for fpRate (0 < fpRate < 1; the filter says its size, so
// nodes need not agree on the rate). It returns the exact keys the filter
// holds (nil if none was built), for the origin to tell a false positive
// from a real conflict (IsFilterFalsePositive).
func (w *WriteSet) CompactReads(fpRate float64) (filtered []Key) {
	if len(w.ReadRanges) > MaxReadRanges {
		for _, r := range w.ReadRanges {
			w.ReadTables = append(w.ReadTables, r.Table())
		}
		w.ReadRanges = nil
	}
	if len(w.ReadKeys) > MaxReadKeys {
		for _, k := range w.ReadKeys {
			w.ReadTables = append(w.ReadTables, k.Table())
		}
		w.ReadKeys = nil
	}
	sort.Strings(w.ReadTables)
	w.ReadTables = dedup(w.ReadTables)
	if len(w.ReadKeys) > FilterMinKeys {
		filtered = w.ReadKeys
		w.ReadFilter = NewFilter(filtered, fpRate)
		w.ReadKeys = nil
	}
	return filtered
}

// IsFilterFalsePositive reports whether key, which a certification found
// in a filter built from the exact keys filtered (sorted, as CompactReads
// returns them), is not among them: the abort it caused was the filter's
// false positive.
func IsFilterFalsePositive(filtered []Key, key Key) bool {
	i := sort.Search(len(filtered), func(i int) bool { return filtered[i] >= key })
	return len(filtered) > 0 && (i == len(filtered) || filtered[i] != key)
}

// appendReads appends the encoding of w's ReadKeys, ReadRanges and
// ReadFilter (kindBatchV7; kindBatchV5 and V6 had no Prefix).
func (w *WriteSet) appendReads(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(w.ReadKeys)))
	for _, k := range w.ReadKeys {
		b = appendString(b, string(k))
	}
	b = binary.AppendUvarint(b, uint64(len(w.ReadRanges)))
	for _, r := range w.ReadRanges {
		b = appendString(b, string(r.Lo))
		b = appendString(b, string(r.Hi))
		b = appendString(b, r.Prefix)
	}
	if w.ReadFilter == nil {
		return append(b, 0)
	}
	b = append(b, w.ReadFilter.K)
	return appendString(b, string(w.ReadFilter.Bits))
}

func (w *WriteSet) readsSize() int {
	n := uvarintSize(uint64(len(w.ReadKeys)))
	for _, k := range w.ReadKeys {
		n += stringSize(len(k))
	}
	n += uvarintSize(uint64(len(w.ReadRanges)))
	for _, r := range w.ReadRanges {
		n += stringSize(len(r.Lo)) + stringSize(len(r.Hi)) + stringSize(len(r.Prefix))
	}
	n++
	if w.ReadFilter != nil {
		n += stringSize(len(w.ReadFilter.Bits))
	}
	return n
}

// ReadSize returns the bytes w's read set takes in its encoding (tables,
// keys, ranges and filter), for metrics.
func (w *WriteSet) ReadSize() int {
	n := w.readsSize()
	for _, t := range w.ReadTables {
		n += stringSize(len(t))
	}
	return n
}

func (d *decoder) reads(w *WriteSet, kind byte) {
	if n := d.count(); n > 0 {
		w.ReadKeys = make([]Key, n)
		for i := range w.ReadKeys {
			w.ReadKeys[i] = Key(d.string())
		}
	}
	if n := d.count(); n > 0 {
		w.ReadRanges = make([]KeyRange, n)
		for i := range w.ReadRanges {
			r := KeyRange{Lo: Key(d.string()), Hi: Key(d.string())}
			if kind >= kindBatchV7 {
				r.Prefix = d.string()
			}
			if d.err == nil && !r.valid() {
				d.fail()
			}
			w.ReadRanges[i] = r
		}
	}
	if k := d.byte(); k != 0 {
		bits := d.string()
		if d.err == nil && (k > 32 || len(bits) == 0) {
			d.fail()
		}
		w.ReadFilter = &Filter{K: k, Bits: []byte(bits)}
	}
}
