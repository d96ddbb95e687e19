package sqlite

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// Certification finds two writes in conflict when their keys (table and
// primary-key values, writeset.EncodeKey) are equal, and the SQLite session
// extension records a row only when its key holds no NULL. So a table is
// written only when SQLite's idea of its keys is certification's:
//
//   - no key column can hold NULL (SQLite, unlike PostgreSQL, lets a
//     PRIMARY KEY column other than an INTEGER PRIMARY KEY hold NULL, and the
//     session ignores such rows: they would be acknowledged and never
//     replicated);
//   - every key column compares with the BINARY collation, or PostgreSQL's
//     "C" or "POSIX", which are the same byte order (with NOCASE, 'KEY3'
//     and 'key3' are one row to SQLite and two keys to certification).
//
// Key values that BINARY finds equal across storage classes (1 and 1.0)
// are made one key by EncodeKey. Schema statements that create a table
// breaking these rules are refused (ddl.go), and writes to such a table made
// by an older version are refused too (prepareWrite).

// keyProblem says why ti's primary key cannot be certified ("" if it can).
// nullable tells which primary-key columns PRAGMA table_info reports without
// NOT NULL.
func (c *conn) keyProblem(ti *tableInfo, nullable map[string]bool) (string, error) {
	// A primary key other than the rowid has an index of origin 'pk'; an
	// INTEGER PRIMARY KEY is the rowid itself: never NULL, compared as
	// integers.
	var pkIndex string
	err := c.execResult("SELECT name FROM pragma_index_list(?, 'main') WHERE origin = 'pk'",
		func(s *sqlite.Stmt) { pkIndex = s.ColumnText(0) }, ti.name)
	if err != nil || pkIndex == "" {
		return "", err
	}
	var withoutRowid bool
	err = c.execResult("SELECT wr FROM pragma_table_list(?) WHERE schema = 'main'",
		func(s *sqlite.Stmt) { withoutRowid = s.ColumnInt64(0) != 0 }, ti.name)
	if err != nil {
		return "", err
	}
	var problem string
	err = c.execResult("SELECT name, coll FROM pragma_index_xinfo(?, 'main') WHERE key = 1 ORDER BY seqno",
		func(s *sqlite.Stmt) {
			col, coll := s.ColumnText(0), s.ColumnText(1)
			switch {
			case problem != "":
			case nullable[col] && !withoutRowid: // WITHOUT ROWID tables refuse NULL keys themselves
				problem = fmt.Sprintf("primary-key column %q of table %q can hold NULL: declare it NOT NULL", col, ti.name)
			case !strings.EqualFold(coll, "BINARY") && !byteOrderCollations[coll]:
				problem = fmt.Sprintf("primary-key column %q of table %q uses collation %s: certa certifies keys by their exact value, so key columns must use the default collation", col, ti.name, coll)
			}
		}, pkIndex)
	return problem, err
}

// errKeyProblem refuses a table whose primary key cannot be certified.
func errKeyProblem(problem string) *sqlerr.Error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "%s", problem)
}
