package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// resultWriter turns a session's results into protocol messages, all in
// text format. It checks the order of calls the result.Writer contract
// promises, because a session breaking it would otherwise produce a stream
// clients misparse (a DataRow whose width differs from its RowDescription).
type resultWriter struct {
	c      *conn
	ncols  int  // columns of the current result set
	inRows bool // between Columns and Complete

	fields []pgproto3.FieldDescription // reused across result sets
	enc    rowEncoder
}

var _ result.WireWriter = (*resultWriter)(nil)

// WireFormats: the simple query protocol's results are all text.
func (w *resultWriter) WireFormats() ([]int16, bool) { return nil, true }

// SimpleQuery: resultWriter writes the results of a simple Query.
func (w *resultWriter) SimpleQuery() bool { return true }

// fieldType returns a column's type OID and pg_type.typlen (-1 also for
// the fixed-width types certa has no Type of: not known here).
func fieldType(col result.Column) (oid uint32, size int16) {
	t := textIfUnknown(col.Type)
	return t.OID(), typeSize(t)
}

// appendWire appends a Wire value as it is; ok is false for other values.
func appendWire(dst []byte, v result.Value) ([]byte, bool) {
	if raw, ok := v.(result.Wire); ok {
		return append(dst, raw...), true
	}
	return dst, false
}

// typeSize is pg_type.typlen for the types certa sends: fixed-width types
// report their width, variable-width ones -1.
func typeSize(t result.Type) int16 {
	switch t {
	case result.Int8, result.Float8:
		return 8
	case result.Int4, result.Float4:
		return 4
	case result.Int2:
		return 2
	case result.Bool:
		return 1
	default:
		return -1
	}
}

func (w *resultWriter) Columns(cols []result.Column) error {
	if w.inRows {
		return misuse("Columns called twice without Complete")
	}
	w.fields = w.fields[:0]
	for _, col := range cols {
		oid, size := fieldType(col)
		w.fields = append(w.fields, pgproto3.FieldDescription{
			Name:         []byte(col.Name),
			DataTypeOID:  oid,
			DataTypeSize: size,
			TypeModifier: col.WireMod(),
			Format:       pgproto3.TextFormat,
		})
	}
	w.ncols = len(cols)
	w.inRows = true
	return w.c.send(&pgproto3.RowDescription{Fields: w.fields})
}

func (w *resultWriter) Row(values []result.Value) error {
	if !w.inRows {
		return misuse("Row called before Columns")
	}
	if len(values) != w.ncols {
		return misuse("row has %d values for %d columns", len(values), w.ncols)
	}
	vals, err := w.enc.encode(values, func(dst []byte, i int, v result.Value) ([]byte, error) {
		if dst, ok := appendWire(dst, v); ok {
			return dst, nil
		}
		dst, err := pgtext.AppendValue(dst, v)
		if err != nil {
			return dst, misuse("column %d: %v", i+1, err)
		}
		return dst, nil
	})
	if err != nil {
		return err
	}
	return w.c.send(&pgproto3.DataRow{Values: vals})
}

// rowEncoder turns a row's values into a DataRow's value slices, reusing
// its buffers from row to row.
type rowEncoder struct {
	buf  []byte
	ends []int
	vals [][]byte
}

// encode encodes each non-nil value with appendOne; nil values are NULL.
// The result is valid until the next call.
func (e *rowEncoder) encode(values []result.Value, appendOne func(dst []byte, i int, v result.Value) ([]byte, error)) ([][]byte, error) {
	// Encode all values first and slice afterwards: buf may move while it
	// grows.
	if e.buf == nil {
		// Must be non-nil so that an empty string slices to an empty,
		// non-nil value: a nil value is sent as NULL.
		e.buf = make([]byte, 0, 256)
	}
	e.buf, e.ends = e.buf[:0], e.ends[:0]
	for i, v := range values {
		if v != nil {
			var err error
			if e.buf, err = appendOne(e.buf, i, v); err != nil {
				return nil, err
			}
		}
		e.ends = append(e.ends, len(e.buf))
	}
	e.vals = e.vals[:0]
	start := 0
	for i, end := range e.ends {
		if values[i] == nil {
			e.vals = append(e.vals, nil)
		} else {
			e.vals = append(e.vals, e.buf[start:end:end])
		}
		start = end
	}
	return e.vals, nil
}

func (w *resultWriter) Complete(tag string) error {
	w.inRows = false
	return w.c.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
}

func (w *resultWriter) Empty() error {
	if w.inRows {
		return misuse("Empty called inside a result set")
	}
	return w.c.send(&pgproto3.EmptyQueryResponse{})
}

// misuse is the error for a session breaking the result.Writer contract.
func misuse(format string, args ...any) error {
	return sqlerr.New(sqlerr.Internal, "pgwire: result writer misuse: "+format, args...)
}
