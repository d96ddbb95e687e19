package sqlite

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
)

// A sequence read as a relation: SELECT last_value, is_called FROM s, as
// pg_dump reads each sequence it dumps before writing setval(s,
// last_value, is_called). A sequence is a row of _certa_sequences, no
// SQLite table: a query in which SQLite finds no table of a sequence's
// name is printed again with the sequence read as a relation with
// PostgreSQL's columns (last_value bigint, log_cnt bigint, is_called
// boolean).
//
// Its state is the first value no node has reserved yet: every value
// handed out anywhere is below it. As a PostgreSQL sequence with a cache
// shows the last value it cached, last_value is that value less one and
// is_called true; one that reserved nothing yet shows its first value, not
// called. setval(s, last_value, is_called) then makes the next value the
// first unreserved one, past every value taken.

// maxSequenceRelations is how many sequences one query may read as
// relations.
const maxSequenceRelations = 8

// sequenceColumns are a sequence relation's columns and their types.
var sequenceColumns = map[string]string{"last_value": "int8", "log_cnt": "int8", "is_called": "bool"}

// readingSequences prints sql again with the sequences it reads as
// relations, when SQLite refused its printed form (err) for want of a
// table that is a sequence; ok is false otherwise. rels are the
// sequences replaced so far, which it adds to.
func (c *conn) readingSequences(sql string, err error, rels map[string]string) (printed *pgparse.SQLite, ok bool) {
	msg := sqliteMessage(err)
	if !strings.HasPrefix(msg, "no such table: ") {
		return nil, false
	}
	name := missingName(msg)
	if _, done := rels[name]; done {
		return nil, false
	}
	q, found, qerr := c.sequenceRelation(name)
	if qerr != nil || !found {
		return nil, false
	}
	rels[name] = q
	printed, perr := pgparse.ToSQLiteReplacing(sql, rels)
	if perr != nil {
		return nil, false
	}
	// A column that names a sequence's column has its type (the printer
	// knows no table's columns).
	for i, col := range printed.Columns {
		source := col.Source
		if source == "" {
			source = col.Name
		}
		if t, ok := sequenceColumns[source]; ok && col.Type == "" && col.Cast == "" {
			printed.Columns[i].Type = t
		}
	}
	return printed, true
}

// sequenceRelation is the SQLite query that reads sequence name as a
// relation; found is false if there is no such sequence.
func (c *conn) sequenceRelation(name string) (q string, found bool, err error) {
	var table, column string
	err = c.execResult("SELECT tbl, col FROM "+sequencesTable+" WHERE name = ?", func(s *sqlite.Stmt) {
		table, column, found = s.ColumnText(0), s.ColumnText(1), true
	}, name)
	if err != nil || !found {
		return "", false, err
	}
	// The first value: an identity column's START, else 1 (SERIAL, and
	// CREATE SEQUENCE, whose START certa does not keep once it reserved
	// values; last_value is then reserved less one, the same state).
	start := int64(1)
	if table != "" {
		ti, err := c.table(table)
		if err != nil {
			return "", false, err
		}
		if d, ok := parseSequenceDefault(ti.defaults[strings.ToLower(column)]); ok && d.identity != "" {
			start = d.start
		}
	}
	return fmt.Sprintf(`SELECT CASE WHEN "reserved" > %[1]d THEN min("reserved" - 1, "maxval") ELSE "reserved" END AS "last_value", `+
		`0 AS "log_cnt", "reserved" > %[1]d AS "is_called" FROM %[2]s WHERE "name" = '%[3]s'`,
		start, sequencesTable, strings.ReplaceAll(name, "'", "''")), true, nil
}
