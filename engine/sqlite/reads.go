package sqlite

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/writeset"
)

// What a serializable transaction read (engine.Tx.Reads), statement by
// statement. SQLite's authorizer names every table a statement reads or
// writes, through views too, when it is prepared (record.reads, writes),
// so no read can hide. A statement that touches one table only, and
// whose WHERE selects rows by conditions on its key columns
// (pgparse.KeyRead: a key equal to constants or parameters, an IN list,
// a range on an integer key column), read only those keys or that key
// range, found or not: the rows outside cannot change its outcome. Any
// other statement reads its tables whole. A plain INSERT ... VALUES reads
// nothing: the keys it writes are certified as written; with ON CONFLICT
// on its primary key, it reads the keys of its rows.

// readSet is what a Tx that tracks its reads has read so far.
type readSet struct {
	whole  map[string]struct{} // lower-cased tables read whole
	keys   []writeset.Key
	ranges []writeset.KeyRange
}

// TrackReads implements engine.Tx: the Tx records what each statement
// reads from now on.
func (tx *Tx) TrackReads(context.Context) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.serial == nil {
		tx.serial = &readSet{whole: make(map[string]struct{})}
	}
	return nil
}

// lazyKeyRead is a statement's pgparse.KeyRead, parsed the first time a
// serializable transaction runs it (a connection runs one statement at a
// time).
type lazyKeyRead struct {
	sql    string
	parsed bool
	kr     *pgparse.KeyRead
}

func (l *lazyKeyRead) get() *pgparse.KeyRead {
	if l == nil {
		return nil
	}
	if !l.parsed {
		l.kr, l.parsed = pgparse.ParseKeyRead(l.sql), true
	}
	return l.kr
}

// recordReads adds what a statement with record rec, run with args,
// read, if the Tx tracks its reads.
func (tx *Tx) recordReads(rec *record, args []any) {
	rs := tx.serial
	if rs == nil {
		return
	}
	if kr := rec.keyRead.get(); kr != nil && rs.addKeyRead(tx.conn, kr, rec, args) {
		return
	}
	for _, t := range lowerAll(rec.reads) {
		rs.whole[t] = struct{}{}
	}
	for _, t := range lowerAll(rec.writes) {
		rs.whole[t] = struct{}{}
	}
}

// Reads implements engine.Tx.
func (tx *Tx) Reads(context.Context) (engine.Reads, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return engine.Reads{}, err
	}
	rs := tx.serial
	if rs == nil {
		return engine.Reads{}, nil
	}
	out := engine.Reads{Keys: slices.Clone(rs.keys), Ranges: slices.Clone(rs.ranges)}
	for t := range rs.whole {
		ti, err := tx.conn.table(t)
		if err != nil {
			return engine.Reads{}, err
		}
		if ti.exists && ti.name != "" { // a view has no name of a table: its tables are read too
			out.Tables = append(out.Tables, ti.name)
		}
	}
	return out, nil
}

// addKeyRead records the keys or key ranges rec's statement read, and
// reports whether it could: the statement touched its KeyRead's table
// alone, a table keyed by its primary key, and its conditions select
// rows by leading key columns with values of their types.
func (rs *readSet) addKeyRead(c *conn, kr *pgparse.KeyRead, rec *record, args []any) bool {
	for _, t := range append(slices.Clone(rec.reads), rec.writes...) {
		if !strings.EqualFold(t, kr.Table) {
			return false
		}
	}
	if kr.Insert && !kr.Upsert {
		return len(rec.reads) == 0
	}
	ti, err := c.table(kr.Table)
	if err != nil || !ti.exists || !ti.hasPK || ti.rowid != "" || ti.keyProblem != "" {
		return false
	}
	if kr.Upsert {
		return rs.addUpsert(ti, kr, args)
	}
	// Keys list their columns' values in table order (capture.go).
	cols := slices.Clone(ti.pkCols)
	slices.Sort(cols)
	prefixes := [][]any{nil}
	for _, ci := range cols {
		col := ti.columns[ci]
		if vals := equalValues(ti, col, kr.Conds, args); vals != nil {
			if len(prefixes)*len(vals) > maxKeyReads {
				return false
			}
			var next [][]any
			for _, p := range prefixes {
				for _, v := range vals {
					next = append(next, append(slices.Clip(p), v))
				}
			}
			prefixes = next
			continue
		}
		if len(prefixes[0]) == 0 && !ti.types[strings.ToLower(col)].IsInteger() {
			return false // no condition on the leading key column
		}
		lo, hi, ok := intBounds(ti, col, kr.Conds, args)
		if !ok && len(prefixes[0]) == 0 {
			return false
		}
		for _, p := range prefixes {
			r := writeset.KeyRangeOf(ti.name, p, p)
			if ok {
				if lo > hi {
					continue // selects no row
				}
				if lo > math.MinInt64 {
					r.Lo = writeset.EncodeKey(ti.name, append(slices.Clip(p), lo)...)
				}
				if hi < math.MaxInt64 {
					r.Hi = writeset.EncodeKey(ti.name, append(slices.Clip(p), hi)...)
				}
			}
			rs.ranges = append(rs.ranges, r)
		}
		return true
	}
	for _, p := range prefixes {
		rs.keys = append(rs.keys, writeset.EncodeKey(ti.name, p...))
	}
	return true
}

// addUpsert records the keys an INSERT ... ON CONFLICT (its primary key)
// read: those of its rows, each given whole by constants or parameters.
func (rs *readSet) addUpsert(ti *tableInfo, kr *pgparse.KeyRead, args []any) bool {
	pk := ti.keyColumns()
	if len(kr.ConflictColumns) != len(pk) || len(kr.Rows) > maxKeyReads {
		return false
	}
	for _, col := range kr.ConflictColumns {
		if !slices.ContainsFunc(pk, func(k string) bool { return strings.EqualFold(k, col) }) {
			return false // another unique key: its rows are not found by key
		}
	}
	columns := kr.Columns
	if columns == nil {
		columns = ti.columns
	}
	cols := slices.Clone(ti.pkCols)
	slices.Sort(cols)
	var keys []writeset.Key
	for _, row := range kr.Rows {
		var vals []any
		for _, ci := range cols {
			col := ti.columns[ci]
			at := slices.IndexFunc(columns, func(c string) bool { return strings.EqualFold(c, col) })
			if at < 0 || at >= len(row) || row[at].Unknown {
				return false // a default, or an expression
			}
			v, ok := keyOperand(ti, col, row[at], args)
			if !ok {
				return false
			}
			vals = append(vals, v)
		}
		keys = append(keys, writeset.EncodeKey(ti.name, vals...))
	}
	rs.keys = append(rs.keys, keys...)
	return true
}

// maxKeyReads bounds the keys one statement's conditions may stand for.
const maxKeyReads = 1000

// equalValues returns the values the first usable = or IN condition on
// col allows, as its keys hold them; nil if there is none.
func equalValues(ti *tableInfo, col string, conds []pgparse.KeyCond, args []any) []any {
	for _, kc := range conds {
		if !strings.EqualFold(kc.Column, col) || kc.Op != "=" && kc.Op != "in" {
			continue
		}
		vals := make([]any, 0, len(kc.Values))
		for _, o := range kc.Values {
			v, ok := keyOperand(ti, col, o, args)
			if !ok {
				vals = nil
				break
			}
			vals = append(vals, v)
		}
		if vals != nil {
			return vals
		}
	}
	return nil
}

// intBounds returns the range the <, <=, >, >= and BETWEEN conditions on
// the integer column col allow (both ends included); ok is false if there
// is none.
func intBounds(ti *tableInfo, col string, conds []pgparse.KeyCond, args []any) (lo, hi int64, ok bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	if !ti.types[strings.ToLower(col)].IsInteger() {
		return lo, hi, false
	}
	bound := func(o pgparse.Operand) (int64, bool) {
		v, ok := keyOperand(ti, col, o, args)
		i, isInt := v.(int64)
		return i, ok && isInt
	}
	for _, kc := range conds {
		if !strings.EqualFold(kc.Column, col) {
			continue
		}
		vals := make([]int64, len(kc.Values))
		usable := true
		for i, o := range kc.Values {
			vals[i], usable = bound(o)
			if !usable {
				break
			}
		}
		if !usable {
			continue
		}
		switch kc.Op {
		case ">":
			if vals[0] == math.MaxInt64 {
				return 1, 0, true // no row
			}
			lo = max(lo, vals[0]+1)
		case ">=":
			lo = max(lo, vals[0])
		case "<":
			if vals[0] == math.MinInt64 {
				return 1, 0, true
			}
			hi = min(hi, vals[0]-1)
		case "<=":
			hi = min(hi, vals[0])
		case "between":
			lo, hi = max(lo, vals[0]), min(hi, vals[1])
		default:
			continue
		}
		ok = true
	}
	return lo, hi, ok
}

// keyOperand returns o's value as a key of column col holds it: an
// integer for an integer column, a string for a text or varchar one. A
// string in an integer's canonical form is that integer for an integer
// column (an untyped parameter, as node-postgres sends them, or '5':
// PostgreSQL reads them as the column's type, SQLite applies the column's
// affinity). Anything else is not usable: the statement then counts as
// reading the whole table.
func keyOperand(ti *tableInfo, col string, o pgparse.Operand, args []any) (any, bool) {
	lc := strings.ToLower(col)
	typ, known := ti.types[lc]
	var v any
	switch {
	case o.Param > 0 && o.Param <= len(args):
		v = args[o.Param-1]
	case o.Param > 0:
		return nil, false
	case o.IsInt:
		v = o.Int
	default:
		v = o.Text
	}
	switch v := v.(type) {
	case int64:
		return v, known && typ.IsInteger()
	case string:
		if known && typ.IsInteger() {
			i, err := strconv.ParseInt(v, 10, 64)
			return i, err == nil && strconv.FormatInt(i, 10) == v
		}
		return v, known && typ == result.Text && ti.charOIDs[lc] != 1042 // char(n) pads
	}
	return nil, false
}
