package postgres

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// rowChange is one row a transaction changed, as a write set carries it
// to the other nodes: the table, and the row's old key (UPDATE, DELETE)
// and new contents (INSERT, UPDATE) as JSON objects of column names to
// values, in PostgreSQL's own JSON forms (to_jsonb), which
// jsonb_populate_record reads back into the same values of the column's
// type: numeric keeps its digits, timestamps their zone, bytea its bytes.
//
// A schema statement of the transaction (opSchema, Tx.ExecSchema) travels
// as a rowChange too, in its place among the rows: no table, and the
// statement's text in newRow.
type rowChange struct {
	op     byte // opInsert, opUpdate, opDelete or opSchema
	schema string
	table  string
	oldKey []byte // JSON object of the key columns (UPDATE, DELETE)
	newRow []byte // JSON object of every column (INSERT, UPDATE)
}

// recordKey is the member under which certa.capture_row_exact adds a
// row's record text (its columns in PostgreSQL's own text forms) to its
// JSON object, for a table whose values JSON cannot carry exactly (json
// keeps its text; a jsonb JSON null is not SQL NULL): the applier then
// makes the row from that text (apply.go). No column has this name: it
// is longer than PostgreSQL's longest identifier (63 bytes), so it also
// sorts last in jsonb's text, whose keys go by length first.
const recordKey = "certa.record: the whole row in its text form, exact where JSON is not"

// Operations of a rowChange, as the capture trigger records them.
const (
	opInsert = 'I'
	opUpdate = 'U'
	opDelete = 'D'
	opSchema = 'S'
	// opLocked is a row a nested SELECT locked for update
	// (certa.note_locked, locking.go): a key, no change.
	opLocked = 'L'
)

// rowsFormat is the first byte of a write set's Changes in this engine's
// format, which a SQLite changeset (starting with 'T' or 'P') never has.
const rowsFormat = 1

// appendRows appends the encoding of rows to dst: rowsFormat, then per row
// its op and four length-prefixed strings (uvarint lengths).
func appendRows(dst []byte, rows []rowChange) []byte {
	dst = append(dst, rowsFormat)
	for _, r := range rows {
		dst = append(dst, r.op)
		for _, s := range [][]byte{[]byte(r.schema), []byte(r.table), r.oldKey, r.newRow} {
			dst = binary.AppendUvarint(dst, uint64(len(s)))
			dst = append(dst, s...)
		}
	}
	return dst
}

var errBadRows = errors.New("malformed row changes")

// decodeRows decodes what appendRows wrote. The slices of the rows point
// into b.
func decodeRows(b []byte) ([]rowChange, error) {
	if len(b) == 0 || b[0] != rowsFormat {
		return nil, fmt.Errorf("%w: not in the postgres engine's format", errBadRows)
	}
	b = b[1:]
	var rows []rowChange
	for len(b) > 0 {
		r := rowChange{op: b[0]}
		if r.op != opInsert && r.op != opUpdate && r.op != opDelete && r.op != opSchema {
			return nil, fmt.Errorf("%w: operation %q", errBadRows, r.op)
		}
		b = b[1:]
		var parts [4][]byte
		for i := range parts {
			n, k := binary.Uvarint(b)
			if k <= 0 || n > uint64(len(b)-k) || k != len(binary.AppendUvarint(nil, n)) {
				return nil, fmt.Errorf("%w: truncated, or a length not written as appendRows writes it", errBadRows)
			}
			if n > 0 {
				parts[i] = b[k : k+int(n)]
			}
			b = b[k+int(n):]
		}
		r.schema, r.table, r.oldKey, r.newRow = string(parts[0]), string(parts[1]), parts[2], parts[3]
		if r.op == opSchema {
			if r.schema != "" || r.table != "" || len(r.oldKey) != 0 || len(r.newRow) == 0 {
				return nil, fmt.Errorf("%w: schema statement with a table or a key, or without its text", errBadRows)
			}
		} else if r.table == "" || (r.op == opInsert) != (len(r.oldKey) == 0) || (r.op == opDelete) != (len(r.newRow) == 0) {
			return nil, fmt.Errorf("%w: %c row of table %q with old key %d bytes, new row %d bytes", errBadRows, r.op, r.table, len(r.oldKey), len(r.newRow))
		}
		rows = append(rows, r)
	}
	return rows, nil
}
