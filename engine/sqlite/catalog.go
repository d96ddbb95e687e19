package sqlite

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/result"
	"certa/sqlerr"
)

// PostgreSQL's system catalogs, as far as psql's \dt, \d, \d TABLE, \l
// and drivers' introspection need them. A catalog query runs on a private
// in-memory database holding pg_catalog tables filled from this node's
// schema, after its PostgreSQL-only syntax is translated to SQLite's. The
// catalog is rebuilt for every query: catalog queries are rare and the
// schema is small.

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
}

type catalogColumn struct {
	name, decl, dflt string
	notNull, pk      bool
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
			t.cols = append(t.cols, catalogColumn{name: s.ColumnText(0), decl: s.ColumnText(1), notNull: s.ColumnInt64(2) != 0 || s.ColumnInt64(4) > 0,
				dflt: s.ColumnText(3), pk: s.ColumnInt64(4) > 0})
		}, t.name)
		if err != nil {
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
		sort.Slice(idx, func(i, j int) bool { return idx[i].name < idx[j].name })
		for i := range idx {
			if idx[i].primary {
				idx[i].name = t.name + "_pkey"
			}
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
  conkey TEXT, confkey TEXT, conparentid INTEGER, conislocal BOOLEAN, connoinherit BOOLEAN);
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
  ordinal_position INTEGER, column_default TEXT, is_nullable TEXT, data_type TEXT, udt_name TEXT);
CREATE TABLE information_schema_schemata (catalog_name TEXT, schema_name TEXT, schema_owner TEXT);
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

func typeNameByOID(oid int64) string {
	for _, t := range catalogTypes {
		if int64(t.oid) == oid {
			return t.name
		}
	}
	return "text"
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
	if err := registerCatalogFunctions(sc, indexDefs, constraintDefs); err != nil {
		return nil, err
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
			VALUES (?, ?, ?, 'r', ?, ?, 0, ?, 0, 0, 0, 0, 0, 0, 0, 'p', 'd', 0, ?, -1, 0, 0)`,
			t.oid, t.name, oidPublic, oidUser, oidHeapAM, len(t.indexes) > 0, len(t.cols))
		ins("INSERT INTO information_schema_tables VALUES ('certa', 'public', ?, 'BASE TABLE')", t.name)
		for i, col := range t.cols {
			typ := declaredType(col.decl)
			if col.decl == "" {
				typ = result.Text
			}
			typoid := int64(typ.OID())
			ins(`INSERT INTO pg_attribute (attrelid, attname, atttypid, atttypmod, attnum, attnotnull, atthasdef,
				attisdropped, attcollation, attidentity, attgenerated, attlen, attstorage, attcompression,
				attstattarget, attislocal, attinhcount) VALUES (?, ?, ?, -1, ?, ?, ?, 0, 0, '', '', -1, 'x', '', -1, 1, 0)`,
				t.oid, col.name, typoid, i+1, col.notNull, col.dflt != "")
			if col.dflt != "" {
				ins("INSERT INTO pg_attrdef VALUES (?, ?, ?, ?)", t.oid*1000+int64(i+1), t.oid, i+1, col.dflt)
			}
			nullable := "YES"
			if col.notNull {
				nullable = "NO"
			}
			ins("INSERT INTO information_schema_columns VALUES ('certa', 'public', ?, ?, ?, ?, ?, ?, ?)",
				t.name, col.name, i+1, nullIfEmpty(col.dflt), nullable, typeNameByOID(typoid), typeNameByOID(typoid))
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
				ins(`INSERT INTO pg_constraint VALUES (?, ?, ?, ?, 0, 0, 1, ?, ?, 0, ?, NULL, 0, 1, 1)`,
					ix.oid+500000, ix.name, oidPublic, contype, t.oid, ix.oid, "{"+strings.Join(keys, ",")+"}")
				constraintDefs[ix.oid+500000] = def
			}
		}
	}
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
func registerCatalogFunctions(c *sqlite.Conn, indexDefs, constraintDefs map[int64]string) error {
	text := func(v string) sqlite.Value { return sqlite.TextValue(v) }
	fns := map[string]func(args []sqlite.Value) sqlite.Value{
		"pg_get_userbyid":                 func([]sqlite.Value) sqlite.Value { return text("certa") },
		"pg_table_is_visible":             func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"pg_type_is_visible":              func([]sqlite.Value) sqlite.Value { return sqlite.IntegerValue(1) },
		"pg_encoding_to_char":             func([]sqlite.Value) sqlite.Value { return text("UTF8") },
		"format_type":                     func(a []sqlite.Value) sqlite.Value { return text(typeNameByOID(a[0].Int64())) },
		"pg_get_indexdef":                 func(a []sqlite.Value) sqlite.Value { return text(indexDefs[a[0].Int64()]) },
		"pg_get_constraintdef":            func(a []sqlite.Value) sqlite.Value { return text(constraintDefs[a[0].Int64()]) },
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
				if len(args) == 0 && (name == "regexp" || name == "format_type" || name == "pg_get_expr") {
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
	{regexp.MustCompile(`::\s*("?[\w]+"?\s*\.\s*)?"?[\w]+"?(\s*\[\s*\])?`), ""},
	{regexp.MustCompile(`(?i)\bpg_catalog\s*\.\s*`), ""},
	{regexp.MustCompile(`(?i)\barray\s*\(\s*select\b`), "(SELECT"},
	{regexp.MustCompile(`(?i)=\s*any\s*\(`), " IN ("},
	{regexp.MustCompile(`(?i)\bgenerate_series\s*\(([^()]|\([^()]*(\([^()]*\))?[^()]*\))*\)`), "(SELECT 0 AS value)"},
	{regexp.MustCompile(`(?i)\bstring_agg\s*\(`), "group_concat("},
	{regexp.MustCompile(`\b(\w+)\s*\[\s*\w*\s*\]`), "$1"},
	{regexp.MustCompile(`(?i)\binformation_schema\s*\.\s*`), "information_schema_"},
}

func translatePart(s string) string {
	for _, r := range catalogRewrites {
		s = r.re.ReplaceAllString(s, r.with)
	}
	return s
}
