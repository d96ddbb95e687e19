// Package writeset defines the write set: what a transaction changed, as it is
// ordered through the log, certified and applied on every node. It also holds
// the canonical encoding of row keys and the binary encoding of write sets and
// of log entries that carry them. The package is pure: no I/O, no clocks.
package writeset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
)

// Key identifies one row cluster-wide: its table and primary-key values in a
// canonical encoding. Two writes touch the same row iff their keys are equal.
type Key string

// WriteSet is one transaction's changes, captured at COMMIT on its origin node.
type WriteSet struct {
	Origin   string   // id of the node the client committed on
	TxID     uint64   // unique per origin process; the origin's session waits on it
	Snapshot uint64   // seqno of the state the transaction read (its snapshot)
	Keys     []Key    // rows written, sorted and without duplicates
	Tables   []string // tables written (or, for DDL, touched), sorted; DDL with no tables touches all
	Changes  []byte   // engine row changes (for SQLite: a session changeset)
	DDL      string   // if set, a statement executed at its position on every node (TOI)
	// Schema says whether the transaction also changed the schema, by
	// schema statements that its Changes carry in order with its rows (a
	// transaction block with DDL): it is certified as any transaction,
	// and then conflicts with older snapshots of the tables it changed as
	// a DDL does. Never set together with DDL.
	Schema Schema
	// ReadTables are the tables a serializable transaction read, and
	// those any transaction locked rows of where the engine could not
	// see the rows, sorted: it fails certification if a write set
	// committed after its snapshot wrote one of them. Nil for other
	// transactions (only their writes are certified).
	ReadTables []string
	// SharedKeys are rows the transaction relies on staying as they are
	// without writing them (a foreign key's parent row or unique value),
	// sorted and without duplicates, none of them in Keys: it fails
	// certification if a write set committed after its snapshot wrote one
	// of them (has it in Keys), and a later write set with one of them in
	// its Keys fails against it, but two that share a key do not conflict
	// (Galera's shared keys).
	SharedKeys []Key
	// ReadKeys are rows a serializable transaction read by key, whether
	// it found them or not, sorted and without duplicates, none of them in
	// Keys or SharedKeys nor of a table of ReadTables; ReadRanges are key
	// ranges it scanned (phantoms), sorted; ReadFilter holds its keys read
	// instead of ReadKeys when they are many (CompactReads). It fails
	// certification if a write set committed after its snapshot wrote a
	// key one of them covers (reads.go).
	ReadKeys   []Key
	ReadRanges []KeyRange
	ReadFilter *Filter
	// IndexKeys are the index entries the transaction's rows take: for
	// every row it inserts, and every row whose indexed column it
	// changes, IndexKey(table, column, new value), sorted and without
	// duplicates. They are certified only against serializable reads of
	// index ranges (ReadRanges over IndexTable names), never against each
	// other: they tell a reader of `WHERE k BETWEEN ...` that a row came
	// into its range (a phantom).
	IndexKeys []Key
}

// Schema is what a transaction's own schema statements changed.
type Schema byte

const (
	SchemaNone   Schema = 0 // no schema statement
	SchemaTables Schema = 1 // the schema of the write set's Tables
	SchemaAll    Schema = 2 // the schema of every table (a statement that names none of its own)
)

// IsDDL reports whether w is a schema change executed in total order.
func (w *WriteSet) IsDDL() bool { return w.DDL != "" }

// Normalize sorts and deduplicates Keys, Tables, ReadTables, SharedKeys,
// ReadKeys and ReadRanges, drops from SharedKeys the keys Keys has, and
// from ReadKeys and ReadRanges what Keys, SharedKeys or ReadTables cover
// already, so that equal write sets encode equally.
func (w *WriteSet) Normalize() {
	sort.Slice(w.Keys, func(i, j int) bool { return w.Keys[i] < w.Keys[j] })
	w.Keys = dedup(w.Keys)
	sort.Strings(w.Tables)
	w.Tables = dedup(w.Tables)
	sort.Strings(w.ReadTables)
	w.ReadTables = dedup(w.ReadTables)
	if len(w.SharedKeys) > 0 {
		sort.Slice(w.SharedKeys, func(i, j int) bool { return w.SharedKeys[i] < w.SharedKeys[j] })
		shared := dedup(w.SharedKeys)
		w.SharedKeys = shared[:0]
		for _, k := range shared { // a key written is written, not shared
			if i := sort.Search(len(w.Keys), func(i int) bool { return w.Keys[i] >= k }); i == len(w.Keys) || w.Keys[i] != k {
				w.SharedKeys = append(w.SharedKeys, k)
			}
		}
	}
	if len(w.ReadKeys) > 0 || len(w.ReadRanges) > 0 {
		w.normalizeReads()
	}
	if len(w.IndexKeys) > 0 {
		sort.Slice(w.IndexKeys, func(i, j int) bool { return w.IndexKeys[i] < w.IndexKeys[j] })
		w.IndexKeys = dedup(w.IndexKeys)
	}
}

// normalizeReads is Normalize for ReadKeys and ReadRanges.
func (w *WriteSet) normalizeReads() {
	has := func(list []string, t string) bool {
		i := sort.SearchStrings(list, t)
		return i < len(list) && list[i] == t
	}
	hasKey := func(list []Key, k Key) bool {
		i := sort.Search(len(list), func(i int) bool { return list[i] >= k })
		return i < len(list) && list[i] == k
	}
	sort.Slice(w.ReadKeys, func(i, j int) bool { return w.ReadKeys[i] < w.ReadKeys[j] })
	keys := dedup(w.ReadKeys)
	w.ReadKeys = keys[:0]
	for _, k := range keys { // a key written or shared conflicts with any later write already
		if !hasKey(w.Keys, k) && !hasKey(w.SharedKeys, k) && !has(w.ReadTables, k.Table()) {
			w.ReadKeys = append(w.ReadKeys, k)
		}
	}
	if len(w.ReadKeys) == 0 {
		w.ReadKeys = nil
	}
	sort.Slice(w.ReadRanges, func(i, j int) bool {
		a, b := w.ReadRanges[i], w.ReadRanges[j]
		return a.Lo < b.Lo || a.Lo == b.Lo && (a.Hi < b.Hi || a.Hi == b.Hi && a.Prefix < b.Prefix)
	})
	ranges := dedup(w.ReadRanges)
	w.ReadRanges = ranges[:0]
	for _, r := range ranges {
		if !has(w.ReadTables, r.Table()) {
			w.ReadRanges = append(w.ReadRanges, r)
		}
	}
	if len(w.ReadRanges) == 0 {
		w.ReadRanges = nil
	}
}

func dedup[T comparable](s []T) []T {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// Value tags of the key encoding.
const (
	tagNull  = 0
	tagInt   = 1
	tagFloat = 2
	tagText  = 3
	tagBlob  = 4
)

// EncodeKey returns the key of the row of table whose primary-key values are
// pk, in primary-key column order. Each value is nil, int64, float64, string
// or []byte; any other type panics (a programming error).
//
// Two values get the same encoding exactly when SQLite's BINARY comparison
// finds them equal, so that certification and the engine's unique index
// agree: a float64 holding an integer is encoded as that int64 (SQLite finds
// 1 and 1.0 equal in a column without integer or real affinity), and -0.0 as 0.
// Engines refuse key columns whose equality is anything else (collations).
func EncodeKey(table string, pk ...any) Key {
	b := make([]byte, 0, len(table)+1+9*len(pk))
	b = append(b, table...)
	b = append(b, 0)
	for _, v := range pk {
		switch v := v.(type) {
		case nil:
			b = append(b, tagNull)
		case int64:
			b = append(b, tagInt)
			b = binary.BigEndian.AppendUint64(b, uint64(v)^(1<<63))
		case float64:
			if i, ok := exactInt(v); ok {
				b = append(b, tagInt)
				b = binary.BigEndian.AppendUint64(b, uint64(i)^(1<<63))
				break
			}
			b = append(b, tagFloat)
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
		case string:
			b = append(b, tagText)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case []byte:
			b = append(b, tagBlob)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		default:
			panic(fmt.Sprintf("writeset: unsupported key value type %T", v))
		}
	}
	return Key(b)
}

// exactInt returns f as an int64 if it holds an integer in int64's range
// (-0.0 included, as 0).
func exactInt(f float64) (int64, bool) {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}

// Table returns the table name part of k.
func (k Key) Table() string {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return string(k[:i])
		}
	}
	return string(k)
}

// ErrCorrupt is returned when bytes do not decode as a write set or entry.
var ErrCorrupt = errors.New("writeset: corrupt encoding")

// Append appends the binary encoding of w to b.
func (w *WriteSet) Append(b []byte) []byte {
	b = appendString(b, w.Origin)
	b = binary.AppendUvarint(b, w.TxID)
	b = binary.AppendUvarint(b, w.Snapshot)
	b = binary.AppendUvarint(b, uint64(len(w.Keys)))
	for _, k := range w.Keys {
		b = appendString(b, string(k))
	}
	b = binary.AppendUvarint(b, uint64(len(w.Tables)))
	for _, t := range w.Tables {
		b = appendString(b, t)
	}
	b = appendString(b, string(w.Changes))
	b = appendString(b, w.DDL)
	b = append(b, byte(w.Schema))
	b = binary.AppendUvarint(b, uint64(len(w.ReadTables)))
	for _, t := range w.ReadTables {
		b = appendString(b, t)
	}
	b = binary.AppendUvarint(b, uint64(len(w.SharedKeys)))
	for _, k := range w.SharedKeys {
		b = appendString(b, string(k))
	}
	b = w.appendReads(b)
	b = binary.AppendUvarint(b, uint64(len(w.IndexKeys)))
	for _, k := range w.IndexKeys {
		b = appendString(b, string(k))
	}
	return b
}

// Size returns the length of w's binary encoding (Append), without encoding it.
func (w *WriteSet) Size() int {
	n := stringSize(len(w.Origin)) + uvarintSize(w.TxID) + uvarintSize(w.Snapshot)
	n += uvarintSize(uint64(len(w.Keys)))
	for _, k := range w.Keys {
		n += stringSize(len(k))
	}
	n += uvarintSize(uint64(len(w.Tables)))
	for _, t := range w.Tables {
		n += stringSize(len(t))
	}
	n += stringSize(len(w.Changes)) + stringSize(len(w.DDL)) + 1
	n += uvarintSize(uint64(len(w.ReadTables)))
	for _, t := range w.ReadTables {
		n += stringSize(len(t))
	}
	n += uvarintSize(uint64(len(w.SharedKeys)))
	for _, k := range w.SharedKeys {
		n += stringSize(len(k))
	}
	n += w.readsSize() + uvarintSize(uint64(len(w.IndexKeys)))
	for _, k := range w.IndexKeys {
		n += stringSize(len(k))
	}
	return n
}

func stringSize(n int) int { return uvarintSize(uint64(n)) + n }

func uvarintSize(v uint64) int {
	n := 1
	for ; v >= 0x80; v >>= 7 {
		n++
	}
	return n
}

// Decode decodes one write set from the front of b and returns the rest.
// The write set does not alias b.
func Decode(b []byte) (WriteSet, []byte, error) { return decode(b, kindBatchV7) }

// decode decodes one write set in the encoding of entries of kind: those
// written before the Schema field existed (kindBatchV1), ReadTables
// (kindBatchV2), SharedKeys (kindBatchV3), ReadKeys, ReadRanges and
// ReadFilter (kindBatchV4), IndexKeys (kindBatchV5) or ranges' Prefix
// (kindBatchV6) lack them.
func decode(b []byte, kind byte) (WriteSet, []byte, error) {
	d := decoder{b: b}
	var w WriteSet
	w.Origin = d.string()
	w.TxID = d.uvarint()
	w.Snapshot = d.uvarint()
	if n := d.count(); n > 0 {
		w.Keys = make([]Key, n)
		for i := range w.Keys {
			w.Keys[i] = Key(d.string())
		}
	}
	if n := d.count(); n > 0 {
		w.Tables = make([]string, n)
		for i := range w.Tables {
			w.Tables[i] = d.string()
		}
	}
	if c := d.string(); c != "" {
		w.Changes = []byte(c)
	}
	w.DDL = d.string()
	if kind != kindBatchV1 {
		w.Schema = Schema(d.byte())
		if w.Schema > SchemaAll || w.Schema != SchemaNone && w.DDL != "" {
			d.fail()
		}
	}
	if kind >= kindBatchV3 {
		if n := d.count(); n > 0 {
			w.ReadTables = make([]string, n)
			for i := range w.ReadTables {
				w.ReadTables[i] = d.string()
			}
		}
	}
	if kind >= kindBatchV4 {
		if n := d.count(); n > 0 {
			w.SharedKeys = make([]Key, n)
			for i := range w.SharedKeys {
				w.SharedKeys[i] = Key(d.string())
			}
		}
	}
	if kind >= kindBatchV5 {
		d.reads(&w, kind)
	}
	if kind >= kindBatchV6 {
		if n := d.count(); n > 0 {
			w.IndexKeys = make([]Key, n)
			for i := range w.IndexKeys {
				w.IndexKeys[i] = Key(d.string())
			}
		}
	}
	if d.err != nil {
		return WriteSet{}, nil, d.err
	}
	return w, d.b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads varints and strings, remembering the first error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = ErrCorrupt
	}
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) == 0 {
		d.err = ErrCorrupt
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = ErrCorrupt
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a length that must fit in the remaining bytes (each element
// takes at least one byte), so corrupt input cannot make us allocate much.
func (d *decoder) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = ErrCorrupt
		return 0
	}
	return int(n)
}

func (d *decoder) string() string {
	n := d.count()
	if d.err != nil {
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
