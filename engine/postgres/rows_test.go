package postgres

import (
	"bytes"
	"reflect"
	"testing"
)

func TestRowsRoundTrip(t *testing.T) {
	rows := []rowChange{
		{op: opInsert, schema: "public", table: "t", newRow: []byte(`{"id": 1, "v": "a"}`)},
		{op: opUpdate, schema: "s", table: "T x", oldKey: []byte(`{"id": 1}`), newRow: []byte(`{"id": 2, "v": null}`)},
		{op: opDelete, schema: "public", table: "t", oldKey: []byte(`{"id": 2}`)},
	}
	got, err := decodeRows(appendRows(nil, rows))
	if err != nil || !reflect.DeepEqual(got, rows) {
		t.Fatalf("decodeRows = %+v, %v; want %+v", got, err, rows)
	}
	if got, err := decodeRows(appendRows(nil, nil)); err != nil || len(got) != 0 {
		t.Fatalf("no rows: %v %v", got, err)
	}
	for _, bad := range [][]byte{nil, {'T'}, {rowsFormat, 'X'}, {rowsFormat, opInsert, 1}, {rowsFormat, opDelete, 0, 1, 't', 0, 0}} {
		if _, err := decodeRows(bad); err == nil {
			t.Errorf("decodeRows(%q) succeeded", bad)
		}
	}
}

// FuzzDecodeRows: any input either fails or decodes to rows that encode
// back to the same bytes.
func FuzzDecodeRows(f *testing.F) {
	f.Add(appendRows(nil, []rowChange{{op: opInsert, schema: "public", table: "t", newRow: []byte(`{}`)}}))
	f.Add([]byte{rowsFormat})
	f.Fuzz(func(t *testing.T, b []byte) {
		rows, err := decodeRows(b)
		if err != nil {
			return
		}
		if again := appendRows(nil, rows); !bytes.Equal(again, b) {
			t.Fatalf("%x decodes and encodes back as %x", b, again)
		}
	})
}
