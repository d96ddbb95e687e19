package postgres

import (
	"context"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/pgparse"
	"certa/writeset"
)

// Index entries, as the SQLite engine has them (its indexkeys.go): a
// serializable transaction that read rows by a range of a column leading
// an index (WHERE value BETWEEN 1 AND 9, tag LIKE 'red%') certifies that
// range over the column's index entries (rows coming in) and the keys of
// the rows in it at its snapshot (rows changing or leaving), instead of
// the whole table. So every write set carries the index entries
// (writeset.IndexKey) of the rows it inserts and of the rows whose
// indexed columns an update changed.

// indexKeys returns the index entries of a row change of m: of every
// column in m.indexCols that an insert set (newCols) or an update changed
// (oldCols to newCols). Tables without a primary key have none (they are
// read whole).
func (m *tableMeta) indexKeys(op byte, oldCols, newCols rowCols) ([]writeset.Key, error) {
	if op == opDelete || m.wholeRow() {
		return nil, nil
	}
	var keys []writeset.Key
	for _, col := range m.indexCols {
		raw, ok := newCols.get(col.Name)
		if !ok {
			continue // not in the row image: cannot happen for a plain column
		}
		if op == opUpdate {
			if old, ok := oldCols.get(col.Name); ok && string(old) == string(raw) {
				continue
			}
		}
		v, err := keyValue(raw)
		if err != nil {
			return nil, err
		}
		keys = append(keys, writeset.IndexKey(m.keyTable(), col.Name, v))
	}
	return keys, nil
}

// maxIndexRows bounds the rows an index range may hold to be read by
// their keys; past it the statement reads its table whole.
const maxIndexRows = 1000

// indexReads returns, for a statement on m whose conditions bound its
// rows by a column of m.indexCols (and not by the key), the range over
// that column's index entries and the keys of the rows in it at the
// transaction's snapshot; ok is false if there is no such column, the
// rows are too many, or the query that finds them failed (it runs in a
// savepoint, as the client's role: a column the role may not read). err
// is an error that left the transaction unusable. tx.mu is held.
func (t *Tx) indexReads(ctx context.Context, m *tableMeta, conds []pgparse.KeyCond, args []any) (keys []writeset.Key, ranges []writeset.KeyRange, ok bool, err error) {
	if m.wholeRow() || m.temp {
		return nil, nil, false, nil
	}
	for _, kind := range m.pkKinds {
		if kind == engine.KeyOther {
			return nil, nil, false, nil // keys the query's text output does not give
		}
	}
	for _, col := range m.indexCols {
		index := writeset.IndexTable(m.keyTable(), col.Name)
		var where string
		var params []string
		if vals := engine.EqualValues(col, conds, args, sameIdent); vals != nil {
			var list []string
			for _, v := range vals {
				params = append(params, keyText(v))
				list = append(list, "$"+strconv.Itoa(len(params)))
				k := writeset.EncodeKey(index, v)
				ranges = append(ranges, writeset.KeyRange{Lo: k, Hi: k})
			}
			where = quoteIdent(col.Name) + " IN (" + strings.Join(list, ", ") + ")"
		} else if lo, hi, bounded := engine.IntBounds(col, conds, args, sameIdent); bounded {
			if lo > hi {
				return nil, nil, true, nil // selects no row
			}
			where = quoteIdent(col.Name) + " BETWEEN $1 AND $2"
			params = []string{strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10)}
			ranges = append(ranges, writeset.KeyRangeOf(index, []any{lo}, []any{hi}))
		} else if prefix, found := engine.LikePrefix(col, conds, args, sameIdent); found {
			where = "pg_catalog.starts_with(" + quoteIdent(col.Name) + "::pg_catalog.text, $1)"
			params = []string{prefix}
			ranges = append(ranges, writeset.KeyPrefixRange(index, nil, prefix))
		} else {
			continue
		}
		keys, ok, err = t.rowKeys(ctx, m, where, params)
		return keys, ranges, ok, err
	}
	return nil, nil, false, nil
}

// keyText is a key value (int64 or string) in text form.
func keyText(v any) string {
	if i, ok := v.(int64); ok {
		return strconv.FormatInt(i, 10)
	}
	return v.(string)
}

// rowKeys returns the keys of m's rows that where (with text parameters
// params) selects, in a savepoint of the open transaction; ok is false
// past maxIndexRows or on an error, which the savepoint undoes (err if
// it could not).
func (t *Tx) rowKeys(ctx context.Context, m *tableMeta, where string, params []string) (keys []writeset.Key, ok bool, err error) {
	q := "SELECT " + quoteIdents(m.pk) + " FROM " + m.sqlName() + " WHERE " + where + " LIMIT " + strconv.Itoa(maxIndexRows+1)
	vals := make([][]byte, len(params))
	for i, p := range params {
		vals[i] = []byte(p)
	}
	b := &pgconn.Batch{}
	b.ExecParams("SAVEPOINT certa_index_reads", nil, nil, nil, nil)
	b.ExecParams(q, vals, nil, nil, nil)
	b.ExecParams("RELEASE SAVEPOINT certa_index_reads", nil, nil, nil, nil)
	res, err := t.c.pg.ExecBatch(ctx, b).ReadAll()
	if err != nil {
		if len(res) >= 1 && res[0].Err == nil { // the savepoint was set
			undo := t.c.pg.Exec(ctx, "ROLLBACK TO SAVEPOINT certa_index_reads; RELEASE SAVEPOINT certa_index_reads")
			if _, err := undo.ReadAll(); err != nil {
				return nil, false, pgError(err)
			}
			return nil, false, nil
		}
		return nil, false, pgError(err)
	}
	rows := res[1].Rows
	if len(rows) > maxIndexRows {
		return nil, false, nil
	}
	for _, row := range rows {
		vals := make([]any, len(m.pk))
		for i, kind := range m.pkKinds {
			if kind == engine.KeyInt {
				n, err := strconv.ParseInt(string(row[i]), 10, 64)
				if err != nil {
					return nil, false, nil
				}
				vals[i] = n
			} else {
				vals[i] = string(row[i])
			}
		}
		keys = append(keys, writeset.EncodeKey(m.keyTable(), vals...))
	}
	return keys, true, nil
}
