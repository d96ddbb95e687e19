package sqlite

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// PostgreSQL's system catalogs, as far as psql's \dt, \d, \d TABLE, \l
// and drivers' introspection need them. A catalog query runs on a private
// in-memory database holding pg_catalog tables filled from this node's
// schema, after its PostgreSQL-only syntax is translated to SQLite's. The
// catalog is rebuilt for every query: catalog queries are rare and the
// schema is small.

// RunsPostgreSQL is false: SQLite has no pg_catalog (Catalog emulates
// it), and the session keeps run-time parameters itself.
func (e *Engine) RunsPostgreSQL() bool { return false }

// Setting fails: the SQLite engine has no run-time parameters.
func (e *Engine) Setting(context.Context, string, string) (string, error) {
	return "", sqlerr.New(sqlerr.FeatureNotSupported, "the embedded SQLite engine has no run-time parameters")
}

// Catalog implements engine.Engine.
func (e *Engine) Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error {
	if e.closed.Load() {
		return errClosed
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		return err
	}
	cat, err := readCatalog(c)
	e.pool.put(c, err != nil)
	if err != nil {
		return mapErr(err)
	}
	mem, err := openCatalogDB(cat)
	if err != nil {
		return sqlerr.Wrap(err, sqlerr.Internal, "build catalog: %v", err)
	}
	defer mem.close()
	mem.c.SetInterrupt(ctx.Done())
	stmt, _, err := mem.c.PrepareTransient(translateCatalogSQL(sql))
	if err != nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "certa cannot answer this catalog query (%v); certa emulates the parts of pg_catalog that psql and drivers commonly use", err)
	}
	defer stmt.Finalize()
	if err := bindArgs(stmt, args); err != nil {
		return err
	}
	// columns types a result column by its catalog table's declaration.
	if err := mem.refreshSchema(); err != nil {
		return mapErr(err)
	}
	return mem.streamTo(ctx, stmt, sql, &record{}, w)
}

// catalogTable is one user table as the catalogs show it.
type catalogTable struct {
	oid     int64
	name    string
	cols    []catalogColumn
	indexes []catalogIndex
	fks     []catalogFK
}

type catalogColumn struct {
	name, decl, dflt string
	notNull, pk      bool
	// identity is 'a' (GENERATED ALWAYS) or 'd' (BY DEFAULT) for an
	// identity column, whose default is then not shown (pg_attribute's
	// attidentity).
	identity string
}

// catalogFK is one foreign key of a table, as pg_constraint shows it.
type catalogFK struct {
	name                string
	cols                []string
	parent              string // as the schema spells it
	parentCols          []string
	update, delete      byte // confupdtype, confdeltype: a r c n d
	match               byte // confmatchtype: s f p
	deferrable, defered bool
}

// column returns the attnum of column name (0 if there is none).
func (t *catalogTable) column(name string) int {
	for i, c := range t.cols {
		if strings.EqualFold(c.name, name) {
			return i + 1
		}
	}
	return 0
}

// fkAction is the pg_constraint code of a foreign-key action as SQLite's
// PRAGMA foreign_key_list names it.
func fkAction(a string) byte {
	switch strings.ToUpper(a) {
	case "RESTRICT":
		return 'r'
	case "CASCADE":
		return 'c'
	case "SET NULL":
		return 'n'
	case "SET DEFAULT":
		return 'd'
	}
	return 'a'
}

// def is the foreign key as PostgreSQL's pg_get_constraintdef prints it.
func (fk *catalogFK) def() string {
	var b strings.Builder
	b.WriteString("FOREIGN KEY (")
	b.WriteString(quoteIdentList(fk.cols))
	b.WriteString(") REFERENCES ")
	b.WriteString(pgQuoteIdent(fk.parent))
	b.WriteString("(")
	b.WriteString(quoteIdentList(fk.parentCols))
	b.WriteString(")")
	switch fk.match {
	case 'f':
		b.WriteString(" MATCH FULL")
	case 'p':
		b.WriteString(" MATCH PARTIAL")
	}
	actions := map[byte]string{'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}
	if a, ok := actions[fk.update]; ok {
		b.WriteString(" ON UPDATE " + a)
	}
	if a, ok := actions[fk.delete]; ok {
		b.WriteString(" ON DELETE " + a)
	}
	if fk.deferrable {
		b.WriteString(" DEFERRABLE")
	}
	if fk.defered {
		b.WriteString(" INITIALLY DEFERRED")
	}
	return b.String()
}

// pgQuoteIdent quotes an identifier where PostgreSQL's quote_ident would:
// unless it is lower-case letters, digits and underscores, not starting
// with a digit. (PostgreSQL also quotes keywords; few table and column
// names are.)
func pgQuoteIdent(s string) string {
	plain := s != ""
	for i, c := range s {
		if !(c >= 'a' && c <= 'z' || c == '_' || i > 0 && (c >= '0' && c <= '9' || c == '$')) {
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

func quoteIdentList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = pgQuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

type catalogIndex struct {
	oid             int64
	name, sql       string
	unique, primary bool
	cols            []string
}

// readCatalog reads the user tables and indexes of c's database.
func readCatalog(c *conn) ([]*catalogTable, error) {
	defer c.internal()()
	var tables []*catalogTable
	err := execResult(c.c, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_certa_%' ORDER BY name", func(s *sqlite.Stmt) {
		tables = append(tables, &catalogTable{name: s.ColumnText(0)})
	})
	if err != nil {
		return nil, err
	}
	oid := int64(16384)
	for _, t := range tables {
		t.oid = oid
		oid++
		err := execResult(c.c, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", func(s *sqlite.Stmt) {
			col := catalogColumn{name: s.ColumnText(0), decl: s.ColumnText(1), notNull: s.ColumnInt64(2) != 0 || s.ColumnInt64(4) > 0,
				dflt: s.ColumnText(3), pk: s.ColumnInt64(4) > 0}
			if d, ok := parseSequenceDefault(col.dflt); ok {
				switch d.identity {
				case identityAlways:
					col.identity, col.dflt = "a", ""
				case identityByDefault:
					col.identity, col.dflt = "d", ""
				default: // SERIAL, as PostgreSQL shows it
					col.dflt = "nextval('" + strings.ReplaceAll(d.seq, "'", "''") + "'::regclass)"
				}
			}
			t.cols = append(t.cols, col)
		}, t.name)
		if err != nil {
			return nil, err
		}
		if t.fks, err = readCatalogFKs(c, t.name); err != nil {
			return nil, err
		}
		var idx []catalogIndex
		err = execResult(c.c, "SELECT l.name, l.\"unique\", l.origin, coalesce(m.sql, '') FROM pragma_index_list(?) l LEFT JOIN sqlite_schema m ON m.name = l.name ORDER BY l.name", func(s *sqlite.Stmt) {
			idx = append(idx, catalogIndex{name: s.ColumnText(0), unique: s.ColumnInt64(1) != 0, primary: s.ColumnText(2) == "pk", sql: s.ColumnText(3)})
		}, t.name)
		if err != nil {
			return nil, err
		}
		for i := range idx {
			err := execResult(c.c, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", func(s *sqlite.Stmt) {
				idx[i].cols = append(idx[i].cols, s.ColumnText(0))
			}, idx[i].name)
			if err != nil {
				return nil, err
			}
		}
		// An INTEGER PRIMARY KEY is the rowid: SQLite lists no index for it.
		hasPKIndex := false
		for _, ix := range idx {
			hasPKIndex = hasPKIndex || ix.primary
		}
		if !hasPKIndex {
			var pk []string
			for _, col := range t.cols {
				if col.pk {
					pk = append(pk, col.name)
				}
			}
			if len(pk) > 0 {
				idx = append(idx, catalogIndex{name: t.name + "_pkey", unique: true, primary: true, cols: pk})
			}
		}
		for i := range idx {
			switch {
			case idx[i].primary:
				idx[i].name = t.name + "_pkey"
			case strings.HasPrefix(idx[i].name, "sqlite_autoindex_"):
				// A UNIQUE constraint's index, named as PostgreSQL names it.
				idx[i].name = t.name + "_" + strings.Join(idx[i].cols, "_") + "_key"
			}
		}
		sort.Slice(idx, func(i, j int) bool { return idx[i].name < idx[j].name })
		for i := range idx {
			// PostgreSQL's pg_get_indexdef form, which psql shortens to
			// "btree (cols)".
			kind := "UNIQUE INDEX"
			if !idx[i].unique {
				kind = "INDEX"
			}
			idx[i].sql = fmt.Sprintf("CREATE %s %s ON public.%s USING btree (%s)", kind, idx[i].name, t.name, strings.Join(idx[i].cols, ", "))
			idx[i].oid = oid
			oid++
		}
		t.indexes = idx
	}
	return tables, nil
}

// readCatalogFKs reads the foreign keys of table: what SQLite enforces
// from PRAGMA foreign_key_list, and their names, MATCH and DEFERRABLE
// from the declaration (the pragma does not tell), read with PostgreSQL's
// parser. A key the declaration does not name gets PostgreSQL's name,
// table_columns_fkey.
func readCatalogFKs(c *conn, table string) ([]catalogFK, error) {
	var fks []catalogFK
	lastID := int64(-1)
	var hasTo []bool
	err := execResult(c.c, `SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`, func(s *sqlite.Stmt) {
		if id := s.ColumnInt64(0); id != lastID {
			fks = append(fks, catalogFK{parent: s.ColumnText(1), update: fkAction(s.ColumnText(4)), delete: fkAction(s.ColumnText(5)), match: 's'})
			hasTo = append(hasTo, true)
			lastID = id
		}
		fk := &fks[len(fks)-1]
		fk.cols = append(fk.cols, s.ColumnText(2))
		if s.ColumnType(3) == sqlite.TypeNull {
			hasTo[len(hasTo)-1] = false
		} else {
			fk.parentCols = append(fk.parentCols, s.ColumnText(3))
		}
	}, table)
	if err != nil || len(fks) == 0 {
		return nil, err
	}
	// SQLite lists the keys last declared first.
	for i, j := 0, len(fks)-1; i < j; i, j = i+1, j-1 {
		fks[i], fks[j] = fks[j], fks[i]
		hasTo[i], hasTo[j] = hasTo[j], hasTo[i]
	}
	var decl string
	err = execResult(c.c, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", func(s *sqlite.Stmt) { decl = s.ColumnText(0) }, table)
	if err != nil {
		return nil, err
	}
	declared, _ := pgparse.ParseForeignKeys(decl)
	used := map[string]bool{}
	var out []catalogFK
	for i := range fks {
		fk := &fks[i]
		// The parent's actual spelling, and its key when the foreign key
		// names no columns; a key to a missing table is left out.
		var parent string
		err := execResult(c.c, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE",
			func(s *sqlite.Stmt) { parent = s.ColumnText(0) }, fk.parent)
		if err != nil {
			return nil, err
		}
		if parent == "" {
			continue
		}
		fk.parent = parent
		if !hasTo[i] {
			fk.parentCols = nil
			err := execResult(c.c, "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk",
				func(s *sqlite.Stmt) { fk.parentCols = append(fk.parentCols, s.ColumnText(0)) }, parent)
			if err != nil {
				return nil, err
			}
		}
		for j, d := range declared {
			if used[fmt.Sprint(j)] || !strings.EqualFold(d.RefTable, parent) || !strings.EqualFold(strings.Join(d.Columns, ","), strings.Join(fk.cols, ",")) {
				continue
			}
			used[fmt.Sprint(j)] = true
			fk.name, fk.deferrable, fk.defered = d.Name, d.Deferrable, d.InitiallyDeferred
			fk.match = map[string]byte{"FULL": 'f', "PARTIAL": 'p'}[d.Match]
			if fk.match == 0 {
				fk.match = 's'
			}
			break
		}
		out = append(out, *fk)
	}
	names := map[string]bool{}
	for _, fk := range out {
		names[fk.name] = true
	}
	for i := range out {
		if out[i].name != "" {
			continue
		}
		out[i].name = foreignKeyName(table, out[i].cols, names)
	}
	return out, nil
}

// foreignKeyName is the name PostgreSQL gives an unnamed foreign key of
// table on cols, table_cols_fkey, numbered past the names taken; it takes
// the name.
func foreignKeyName(table string, cols []string, taken map[string]bool) string {
	base := table + "_" + strings.Join(cols, "_") + "_fkey"
	name := base
	for n := 1; taken[name]; n++ {
		name = fmt.Sprintf("%s%d", base, n)
	}
	taken[name] = true
	return name
}

// catalogSchema creates the emulated catalogs. Columns psql and drivers
// read; oids are integers, booleans 0/1.
const catalogSchema = `
CREATE TABLE pg_namespace (oid INTEGER, nspname TEXT, nspowner INTEGER, nspacl TEXT);
CREATE TABLE pg_class (oid INTEGER, relname TEXT, relnamespace INTEGER, relkind TEXT, relowner INTEGER,
  relam INTEGER, relchecks INTEGER, relhasindex BOOLEAN, relhasrules BOOLEAN, relhastriggers BOOLEAN,
  relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispartition BOOLEAN, reltablespace INTEGER,
  reloftype INTEGER, relpersistence TEXT, relreplident TEXT, reltoastrelid INTEGER, relpartbound TEXT,
  reloptions TEXT, relnatts INTEGER, reltuples REAL, relacl TEXT, relhassubclass BOOLEAN, relpages INTEGER);
CREATE TABLE pg_am (oid INTEGER, amname TEXT, amtype TEXT);
CREATE TABLE pg_attribute (attrelid INTEGER, attname TEXT, atttypid INTEGER, atttypmod INTEGER, attnum INTEGER,
  attnotnull BOOLEAN, atthasdef BOOLEAN, attisdropped BOOLEAN, attcollation INTEGER, attidentity TEXT,
  attgenerated TEXT, attlen INTEGER, attstorage TEXT, attcompression TEXT, attstattarget INTEGER,
  attislocal BOOLEAN, attinhcount INTEGER, attacl TEXT, attoptions TEXT, attfdwoptions TEXT);
CREATE TABLE pg_attrdef (oid INTEGER, adrelid INTEGER, adnum INTEGER, adbin TEXT);
CREATE TABLE pg_index (indexrelid INTEGER, indrelid INTEGER, indisprimary BOOLEAN, indisunique BOOLEAN,
  indisclustered BOOLEAN, indisvalid BOOLEAN, indisreplident BOOLEAN, indnatts INTEGER, indnkeyatts INTEGER,
  indkey TEXT, indimmediate BOOLEAN, indisexclusion BOOLEAN, indnullsnotdistinct BOOLEAN, indisready BOOLEAN, indislive BOOLEAN);
CREATE TABLE pg_constraint (oid INTEGER, conname TEXT, connamespace INTEGER, contype TEXT, condeferrable BOOLEAN,
  condeferred BOOLEAN, convalidated BOOLEAN, conrelid INTEGER, conindid INTEGER, confrelid INTEGER,
  conkey TEXT, confkey TEXT, conparentid INTEGER, conislocal BOOLEAN, connoinherit BOOLEAN,
  confupdtype TEXT, confdeltype TEXT, confmatchtype TEXT, contypid INTEGER, coninhcount INTEGER);
CREATE TABLE pg_type (oid INTEGER, typname TEXT, typnamespace INTEGER, typlen INTEGER, typtype TEXT,
  typcollation INTEGER, typbasetype INTEGER, typelem INTEGER, typarray INTEGER, typinput TEXT,
  typoutput TEXT, typrelid INTEGER, typnotnull BOOLEAN, typdelim TEXT, typowner INTEGER, typcategory TEXT, typtypmod INTEGER);
CREATE TABLE pg_collation (oid INTEGER, collname TEXT, collnamespace INTEGER);
CREATE TABLE pg_database (oid INTEGER, datname TEXT, datdba INTEGER, encoding INTEGER, datcollate TEXT,
  datctype TEXT, daticulocale TEXT, datlocprovider TEXT, datacl TEXT, datallowconn BOOLEAN,
  datistemplate BOOLEAN, datconnlimit INTEGER, dattablespace INTEGER, daticurules TEXT, datlocale TEXT);
CREATE TABLE pg_inherits (inhrelid INTEGER, inhparent INTEGER, inhseqno INTEGER, inhdetachpending BOOLEAN);
CREATE TABLE pg_trigger (oid INTEGER, tgrelid INTEGER, tgname TEXT, tgisinternal BOOLEAN, tgenabled TEXT, tgparentid INTEGER);
CREATE TABLE pg_policy (oid INTEGER, polname TEXT, polrelid INTEGER, polcmd TEXT, polpermissive BOOLEAN,
  polroles TEXT, polqual TEXT, polwithcheck TEXT);
CREATE TABLE pg_statistic_ext (oid INTEGER, stxrelid INTEGER, stxname TEXT, stxnamespace INTEGER,
  stxkeys TEXT, stxkind TEXT, stxstattarget INTEGER);
CREATE TABLE pg_publication (oid INTEGER, pubname TEXT, puballtables BOOLEAN, pubviaroot BOOLEAN);
CREATE TABLE pg_publication_rel (oid INTEGER, prpubid INTEGER, prrelid INTEGER, prqual TEXT, prattrs TEXT);
CREATE TABLE pg_publication_namespace (oid INTEGER, pnpubid INTEGER, pnnspid INTEGER);
CREATE TABLE pg_roles (oid INTEGER, rolname TEXT, rolsuper BOOLEAN, rolinherit BOOLEAN, rolcreaterole BOOLEAN,
  rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, rolreplication BOOLEAN, rolconnlimit INTEGER, rolvaliduntil TEXT, rolbypassrls BOOLEAN);
CREATE TABLE pg_settings (name TEXT, setting TEXT, unit TEXT, category TEXT, short_desc TEXT, context TEXT, vartype TEXT, source TEXT);
CREATE TABLE pg_description (objoid INTEGER, classoid INTEGER, objsubid INTEGER, description TEXT);
CREATE TABLE pg_tablespace (oid INTEGER, spcname TEXT);
CREATE TABLE pg_proc (oid INTEGER, proname TEXT, pronamespace INTEGER, prokind TEXT, prorettype INTEGER);
CREATE TABLE pg_foreign_table (ftrelid INTEGER, ftserver INTEGER, ftoptions TEXT);
CREATE TABLE pg_partitioned_table (partrelid INTEGER, partstrat TEXT);
CREATE TABLE pg_rewrite (oid INTEGER, ev_class INTEGER, rulename TEXT);
CREATE TABLE information_schema_tables (table_catalog TEXT, table_schema TEXT, table_name TEXT, table_type TEXT);
CREATE TABLE information_schema_columns (table_catalog TEXT, table_schema TEXT, table_name TEXT, column_name TEXT,
  ordinal_position INTEGER, column_default TEXT, is_nullable TEXT, data_type TEXT, udt_name TEXT,
  is_identity TEXT, identity_generation TEXT, character_maximum_length INTEGER, numeric_precision INTEGER,
  numeric_precision_radix INTEGER, numeric_scale INTEGER, datetime_precision INTEGER, identity_increment TEXT,
  udt_schema TEXT, udt_catalog TEXT);
CREATE TABLE information_schema_schemata (catalog_name TEXT, schema_name TEXT, schema_owner TEXT);
CREATE TABLE information_schema_table_constraints (constraint_catalog TEXT, constraint_schema TEXT, constraint_name TEXT,
  table_catalog TEXT, table_schema TEXT, table_name TEXT, constraint_type TEXT, is_deferrable TEXT,
  initially_deferred TEXT, enforced TEXT);
CREATE TABLE information_schema_key_column_usage (constraint_catalog TEXT, constraint_schema TEXT, constraint_name TEXT,
  table_catalog TEXT, table_schema TEXT, table_name TEXT, column_name TEXT, ordinal_position INTEGER,
  position_in_unique_constraint INTEGER);
CREATE TABLE information_schema_constraint_column_usage (table_catalog TEXT, table_schema TEXT, table_name TEXT,
  column_name TEXT, constraint_catalog TEXT, constraint_schema TEXT, constraint_name TEXT);
CREATE TABLE pg_sequence (seqrelid INTEGER, seqtypid INTEGER, seqstart INTEGER, seqincrement INTEGER,
  seqmax INTEGER, seqmin INTEGER, seqcache INTEGER, seqcycle BOOLEAN);
CREATE TABLE pg_range (rngtypid INTEGER, rngsubtype INTEGER, rngmultitypid INTEGER, rngcollation INTEGER,
  rngsubopc INTEGER, rngcanonical TEXT, rngsubdiff TEXT);
CREATE TABLE pg_depend (classid INTEGER, objid INTEGER, objsubid INTEGER, refclassid INTEGER, refobjid INTEGER,
  refobjsubid INTEGER, deptype TEXT);
CREATE VIEW pg_tables AS SELECT n.nspname AS schemaname, c.relname AS tablename, 'certa' AS tableowner,
  NULL AS tablespace, c.relhasindex AS hasindexes, false AS hasrules, false AS hastriggers, false AS rowsecurity
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p');
`

// Fixed oids of the catalogs' own objects.
const (
	oidPublic    = 2200
	oidPgCatalog = 11
	oidUser      = 10
	oidHeapAM    = 2
	oidBtreeAM   = 403
	oidDatabase  = 16383
)

// catalogTypes are the types the catalogs list, by oid: PostgreSQL's name
// (as format_type gives it) and pg_type.typname.
var catalogTypes = []struct {
	oid           uint32
	name, typname string
	len           int64
}{
	{16, "boolean", "bool", 1}, {17, "bytea", "bytea", -1}, {19, "name", "name", 64},
	{20, "bigint", "int8", 8}, {21, "smallint", "int2", 2}, {23, "integer", "int4", 4},
	{25, "text", "text", -1}, {26, "oid", "oid", 4}, {114, "json", "json", -1},
	{700, "real", "float4", 4}, {701, "double precision", "float8", 8},
	{1042, "character", "bpchar", -1}, {1043, "character varying", "varchar", -1},
	{1082, "date", "date", 4}, {1083, "time without time zone", "time", 8},
	{1114, "timestamp without time zone", "timestamp", 8}, {1184, "timestamp with time zone", "timestamptz", 8},
	{1700, "numeric", "numeric", -1}, {2950, "uuid", "uuid", 16}, {3802, "jsonb", "jsonb", -1},
}

// typnameByOID is pg_type.typname of a type of catalogTypes ("text" for
// another).
func typnameByOID(oid int64) string {
	for _, t := range catalogTypes {
		if int64(t.oid) == oid {
			return t.typname
		}
	}
	return "text"
}

// columnFacts are what the catalogs say of a column's type beyond its oid.
type columnFacts struct {
	typmod                                        int64 // pg_attribute.atttypmod: -1, or n + 4 for varchar(n)
	charLen, precision, radix, scale, dtPrecision any   // information_schema.columns (nil: NULL)
}

// typeFacts reads a column's declared type (varchar(20), numeric(10,2))
// as the catalogs describe it.
func typeFacts(decl string, oid int64) columnFacts {
	f := columnFacts{typmod: -1}
	var mods []int64
	if open, end := strings.IndexByte(decl, '('), strings.LastIndexByte(decl, ')'); open >= 0 && end > open {
		for _, m := range strings.Split(decl[open+1:end], ",") {
			if n, err := strconv.ParseInt(strings.TrimSpace(m), 10, 32); err == nil {
				mods = append(mods, n)
			}
		}
	}
	switch oid {
	case 1043, 1042: // varchar, bpchar
		if len(mods) == 1 {
			f.typmod, f.charLen = mods[0]+4, mods[0]
		}
	case 21, 23, 20: // int2, int4, int8
		f.precision, f.radix, f.scale = map[int64]int64{21: 16, 23: 32, 20: 64}[oid], 2, 0
	case 701:
		f.precision, f.radix = 53, 2
	case 1700:
		f.radix = 10
		if len(mods) > 0 {
			scale := int64(0)
			if len(mods) > 1 {
				scale = mods[1]
			}
			f.typmod, f.precision, f.scale = mods[0]<<16|scale+4, mods[0], scale
		}
	case 1082:
		f.dtPrecision = 0
	case 1083, 1114, 1184:
		f.dtPrecision = 6
	}
	return f
}

func typeNameByOID(oid int64) string {
	for _, t := range catalogTypes {
		if int64(t.oid) == oid {
			return t.name
		}
	}
	return "text"
}

// typeOIDByName is to_regtype: the oid of a type named as format_type or
// pg_type name it (pg_catalog. allowed), or NULL.
func typeOIDByName(name string) sqlite.Value {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
	for _, t := range catalogTypes {
		if t.name == name || t.typname == name {
			return sqlite.IntegerValue(int64(t.oid))
		}
	}
	return sqlite.Value{}
}

// openCatalogDB builds the in-memory catalogs for tables.
func openCatalogDB(tables []*catalogTable) (*conn, error) {
	sc, err := sqlite.OpenConn(":memory:", sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenMemory)
	if err != nil {
		return nil, err
	}
	c := &conn{c: sc}
	ok := false
	defer func() {
		if !ok {
			c.close()
		}
	}()
	if err := sqlitex.ExecuteScript(sc, catalogSchema, nil); err != nil {
		return nil, err
	}
	indexDefs := map[int64]string{}
	constraintDefs := map[int64]string{}
	relNames := map[int64]string{}
	if err := registerCatalogFunctions(sc, indexDefs, constraintDefs, relNames); err != nil {
		return nil, err
	}
	// Tables with foreign keys on either side have "triggers" (PostgreSQL
	// checks foreign keys with internal triggers), which is what makes
	// psql's \d look for foreign keys.
	byName := map[string]*catalogTable{}
	for _, t := range tables {
		byName[strings.ToLower(t.name)] = t
		relNames[t.oid] = pgQuoteIdent(t.name)
	}
	hasFK := map[*catalogTable]bool{}
	for _, t := range tables {
		for _, fk := range t.fks {
			if p := byName[strings.ToLower(fk.parent)]; p != nil {
				hasFK[t], hasFK[p] = true, true
			}
		}
	}
	ins := func(sql string, args ...any) {
		if err == nil {
			err = sqlitex.Execute(sc, sql, &sqlitex.ExecOptions{Args: args})
		}
	}
	ins("INSERT INTO pg_namespace VALUES (?, 'public', ?, NULL), (?, 'pg_catalog', ?, NULL), (99, 'pg_toast', ?, NULL), (13000, 'information_schema', ?, NULL)",
		oidPublic, oidUser, oidPgCatalog, oidUser, oidUser, oidUser)
	ins("INSERT INTO pg_am VALUES (?, 'heap', 't'), (?, 'btree', 'i')", oidHeapAM, oidBtreeAM)
	ins("INSERT INTO pg_database VALUES (?, 'certa', ?, 6, 'C', 'C', NULL, 'c', NULL, 1, 0, -1, 1663, NULL, NULL)", oidDatabase, oidUser)
	ins("INSERT INTO pg_roles VALUES (?, 'certa', 1, 1, 1, 1, 1, 0, -1, NULL, 0)", oidUser)
	ins("INSERT INTO pg_tablespace VALUES (1663, 'pg_default')")
	ins("INSERT INTO information_schema_schemata VALUES ('certa', 'public', 'certa')")
	for _, t := range catalogTypes {
		ins("INSERT INTO pg_type (oid, typname, typnamespace, typlen, typtype, typcollation, typbasetype, typelem, typarray, typinput, typoutput, typrelid, typnotnull, typdelim, typowner, typcategory, typtypmod) VALUES (?, ?, ?, ?, 'b', 0, 0, 0, 0, ?, ?, 0, 0, ',', ?, 'U', -1)",
			int64(t.oid), t.typname, oidPgCatalog, t.len, t.typname+"in", t.typname+"out", oidUser)
	}
	for _, t := range tables {
		ins(`INSERT INTO pg_class (oid, relname, relnamespace, relkind, relowner, relam, relchecks, relhasindex,
			relhasrules, relhastriggers, relrowsecurity, relforcerowsecurity, relispartition, reltablespace, reloftype,
			relpersistence, relreplident, reltoastrelid, relnatts, reltuples, relhassubclass, relpages)
			VALUES (?, ?, ?, 'r', ?, ?, 0, ?, 0, ?, 0, 0, 0, 0, 0, 'p', 'd', 0, ?, -1, 0, 0)`,
			t.oid, t.name, oidPublic, oidUser, oidHeapAM, len(t.indexes) > 0, hasFK[t], len(t.cols))
		ins("INSERT INTO information_schema_tables VALUES ('certa', 'public', ?, 'BASE TABLE')", t.name)
		for i, col := range t.cols {
			typ := declaredType(col.decl)
			if col.decl == "" {
				typ = result.Text
			}
			typoid := int64(typ.OID())
			facts := typeFacts(col.decl, typoid)
			ins(`INSERT INTO pg_attribute (attrelid, attname, atttypid, atttypmod, attnum, attnotnull, atthasdef,
				attisdropped, attcollation, attidentity, attgenerated, attlen, attstorage, attcompression,
				attstattarget, attislocal, attinhcount) VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, ?, '', -1, 'x', '', -1, 1, 0)`,
				t.oid, col.name, typoid, facts.typmod, i+1, col.notNull, col.dflt != "", col.identity)
			if col.dflt != "" {
				ins("INSERT INTO pg_attrdef VALUES (?, ?, ?, ?)", t.oid*1000+int64(i+1), t.oid, i+1, col.dflt)
			}
			nullable := "YES"
			if col.notNull {
				nullable = "NO"
			}
			isIdentity, generation, increment := "NO", any(nil), any(nil)
			switch col.identity {
			case "a":
				isIdentity, generation, increment = "YES", "ALWAYS", "1"
			case "d":
				isIdentity, generation, increment = "YES", "BY DEFAULT", "1"
			}
			ins("INSERT INTO information_schema_columns VALUES ('certa', 'public', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pg_catalog', 'certa')",
				t.name, col.name, i+1, nullIfEmpty(col.dflt), nullable, typeNameByOID(typoid), typnameByOID(typoid), isIdentity, generation,
				facts.charLen, facts.precision, facts.radix, facts.scale, facts.dtPrecision, increment)
		}
		for _, ix := range t.indexes {
			ins(`INSERT INTO pg_class (oid, relname, relnamespace, relkind, relowner, relam, relchecks, relhasindex,
				relhasrules, relhastriggers, relrowsecurity, relforcerowsecurity, relispartition, reltablespace,
				reloftype, relpersistence, relreplident, reltoastrelid, relnatts, reltuples, relhassubclass, relpages)
				VALUES (?, ?, ?, 'i', ?, ?, 0, 0, 0, 0, 0, 0, 0, 0, 0, 'p', 'n', 0, ?, -1, 0, 0)`,
				ix.oid, ix.name, oidPublic, oidUser, oidBtreeAM, len(ix.cols))
			var keys []string
			for _, name := range ix.cols {
				for i, col := range t.cols {
					if col.name == name {
						keys = append(keys, fmt.Sprint(i+1))
					}
				}
			}
			ins(`INSERT INTO pg_index VALUES (?, ?, ?, ?, 0, 1, 0, ?, ?, ?, 1, 0, 0, 1, 1)`,
				ix.oid, t.oid, ix.primary, ix.unique, len(ix.cols), len(ix.cols), strings.Join(keys, " "))
			indexDefs[ix.oid] = ix.sql
			if ix.primary || ix.unique {
				contype, def := "u", "UNIQUE ("+strings.Join(ix.cols, ", ")+")"
				if ix.primary {
					contype, def = "p", "PRIMARY KEY ("+strings.Join(ix.cols, ", ")+")"
				}
				ins(`INSERT INTO pg_constraint VALUES (?, ?, ?, ?, 0, 0, 1, ?, ?, 0, ?, NULL, 0, 1, 1, ' ', ' ', ' ', 0, 0)`,
					ix.oid+500000, ix.name, oidPublic, contype, t.oid, ix.oid, "{"+strings.Join(keys, ",")+"}")
				constraintDefs[ix.oid+500000] = def
			}
		}
	}
	// Foreign keys, once every table has its oid and indexes.
	fkOID := int64(900000)
	for _, t := range tables {
		for _, fk := range t.fks {
			p := byName[strings.ToLower(fk.parent)]
			if p == nil {
				continue
			}
			fk.parent = p.name
			var conkey, confkey []string
			for _, c := range fk.cols {
				conkey = append(conkey, fmt.Sprint(t.column(c)))
			}
			for _, c := range fk.parentCols {
				confkey = append(confkey, fmt.Sprint(p.column(c)))
			}
			// conindid: the parent's unique index on the referenced columns.
			var index int64
			for _, ix := range p.indexes {
				if ix.unique && strings.EqualFold(strings.Join(ix.cols, ","), strings.Join(fk.parentCols, ",")) {
					index = ix.oid
				}
			}
			fkOID++
			ins(`INSERT INTO pg_constraint VALUES (?, ?, ?, 'f', ?, ?, 1, ?, ?, ?, ?, ?, 0, 1, 1, ?, ?, ?, 0, 0)`,
				fkOID, fk.name, oidPublic, fk.deferrable, fk.defered, t.oid, index, p.oid,
				"{"+strings.Join(conkey, ",")+"}", "{"+strings.Join(confkey, ",")+"}",
				string(fk.update), string(fk.delete), string(fk.match))
			constraintDefs[fkOID] = fk.def()
		}
	}
	// information_schema's constraint views, from pg_constraint.
	ins(`INSERT INTO information_schema_table_constraints SELECT 'certa', 'public', k.conname, 'certa', 'public', c.relname,
		CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' WHEN 'f' THEN 'FOREIGN KEY' ELSE 'CHECK' END,
		CASE WHEN k.condeferrable THEN 'YES' ELSE 'NO' END, CASE WHEN k.condeferred THEN 'YES' ELSE 'NO' END, 'YES'
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid`)
	ins(`INSERT INTO information_schema_key_column_usage SELECT 'certa', 'public', k.conname, 'certa', 'public', c.relname,
		a.attname, CAST(j.key AS INTEGER) + 1, NULL
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid,
		json_each('[' || substr(k.conkey, 2, length(k.conkey) - 2) || ']') j
		JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = j.value
		WHERE k.contype IN ('p', 'u', 'f')`)
	// constraint_column_usage names the referenced columns of a foreign
	// key, the constrained ones of the others.
	ins(`INSERT INTO information_schema_constraint_column_usage SELECT 'certa', 'public', c.relname, a.attname,
		'certa', 'public', k.conname
		FROM pg_constraint k JOIN pg_class c ON c.oid = CASE k.contype WHEN 'f' THEN k.confrelid ELSE k.conrelid END,
		json_each('[' || substr(CASE k.contype WHEN 'f' THEN k.confkey ELSE k.conkey END, 2,
			length(CASE k.contype WHEN 'f' THEN k.confkey ELSE k.conkey END) - 2) || ']') j
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = j.value
		WHERE k.contype IN ('p', 'u', 'f')`)
	if err != nil {
		return nil, err
	}
	ok = true
	return c, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// registerCatalogFunctions adds the functions catalog queries call.
// relNames holds the tables' names as regclass prints them, by oid.
func registerCatalogFunctions(c *sqlite.Conn, indexDefs, constraintDefs, relNames map[int64]string) error {
	text := func(v string) sqlite.Value { return sqlite.TextValue(v) }
	fns := map[string]func(args []sqlite.Value) sqlite.Value{
		// x::regclass where x is an oid column (translateCatalogSQL): the
		// relation's name, as PostgreSQL prints a regclass.
		"certa_regclass": func(a []sqlite.Value) sqlite.Value {
			if name, ok := relNames[a[0].Int64()]; ok && a[0].Type() == sqlite.TypeInteger {
				return text(name)
			}
			return a[0]
		},
		// No partitions: a table is its own only ancestor.
		"pg_partition_ancestors":          func(a []sqlite.Value) sqlite.Value { return a[0] },
		"pg_get_userbyid":                 func([]sqlite.Value) sqlite.Value { return text("certa") },
		"pg_get_serial_sequence":          func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"to_regtype":                      func(a []sqlite.Value) sqlite.Value { return typeOIDByName(a[0].Text()) },
		"pg_table_is_visible":             func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"pg_type_is_visible":              func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"pg_encoding_to_char":             func([]sqlite.Value) sqlite.Value { return text("UTF8") },
		"format_type":                     func(a []sqlite.Value) sqlite.Value { return text(typeNameByOID(a[0].Int64())) },
		"pg_get_indexdef":                 func(a []sqlite.Value) sqlite.Value { return text(indexDefs[a[0].Int64()]) },
		"pg_get_constraintdef":            func(a []sqlite.Value) sqlite.Value { return text(constraintDefs[a[0].Int64()]) },
		"pg_get_triggerdef":               func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"pg_get_expr":                     func(a []sqlite.Value) sqlite.Value { return a[0] },
		"array_to_string":                 func(a []sqlite.Value) sqlite.Value { return a[0] },
		"quote_ident":                     func(a []sqlite.Value) sqlite.Value { return a[0] },
		"obj_description":                 func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"col_description":                 func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"shobj_description":               func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"pg_relation_size":                func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(0) },
		"pg_table_size":                   func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(0) },
		"pg_total_relation_size":          func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(0) },
		"pg_database_size":                func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(0) },
		"pg_size_pretty":                  func(a []sqlite.Value) sqlite.Value { return text(a[0].Text() + " bytes") },
		"has_table_privilege":             func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"has_schema_privilege":            func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"pg_relation_is_publishable":      func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(0) },
		"pg_get_partkeydef":               func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"pg_get_statisticsobjdef_columns": func([]sqlite.Value) sqlite.Value { return sqlite.Value{} },
		"current_schemas":                 func([]sqlite.Value) sqlite.Value { return text("{public}") },
		"current_schema":                  func([]sqlite.Value) sqlite.Value { return text("public") },
		"current_database":                func([]sqlite.Value) sqlite.Value { return text("certa") },
		"version":                         func([]sqlite.Value) sqlite.Value { return pgFunctions["version"]() },
		"regexp": func(a []sqlite.Value) sqlite.Value {
			re, err := regexp.Compile(a[0].Text())
			if err != nil {
				return sqlite.IntegerValue(0)
			}
			if re.MatchString(a[1].Text()) {
				return sqlite.IntegerValue(1)
			}
			return sqlite.IntegerValue(0)
		},
	}
	for name, fn := range fns {
		err := c.CreateFunction(name, &sqlite.FunctionImpl{
			NArgs: -1,
			Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
				if len(args) == 0 && (name == "regexp" || name == "format_type" || name == "pg_get_expr" ||
					name == "certa_regclass" || name == "pg_partition_ancestors") {
					return sqlite.Value{}, fmt.Errorf("%s needs arguments", name)
				}
				return fn(args), nil
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// translateCatalogSQL turns PostgreSQL-only syntax that catalog queries use
// into SQLite's, outside string literals.
func translateCatalogSQL(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); {
		if sql[i] == '\'' {
			j := i + 1
			for j < len(sql) && !(sql[j] == '\'' && (j+1 >= len(sql) || sql[j+1] != '\'')) {
				if sql[j] == '\'' {
					j++
				}
				j++
			}
			b.WriteString(sql[i:min(j+1, len(sql))])
			i = j + 1
			continue
		}
		j := strings.IndexByte(sql[i:], '\'')
		if j < 0 {
			j = len(sql)
		} else {
			j += i
		}
		part := sql[i:j]
		if j < len(sql) && strings.HasSuffix(part, "E") && (len(part) == 1 || !isIdentByte(part[len(part)-2])) {
			part = part[:len(part)-1] // E'...' escape strings: the escapes catalog queries use are plain
		}
		b.WriteString(translatePart(part))
		i = j
	}
	return b.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

var catalogRewrites = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)OPERATOR\s*\(\s*pg_catalog\s*\.\s*~\s*\)`), " REGEXP "},
	{regexp.MustCompile(`(?i)OPERATOR\s*\(\s*pg_catalog\s*\.\s*!~\s*\)`), " NOT REGEXP "},
	{regexp.MustCompile(`!~`), " NOT REGEXP "},
	{regexp.MustCompile(`~`), " REGEXP "},
	{regexp.MustCompile(`(?i)COLLATE\s+(pg_catalog\s*\.\s*)?"?(default|C)"?`), ""},
	// A column cast to regclass prints the table's name (a literal cast
	// to regclass stays an oid: the cast below drops it).
	{regexp.MustCompile(`(?i)\b((?:[a-z_]\w*\s*\.\s*)?[a-z_]\w*)\s*::\s*(?:pg_catalog\s*\.\s*)?regclass\b`), "certa_regclass($1)"},
	{regexp.MustCompile(`::\s*("?[\w]+"?\s*\.\s*)?"?[\w]+"?(\s*\[\s*\])?`), ""},
	{regexp.MustCompile(`(?i)\bpg_catalog\s*\.\s*`), ""},
	// psql's \d lists the triggers of a table with foreign keys, with a
	// parent trigger's table found through the partition ancestors.
	{regexp.MustCompile(`(?i)\bpg_partition_ancestors\s*\(([^()]*)\)\s+WITH\s+ORDINALITY\s+AS\s+(\w+)\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)`),
		"(SELECT $1 AS $3, 1 AS $4) AS $2"},
	{regexp.MustCompile(`(?i)\barray\s*\(\s*select\b`), "(SELECT"},
	{regexp.MustCompile(`(?i)=\s*any\s*\(`), " IN ("},
	{regexp.MustCompile(`(?i)\bIN\s*\(\s*ARRAY\s*\[([^\[\]]*)\]\s*\)`), " IN ($1)"},
	{regexp.MustCompile(`(?i)\bgenerate_series\s*\(([^()]|\([^()]*(\([^()]*\))?[^()]*\))*\)`), "(SELECT 0 AS value)"},
	{regexp.MustCompile(`(?i)\bstring_agg\s*\(`), "group_concat("},
	{regexp.MustCompile(`(?i)\bjson_build_object\s*\(`), "json_object("},
	{regexp.MustCompile(`\b(\w+)\s*\[\s*\w*\s*\]`), "$1"},
	{regexp.MustCompile(`(?i)\binformation_schema\s*\.\s*`), "information_schema_"},
}

func translatePart(s string) string {
	for _, r := range catalogRewrites {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}
