package writeset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"testing"
)

// The seed corpus is in testdata/fuzz; these add the samples as they encode
// today, so that the seeds follow the format.

// FuzzDecode: Decode never panics; it fails only with ErrCorrupt; what it
// decodes re-encodes to bytes that decode to the same write set; and when the
// input was canonical (every varint minimal, which Append always writes), the
// re-encoding is the input itself.
func FuzzDecode(f *testing.F) {
	for _, w := range samples() {
		f.Add(w.Append(nil))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		w, rest, err := Decode(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if len(rest) > len(b) || !bytes.Equal(rest, b[len(b)-len(rest):]) {
			t.Fatal("rest is not a suffix of the input")
		}
		used := b[:len(b)-len(rest)]
		enc := w.Append(nil)
		w2, rest2, err := Decode(enc)
		if err != nil || len(rest2) != 0 || !reflect.DeepEqual(w, w2) {
			t.Fatalf("re-encoding does not decode back: %v, %d left, %+v vs %+v", err, len(rest2), w2, w)
		}
		if !bytes.Equal(w2.Append(nil), enc) {
			t.Fatal("re-encoding is not stable")
		}
		if canonical(used, (*strict).writeSet) {
			if !bytes.Equal(enc, used) {
				t.Fatalf("canonical input %x re-encodes as %x", used, enc)
			}
		} else if len(enc) >= len(used) {
			t.Fatalf("non-canonical input %x re-encodes no shorter: %x", used, enc)
		}
		// Decoding the re-encoding followed by the same rest gives the same.
		w3, rest3, err := Decode(append(enc, rest...))
		if err != nil || !reflect.DeepEqual(w, w3) || !bytes.Equal(rest3, rest) {
			t.Fatal("decoding with the rest differs")
		}
	})
}

// FuzzDecodeEntry: DecodeEntry never panics, fails only with ErrCorrupt, and
// what it decodes re-encodes (EncodeBatch or EncodeMember) to an entry that
// decodes the same, and to the input itself when the input was canonical.
func FuzzDecodeEntry(f *testing.F) {
	ss := samples()
	var all []*WriteSet
	for i := range ss {
		all = append(all, &ss[i])
		f.Add(EncodeBatch([]*WriteSet{&ss[i]}))
	}
	f.Add(EncodeBatch(nil))
	f.Add(EncodeBatch(all))
	f.Add(EncodeMember(Member{ID: "n1", PGAddr: "127.0.0.1:5432", RaftAddr: "127.0.0.1:7000", HTTPAddr: "127.0.0.1:8080"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntry(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		var enc []byte
		switch e.Kind {
		case KindBatch:
			if e.Member != (Member{}) {
				t.Fatal("batch with a member")
			}
			ptrs := make([]*WriteSet, len(e.Batch))
			for i := range e.Batch {
				ptrs[i] = &e.Batch[i]
			}
			enc = EncodeBatch(ptrs)
		case KindMember:
			if e.Batch != nil {
				t.Fatal("member with a batch")
			}
			enc = EncodeMember(e.Member)
		default:
			t.Fatalf("decoded kind %d", e.Kind)
		}
		e2, err := DecodeEntry(enc)
		if err != nil || !reflect.DeepEqual(e, e2) {
			t.Fatalf("re-encoding does not decode back: %v, %+v vs %+v", err, e2, e)
		}
		if canonical(b, (*strict).entry) {
			if !bytes.Equal(enc, b) {
				t.Fatalf("canonical input %x re-encodes as %x", b, enc)
			}
		} else if len(enc) >= len(b) && b[0] == kindBatchV6 { // V1 to V5 re-encode with more bytes per write set
			t.Fatalf("non-canonical input %x re-encodes no shorter: %x", b, enc)
		}
	})
}

// strict walks the encoding like the decoder but accepts only minimal
// varints: it tells canonical encodings (what Append and EncodeBatch write)
// from others that the decoder also accepts.
type strict struct {
	b    []byte
	ok   bool
	kind byte // the entry kind whose write set encoding this is
}

func canonical(b []byte, walk func(*strict)) bool {
	s := &strict{b: b, ok: true, kind: kindBatchV7}
	walk(s)
	return s.ok && len(s.b) == 0
}

func (s *strict) uvarint() uint64 {
	if !s.ok {
		return 0
	}
	v, n := binary.Uvarint(s.b)
	if n <= 0 || (n > 1 && s.b[n-1] == 0) {
		s.ok = false
		return 0
	}
	s.b = s.b[n:]
	return v
}

func (s *strict) string() {
	n := s.uvarint()
	if !s.ok || n > uint64(len(s.b)) {
		s.ok = false
		return
	}
	s.b = s.b[n:]
}

func (s *strict) list() {
	n := s.uvarint()
	for i := uint64(0); i < n && s.ok; i++ {
		s.string()
	}
}

func (s *strict) writeSet() {
	s.string()  // Origin
	s.uvarint() // TxID
	s.uvarint() // Snapshot
	s.list()    // Keys
	s.list()    // Tables
	s.string()  // Changes
	s.string()  // DDL
	if s.kind != kindBatchV1 {
		s.schema() // Schema
	}
	if s.kind >= kindBatchV3 {
		s.list() // ReadTables
	}
	if s.kind >= kindBatchV4 {
		s.list() // SharedKeys
	}
	if s.kind >= kindBatchV5 {
		s.list() // ReadKeys
		n, per := s.uvarint(), uint64(2)
		if s.kind >= kindBatchV7 {
			per = 3 // and Prefix
		}
		for i := uint64(0); i < per*n && s.ok; i++ {
			s.string() // ReadRanges' bounds
		}
		if s.ok && len(s.b) > 0 && s.b[0] != 0 {
			s.b = s.b[1:]
			s.string() // ReadFilter
		} else {
			s.schema() // no filter: one zero byte
		}
	}
	if s.kind >= kindBatchV6 {
		s.list() // IndexKeys
	}
}

func (s *strict) schema() {
	if !s.ok || len(s.b) == 0 {
		s.ok = false
		return
	}
	s.b = s.b[1:]
}

func (s *strict) entry() {
	if len(s.b) == 0 {
		s.ok = false
		return
	}
	kind := s.b[0]
	s.b = s.b[1:]
	switch kind {
	case kindBatchV1, kindBatchV2, kindBatchV3, kindBatchV4, kindBatchV5, kindBatchV6, kindBatchV7:
		// Earlier kinds decode, but re-encode as V7: not canonical.
		s.ok = s.ok && kind == kindBatchV7
		s.kind = kind
		n := s.uvarint()
		for i := uint64(0); i < n && s.ok; i++ {
			s.writeSet()
		}
	case KindMember:
		for range 4 {
			s.string()
		}
	default:
		s.ok = false
	}
}
