package postgres

import (
	"context"
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/writeset"
)

// Reads by key. PostgreSQL's scan counts say which tables a serializable
// transaction read (readtables.go), not which rows. The statements say
// more: one on a single table whose WHERE selects rows by key conditions
// (pgparse.KeyRead) read only those keys or that key range. A table the
// counts name is certified at that grain only when the statements explain
// every read of it:
//
//   - no client function ran (PostgreSQL counts their calls, with
//     track_functions = all, the pool's setting): a function or trigger
//     may read any row, and an SQL function in FROM may be inlined into a
//     query uncounted, so a function in FROM, DO, CALL, EXECUTE and
//     EXPLAIN count as such code too; a change of search_path, which
//     would make a later name mean another table, too (readLog.opaque);
//   - no table the transaction touched has a rule, a row security policy
//     or an exclusion constraint, which read rows no statement names;
//   - every relation the statements name is a plain table (a view, a
//     partitioned table, reads tables under other names);
//   - every statement that names the table is a KeyRead on it whose
//     values have its key columns' kinds (engine.KeyReads), or bound
//     the rows by a column that leads an index (indexreads.go).
//
// Any other table the counts name is read whole. Foreign-key checks read
// parents and children by key, which their shared keys certify already.

// readLog is what a serializable transaction's statements say of what
// they read.
type readLog struct {
	opaque bool               // a statement whose reads its text does not tell
	keyed  []keyedRead        // statements that read one table by key
	named  []pgparse.Relation // tables named by other statements: read whole
}

type keyedRead struct {
	kr   *pgparse.KeyRead
	args []any
}

// note records what the client statement sql (lower: in lower case), run
// with args, says of its reads.
func (l *readLog) note(sql, lower string, args []any) {
	if l.opaque {
		return
	}
	if strings.Contains(lower, "search_path") {
		l.opaque = true // however it is set
		return
	}
	// The parser reads string constants with standard_conforming_strings
	// on; a session may have turned it off, which changes what a
	// backslash in one means: such statements read their tables whole.
	if kr := pgparse.ParseKeyRead(sql); kr != nil && !strings.Contains(sql, `\`) {
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = keyArg(a)
		}
		l.keyed = append(l.keyed, keyedRead{kr, vals})
		return
	}
	rels, ok := pgparse.RelationNames(sql)
	l.opaque = !ok
	l.named = append(l.named, rels...)
}

// hiddenReadersSQL tells whether one of the tables $1 (an oid[]) has a
// rule, a row security policy or an exclusion constraint.
const hiddenReadersSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite WHERE ev_class = ANY($1::pg_catalog.oid[]) AND rulename <> '_RETURN')
	OR EXISTS (SELECT 1 FROM pg_catalog.pg_policy WHERE polrelid = ANY($1::pg_catalog.oid[]))
	OR EXISTS (SELECT 1 FROM pg_catalog.pg_constraint WHERE conrelid = ANY($1::pg_catalog.oid[]) AND contype = 'x')`

// resolveSQL resolves the relation names $1 (a text[] of quoted names)
// as the backend does now, in order: an oid and its relkind, or NULLs.
const resolveSQL = `SELECT c.oid, c.relkind FROM pg_catalog.unnest($1::pg_catalog.text[]) WITH ORDINALITY u(n, i)
	LEFT JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(u.n) ORDER BY u.i`

// refine splits the tables read (by oid) into those read whole and the
// keys and ranges of the others, by what the statements in l say. tx.mu is
// held.
func (t *Tx) refine(ctx context.Context, l *readLog, read []uint32) (engine.Reads, error) {
	var out engine.Reads
	whole := func() (engine.Reads, error) {
		for _, oid := range read {
			m, err := t.c.ts.byRelOID(ctx, t.c.pg, oid)
			if err != nil {
				return engine.Reads{}, pgError(err)
			}
			out.Tables = append(out.Tables, m.keyTable())
		}
		return out, nil
	}
	if l.opaque || len(l.keyed) == 0 {
		return whole()
	}
	names := make([]string, 0, len(l.keyed)+len(l.named))
	for _, k := range l.keyed {
		names = append(names, qualifiedName(k.kr.Schema, k.kr.Table))
	}
	for _, r := range l.named {
		names = append(names, qualifiedName(r.Schema, r.Name))
	}
	b := &pgconn.Batch{}
	b.ExecParams(hiddenReadersSQL, [][]byte{[]byte(oidArray(read))}, nil, nil, nil)
	b.ExecParams(resolveSQL, [][]byte{[]byte(textArray(names))}, nil, nil, nil)
	res, err := t.c.pg.ExecBatch(ctx, b).ReadAll()
	if err != nil {
		return engine.Reads{}, pgError(err)
	}
	if string(res[0].Rows[0][0]) == "t" || len(res[1].Rows) != len(names) {
		return whole()
	}
	oids := make([]uint32, len(names))
	for i, row := range res[1].Rows {
		oids[i] = parseOID(row[0]) // 0: no such relation (a CTE's name)
		if oids[i] != 0 && string(row[1]) != "r" {
			// A view's tables, a partitioned table's partitions, are read
			// under other names than the statement's.
			return whole()
		}
	}
	namedWhole := map[uint32]bool{}
	for _, oid := range oids[len(l.keyed):] {
		namedWhole[oid] = true
	}
	var keyed = map[uint32]*engine.Reads{}
	for i, k := range l.keyed {
		oid := oids[i]
		if oid == 0 || namedWhole[oid] {
			continue
		}
		r := keyed[oid]
		if r == nil {
			r = &engine.Reads{}
			keyed[oid] = r
		}
		if r.Tables != nil { // a statement on it already read it whole
			continue
		}
		m, err := t.c.ts.byRelOID(ctx, t.c.pg, oid)
		if err != nil {
			return engine.Reads{}, pgError(err)
		}
		keys, ranges, ok := t.keyReads(m, k)
		if !ok && !k.kr.Insert {
			if keys, ranges, ok, err = t.indexReads(ctx, m, k.kr.Conds, k.args); err != nil {
				return engine.Reads{}, err
			}
		}
		if !ok {
			r.Tables = []string{m.keyTable()}
			continue
		}
		r.Keys, r.Ranges = append(r.Keys, keys...), append(r.Ranges, ranges...)
	}
	for _, oid := range read {
		r := keyed[oid]
		if r == nil || r.Tables != nil {
			m, err := t.c.ts.byRelOID(ctx, t.c.pg, oid)
			if err != nil {
				return engine.Reads{}, pgError(err)
			}
			out.Tables = append(out.Tables, m.keyTable())
			continue
		}
		out.Keys, out.Ranges = append(out.Keys, r.Keys...), append(out.Ranges, r.Ranges...)
	}
	// Keys of tables the counts did not name (a view's name: its tables
	// are read whole above) add nothing, but are kept: harmless.
	return out, nil
}

// keyReads is engine.KeyReads for the table m of a keyed statement.
func (t *Tx) keyReads(m *tableMeta, k keyedRead) ([]writeset.Key, []writeset.KeyRange, bool) {
	if m.wholeRow() || m.temp || k.kr.Upsert && k.kr.Columns == nil {
		return nil, nil, false
	}
	cols := make([]engine.KeyColumn, len(m.pk))
	for i, name := range m.pk {
		cols[i] = engine.KeyColumn{Name: name, Kind: m.pkKinds[i]}
	}
	return engine.KeyReads(k.kr, m.keyTable(), cols, k.args, sameIdent)
}

// sameIdent compares column names as PostgreSQL does: the parser has
// folded unquoted ones already.
func sameIdent(a, b string) bool { return a == b }

// qualifiedName is schema.name (or name) quoted, as to_regclass reads it.
func qualifiedName(schema, name string) string {
	if schema == "" {
		return quoteIdent(name)
	}
	return quoteIdent(schema) + "." + quoteIdent(name)
}

// textArray is the text form of a text[] of values.
func textArray(vals []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// oidArray is the text form of an oid[].
func oidArray(oids []uint32) string {
	parts := make([]string, len(oids))
	for i, o := range oids {
		parts[i] = strconv.FormatUint(uint64(o), 10)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// parseOID reads an oid column; 0 for NULL or anything else.
func parseOID(b []byte) uint32 {
	v, err := strconv.ParseUint(string(b), 10, 32)
	if err != nil {
		return 0
	}
	return uint32(v)
}

// keyArg is a parameter as engine.KeyReads reads it: the client's
// parameters reach this engine as they came (result.WireParam); those in
// text, and integers and text in binary, become strings and int64s.
// Others stay as they are, which KeyReads does not take as a key.
func keyArg(a any) any {
	p, ok := a.(result.WireParam)
	if !ok {
		return a
	}
	if p.Format == 0 {
		return string(p.Data)
	}
	switch {
	case p.OID == 20 && len(p.Data) == 8: // int8
		return int64(binary.BigEndian.Uint64(p.Data))
	case p.OID == 23 && len(p.Data) == 4: // int4
		return int64(int32(binary.BigEndian.Uint32(p.Data)))
	case p.OID == 21 && len(p.Data) == 2: // int2
		return int64(int16(binary.BigEndian.Uint16(p.Data)))
	case p.OID == 25 || p.OID == 1043: // text, varchar
		return string(p.Data)
	}
	return a
}
