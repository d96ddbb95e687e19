package certify

import (
	"fmt"

	"certa/writeset"
)

// Reason is the outcome of certifying one write set.
type Reason int

// The outcomes of Certify. Every reason but Pass refuses the write set; the
// origin's client gets a serialization failure (SQLSTATE 40001) and may retry.
const (
	// Pass: the write set may be applied (and then committed with Commit).
	Pass Reason = iota
	// Conflict: a key of the write set was committed by another write set
	// after the write set's snapshot (first committer wins).
	Conflict
	// TooOld: the write set's snapshot is more than the horizon behind its
	// position; the certifier no longer knows what committed since.
	TooOld
	// SchemaChanged: a DDL statement touching one of the write set's tables
	// (or every table) committed after the write set's snapshot.
	SchemaChanged
	// ReadChanged: a row the write set's transaction read (serializable),
	// by key, in a range or in a table read whole, or a table it locked
	// rows of unseen, was written after its snapshot: what it read may
	// have changed.
	ReadChanged
	// Invalid: the write set's snapshot is not before its position, which no
	// correct origin produces (a transaction reads only state that is already
	// ordered). Refused rather than passed unchecked, since an empty window
	// would otherwise let it through without any conflict check.
	Invalid
)

// String returns a short lower-case description of r.
func (r Reason) String() string {
	switch r {
	case Pass:
		return "pass"
	case Conflict:
		return "conflict"
	case TooOld:
		return "snapshot too old"
	case SchemaChanged:
		return "schema changed"
	case ReadChanged:
		return "read changed"
	case Invalid:
		return "invalid snapshot"
	}
	return fmt.Sprintf("Reason(%d)", int(r))
}

// Result is the decision for one write set. It is the same on every node that
// certified the same sequence of write sets.
type Result struct {
	Reason Reason
	// Table is the table of the conflicting key (Conflict), or the first of
	// the write set's tables whose schema changed (SchemaChanged; empty when
	// the write set lists no table and a DDL changed every table). Empty
	// otherwise.
	Table string
	// ConflictSeqno is the position of the write set that won: the last
	// commit of the conflicting key (Conflict) or the last DDL touching Table
	// (SchemaChanged), or the last write of what a read covered
	// (ReadChanged). Zero otherwise.
	ConflictSeqno uint64
	// Key is the key written after the snapshot that a serializable
	// transaction read by key, in a range or in its filter (ReadChanged
	// at those grains); ViaFilter is set when only the filter holds it,
	// so that the origin, which knows the exact keys, can tell a false
	// positive (writeset.IsFilterFalsePositive).
	Key       writeset.Key
	ViaFilter bool
}

// OK reports whether the write set passed certification.
func (r Result) OK() bool { return r.Reason == Pass }

// String describes r for logs and client error messages, e.g.
// `conflict on table "t" with the write set at position 42`.
func (r Result) String() string {
	switch r.Reason {
	case Conflict:
		return fmt.Sprintf("conflict on table %q with the write set at position %d", r.Table, r.ConflictSeqno)
	case SchemaChanged:
		if r.Table == "" {
			return fmt.Sprintf("schema changed by the DDL at position %d", r.ConflictSeqno)
		}
		return fmt.Sprintf("schema of table %q changed by the DDL at position %d", r.Table, r.ConflictSeqno)
	case ReadChanged:
		if r.Key != "" {
			return fmt.Sprintf("a row of table %q, which it read, written by the write set at position %d", r.Table, r.ConflictSeqno)
		}
		return fmt.Sprintf("table %q, which it read, written by the write set at position %d", r.Table, r.ConflictSeqno)
	}
	return r.Reason.String()
}
