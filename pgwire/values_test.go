package pgwire

import (
	"testing"

	"certa/result"
)

// Binary values round-trip through the encoder and the parameter decoder.
func TestBinaryValuesRoundTrip(t *testing.T) {
	for _, c := range []struct {
		typ  result.Type
		text string
		want any
	}{
		{result.Numeric, "0", "0"},
		{result.Numeric, "12.50", "12.50"},
		{result.Numeric, "-0.0001", "-0.0001"},
		{result.Numeric, "123456789.123456789", "123456789.123456789"},
		{result.Numeric, "10000", "10000"},
		{result.Numeric, "NaN", "NaN"},
		{result.UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{result.Date, "2026-11-21", "2026-11-21"},
		{result.Date, "1999-12-31", "1999-12-31"},
		{result.Timestamp, "2026-11-21 10:11:12.345678", "2026-11-21 10:11:12.345678"},
		{result.Timestamptz, "2026-11-21 10:11:12+02", "2026-11-21 08:11:12+00"},
		{result.Time, "10:11:12.5", "10:11:12.5"},
		{result.JSONB, `{"a": 1}`, `{"a": 1}`},
		{result.JSONB, `{"b":1, "a" : [2]}`, `{"a": [2], "b": 1}`},
	} {
		raw, err := appendValue(nil, c.typ, 1, c.text)
		if err != nil {
			t.Fatalf("%v %q: encode: %v", c.typ.OID(), c.text, err)
		}
		got, err := decodeParam(c.typ.OID(), 1, raw)
		if err != nil {
			t.Fatalf("%v %q: decode: %v", c.typ.OID(), c.text, err)
		}
		if got != c.want {
			t.Fatalf("type OID %d: %q came back as %q, want %q", c.typ.OID(), c.text, got, c.want)
		}
	}
}

// Parameters in text form are read as the embedded engine keeps their
// types: jsonb and text[] in the form PostgreSQL writes them back.
func TestTextParams(t *testing.T) {
	for _, c := range []struct {
		oid  uint32
		text string
		want any
	}{
		{result.JSONB.OID(), `{"b":1, "a" : [2]}`, `{"a": [2], "b": 1}`},
		{1009, `{"a", b , NULL}`, `{a,b,NULL}`},
		{1015, `{ "x y" }`, `{"x y"}`},
		{25, `{"a", b}`, `{"a", b}`},
	} {
		got, err := decodeParam(c.oid, 0, []byte(c.text))
		if err != nil || got != c.want {
			t.Errorf("type OID %d: %q read as %q, %v; want %q", c.oid, c.text, got, err, c.want)
		}
	}
	if _, err := decodeParam(result.JSON.OID(), 0, []byte(`{"a": }`)); err == nil {
		t.Error("invalid json read")
	}
}
