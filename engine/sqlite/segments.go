package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"

	"certa/writeset"
)

// The changes of a transaction block that ran schema statements
// (writeset.WriteSet.Schema set) cannot be one changeset: a changeset
// knows each table by one layout, and the rows written before an ALTER
// TABLE, or into a table the block created, must be applied before and
// after the statement, in the block's order. Such a write set's Changes
// is a list of segments instead, each a kind byte, a uvarint length and
// its bytes: a changeset of the rows written since the previous segment,
// or a schema statement as it ran (translated: createtable.go). A write
// set without Schema keeps a plain changeset.
const (
	segmentRows   = 'r'
	segmentSchema = 's'
)

// segment is one part of a schema transaction's changes.
type segment struct {
	kind byte
	data []byte // a changeset, or a schema statement
}

func appendSegment(b []byte, s segment) []byte {
	b = append(b, s.kind)
	b = binary.AppendUvarint(b, uint64(len(s.data)))
	return append(b, s.data...)
}

func encodeSegments(segs []segment) []byte {
	var b []byte
	for _, s := range segs {
		b = appendSegment(b, s)
	}
	return b
}

var errBadSegments = errors.New("malformed schema transaction changes")

// decodeSegments splits a schema transaction's changes; the segments'
// data point into b.
func decodeSegments(b []byte) ([]segment, error) {
	var segs []segment
	for len(b) > 0 {
		kind := b[0]
		if kind != segmentRows && kind != segmentSchema {
			return nil, fmt.Errorf("%w: segment kind %q", errBadSegments, kind)
		}
		n, used := binary.Uvarint(b[1:])
		if used <= 0 || n > uint64(len(b)-1-used) {
			return nil, fmt.Errorf("%w: segment length", errBadSegments)
		}
		start := 1 + used
		segs = append(segs, segment{kind, b[start : start+int(n)]})
		b = b[start+int(n):]
	}
	return segs, nil
}

// rowChangesets returns the changesets of ws's rows, in order: its
// Changes, or the row segments of a schema transaction.
func rowChangesets(ws *writeset.WriteSet) ([][]byte, error) {
	if ws.Schema == writeset.SchemaNone {
		return [][]byte{ws.Changes}, nil
	}
	segs, err := decodeSegments(ws.Changes)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, s := range segs {
		if s.kind == segmentRows {
			out = append(out, s.data)
		}
	}
	return out, nil
}

// forEachRowChange calls fn for every row change of ws, in order.
func forEachRowChange(ws *writeset.WriteSet, fn func(*rowChange) error) error {
	sets, err := rowChangesets(ws)
	if err != nil {
		return err
	}
	for _, cs := range sets {
		if err := forEachChange(cs, fn); err != nil {
			return err
		}
	}
	return nil
}

// checkChangesDecode reports whether ws's changes decode, segments and
// changesets alike.
func checkChangesDecode(ws *writeset.WriteSet) error {
	return forEachRowChange(ws, func(*rowChange) error { return nil })
}
