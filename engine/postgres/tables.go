package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
)

// tableMeta is what capture and apply need to know of a table.
type tableMeta struct {
	oid          uint32
	schema, name string
	pk           []string // primary-key columns, in key order; none: the whole row is its identity (wholeRow)
	// pkKinds says how each key column's values are keyed, for reads by
	// key (readkeys.go): integers, strings compared byte for byte (text
	// and varchar of a deterministic collation), or other.
	pkKinds []engine.KeyKind
	// indexCols are the columns that lead an index other than the
	// primary key's, of the kinds above but other, in table order: a
	// range of their values is read as a range of index entries
	// (indexreads.go).
	indexCols []engine.KeyColumn
	cols      []string // columns a row sets: not generated, not dropped
	// alwaysIdentity: a column is GENERATED ALWAYS AS IDENTITY, which an
	// UPDATE can set only to DEFAULT (a new value): the applier replaces
	// such a table's updated rows (apply.go).
	alwaysIdentity bool
	temp           bool // a session's temporary table: never replicated
	// seqs are the sequences its columns' defaults and identities draw
	// from: an insert or update may take their values (seqstate.go).
	seqs []uint32
	// refs: the unique indexes and foreign keys whose keys its row
	// changes carry (refkeys.go); nil until the capture first needs them.
	// A schema change drops them with the rest (reset).
	refs *tableRefs
}

// wholeRow reports whether the table has no primary key: a row is then
// known by all its values (as PostgreSQL's REPLICA IDENTITY FULL): its
// write-set key is a hash of them, and the applier finds it by them (one
// of identical rows, which are alike).
func (m *tableMeta) wholeRow() bool { return len(m.pk) == 0 }

// sqlName is the table's name as SQL writes it.
func (m *tableMeta) sqlName() string { return quoteIdent(m.schema) + "." + quoteIdent(m.name) }

// keyTable is the table's name in write-set keys and Tables: the bare
// name in schema public (as the SQLite engine names tables), else
// schema.name.
func (m *tableMeta) keyTable() string {
	if m.schema == "public" {
		return m.name
	}
	return m.schema + "." + m.name
}

// tables caches tableMeta by table oid and by name for one connection.
// The cache must be dropped (reset) when the schema changes.
//
// It also keeps the applier's statements prepared on that connection
// (prepared), which a schema change makes stale too.
type tables struct {
	byOID  map[uint32]*tableMeta
	byName map[[2]string]*tableMeta
	stmts  map[string]string // statement text: its name, prepared on the connection
	stale  bool              // stmts are to be deallocated: the schema changed
}

func (ts *tables) reset() {
	ts.byOID, ts.byName = nil, nil
	ts.stale = ts.stale || ts.stmts != nil
}

// maxPrepared bounds the statements prepared on one connection.
const maxPrepared = 1000

// prepared returns the name of statement sql, with parameters of the
// types oids (0: PostgreSQL infers it), prepared on conn, preparing it the
// first time: a statement run again and again is then parsed once, and
// planned once its generic plan is good (EXPLAIN: 0.4 ms of planning for
// an update by key, five times its execution). Statements prepared
// before a schema change are deallocated first.
func (ts *tables) prepared(ctx context.Context, conn *pgconn.PgConn, sql string, oids []uint32) (string, error) {
	if ts.stale || len(ts.stmts) >= maxPrepared {
		if _, err := conn.Exec(ctx, deallocateCertaSQL).ReadAll(); err != nil {
			return "", err
		}
		ts.stmts, ts.stale = nil, false
	}
	key := sql
	if len(oids) > 0 {
		b := []byte(sql)
		for _, oid := range oids {
			b = strconv.AppendUint(append(b, 0), uint64(oid), 10)
		}
		key = string(b)
	}
	if name, ok := ts.stmts[key]; ok {
		return name, nil
	}
	name := "certa_" + strconv.Itoa(len(ts.stmts)+1)
	if _, err := conn.Prepare(ctx, name, sql, oids); err != nil {
		return "", err
	}
	if ts.stmts == nil {
		ts.stmts = map[string]string{}
	}
	ts.stmts[key] = name
	return name, nil
}

// deallocateCertaSQL deallocates certa's prepared statements on a
// backend, those of the protocol (a client's PREPARE is from_sql): not
// DEALLOCATE ALL, which would take those of a client's session whose
// backend keeps them (conn.keeps) too.
const deallocateCertaSQL = `DO $d$ DECLARE n text; BEGIN
	FOR n IN SELECT p.name FROM pg_catalog.pg_prepared_statements p WHERE NOT p.from_sql LOOP
		EXECUTE pg_catalog.format('DEALLOCATE %I', n);
	END LOOP;
END $d$`

// deallocated forgets the prepared statements: a client's DEALLOCATE
// ALL dropped them.
func (ts *tables) deallocated() { ts.stmts, ts.stale = nil, false }

// byRelOID returns the table with oid rel.
func (ts *tables) byRelOID(ctx context.Context, conn *pgconn.PgConn, rel uint32) (*tableMeta, error) {
	if m := ts.byOID[rel]; m != nil {
		return m, nil
	}
	return ts.load(ctx, conn, strconv.FormatUint(uint64(rel), 10))
}

// byTableName returns the table schema.name.
func (ts *tables) byTableName(ctx context.Context, conn *pgconn.PgConn, schema, name string) (*tableMeta, error) {
	if m := ts.byName[[2]string{schema, name}]; m != nil {
		return m, nil
	}
	r := conn.ExecParams(ctx, "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2",
		[][]byte{[]byte(schema), []byte(name)}, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.Rows) != 1 {
		return nil, fmt.Errorf("table %s.%s does not exist", schema, name)
	}
	return ts.load(ctx, conn, string(r.Rows[0][0]))
}

// load reads the table with oid rel (decimal) from the catalog.
func (ts *tables) load(ctx context.Context, conn *pgconn.PgConn, rel string) (*tableMeta, error) {
	r := conn.ExecParams(ctx, `SELECT n.nspname, c.relname, a.attname, a.attgenerated <> '',
			coalesce((SELECT k.ord FROM pg_index i, unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
				WHERE i.indrelid = c.oid AND i.indisprimary AND k.attnum = a.attnum), 0),
			a.attidentity = 'a', c.relpersistence = 't',
			(SELECT pg_catalog.array_to_string(pg_catalog.array_agg(s.oid), ',') FROM pg_catalog.pg_class s WHERE s.relkind = 'S' AND s.oid IN (
				SELECT d.refobjid FROM pg_catalog.pg_attrdef ad JOIN pg_catalog.pg_depend d
					ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND d.objid = ad.oid
					AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass WHERE ad.adrelid = c.oid AND ad.adnum = a.attnum
				UNION SELECT d.objid FROM pg_catalog.pg_depend d
					WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
					AND d.refobjid = c.oid AND d.refobjsubid = a.attnum AND d.deptype = 'i')),
			a.atttypid, coalesce((SELECT co.collisdeterministic FROM pg_catalog.pg_collation co WHERE co.oid = a.attcollation), true),
			EXISTS (SELECT 1 FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid AND NOT i.indisprimary AND i.indkey[0] = a.attnum)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.oid = $1::oid ORDER BY a.attnum`, [][]byte{[]byte(rel)}, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	if len(r.Rows) == 0 {
		return nil, fmt.Errorf("table with oid %s: %w", rel, errNoTable)
	}
	m := &tableMeta{schema: string(r.Rows[0][0]), name: string(r.Rows[0][1]), temp: string(r.Rows[0][6]) == "t"}
	keyAt := map[int]string{}
	kindAt := map[int]engine.KeyKind{}
	for _, row := range r.Rows {
		col := string(row[2])
		if string(row[3]) != "t" {
			m.cols = append(m.cols, col)
		}
		if string(row[5]) == "t" {
			m.alwaysIdentity = true
		}
		var kind engine.KeyKind
		switch typ := string(row[8]); {
		case typ == "20" || typ == "21" || typ == "23": // int8, int2, int4
			kind = engine.KeyInt
		case (typ == "25" || typ == "1043") && string(row[9]) == "t": // text, varchar
			kind = engine.KeyText
		}
		if ord, _ := strconv.Atoi(string(row[4])); ord > 0 {
			keyAt[ord], kindAt[ord] = col, kind
		}
		if string(row[10]) == "t" && kind != engine.KeyOther {
			m.indexCols = append(m.indexCols, engine.KeyColumn{Name: col, Kind: kind})
		}
		for _, seq := range strings.Split(string(row[7]), ",") {
			if oid, err := strconv.ParseUint(seq, 10, 32); err == nil {
				m.seqs = append(m.seqs, uint32(oid))
			}
		}
	}
	for i := 1; i <= len(keyAt); i++ {
		m.pk = append(m.pk, keyAt[i])
		m.pkKinds = append(m.pkKinds, kindAt[i])
	}
	oid, _ := strconv.ParseUint(rel, 10, 32)
	m.oid = uint32(oid)
	if ts.byOID == nil {
		ts.byOID, ts.byName = map[uint32]*tableMeta{}, map[[2]string]*tableMeta{}
	}
	ts.byOID[uint32(oid)], ts.byName[[2]string{m.schema, m.name}] = m, m
	return m, nil
}

// errNoTable: no table has the oid asked for.
var errNoTable = errors.New("no such table")

// quoteIdent quotes name as an SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteIdents quotes and joins names.
func quoteIdents(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quoteIdent(n)
	}
	return strings.Join(q, ", ")
}
