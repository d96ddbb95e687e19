package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// This file reads and writes SQLite's changeset format (documented in the session
// extension's source, sqlite3session.c, "Changeset Format"). SQLite's own
// iterator cannot tell an undefined value (a column an UPDATE did not
// change) from a NULL, which the applier needs, and allocates on every
// call; TestForEachChangeMatchesSQLiteIterator keeps the two in agreement.

// Operation codes of a change record (SQLITE_INSERT, SQLITE_UPDATE,
// SQLITE_DELETE).
const (
	opInsert = 18
	opUpdate = 23
	opDelete = 9
)

// Value kinds of the changeset format.
const (
	kindUndefined = 0
	kindInt       = 1
	kindFloat     = 2
	kindText      = 3
	kindBlob      = 4
	kindNull      = 5
)

// rowValue is one column value of a change record.
type rowValue struct {
	kind  byte
	i     int64
	f     float64
	bytes []byte // text or blob; points into the changeset
}

// rowChange is one decoded change record. Its slices are reused for the
// next record.
type rowChange struct {
	table string
	pk    []bool
	op    byte
	old   []rowValue // DELETE, UPDATE
	new   []rowValue // INSERT, UPDATE
}

var errBadChangeset = errors.New("malformed changeset")

// forEachChange calls fn for every change record of changeset, in order.
func forEachChange(changeset []byte, fn func(*rowChange) error) error {
	var ch rowChange
	b := changeset
	for len(b) > 0 {
		switch b[0] {
		case 'T':
			n, used := getVarint(b[1:])
			if used == 0 || n == 0 || n > 32767 || uint64(len(b)) < 1+uint64(used)+n {
				return errBadChangeset
			}
			b = b[1+used:]
			ch.pk = ch.pk[:0]
			for _, f := range b[:n] {
				ch.pk = append(ch.pk, f != 0)
			}
			b = b[n:]
			end := bytes.IndexByte(b, 0)
			if end < 0 {
				return errBadChangeset
			}
			ch.table = string(b[:end])
			b = b[end+1:]
		case opInsert, opUpdate, opDelete:
			if ch.table == "" || len(b) < 2 {
				return errBadChangeset
			}
			ch.op = b[0]
			b = b[2:] // op and indirect flag
			var err error
			ch.old, ch.new = ch.old[:0], ch.new[:0]
			if ch.op != opInsert {
				if ch.old, b, err = readRecord(b, len(ch.pk), ch.old); err != nil {
					return err
				}
			}
			if ch.op != opDelete {
				if ch.new, b, err = readRecord(b, len(ch.pk), ch.new); err != nil {
					return err
				}
			}
			if err := fn(&ch); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: unexpected byte 0x%02x", errBadChangeset, b[0])
		}
	}
	return nil
}

// readRecord reads n values from b into vals.
func readRecord(b []byte, n int, vals []rowValue) ([]rowValue, []byte, error) {
	for range n {
		if len(b) == 0 {
			return nil, nil, errBadChangeset
		}
		v := rowValue{kind: b[0]}
		b = b[1:]
		switch v.kind {
		case kindUndefined, kindNull:
		case kindInt, kindFloat:
			if len(b) < 8 {
				return nil, nil, errBadChangeset
			}
			u := binary.BigEndian.Uint64(b)
			v.i, v.f = int64(u), math.Float64frombits(u)
			b = b[8:]
		case kindText, kindBlob:
			size, used := getVarint(b)
			if used == 0 || uint64(len(b)-used) < size {
				return nil, nil, errBadChangeset
			}
			v.bytes = b[used : used+int(size)]
			b = b[used+int(size):]
		default:
			return nil, nil, fmt.Errorf("%w: value type %d", errBadChangeset, v.kind)
		}
		vals = append(vals, v)
	}
	return vals, b, nil
}

// getVarint decodes SQLite's variable-length integer (1 to 9 bytes, seven
// bits per byte big-endian, all eight bits of the ninth). used is 0 if b is
// too short.
func getVarint(b []byte) (v uint64, used int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// Writing the format (row images, rowimage.go).

// appendRecord appends vals; with only set, the others are undefined.
func appendRecord(b []byte, vals []rowValue, only []bool) []byte {
	for i, v := range vals {
		if only != nil && !only[i] {
			b = append(b, kindUndefined)
			continue
		}
		b = appendValue(b, v)
	}
	return b
}

// appendUpdateOld appends an UPDATE's old record: the primary key and the
// changed columns.
func appendUpdateOld(b []byte, vals []rowValue, changed []bool, pkPos []byte) []byte {
	for i, v := range vals {
		if pkPos[i] == 0 && !changed[i] {
			b = append(b, kindUndefined)
			continue
		}
		b = appendValue(b, v)
	}
	return b
}

func appendValue(b []byte, v rowValue) []byte {
	b = append(b, v.kind)
	switch v.kind {
	case kindInt:
		b = binary.BigEndian.AppendUint64(b, uint64(v.i))
	case kindFloat:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(v.f))
	case kindText, kindBlob:
		b = putVarint(b, uint64(len(v.bytes)))
		b = append(b, v.bytes...)
	}
	return b
}

// putVarint appends v in SQLite's variable-length integer format (see
// getVarint).
func putVarint(b []byte, v uint64) []byte {
	if v > 1<<56-1 {
		var buf [9]byte
		buf[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			buf[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return append(b, buf[:]...)
	}
	var buf [8]byte
	n := 0
	for {
		buf[n] = byte(v & 0x7f)
		n++
		v >>= 7
		if v == 0 {
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		c := buf[i]
		if i > 0 {
			c |= 0x80
		}
		b = append(b, c)
	}
	return b
}
