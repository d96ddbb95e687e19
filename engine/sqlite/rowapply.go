package sqlite

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
)

// errNotClean says a change did not apply exactly as recorded (missing
// table, different columns, row not found, old values differ, a constraint
// failed). The caller rolls back and lets SQLite's changeset apply find out
// what happened, item by item.
var errNotClean = errors.New("change did not apply cleanly")

// rowMismatch is errNotClean for one change: of table, failing a
// constraint (err, SQLite's) or, if err is nil, finding no row to change
// as recorded.
type rowMismatch struct {
	table string
	err   error
}

func (m *rowMismatch) Error() string {
	if m.err != nil {
		return fmt.Sprintf("%v: table %s: %v", errNotClean, m.table, m.err)
	}
	return fmt.Sprintf("%v: table %s", errNotClean, m.table)
}

func (m *rowMismatch) Is(target error) bool { return target == errNotClean }

// rowStmtKey names one applier statement of a table: the operation and
// which columns it binds (bit i set: column i has a defined value).
type rowStmtKey struct {
	op       byte
	old, new string
}

// applyRows applies a changeset row by row with cached prepared statements:
// SQLite's changeset apply prepares its statements afresh on every call and
// expires every prepared statement of the connection, which costs more than
// the changes themselves. An INSERT must not find its key; an UPDATE or
// DELETE must find exactly one row whose recorded old values match; an
// INSERT into a table without a primary key gets this node's next rowid
// (rowid.go). Anything else returns errNotClean. The caller must call refreshSchema
// first.
func applyRows(c *conn, changeset []byte) error {
	if err := c.requireTx(); err != nil {
		return err
	}
	defer c.internal()()
	return forEachChange(changeset, func(ch *rowChange) error {
		ti, err := c.table(ch.table)
		if err != nil {
			return err
		}
		if !ti.exists || ti.keyProblem != "" {
			return &rowMismatch{table: ch.table}
		}
		cols := ti.changeColumns()
		key := rowStmtKey{op: ch.op, old: definedMask(ch.old), new: definedMask(ch.new)}
		if len(cols) != len(ch.pk) || !wellFormed(key) || ti.rowid != "" && !rowidKeyed(ch) {
			return &rowMismatch{table: ch.table}
		}
		query, ok := ti.rowSQL[key]
		if !ok {
			query = rowSQL(ch.table, cols, ti.rowid != "", ch)
			if ti.rowSQL == nil {
				ti.rowSQL = make(map[rowStmtKey]string)
			}
			ti.rowSQL[key] = query
		}
		stmt, err := c.c.Prepare(query)
		if err != nil {
			return err
		}
		param := 1
		for _, vals := range [][]rowValue{ch.new, ch.old} { // SET, then WHERE
			for i, v := range vals {
				if ti.rowid != "" && ch.op == opInsert && i == 0 {
					continue // the row's rowid is this node's next
				}
				if v.kind != kindUndefined {
					bindValue(stmt, param, v)
					param++
				}
			}
		}
		_, err = stmt.Step()
		if rerr := stmt.Reset(); err == nil {
			err = rerr
		}
		if err != nil {
			if sqlite.ErrCode(err).ToPrimary() == sqlite.ResultConstraint {
				return &rowMismatch{table: ch.table, err: err}
			}
			return err
		}
		if c.c.Changes() != 1 {
			return &rowMismatch{table: ch.table}
		}
		return nil
	})
}

// wellFormed reports whether a change has the values its statement needs:
// every new value of an INSERT, some new value of an UPDATE.
func wellFormed(key rowStmtKey) bool {
	switch key.op {
	case opInsert:
		return !strings.Contains(key.new, "0")
	case opUpdate:
		return strings.Contains(key.new, "1")
	}
	return true
}

// rowidKeyed reports whether ch is a change of a table without a primary
// key as the session records it: keyed by its first column, the rowid,
// which an UPDATE does not change.
func rowidKeyed(ch *rowChange) bool {
	for i, isPK := range ch.pk {
		if isPK != (i == 0) {
			return false
		}
	}
	return ch.op != opUpdate || ch.new[0].kind == kindUndefined
}

// rowSQL builds the statement for ch's operation and defined columns
// (columns as its change records have them). An INSERT into a rowid table
// leaves out the first column, the rowid: SQLite gives the row the next.
func rowSQL(table string, columns []string, rowid bool, ch *rowChange) string {
	var b strings.Builder
	n := 0
	param := func() string { n++; return "?" + strconv.Itoa(n) }
	switch ch.op {
	case opInsert:
		if rowid {
			columns = columns[1:]
		}
		b.WriteString("INSERT INTO " + quoteIdent(table) + " (")
		for i, col := range columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quoteIdent(col))
		}
		b.WriteString(") VALUES (")
		for i := range columns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(param())
		}
		b.WriteString(")")
		return b.String()
	case opUpdate:
		b.WriteString("UPDATE " + quoteIdent(table) + " SET ")
		sep := ""
		for i, v := range ch.new {
			if v.kind != kindUndefined {
				b.WriteString(sep + quoteIdent(columns[i]) + " = " + param())
				sep = ", "
			}
		}
	case opDelete:
		b.WriteString("DELETE FROM " + quoteIdent(table))
	}
	sep := " WHERE "
	for i, v := range ch.old {
		if v.kind != kindUndefined {
			b.WriteString(sep + quoteIdent(columns[i]) + " IS " + param())
			sep = " AND "
		}
	}
	return b.String()
}

// definedMask is a string with one byte per value: '1' if defined.
func definedMask(vals []rowValue) string {
	b := make([]byte, len(vals))
	for i, v := range vals {
		b[i] = '0'
		if v.kind != kindUndefined {
			b[i] = '1'
		}
	}
	return string(b)
}

func bindValue(stmt *sqlite.Stmt, param int, v rowValue) {
	switch v.kind {
	case kindInt:
		stmt.BindInt64(param, v.i)
	case kindFloat:
		stmt.BindFloat(param, v.f)
	case kindText:
		stmt.BindText(param, string(v.bytes))
	case kindBlob:
		stmt.BindBytes(param, v.bytes)
	default:
		stmt.BindNull(param)
	}
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
