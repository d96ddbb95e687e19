package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/writeset"
)

// Keys for constraints. Other nodes apply with session_replication_role =
// replica, so neither foreign keys nor DEFERRABLE unique constraints are
// checked there (their triggers do not fire), and a plain unique index
// only fails the second of two concurrent inserts at apply. So a write
// set carries, besides the keys of its rows, keys that make two
// transactions that could break a constraint together conflict in
// certification (first committer wins, the other gets 40001), as Galera
// certifies foreign and unique keys:
//
//   - A unique value: a row change that takes or frees a value of a unique
//     index (an insert; a delete; an update that changes the index's
//     columns: the old value and the new) carries uniqueKey(table, index,
//     values). NULLs never conflict (NULLS DISTINCT, the default): a value
//     with a NULL carries no key, unless the index is NULLS NOT DISTINCT.
//   - A referenced parent: a row change that inserts a child row, or
//     changes its foreign-key columns, with none of them NULL (MATCH SIMPLE
//     and FULL: a NULL means no reference), carries the key its parent row
//     carries when it is deleted or its referenced columns change: the
//     parent's row key if the foreign key references the primary key (the
//     SQLite engine's key for a referenced parent, fkeys.go), else the
//     unique-value key of the referenced unique index. The parent is not
//     locked: certification decides. Its table joins the write set's
//     Tables, so a schema change of the parent conflicts too.
//
// Keys are computed from the JSON of the captured rows, as row keys are
// (keyValue), so two values make the same key only if their JSON forms
// agree. That holds exactly only for types whose JSON form is the same
// for equal values and different for different ones (keyClass); an index
// on an expression or with a column of another type (interval, citext,
// jsonb, arrays, ranges, a non-deterministic collation, an operator class
// that is not the type's default), and an exclusion constraint, is one
// key for the whole index (uniqueIndex.coarse). A foreign
// key whose child and parent columns have different forms (int4 to
// numeric is one form; text to char(n), or float4 to float8, are not), or
// whose parent is partitioned or keyed through such an index, looks its
// parent row up instead (lookupParent) and carries that row's key: exact, a
// query per row change.
//
// A child carries its parent's key as a shared key (certify/): two
// concurrent transactions that insert children of one parent both commit,
// while a child insert and a concurrent delete of the parent, or change of
// its referenced columns, conflict. So do a child insert and an update of
// the parent's other columns when the key is the parent's row key (which
// that update writes): a conflict too many, never one too few.

// uniqueKey is the key of value vals of unique index index of table: a
// NULL then a text value "unique:<index>" before the values. A row key
// never holds a NULL (primary-key columns are NOT NULL; a table without
// a primary key is keyed by a text hash, the SQLite engine refuses NULL
// keys), so no unique-value key is ever a row key; the key's table is
// the table's, so conflicts are told as on its rows.
func uniqueKey(table, index string, vals []any) writeset.Key {
	return uniqueKeyOf(table, uniquePrefix(index), vals)
}

func uniquePrefix(index string) string { return "unique:" + index }

// uniqueKeyOf is uniqueKey with the index's uniquePrefix.
func uniqueKeyOf(table, prefix string, vals []any) writeset.Key {
	return writeset.EncodeKey(table, append([]any{nil, prefix}, vals...)...)
}

// tableRefs are the constraints of a table whose keys its row changes
// carry, read from the catalog on the first capture of one of its rows.
type tableRefs struct {
	uniques []uniqueIndex
	fks     []foreignKey
}

// uniqueIndex is a unique index (a UNIQUE constraint's included) of a
// table, other than its primary key, whose values are keyed. A partial
// index (WHERE) is keyed as if it had no predicate: a row outside it may
// carry a key it need not (a conflict too many, never one too few).
type uniqueIndex struct {
	name, prefix     string   // prefix: uniquePrefix(name)
	cols             []string // in index order (coarse: the columns it reads)
	nullsNotDistinct bool
	// coarse: its values have no exact key (an expression, a type or
	// collation keyClass refuses, an exclusion constraint). A row change
	// that may take or free a value of it carries one key for the whole
	// index: two such transactions conflict whatever their values. anyCol:
	// it reads the whole row, so any update may change its value.
	coarse, anyCol bool
}

// foreignKey is a foreign key of a table whose parent rows are keyed.
type foreignKey struct {
	cols []string // child columns, in the order of the parent's key or index (lookup: the constraint's)
	// table and index name the key: the parent's row key (index == "")
	// or a unique-value key of index (prefix: uniquePrefix(index)).
	table, index, prefix string
	// lookup, if not empty, finds the parent row instead ($1: the child
	// row as JSON; result: the parent's table oid and row as JSON), whose
	// row key is carried.
	lookup string
}

func (r *tableRefs) empty() bool { return len(r.uniques) == 0 && len(r.fks) == 0 }

// refsOf returns m's constraints to key, reading them the first time.
func (ts *tables) refsOf(ctx context.Context, conn *pgconn.PgConn, m *tableMeta) (*tableRefs, error) {
	if m.refs != nil {
		return m.refs, nil
	}
	oid := []byte(strconv.FormatUint(uint64(m.oid), 10))
	res := conn.ExecParams(ctx, indexesSQL, [][]byte{oid}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("unique indexes of %s: %w", m.sqlName(), res.Err)
	}
	indexes := readIndexes(res.Rows)
	refs := &tableRefs{}
	keyed := map[string]bool{}
	for _, ix := range indexes.list {
		if ix.own && !ix.primary && ix.keyable {
			refs.uniques = append(refs.uniques, uniqueIndex{name: ix.name, prefix: uniquePrefix(ix.name),
				cols: ix.cols, nullsNotDistinct: ix.nullsNotDistinct})
			keyed[ix.name] = true
		}
	}
	res = conn.ExecParams(ctx, coarseIndexesSQL, [][]byte{oid}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("unique indexes of %s: %w", m.sqlName(), res.Err)
	}
	refs.uniques = append(refs.uniques, readCoarseIndexes(res.Rows, keyed)...)
	res = conn.ExecParams(ctx, foreignKeysSQL, [][]byte{oid}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, fmt.Errorf("foreign keys of %s: %w", m.sqlName(), res.Err)
	}
	refs.fks = readForeignKeys(m, res.Rows, indexes.byOID)
	m.refs = refs
	return refs, nil
}

// baseTypeSQL is a lateral subquery giving the base type (oid, typtype)
// of column %[1]s's type: through domains.
const baseTypeSQL = `LEFT JOIN LATERAL (WITH RECURSIVE d(t, n) AS (SELECT %[1]s.atttypid, 0
		UNION ALL SELECT y.typbasetype, d.n + 1 FROM d JOIN pg_catalog.pg_type y ON y.oid = d.t WHERE y.typtype = 'd')
	SELECT y.oid, y.typtype FROM d JOIN pg_catalog.pg_type y ON y.oid = d.t ORDER BY d.n DESC LIMIT 1) %[2]s ON true`

// collDeterministicSQL tells whether collation %s compares by bytes.
const collDeterministicSQL = `coalesce((SELECT l.collisdeterministic FROM pg_catalog.pg_collation l WHERE l.oid = %s), true)`

// indexesSQL reads the unique indexes of table $1 and those its foreign
// keys reference, one row per key column: index oid, whether it is the
// table's own, name, primary, NULLS NOT DISTINCT, has expressions,
// position, column name (empty for an expression), base type oid and
// typtype, deterministic collation, default (or pattern) operator class.
var indexesSQL = `SELECT i.indexrelid, i.indrelid = $1::oid, x.relname, i.indisprimary, i.indnullsnotdistinct,
		i.indexprs IS NOT NULL, k.ord, coalesce(a.attname, ''), coalesce(bt.oid, 0), coalesce(bt.typtype, ''),
		` + fmt.Sprintf(collDeterministicSQL, "k.coll") + `,
		coalesce((SELECT o.opcdefault OR o.opcname LIKE '%pattern_ops' FROM pg_catalog.pg_opclass o WHERE o.oid = k.opc), false)
	FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class x ON x.oid = i.indexrelid
	CROSS JOIN LATERAL unnest(i.indkey::int2[], i.indcollation::oid[], i.indclass::oid[]) WITH ORDINALITY k(attnum, coll, opc, ord)
	LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0
	` + fmt.Sprintf(baseTypeSQL, "a", "bt") + `
	WHERE i.indisunique AND k.ord <= i.indnkeyatts AND (i.indrelid = $1::oid
		OR i.indexrelid IN (SELECT conindid FROM pg_catalog.pg_constraint WHERE conrelid = $1::oid AND contype = 'f'))
	ORDER BY i.indexrelid, k.ord`

// indexInfo is a unique index as indexesSQL reads it.
type indexInfo struct {
	name                           string
	own, primary, nullsNotDistinct bool
	keyable                        bool // its values have exact keys (keyClass)
	cols                           []string
}

type indexSet struct {
	list  []*indexInfo
	byOID map[string]*indexInfo
}

func readIndexes(rows [][][]byte) indexSet {
	s := indexSet{byOID: map[string]*indexInfo{}}
	for _, r := range rows {
		ix := s.byOID[string(r[0])]
		if ix == nil {
			ix = &indexInfo{name: string(r[2]), own: isTrue(r[1]), primary: isTrue(r[3]),
				nullsNotDistinct: isTrue(r[4]), keyable: !isTrue(r[5])}
			s.byOID[string(r[0])] = ix
			s.list = append(s.list, ix)
		}
		col, typ, typtype := string(r[7]), string(r[8]), string(r[9])
		if col == "" || keyClass(typ, typtype) == "" || !isTrue(r[10]) || !isTrue(r[11]) {
			ix.keyable = false
		}
		ix.cols = append(ix.cols, col)
	}
	return s
}

// coarseIndexesSQL reads the unique indexes and exclusion constraints of
// table $1 other than its primary key, one row per column each reads
// (from pg_depend: its own expressions and predicate, its constraint's
// columns): index name, column name (empty for none), whether an expression
// or the predicate reads the whole row.
const coarseIndexesSQL = `SELECT x.relname, coalesce(a.attname, ''),
		(coalesce(i.indexprs::text, '') || coalesce(i.indpred::text, '')) LIKE '%:varattno 0 %'
	FROM pg_catalog.pg_index i JOIN pg_catalog.pg_class x ON x.oid = i.indexrelid
	LEFT JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
		AND d.refobjid = i.indrelid AND d.refobjsubid > 0
		AND (d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.objid = i.indexrelid
			OR d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND d.objid IN (SELECT c.oid
				FROM pg_catalog.pg_constraint c WHERE c.conindid = i.indexrelid AND c.conrelid = i.indrelid AND c.contype IN ('u', 'x')))
	LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = d.refobjsubid
	WHERE i.indrelid = $1::oid AND NOT i.indisprimary AND (i.indisunique OR i.indisexclusion)
	ORDER BY x.relname, a.attnum`

// readCoarseIndexes returns the coarse uniqueIndex of each index that
// coarseIndexesSQL read and keyed does not name.
func readCoarseIndexes(rows [][][]byte, keyed map[string]bool) []uniqueIndex {
	var out []uniqueIndex
	for _, r := range rows {
		name := string(r[0])
		if keyed[name] {
			continue
		}
		if len(out) == 0 || out[len(out)-1].name != name {
			out = append(out, uniqueIndex{name: name, prefix: uniquePrefix(name), coarse: true})
		}
		u := &out[len(out)-1]
		if col := string(r[1]); col != "" && !slices.Contains(u.cols, col) {
			u.cols = append(u.cols, col)
		}
		u.anyCol = u.anyCol || isTrue(r[2])
	}
	return out
}

// foreignKeysSQL reads the foreign keys of table $1, one row per column:
// constraint oid, referenced index oid, parent's relkind, schema and
// name, position, child column, parent column, and per side the base
// type (oid, typtype), the type and typmod, and whether the collation is
// deterministic; then the parent column's collation, qualified (empty for
// none). A foreign key cloned onto a partition of the parent (its
// parent constraint references another table) is the parent
// constraint's business, not this table's.
var foreignKeysSQL = `SELECT c.oid, c.conindid, pc.relkind, n.nspname, pc.relname, k.ord, ca.attname, pa.attname,
		coalesce(cb.oid, 0), coalesce(cb.typtype, ''), ca.atttypid, ca.atttypmod, ` + fmt.Sprintf(collDeterministicSQL, "ca.attcollation") + `,
		coalesce(pb.oid, 0), coalesce(pb.typtype, ''), pa.atttypid, pa.atttypmod, ` + fmt.Sprintf(collDeterministicSQL, "pa.attcollation") + `,
		coalesce((SELECT pg_catalog.quote_ident(ln.nspname) || '.' || pg_catalog.quote_ident(l.collname)
			FROM pg_catalog.pg_collation l JOIN pg_catalog.pg_namespace ln ON ln.oid = l.collnamespace WHERE l.oid = pa.attcollation), '')
	FROM pg_catalog.pg_constraint c JOIN pg_catalog.pg_class pc ON pc.oid = c.confrelid JOIN pg_catalog.pg_namespace n ON n.oid = pc.relnamespace
	CROSS JOIN LATERAL unnest(c.conkey, c.confkey) WITH ORDINALITY k(ck, pk, ord)
	JOIN pg_catalog.pg_attribute ca ON ca.attrelid = c.conrelid AND ca.attnum = k.ck
	JOIN pg_catalog.pg_attribute pa ON pa.attrelid = c.confrelid AND pa.attnum = k.pk
	` + fmt.Sprintf(baseTypeSQL, "ca", "cb") + `
	` + fmt.Sprintf(baseTypeSQL, "pa", "pb") + `
	WHERE c.conrelid = $1::oid AND c.contype = 'f'
		AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint p WHERE p.oid = c.conparentid AND p.confrelid <> c.confrelid)
	ORDER BY c.oid, k.ord`

// readForeignKeys groups foreignKeysSQL's rows into m's foreign keys,
// with the indexes they reference.
func readForeignKeys(m *tableMeta, rows [][][]byte, indexes map[string]*indexInfo) []foreignKey {
	var fks []foreignKey
	for start := 0; start < len(rows); {
		end := start + 1
		for end < len(rows) && string(rows[end][0]) == string(rows[start][0]) {
			end++
		}
		fks = append(fks, foreignKeyOf(m, rows[start:end], indexes[string(rows[start][1])]))
		start = end
	}
	return fks
}

// foreignKeyOf makes one foreign key of m from its rows of
// foreignKeysSQL, which reference index ix of the parent.
func foreignKeyOf(m *tableMeta, rows [][][]byte, ix *indexInfo) foreignKey {
	parent := &tableMeta{schema: string(rows[0][3]), name: string(rows[0][4])}
	relkind := string(rows[0][2])
	sameForm := true
	childOf := map[string]string{} // parent column: child column
	var childCols, parentCols []string
	for _, r := range rows {
		child, par := string(r[6]), string(r[7])
		childOf[par] = child
		childCols, parentCols = append(childCols, child), append(parentCols, par)
		cc, pc := keyClass(string(r[8]), string(r[9])), keyClass(string(r[13]), string(r[14]))
		switch {
		case cc == "" || cc != pc || !isTrue(r[12]) || !isTrue(r[17]):
			sameForm = false
		case cc == "bpchar" && (string(r[10]) != string(r[15]) || string(r[11]) != string(r[16])):
			sameForm = false // char(n) is padded to n
		}
	}
	fk := foreignKey{table: parent.keyTable()}
	if ix != nil && relkind == "r" && sameForm && (ix.primary || ix.keyable) {
		for _, pc := range ix.cols {
			child, ok := childOf[pc]
			if !ok {
				fk.cols = nil
				break
			}
			fk.cols = append(fk.cols, child)
		}
		if len(fk.cols) == len(ix.cols) {
			if !ix.primary {
				fk.index, fk.prefix = ix.name, uniquePrefix(ix.name)
			}
			return fk
		}
	}
	// Look the parent up: its row key, whatever its forms.
	fk.cols = childCols
	only := "ONLY "
	if relkind == "p" {
		only = ""
	}
	// Compared in the parent column's collation, as PostgreSQL's own check
	// does: two columns of different collations have none in common, and
	// a nondeterministic one cannot hash without one.
	var where []string
	for i, r := range rows {
		cond := "p." + quoteIdent(parentCols[i]) + " = c." + quoteIdent(childCols[i])
		if coll := string(r[18]); coll != "" {
			cond += " COLLATE " + coll
		}
		where = append(where, cond)
	}
	fk.lookup = "SELECT p.tableoid, certa.row_jsonb(p) FROM " + only + parent.sqlName() + " p, pg_catalog.jsonb_populate_record(NULL::" +
		m.sqlName() + ", $1::jsonb) c WHERE " + strings.Join(where, " AND ") + " LIMIT 1"
	return fk
}

// keyClass names the form of the JSON values of a type (base type oid
// typ, typtype): two values of one class are equal iff keyValue makes
// them the same key value. "" for a type without such a form: intervals
// ('1 day' = '24 hours'), arrays and jsonb (1.0 = 1 inside), citext and
// the other types of extensions, ranges, geometric types... float4 is a
// class of its own: its JSON is its shortest form as float4, which a
// float8 of the same value does not share.
func keyClass(typ, typtype string) string {
	if typtype == "e" {
		return "enum " + typ
	}
	switch typ {
	case "20", "21", "23", "1700", "701": // int8, int2, int4, numeric, float8: keyValue's int64 or float64
		return "number"
	case "25", "1043", "19": // text, varchar, name (deterministic collations compare bytes)
		return "text"
	case "1042":
		return "bpchar"
	case "700", // float4
		"16", "17", "18", "26", // bool, bytea, "char", oid
		"1082", "1083", "1114", "1184", // date, time, timestamp, timestamptz (in UTC: canonicalOutput)
		"2950", "869", "650", "829", "774": // uuid, inet, cidr, macaddr, macaddr8
		return typ
	}
	return ""
}

func isTrue(b []byte) bool { return string(b) == "t" }

// refKeys adds to c the keys of the constraints refs of m that a row
// change carries: op, with the old row's columns (update, delete) and the
// new row (insert, update) as JSON and its columns.
func (c *captured) refKeys(ctx context.Context, conn *pgconn.PgConn, ts *tables, m *tableMeta, refs *tableRefs,
	op byte, newRow []byte, oldCols, newCols rowCols) error {
	table := m.keyTable()
	hasOld, hasNew := op != opInsert, op != opDelete
	for i := range refs.uniques {
		u := &refs.uniques[i]
		if u.coarse {
			if op != opUpdate || u.anyCol || !sameColumns(u.cols, oldCols, newCols) {
				c.keys = append(c.keys, uniqueKeyOf(table, u.prefix, nil))
			}
			continue
		}
		var oldKey, newKey writeset.Key
		var err error
		if hasOld {
			if oldKey, err = u.key(table, oldCols); err != nil {
				return fmt.Errorf("capture: %s of %s: %w", u.name, m.sqlName(), err)
			}
		}
		if hasNew {
			if newKey, err = u.key(table, newCols); err != nil {
				return fmt.Errorf("capture: %s of %s: %w", u.name, m.sqlName(), err)
			}
		}
		if oldKey == newKey {
			continue // an update that left the value as it was (or NULL)
		}
		for _, k := range []writeset.Key{oldKey, newKey} {
			if k != "" {
				c.keys = append(c.keys, k)
			}
		}
	}
	if !hasNew {
		return nil // a delete references nothing
	}
	for i := range refs.fks {
		fk := &refs.fks[i]
		vals, err := columnValues(fk.cols, newCols, false)
		if err != nil {
			return fmt.Errorf("capture: foreign key of %s: %w", m.sqlName(), err)
		}
		if vals == nil {
			continue // a NULL: no reference
		}
		if op == opUpdate {
			if old, err := columnValues(fk.cols, oldCols, true); err != nil {
				return fmt.Errorf("capture: foreign key of %s: %w", m.sqlName(), err)
			} else if sameValues(old, vals) {
				continue // the reference did not change
			}
		}
		if fk.lookup == "" {
			var key writeset.Key
			if fk.index == "" {
				key = writeset.EncodeKey(fk.table, vals...)
			} else {
				key = uniqueKeyOf(fk.table, fk.prefix, vals)
			}
			c.addParent(key, fk.table)
			continue
		}
		if err := c.lookupParent(ctx, conn, ts, fk, newRow); err != nil {
			return fmt.Errorf("capture: parent of a row of %s: %w", m.sqlName(), err)
		}
	}
	return nil
}

// key returns the key of the value a row (its columns) has in u; "" if
// it has a NULL and NULLs are distinct.
func (u *uniqueIndex) key(table string, cols rowCols) (writeset.Key, error) {
	vals, err := columnValues(u.cols, cols, u.nullsNotDistinct)
	if vals == nil || err != nil {
		return "", err
	}
	return uniqueKeyOf(table, u.prefix, vals), nil
}

// columnValues returns the key values of names in a row's columns; nil if
// one is NULL, unless withNulls.
func columnValues(names []string, cols rowCols, withNulls bool) ([]any, error) {
	vals := make([]any, len(names))
	for i, n := range names {
		raw, ok := cols.get(n)
		if !ok {
			return nil, fmt.Errorf("row has no column %s", n)
		}
		v, err := keyValue(raw)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", n, err)
		}
		if v == nil && !withNulls {
			return nil, nil
		}
		vals[i] = v
	}
	return vals, nil
}

// sameColumns reports whether columns names hold the same JSON in two
// rows' columns (a column missing from either: not the same).
func sameColumns(names []string, a, b rowCols) bool {
	for _, n := range names {
		x, okA := a.get(n)
		y, okB := b.get(n)
		if !okA || !okB || string(x) != string(y) {
			return false
		}
	}
	return true
}

func sameValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// lookupParent adds the row key of the parent row that the child row
// newRow references through fk, found by fk.lookup in the capturing
// transaction (the foreign key was checked: it sees the parent). None
// found (the transaction deleted or re-keyed it after: it carries that
// row's key itself) adds nothing.
func (c *captured) lookupParent(ctx context.Context, conn *pgconn.PgConn, ts *tables, fk *foreignKey, newRow []byte) error {
	r := conn.ExecParams(ctx, fk.lookup, [][]byte{newRow}, nil, nil, nil).Read()
	if r.Err != nil {
		return r.Err
	}
	if len(r.Rows) == 0 {
		return nil
	}
	rel, err := strconv.ParseUint(string(r.Rows[0][0]), 10, 32)
	if err != nil {
		return fmt.Errorf("table oid %q", r.Rows[0][0])
	}
	pm, err := ts.byRelOID(ctx, conn, uint32(rel))
	if err != nil {
		return err
	}
	_, key, err := keyOf(pm, r.Rows[0][1])
	if err != nil {
		return err
	}
	c.addParent(key, pm.keyTable())
	return nil
}

// addParent adds a referenced parent's key, as a shared key (the child
// relies on the parent row and does not write it), and its table, once:
// many children of a few parents (a bulk insert) would otherwise fill the
// write set with copies for Normalize to sort away.
func (c *captured) addParent(key writeset.Key, table string) {
	if c.parents[key] {
		return
	}
	if c.parents == nil {
		c.parents = map[writeset.Key]bool{}
	}
	c.parents[key] = true
	c.shared = append(c.shared, key)
	c.tables = append(c.tables, table)
}
