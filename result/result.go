// Package result holds the shape of a statement's result as it travels from an
// engine through a session to the wire: column types, values and the writer a
// session reports results to. It has no dependencies so that every layer can
// share it without importing another.
package result

import "io"

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

	// Types stored as text in their PostgreSQL text form and reported with
	// their own OIDs, so that drivers convert them to native values.
	Numeric     // string
	Date        // string
	Time        // string
	Timestamp   // string
	Timestamptz // string
	UUID        // string
	JSON        // string
	JSONB       // string
	Int4        // int64 (declared integer)
	Int2        // int64 (declared smallint)
	Float4      // float64 (declared real)
)

// oids are the PostgreSQL type OIDs of the types.
var oids = map[Type]uint32{
	Text: 25, Int8: 20, Float8: 701, Bytea: 17, Bool: 16, Unknown: 25,
	Numeric: 1700, Date: 1082, Time: 1083, Timestamp: 1114, Timestamptz: 1184,
	UUID: 2950, JSON: 114, JSONB: 3802, Int4: 23, Int2: 21, Float4: 700,
}

// otherBase offsets the Types made by Other from certa's own.
const otherBase Type = 1 << 32

// Other returns the Type that stands for a PostgreSQL type certa has no
// Type of (arrays, intervals, varchar...), by its OID: an engine that runs
// PostgreSQL itself reports these. Its values are that type's text form,
// or Wire values; its binary form is not certa's to make.
func Other(oid uint32) Type { return otherBase + Type(oid) }

// TypeOf returns the Type whose OID is oid: certa's own, or Other(oid).
func TypeOf(oid uint32) Type {
	if t, ok := TypeForOID(oid); ok && t.OID() == oid {
		return t
	}
	return Other(oid)
}

// OID returns the PostgreSQL type OID for t.
func (t Type) OID() uint32 {
	if t >= otherBase {
		return uint32(t - otherBase)
	}
	if oid, ok := oids[t]; ok {
		return oid
	}
	return 25
}

// IsInteger reports whether values of t are int64.
func (t Type) IsInteger() bool { return t == Int8 || t == Int4 || t == Int2 }

// IsFloat reports whether values of t are float64.
func (t Type) IsFloat() bool { return t == Float8 || t == Float4 }

// TypeForOID returns the type with the given OID; ok is false for OIDs
// certa does not know (which are then treated as text). varchar, bpchar
// and name map to Text.
func TypeForOID(oid uint32) (t Type, ok bool) {
	switch oid {
	case 1043, 1042, 19:
		return Text, true
	}
	for t, o := range oids {
		if o == oid && t != Unknown {
			return t, true
		}
	}
	return Text, false
}

// Column describes one result column.
type Column struct {
	Name string
	Type Type
	// Mod is PostgreSQL's type modifier (atttypmod) of a column taken
	// straight from a table: numeric(p,s) is (p<<16 | s) + 4; 0 for none
	// (sent to clients as -1).
	Mod int32
}

// Scale returns the scale of a numeric(p,s) column (ok false for others
// and for unconstrained numeric).
func (c Column) Scale() (scale int, ok bool) {
	if c.Type != Numeric || c.Mod < 4 {
		return 0, false
	}
	return int((c.Mod - 4) & 0xffff), true
}

// WireMod is Mod as the wire protocol carries it: -1 for none.
func (c Column) WireMod() int32 {
	if c.Mod == 0 {
		return -1
	}
	return c.Mod
}

// Value is one cell: nil (SQL NULL), int64, float64, string, []byte or
// bool; or Wire, for a Writer that takes it (WireWriter).
type Value = any

// Wire is a value already in the wire format the client asked for its
// column (WireWriter's formats), sent as it is: an engine that runs
// PostgreSQL itself passes PostgreSQL's own values through.
type Wire []byte

// WireParam is a statement parameter as the client sent it, in its format
// (0 text, 1 binary) and of its type: an engine that runs PostgreSQL
// itself passes it through, others refuse it. A binary parameter of a type
// certa has no Type of (an array, an interval...) travels this way, and
// every parameter for an engine that runs PostgreSQL.
type WireParam struct {
	OID    uint32
	Format int16
	Data   []byte
}

// WireWriter is a Writer that may take Wire values.
type WireWriter interface {
	Writer
	// WireFormats reports whether the Writer takes Wire values and in
	// which formats, as PostgreSQL's Bind gives them: none (every column
	// in text), one (for every column) or one per column; 0 is text, 1
	// binary. A Writer that takes them takes the other values too.
	WireFormats() (formats []int16, ok bool)
}

// SimpleQueryWriter is a WireWriter of a statement the client sent in a
// simple Query message. PostgreSQL answers such a statement otherwise
// than the same one through Parse, Bind and Execute: a rule's DO INSTEAD
// SELECT returns its rows to the first alone, and only the second shows
// in pg_cursors as an unnamed portal. An engine that runs PostgreSQL
// itself runs it the way the client sent it.
type SimpleQueryWriter interface {
	WireWriter
	// SimpleQuery reports whether the statement came in a simple Query.
	SimpleQuery() bool
}

// SimpleQuery reports whether w writes the results of a statement the
// client sent in a simple Query message.
func SimpleQuery(w Writer) bool {
	sw, ok := w.(SimpleQueryWriter)
	return ok && sw.SimpleQuery()
}

// Copier is a Writer that carries COPY data between the client and an
// engine that runs PostgreSQL itself (COPY ... FROM STDIN, TO STDOUT).
type Copier interface {
	// CopyIn tells the client to send its COPY data, in format (0 text, 1
	// binary) for columns columns, and returns a reader of that data: the
	// bytes the client sends, until it says it is done (io.EOF) or failed
	// (an error with its message). At most once per statement; whatever
	// the reader was not asked for is discarded when the statement ends.
	CopyIn(format int16, columns int) (io.Reader, error)

	// CopyOut tells the client COPY data follows, in format for columns
	// columns, and returns a writer of that data; Close says it is done.
	// At most once per statement.
	CopyOut(format int16, columns int) (io.WriteCloser, error)
}

// WireFormats returns w's formats for Wire values, if it takes them.
func WireFormats(w Writer) ([]int16, bool) {
	if ww, ok := w.(WireWriter); ok {
		return ww.WireFormats()
	}
	return nil, false
}

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

// Discard is a Writer that drops everything, for statements run for their
// side effects.
var Discard Writer = discard{}

type discard struct{}

func (discard) Columns([]Column) error { return nil }
func (discard) Row([]Value) error      { return nil }
func (discard) Complete(string) error  { return nil }
func (discard) Empty() error           { return nil }
