package writeset

import "encoding/binary"

// Entry kinds, as DecodedEntry reports them.
const (
	KindBatch  byte = 1 // a batch of write sets, certified in order
	KindMember byte = 2 // a member's addresses (see Member)
)

// The first byte of every log entry: its kind, and for batches the
// encoding of their write sets. Entries written before write sets had a
// Schema field (kindBatchV1), ReadTables (kindBatchV2), SharedKeys
// (kindBatchV3), finer reads (kindBatchV4), index keys (kindBatchV5) or
// prefix ranges (kindBatchV6) still decode.
const (
	kindBatchV1 byte = 1
	kindBatchV2 byte = 3
	kindBatchV3 byte = 4
	kindBatchV4 byte = 5
	kindBatchV5 byte = 6
	kindBatchV6 byte = 7
	kindBatchV7 byte = 8
)

// Member is what the cluster knows about one node besides its Raft identity:
// where clients and peers reach it. It travels through the log so that every
// node knows every member's addresses.
type Member struct {
	ID       string
	PGAddr   string
	RaftAddr string
	HTTPAddr string
}

// MaxBatchOverhead bounds what EncodeBatch adds to the encodings of its
// write sets (WriteSet.Size): a kind byte and a count.
const MaxBatchOverhead = 1 + binary.MaxVarintLen64

// EncodeBatch encodes write sets as one log entry.
func EncodeBatch(ws []*WriteSet) []byte {
	size := MaxBatchOverhead
	for _, w := range ws {
		size += w.Size()
	}
	b := make([]byte, 0, size) // one allocation: entries can be tens of MB
	b = append(b, kindBatchV7)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	for _, w := range ws {
		b = w.Append(b)
	}
	return b
}

// EncodeMember encodes m as one log entry.
func EncodeMember(m Member) []byte {
	b := []byte{KindMember}
	for _, s := range []string{m.ID, m.PGAddr, m.RaftAddr, m.HTTPAddr} {
		b = appendString(b, s)
	}
	return b
}

// DecodedEntry is a decoded log entry: exactly one of Batch and Member is set
// according to Kind.
type DecodedEntry struct {
	Kind   byte
	Batch  []WriteSet
	Member Member
}

// DecodeEntry decodes a log entry made by EncodeBatch or EncodeMember.
func DecodeEntry(b []byte) (DecodedEntry, error) {
	if len(b) == 0 {
		return DecodedEntry{}, ErrCorrupt
	}
	e := DecodedEntry{Kind: b[0]}
	switch e.Kind {
	case kindBatchV1, kindBatchV2, kindBatchV3, kindBatchV4, kindBatchV5, kindBatchV6, kindBatchV7:
		kind := e.Kind
		e.Kind = KindBatch
		d := decoder{b: b[1:]}
		n := d.count()
		if d.err != nil {
			return DecodedEntry{}, d.err
		}
		e.Batch = make([]WriteSet, 0, n)
		rest := d.b
		for i := 0; i < n; i++ {
			w, r, err := decode(rest, kind)
			if err != nil {
				return DecodedEntry{}, err
			}
			e.Batch = append(e.Batch, w)
			rest = r
		}
		if len(rest) != 0 {
			return DecodedEntry{}, ErrCorrupt
		}
	case KindMember:
		d := decoder{b: b[1:]}
		e.Member = Member{ID: d.string(), PGAddr: d.string(), RaftAddr: d.string(), HTTPAddr: d.string()}
		if d.err != nil || len(d.b) != 0 {
			return DecodedEntry{}, ErrCorrupt
		}
	default:
		return DecodedEntry{}, ErrCorrupt
	}
	return e, nil
}
