package sqlite

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"modernc.org/libc"
	lib "modernc.org/sqlite/lib"
	"zombiezen.com/go/sqlite"
)

// Tables without a primary key (rowid tables).
//
// PostgreSQL applications make them: pgbench's history table, join tables,
// and every table pg_dump restores, which gets its key only after its rows
// are loaded. certa replicates their rows by SQLite's rowid:
//
//   - The session records them with the rowid as an extra first column,
//     the key (SQLITE_SESSION_OBJCONFIG_ROWID, which zombiezen's Session
//     does not expose: newSession sets it through modernc's C API).
//   - An UPDATE or DELETE certifies by (table, rowid); rowids are the same
//     on every node, because every node applies the same rows in the same
//     order and an INSERT is applied without its rowid: SQLite gives it the
//     table's largest rowid plus one, the same everywhere. An INSERT has no
//     key: two concurrent inserts never conflict (the origin's own rowid is
//     not the one the row gets).
//   - Such a table is never VACUUMed (VACUUM could renumber its rowids) and
//     the applier never lets SQLite's changeset apply write it (it would
//     insert the origin's rowid): rowapply.go applies its rows.
//   - A transaction that wrote one drops its session when its SQLite
//     transaction is rolled back to be resumed (parked, moved forward): a
//     rowid it inserted and lost may by then hold another transaction's
//     committed row, which the old session would report as its own insert.
//
// SQLite's session reaches the rowid as _rowid_: a table with a column of
// that name cannot be written (keyProblem).

// rowidAlias returns the name that reaches the rowid of a table with these
// columns, or "" if a column hides it.
func rowidAlias(columns []string) string {
	for _, col := range columns {
		if strings.EqualFold(col, "_rowid_") {
			return ""
		}
	}
	return "_rowid_"
}

// sessionLayout is zombiezen's sqlite.Session as v1.4.2 lays it out: its
// thread state and the C session's address. checkSessionLayout makes sure.
type sessionLayout struct {
	tls *libc.TLS
	ptr uintptr
}

// errSessionLayout says zombiezen's Session changed: newSession cannot
// reach the C session.
var errSessionLayout = errors.New("sqlite engine: zombiezen.com/go/sqlite's Session is not laid out as this engine expects; check rowid.go against the module's version")

// sessionLayoutErr is checkSessionLayout's verdict, reached once.
var sessionLayoutErr = checkSessionLayout()

// checkSessionLayout reports errSessionLayout unless sqlite.Session is
// sessionLayout.
func checkSessionLayout() error {
	got, want := reflect.TypeOf(sqlite.Session{}), reflect.TypeOf(sessionLayout{})
	if got.Size() != want.Size() || got.NumField() != want.NumField() {
		return errSessionLayout
	}
	for i := range got.NumField() {
		if got.Field(i).Type != want.Field(i).Type || got.Field(i).Offset != want.Field(i).Offset {
			return errSessionLayout
		}
	}
	return nil
}

// newSession starts a session on c recording every table of main, tables
// without a primary key by rowid.
func newSession(c *conn) (*sqlite.Session, error) {
	s, err := c.c.CreateSession("main")
	if err != nil {
		return nil, err
	}
	if err := recordRowidTables(s); err != nil {
		s.Delete()
		return nil, err
	}
	if err := s.Attach(""); err != nil {
		s.Delete()
		return nil, err
	}
	return s, nil
}

// recordRowidTables sets SQLITE_SESSION_OBJCONFIG_ROWID on s, which must not
// have recorded anything yet. The C function reads and writes its int
// argument through a pointer, which must be C memory (Go's checkptr refuses
// a Go pointer there); any value other than 0 turns the option on.
func recordRowidTables(s *sqlite.Session) error {
	if sessionLayoutErr != nil {
		return sessionLayoutErr
	}
	l := (*sessionLayout)(unsafe.Pointer(s))
	arg := libc.Xmalloc(l.tls, 4)
	if arg == 0 {
		return errors.New("sqlite engine: out of memory")
	}
	defer libc.Xfree(l.tls, arg)
	libc.Xmemset(l.tls, arg, 0, 4)
	libc.Xmemset(l.tls, arg, 1, 1)
	rc := lib.Xsqlite3session_object_config(l.tls, l.ptr, lib.SQLITE_SESSION_OBJCONFIG_ROWID, arg)
	if rc != lib.SQLITE_OK || slices.Equal(libc.GoBytes(arg, 4), []byte{0, 0, 0, 0}) {
		return errors.New("sqlite engine: cannot make the session record tables without a primary key")
	}
	return nil
}
