package postgres

import (
	"testing"

	"certa/result"
)

// Parameters reach the engine as the client sent them: text, and
// integers and text in binary, are read as key values; others are not.
func TestKeyArg(t *testing.T) {
	for _, c := range []struct {
		in   any
		want any
	}{
		{result.WireParam{OID: 0, Format: 0, Data: []byte("42")}, "42"},
		{result.WireParam{OID: 20, Format: 1, Data: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}}, int64(-2)},
		{result.WireParam{OID: 23, Format: 1, Data: []byte{0, 0, 1, 0}}, int64(256)},
		{result.WireParam{OID: 21, Format: 1, Data: []byte{0x80, 0}}, int64(-32768)},
		{result.WireParam{OID: 1043, Format: 1, Data: []byte("k1")}, "k1"},
		{int64(7), int64(7)},
	} {
		if got := keyArg(c.in); got != c.want {
			t.Errorf("%v: %v, want %v", c.in, got, c.want)
		}
	}
	for _, p := range []result.WireParam{{OID: 23, Format: 1, Data: []byte{1}}, {OID: 0, Format: 1, Data: []byte{0, 0, 0, 1}}, {OID: 701, Format: 1, Data: make([]byte, 8)}} {
		if got, ok := keyArg(p).(result.WireParam); !ok || got.OID != p.OID {
			t.Errorf("%v became %v", p, keyArg(p))
		}
	}
}

// A statement with a backslash in its text is not read by key: with
// standard_conforming_strings off, the session's string constants are
// not those the parser saw.
func TestReadLogBackslash(t *testing.T) {
	var l readLog
	l.note(`SELECT * FROM t WHERE name LIKE 'ab%'`, "", nil)
	l.note(`SELECT * FROM t WHERE name LIKE 'a\%'`, "", nil)
	if l.opaque || len(l.keyed) != 1 || len(l.named) != 1 || l.named[0].Name != "t" {
		t.Fatalf("readLog %+v", l)
	}
}
