package sqlite

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/writeset"
)

// Index entries. A serializable transaction that reads rows by a range of
// an indexed column (WHERE k BETWEEN 1 AND 9, or name LIKE 'ab%') must fail if a row came into
// that range after its snapshot: an insert, or an update that moved a row
// there. So every write set carries, for the rows it inserts and the rows
// whose indexed columns it changes, their index entries
// (writeset.IndexKey: table, column, new value), for the leading column of
// every index but the primary key's. Rows that were in the range already
// are read by their keys (reads.go). The certifier matches index entries
// against ranges over index tables only.

// indexColumns returns the positions and names of ti's columns that lead
// an index other than its primary key's (plain columns, not expressions),
// read once per schema version. A table with hidden or generated columns
// has none: its changes' column positions need not be the index's.
func (c *conn) indexColumns(ti *tableInfo) (map[int]string, error) {
	if ti.indexCols != nil {
		return ti.indexCols, nil
	}
	cols := map[int]string{}
	hidden, _, err := c.queryInt("SELECT count(*) FROM pragma_table_xinfo(?) WHERE hidden <> 0", ti.name)
	var names []string
	if err == nil && hidden == 0 {
		err = c.execResult("SELECT name FROM pragma_index_list(?) WHERE origin <> 'pk'", func(s *sqlite.Stmt) {
			names = append(names, s.ColumnText(0))
		}, ti.name)
	}
	for _, idx := range names {
		if err != nil {
			break
		}
		err = c.execResult("SELECT cid, name FROM pragma_index_info(?) WHERE seqno = 0 AND cid >= 0", func(s *sqlite.Stmt) {
			cols[int(s.ColumnInt64(0))] = s.ColumnText(1)
		}, idx)
	}
	if err != nil {
		return nil, err
	}
	ti.indexCols = cols
	return cols, nil
}

// indexKeys adds to ws the index entries of its row changes (from its
// Changes). tx.mu is held. A table the transaction created and has not
// committed gives none when the Tx is set aside: no other transaction
// can have read it.
func (tx *Tx) indexKeys(ws *writeset.WriteSet) error {
	c := tx.conn
	// A schema statement dropped the table cache, or a Tx that ran some
	// was set aside (its SQLite transaction rolled back): read the tables
	// as the connection sees them now.
	if err := c.refreshSchema(); err != nil {
		return err
	}
	var cols map[int]string
	var table string
	return forEachRowChange(ws, func(ch *rowChange) error {
		if ch.op == opDelete {
			return nil
		}
		if ch.table != table {
			table = ch.table
			ti, err := c.table(table)
			if err != nil || !ti.exists {
				cols = nil
				return err
			}
			if cols, err = c.indexColumns(ti); err != nil {
				return err
			}
		}
		for pos, name := range cols {
			if pos >= len(ch.new) || ch.new[pos].kind == kindUndefined {
				continue // an update that left the column as it was
			}
			v, err := keyValue(ch.new[pos])
			if err != nil {
				return err
			}
			ws.IndexKeys = append(ws.IndexKeys, writeset.IndexKey(table, strings.ToLower(name), v))
		}
		return nil
	})
}

// maxIndexRows bounds the rows an index range may hold to be read by
// their keys; past it the statement reads its table whole.
const maxIndexRows = 1000

// addIndexRead records, for a statement whose conditions bound the rows
// it read by a column that leads an index (and not by the key), the range
// over that index (rows coming in) and the keys of the rows in it at the
// Tx's snapshot (rows changing or leaving); it reports whether it could.
func (rs *readSet) addIndexRead(c *conn, ti *tableInfo, conds []pgparse.KeyCond, args []any) bool {
	cols, err := c.indexColumns(ti)
	if err != nil {
		return false
	}
	for _, name := range cols {
		col := engine.KeyColumn{Name: name}
		switch typ, known := ti.types[strings.ToLower(name)]; {
		case known && typ.IsInteger():
			col.Kind = engine.KeyInt
		case known && typ == result.Text && ti.charOIDs[strings.ToLower(name)] != 1042:
			col.Kind = engine.KeyText
		default:
			continue
		}
		index := writeset.IndexTable(ti.name, strings.ToLower(name))
		var where string
		var whereArgs []any
		var ranges []writeset.KeyRange
		if vals := engine.EqualValues(col, conds, args, strings.EqualFold); vals != nil {
			where = quoteIdent(name) + " IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(vals)), ", ") + ")"
			whereArgs = vals
			for _, v := range vals {
				k := writeset.EncodeKey(index, v)
				ranges = append(ranges, writeset.KeyRange{Lo: k, Hi: k})
			}
		} else if lo, hi, ok := engine.IntBounds(col, conds, args, strings.EqualFold); ok {
			if lo > hi {
				return true // selects no row
			}
			where = quoteIdent(name) + " BETWEEN ? AND ?"
			whereArgs = []any{lo, hi}
			ranges = append(ranges, writeset.KeyRangeOf(index, []any{lo}, []any{hi}))
		} else if prefix, ok := engine.LikePrefix(col, conds, args, strings.EqualFold); ok {
			where = "substr(" + quoteIdent(name) + ", 1, ?) = ?" // characters, as LIKE compares them
			whereArgs = []any{int64(utf8.RuneCountInString(prefix)), prefix}
			ranges = append(ranges, writeset.KeyPrefixRange(index, nil, prefix))
		} else {
			continue
		}
		keys, ok := c.rowKeys(ti, where, whereArgs)
		if !ok {
			return false
		}
		rs.ranges = append(rs.ranges, ranges...)
		rs.keys = append(rs.keys, keys...)
		return true
	}
	return false
}

// rowKeys returns the keys of ti's rows that where selects, at the
// transaction's snapshot; ok is false past maxIndexRows.
func (c *conn) rowKeys(ti *tableInfo, where string, args []any) (keys []writeset.Key, ok bool) {
	idx := slices.Clone(ti.pkCols)
	slices.Sort(idx) // keys list their columns in table order (capture.go)
	names := make([]string, len(idx))
	for i, ci := range idx {
		names[i] = quoteIdent(ti.columns[ci])
	}
	q := "SELECT " + strings.Join(names, ", ") + " FROM " + quoteIdent(ti.name) + " WHERE " + where +
		" LIMIT " + strconv.Itoa(maxIndexRows+1)
	err := c.execResult(q, func(s *sqlite.Stmt) {
		vals := make([]any, len(idx))
		for i := range idx {
			switch s.ColumnType(i) {
			case sqlite.TypeInteger:
				vals[i] = s.ColumnInt64(i)
			case sqlite.TypeFloat:
				vals[i] = s.ColumnFloat(i)
			case sqlite.TypeText:
				vals[i] = s.ColumnText(i)
			case sqlite.TypeBlob:
				b := make([]byte, s.ColumnLen(i))
				s.ColumnBytes(i, b)
				vals[i] = b
			}
		}
		keys = append(keys, writeset.EncodeKey(ti.name, vals...))
	}, args...)
	return keys, err == nil && len(keys) <= maxIndexRows
}
