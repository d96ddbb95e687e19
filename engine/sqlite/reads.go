package sqlite

import (
	"context"
	"slices"
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
// alone, a table keyed by its primary key, and its conditions bound the
// rows it read by the key (engine.KeyReads).
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
	if kr.Upsert && kr.Columns == nil {
		all := *kr
		all.Columns = ti.columns
		kr = &all
	}
	keys, ranges, ok := engine.KeyReads(kr, ti.name, keyColumns(ti), args, strings.EqualFold)
	if ok {
		rs.keys = append(rs.keys, keys...)
		rs.ranges = append(rs.ranges, ranges...)
		return true
	}
	return !kr.Insert && rs.addIndexRead(c, ti, kr.Conds, args) // by an index (indexkeys.go)
}

// keyColumns describes ti's key columns in the order its keys list them:
// table order (capture.go).
func keyColumns(ti *tableInfo) []engine.KeyColumn {
	idx := slices.Clone(ti.pkCols)
	slices.Sort(idx)
	cols := make([]engine.KeyColumn, len(idx))
	for i, ci := range idx {
		name := ti.columns[ci]
		lc := strings.ToLower(name)
		cols[i].Name = name
		switch typ, known := ti.types[lc]; {
		case known && typ.IsInteger():
			cols[i].Kind = engine.KeyInt
		case known && typ == result.Text && ti.charOIDs[lc] != 1042: // char(n) pads
			cols[i].Kind = engine.KeyText
		}
	}
	return cols
}
