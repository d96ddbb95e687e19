package pgbinary

import (
	"bytes"
	"encoding/binary"
	"io"
	"reflect"
	"testing"

	"certa/sqlerr"
)

// copyData builds binary COPY data of rows (nil fields are NULL).
func copyData(rows [][][]byte, trailer bool) []byte {
	var b bytes.Buffer
	b.Write(copySignature)
	binary.Write(&b, binary.BigEndian, uint32(0))
	binary.Write(&b, binary.BigEndian, uint32(0))
	for _, r := range rows {
		binary.Write(&b, binary.BigEndian, int16(len(r)))
		for _, f := range r {
			if f == nil {
				binary.Write(&b, binary.BigEndian, int32(-1))
				continue
			}
			binary.Write(&b, binary.BigEndian, int32(len(f)))
			b.Write(f)
		}
	}
	if trailer {
		binary.Write(&b, binary.BigEndian, int16(-1))
	}
	return b.Bytes()
}

func readRows(data []byte, columns int) ([][][]byte, string) {
	r := NewCopyReader(bytes.NewReader(data), columns)
	var rows [][][]byte
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, ""
		}
		if err != nil {
			return rows, sqlerr.Code(err)
		}
		rows = append(rows, row)
	}
}

func TestCopyReader(t *testing.T) {
	rows := [][][]byte{{{0, 0, 0, 1}, []byte("x")}, {{0, 0, 0, 2}, nil}, {{}, []byte{}}}
	for _, trailer := range []bool{true, false} {
		got, code := readRows(copyData(rows, trailer), 2)
		if code != "" || !reflect.DeepEqual(got, rows) {
			t.Errorf("trailer %v: %v %s", trailer, got, code)
		}
	}
	good := copyData(rows, true)
	for name, data := range map[string][]byte{
		"signature":  append([]byte("PGCOPY\n\xff\r\n\x01"), good[11:]...),
		"text data":  []byte("1\tx\n"),
		"cut short":  good[:len(good)-5],
		"after end":  append(append([]byte{}, good...), 0),
		"wrong size": copyData([][][]byte{{{1}}}, true),
	} {
		if _, code := readRows(data, 2); code != "22P04" {
			t.Errorf("%s: %q", name, code)
		}
	}
}
