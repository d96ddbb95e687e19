// Package result holds the shape of a statement's result as it travels from an
// engine through a session to the wire: column types, values and the writer a
// session reports results to. It has no dependencies so that every layer can
// share it without importing another.
package result

// Type is a column's type as certa reports it to clients.
type Type int

// The column types. Values of each type are carried as the Go type named.
const (
	Text    Type = iota // string
	Int8                // int64
	Float8              // float64
	Bytea               // []byte
	Bool                // bool
	Unknown             // unknown yet (no declared type, no value seen): sent as text
)

// OID returns the PostgreSQL type OID for t.
func (t Type) OID() uint32 {
	switch t {
	case Int8:
		return 20
	case Float8:
		return 701
	case Bytea:
		return 17
	case Bool:
		return 16
	default:
		return 25
	}
}

// Column describes one result column.
type Column struct {
	Name string
	Type Type
}

// Value is one cell: nil (SQL NULL), int64, float64, string, []byte or bool.
type Value = any

// Writer receives the results of the statements a session runs, in order.
// For each statement a session calls either Columns, then Row zero or more
// times, then Complete; or Complete alone (no result set); or Empty (an empty
// statement). A Writer's error (the client went away) stops the session's work.
type Writer interface {
	Columns(cols []Column) error
	// Row passes one row; the slice is only valid during the call.
	Row(values []Value) error
	// Complete ends a statement with its PostgreSQL command tag, e.g. "INSERT 0 1".
	Complete(tag string) error
	Empty() error
}
