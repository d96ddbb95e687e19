package sqlite

import (
	"fmt"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/pgparse"
)

// The catalog database: an in-memory SQLite database holding the
// relations of catalogdef.go, filled from one snapshot of a node's
// schema.

// Fixed oids of the catalogs' own objects.
const (
	oidPublic      = 2200
	oidPgCatalog   = 11
	oidInfoSchema  = 13000
	oidUser        = 10
	oidHeapAM      = 2
	oidBtreeAM     = 403
	oidDatabase    = 16383
	oidPgClass     = 1259 // pg_class's own oid: classid of relations
	oidPgAttrdef   = 2604
	oidPgRewrite   = 2618
	oidArrayIn     = 750  // array_in, the one function pg_proc\'s oids name here
	oidPgNamespace = 2615 // pg_namespace's own oid: classid of schemas
)

// catalogDB is a filled catalog database and what its functions need.
type catalogDB struct {
	c *conn
	// relNames and typeNames print regclass and regtype values;
	// indexDefs and constraintDefs are pg_get_indexdef's and
	// pg_get_constraintdef's answers; indexCols names an index's columns.
	relNames, typeNames       map[int64]string
	indexDefs, constraintDefs map[int64]string
	// viewDefs are pg_get_viewdef's answers, by the view's oid.
	viewDefs  map[int64]string
	indexCols map[int64][]string
	// indexExprs are its columns' expressions (catalogIndex.exprs).
	indexExprs map[int64][]string
	// serialSeqs names the sequence a column owns, by "table.column".
	serialSeqs map[string]string
	// descriptions are the comments, by object oid and column number
	// (0 for the object itself).
	descriptions map[[2]int64]string
	// hidden are the relations a session's temporary one of their name
	// hides (pg_table_is_visible).
	hidden map[int64]bool
}

func (db *catalogDB) close() { db.c.close() }

// row inserts one row into a catalog relation, by column name; columns it
// does not name are NULL.
type rowWriter struct {
	c   *sqlite.Conn
	err error
}

func (w *rowWriter) row(rel string, vals map[string]any) {
	if w.err != nil {
		return
	}
	r := catalogRelations[rel]
	if r == nil {
		r = catalogRelations["pg_catalog."+rel]
	}
	if r == nil {
		w.err = fmt.Errorf("no catalog relation %s", rel)
		return
	}
	cols := make([]string, 0, len(vals))
	args := make([]any, 0, len(vals))
	for _, c := range r.cols {
		if v, ok := vals[c.Name]; ok {
			cols = append(cols, `"`+c.Name+`"`)
			args = append(args, v)
		}
	}
	if len(cols) != len(vals) {
		w.err = fmt.Errorf("catalog relation %s lacks a column of %v", rel, vals)
		return
	}
	sql := "INSERT INTO " + r.table + " (" + strings.Join(cols, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	w.err = sqlitex.Execute(w.c, sql, &sqlitex.ExecOptions{Args: args})
}

func (w *rowWriter) exec(sql string) {
	if w.err == nil {
		w.err = sqlitex.ExecuteTransient(w.c, sql, nil)
	}
}

// jsonInts is a JSON array of integers.
func jsonInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// openCatalogDB builds the catalog database of tables and sequences.
func openCatalogDB(tables []*catalogTable, seqs []catalogSequence, comments []catalogComment) (*catalogDB, error) {
	sc, err := sqlite.OpenConn(":memory:", sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenMemory)
	if err != nil {
		return nil, err
	}
	db := &catalogDB{c: &conn{c: sc}, relNames: map[int64]string{}, typeNames: map[int64]string{},
		indexDefs: map[int64]string{}, constraintDefs: map[int64]string{}, viewDefs: map[int64]string{}, indexCols: map[int64][]string{}, indexExprs: map[int64][]string{}, serialSeqs: map[string]string{},
		descriptions: map[[2]int64]string{}, hidden: map[int64]bool{}}
	ok := false
	defer func() {
		if !ok {
			db.close()
		}
	}()
	if err := registerPGFunctions(sc); err != nil {
		return nil, err
	}
	if err := registerCast(db.c); err != nil {
		return nil, err
	}
	if err := registerPGOperators(db.c); err != nil {
		return nil, err
	}
	if err := db.registerFunctions(); err != nil {
		return nil, err
	}
	w := &rowWriter{c: sc}
	w.exec("BEGIN")
	for _, r := range catalogOrder {
		w.exec(r.createSQL())
	}
	fillFixed(w, db)
	fillOpclasses(w)
	fillTables(w, db, tables, seqs)
	fillComments(w, db, tables, seqs, comments)
	w.exec("COMMIT")
	if w.err != nil {
		return nil, w.err
	}
	if err := db.c.refreshSchema(); err != nil {
		return nil, err
	}
	ok = true
	return db, nil
}

// fillFixed writes what every node's catalogs hold: schemas, the
// database, its one role, access methods and the built-in types.
func fillFixed(w *rowWriter, db *catalogDB) {
	// Every role may use public, pg_catalog and information_schema (and
	// create in public): the ACL initdb gives them, and records in
	// pg_init_privs for public and pg_catalog. pg_dump writes no GRANT or
	// REVOKE for an ACL that is as initdb made it.
	usable := `["certa=UC/certa","=U/certa"]`
	for _, ns := range []struct {
		oid  int
		name string
		acl  any
	}{{oidPublic, "public", usable}, {oidPgCatalog, "pg_catalog", usable}, {99, "pg_toast", nil}, {oidInfoSchema, "information_schema", usable}} {
		w.row("pg_namespace", map[string]any{"oid": ns.oid, "nspname": ns.name, "nspowner": oidUser, "nspacl": ns.acl})
		if ns.oid == oidPublic || ns.oid == oidPgCatalog {
			w.row("pg_init_privs", map[string]any{"objoid": ns.oid, "classoid": catalogRelationOIDs["pg_namespace"], "objsubid": 0,
				"privtype": "i", "initprivs": usable})
		}
		w.row("information_schema.schemata", map[string]any{"catalog_name": "certa", "schema_name": ns.name, "schema_owner": "certa",
			"default_character_set_name": nil, "sql_path": nil})
	}
	w.row("pg_am", map[string]any{"oid": oidHeapAM, "amname": "heap", "amtype": "t", "amhandler": 0})
	w.row("pg_am", map[string]any{"oid": oidBtreeAM, "amname": "btree", "amtype": "i", "amhandler": 0})
	w.row("pg_am", map[string]any{"oid": 405, "amname": "hash", "amtype": "i", "amhandler": 0})
	w.row("pg_database", map[string]any{"oid": oidDatabase, "datname": "certa", "datdba": oidUser, "encoding": 6,
		"datlocprovider": "c", "datistemplate": 0, "datallowconn": 1, "datconnlimit": -1, "dattablespace": 1663,
		"datcollate": "C", "datctype": "C"})
	w.row("pg_roles", map[string]any{"oid": oidUser, "rolname": "certa", "rolsuper": 1, "rolinherit": 1, "rolcreaterole": 1,
		"rolcreatedb": 1, "rolcanlogin": 1, "rolreplication": 0, "rolconnlimit": -1, "rolpassword": "********", "rolbypassrls": 0})
	w.row("pg_user", map[string]any{"usename": "certa", "usesysid": oidUser, "usecreatedb": 1, "usesuper": 1, "userepl": 0,
		"usebypassrls": 0, "passwd": "********"})
	w.row("information_schema.enabled_roles", map[string]any{"role_name": "certa"})
	w.row("information_schema.character_sets", map[string]any{"character_set_name": "UTF8", "character_repertoire": "UCS", "form_of_use": "UTF8"})
	w.row("pg_tablespace", map[string]any{"oid": 1663, "spcname": "pg_default", "spcowner": oidUser})
	w.row("pg_tablespace", map[string]any{"oid": 1664, "spcname": "pg_global", "spcowner": oidUser})
	w.row("pg_language", map[string]any{"oid": 12, "lanname": "internal", "lanowner": oidUser, "lanispl": 0, "lanpltrusted": 0})
	w.row("pg_language", map[string]any{"oid": 14, "lanname": "sql", "lanowner": oidUser, "lanispl": 0, "lanpltrusted": 1})
	for _, s := range []struct{ name, setting, vartype string }{
		{"server_version", "15.0", "string"}, {"server_version_num", "150000", "integer"},
		{"max_index_keys", "32", "integer"}, {"block_size", "8192", "integer"},
		{"server_encoding", "UTF8", "string"}, {"client_encoding", "UTF8", "string"},
		{"standard_conforming_strings", "on", "bool"}, {"search_path", `"$user", public`, "string"},
		{"max_identifier_length", "63", "integer"}, {"integer_datetimes", "on", "bool"},
		{"default_transaction_isolation", "read committed", "enum"}, {"TimeZone", "UTC", "string"},
		{"DateStyle", "ISO, MDY", "string"}, {"lc_collate", "C", "string"}, {"lc_ctype", "C", "string"},
	} {
		w.row("pg_settings", map[string]any{"name": s.name, "setting": s.setting, "vartype": s.vartype, "context": "user",
			"source": "default", "category": "certa", "short_desc": s.name})
	}
	for _, word := range pgparse.ReservedKeywords {
		w.row("pg_get_keywords", map[string]any{"word": word, "catcode": "R", "barelabel": 1, "catdesc": "reserved", "baredesc": "can be bare label"})
	}
	for _, t := range pgparse.Types {
		fillType(w, db, t)
		if t.ArrayOID != 0 {
			a, _ := pgparse.LookupType("_" + t.Typname)
			fillType(w, db, a)
		}
	}
}

// layout is how PostgreSQL stores a type's values: pg_type's typbyval,
// typalign and typstorage, which pg_attribute repeats for a column.
// pg_dump writes ALTER COLUMN ... SET STORAGE for a column whose storage
// is not its type's.
type layout struct {
	byval          bool
	align, storage string
}

// typeLayouts are the built-in types' layouts, as PostgreSQL's pg_type
// gives them.
var typeLayouts = map[string]layout{
	"bool": {true, "c", "p"}, "char": {true, "c", "p"}, "int2": {true, "s", "p"}, "int4": {true, "i", "p"},
	"int8": {true, "d", "p"}, "oid": {true, "i", "p"}, "xid": {true, "i", "p"}, "cid": {true, "i", "p"},
	"regproc": {true, "i", "p"}, "regclass": {true, "i", "p"}, "regtype": {true, "i", "p"}, "regconfig": {true, "i", "p"},
	"regnamespace": {true, "i", "p"}, "regrole": {true, "i", "p"}, "float4": {true, "i", "p"}, "float8": {true, "d", "p"},
	"date": {true, "i", "p"}, "time": {true, "d", "p"}, "timestamp": {true, "d", "p"}, "timestamptz": {true, "d", "p"},
	"pg_lsn": {true, "d", "p"}, "name": {false, "c", "p"}, "tid": {false, "s", "p"}, "aclitem": {false, "i", "p"},
	"interval": {false, "d", "p"}, "uuid": {false, "c", "p"}, "int2vector": {false, "i", "p"}, "oidvector": {false, "i", "p"},
	"numeric": {false, "i", "m"}, "anyarray": {false, "d", "x"},
	// bytea, text, bpchar, varchar, json, jsonb, pg_node_tree: the default.
}

// typeLayout is the layout of t: an array's is its elements' alignment,
// stored extended.
func typeLayout(t pgparse.TypeInfo) layout {
	if strings.HasPrefix(t.Typname, "_") {
		if e, _ := pgparse.TypeByOID(t.Elem); typeLayout(e).align == "d" {
			return layout{false, "d", "x"}
		}
		return layout{false, "i", "x"}
	}
	if l, ok := typeLayouts[t.Typname]; ok {
		return l
	}
	return layout{false, "i", "x"}
}

func fillType(w *rowWriter, db *catalogDB, t pgparse.TypeInfo) {
	typtype, l := "b", typeLayout(t)
	if t.Category == 'P' {
		typtype = "p" // a pseudo-type (anyarray)
	}
	db.typeNames[int64(t.OID)] = t.Name
	input := 0
	if t.Elem != 0 && strings.HasPrefix(t.Typname, "_") {
		input = oidArrayIn // PgJDBC tells arrays so (typinput = 'array_in'::regproc)
	}
	w.row("pg_type", map[string]any{"oid": t.OID, "typname": t.Typname, "typnamespace": oidPgCatalog, "typowner": oidUser,
		"typlen": t.Len, "typbyval": l.byval, "typtype": typtype, "typcategory": string(t.Category), "typispreferred": 0,
		"typisdefined": 1, "typdelim": ",", "typrelid": 0, "typelem": t.Elem, "typarray": t.ArrayOID,
		"typinput": input, "typoutput": 0, "typreceive": 0, "typsend": 0, "typmodin": 0, "typmodout": 0, "typanalyze": 0,
		"typalign": l.align, "typstorage": l.storage, "typnotnull": 0, "typbasetype": 0, "typtypmod": -1, "typndims": 0,
		"typcollation": 0})
}

// fillTables writes the tables, their columns, indexes and constraints,
// and the sequences.
func fillTables(w *rowWriter, db *catalogDB, tables []*catalogTable, seqs []catalogSequence) {
	// A session's temporary relations come last: one hides the table of
	// its name.
	byName := map[string]*catalogTable{}
	temp := false
	for _, t := range tables {
		byName[strings.ToLower(t.name)] = t
		db.relNames[t.oid] = pgparse.QuoteIdent(t.name)
		temp = temp || t.temp
	}
	for _, t := range tables {
		if h := byName[strings.ToLower(t.name)]; h != t && h.temp {
			db.hidden[t.oid] = true
		}
	}
	if temp {
		w.row("pg_namespace", map[string]any{"oid": oidTempNamespace, "nspname": tempSchema, "nspowner": oidUser, "nspacl": nil})
		w.row("information_schema.schemata", map[string]any{"catalog_name": "certa", "schema_name": tempSchema, "schema_owner": "certa",
			"default_character_set_name": nil, "sql_path": nil})
	}
	seqOIDs := map[string]int64{}
	for i, s := range seqs {
		seqOIDs[s.name] = sequenceOID(i)
	}
	// Tables with foreign keys on either side have "triggers" (PostgreSQL
	// checks foreign keys with internal triggers), which is what makes
	// psql's \d look for foreign keys.
	hasFK := map[*catalogTable]bool{}
	for _, t := range tables {
		for _, fk := range t.fks {
			if p := byName[strings.ToLower(fk.parent)]; p != nil {
				hasFK[t], hasFK[p] = true, true
			}
		}
	}
	for _, t := range tables {
		if t.view != "" {
			fillView(w, db, t, byName)
			continue
		}
		w.row("pg_class", t.inSchema(relation(t.oid, t.name, "r", len(t.cols), map[string]any{
			"relam": oidHeapAM, "relhasindex": len(t.indexes) > 0, "relhastriggers": hasFK[t], "relchecks": len(t.checks)})))
		w.row("pg_tables", map[string]any{"schemaname": t.schema(), "tablename": t.name, "tableowner": "certa",
			"hasindexes": len(t.indexes) > 0, "hasrules": 0, "hastriggers": hasFK[t], "rowsecurity": 0})
		w.row("information_schema.tables", map[string]any{"table_catalog": "certa", "table_schema": t.schema(),
			"table_name": t.name, "table_type": t.tableType(), "is_insertable_into": "YES", "is_typed": "NO"})
		for _, rel := range []string{"pg_stat_user_tables", "pg_stat_all_tables"} {
			w.row(rel, map[string]any{"relid": t.oid, "schemaname": t.schema(), "relname": t.name, "n_live_tup": 0, "n_dead_tup": 0})
		}
		w.row("pg_statio_user_tables", map[string]any{"relid": t.oid, "schemaname": t.schema(), "relname": t.name})
		w.row("pg_statio_all_tables", map[string]any{"relid": t.oid, "schemaname": t.schema(), "relname": t.name,
			"heap_blks_read": 0, "heap_blks_hit": 0})
		fillColumns(w, t, seqOIDs)
		fillIndexes(w, db, t)
		for i, ck := range t.checks {
			oid := t.oid*1000 + 900 + int64(i)
			conkey := "[]"
			if n := t.column(ck.column); n > 0 {
				conkey = jsonInts([]int{n})
			}
			w.row("pg_constraint", t.inSchema(constraint(oid, ck.name, "c", t.oid, map[string]any{"conbin": ck.expr, "conkey": conkey})))
			db.constraintDefs[oid] = "CHECK (" + ck.expr + ")"
			w.row("information_schema.check_constraints", map[string]any{"constraint_catalog": "certa",
				"constraint_schema": t.schema(), "constraint_name": ck.name, "check_clause": ck.expr})
		}
	}
	fillForeignKeys(w, db, tables, byName)
	fillSequences(w, db, seqs, byName)
	// information_schema's constraint views, from pg_constraint.
	w.exec(`INSERT INTO information_schema_table_constraints SELECT 'certa', ` + relSchemaSQL + `, k.conname, 'certa', ` + relSchemaSQL + `, c.relname,
		CASE k.contype WHEN 'p' THEN 'PRIMARY KEY' WHEN 'u' THEN 'UNIQUE' WHEN 'f' THEN 'FOREIGN KEY' ELSE 'CHECK' END,
		CASE WHEN k.condeferrable THEN 'YES' ELSE 'NO' END, CASE WHEN k.condeferred THEN 'YES' ELSE 'NO' END, 'YES',
		CASE WHEN k.contype IN ('p', 'u') THEN 'YES' END
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid`)
	w.exec(`INSERT INTO information_schema_key_column_usage SELECT 'certa', ` + relSchemaSQL + `, k.conname, 'certa', ` + relSchemaSQL + `, c.relname,
		a.attname, j.key + 1, CASE WHEN k.contype = 'f' THEN j.key + 1 END
		FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid, json_each(k.conkey) j
		JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = j.value
		WHERE k.contype IN ('p', 'u', 'f')`)
	// constraint_column_usage names the referenced columns of a foreign
	// key, the constrained ones of the others.
	w.exec(`INSERT INTO information_schema_constraint_column_usage SELECT 'certa', ` + relSchemaSQL + `, c.relname, a.attname,
		'certa', ` + relSchemaSQL + `, k.conname
		FROM pg_constraint k JOIN pg_class c ON c.oid = CASE k.contype WHEN 'f' THEN k.confrelid ELSE k.conrelid END,
		json_each(CASE k.contype WHEN 'f' THEN k.confkey ELSE k.conkey END) j
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = j.value
		WHERE k.contype IN ('p', 'u', 'f')`)
}

// relSchemaSQL is the schema of pg_class row c, in the catalog database's
// SQL.
var relSchemaSQL = fmt.Sprintf("CASE c.relnamespace WHEN %d THEN '%s' ELSE 'public' END", oidTempNamespace, tempSchema)

// inSchema makes r, a pg_class or pg_constraint row of t's, one of t's
// schema: a temporary relation's is pg_temp_3.
func (t *catalogTable) inSchema(r map[string]any) map[string]any {
	if t.temp {
		if _, ok := r["relname"]; ok {
			r["relnamespace"], r["relpersistence"] = oidTempNamespace, "t"
		} else {
			r["connamespace"] = oidTempNamespace
		}
	}
	return r
}

// tableType is t's information_schema.tables.table_type.
func (t *catalogTable) tableType() string {
	switch {
	case t.temp:
		return "LOCAL TEMPORARY"
	case t.view != "":
		return "VIEW"
	}
	return "BASE TABLE"
}

// relation is a pg_class row with PostgreSQL's values for what certa does
// not vary, and more.
func relation(oid int64, name, kind string, natts int, more map[string]any) map[string]any {
	r := map[string]any{"oid": oid, "relname": name, "relnamespace": oidPublic, "reltype": 0, "reloftype": 0,
		"relowner": oidUser, "relam": 0, "relfilenode": oid, "reltablespace": 0, "relpages": 0, "reltuples": -1,
		"relallvisible": 0, "reltoastrelid": 0, "relhasindex": 0, "relisshared": 0, "relpersistence": "p",
		"relkind": kind, "relnatts": natts, "relchecks": 0, "relhasrules": 0, "relhastriggers": 0,
		"relhassubclass": 0, "relrowsecurity": 0, "relforcerowsecurity": 0, "relispopulated": 1,
		"relreplident": "d", "relispartition": 0, "relrewrite": 0}
	if kind != "r" {
		r["relreplident"] = "n"
	}
	for k, v := range more {
		r[k] = v
	}
	return r
}

// constraint is a pg_constraint row.
func constraint(oid int64, name, kind string, rel int64, more map[string]any) map[string]any {
	r := map[string]any{"oid": oid, "conname": name, "connamespace": oidPublic, "contype": kind, "condeferrable": 0,
		"condeferred": 0, "convalidated": 1, "conrelid": rel, "contypid": 0, "conindid": 0, "conparentid": 0,
		"confrelid": 0, "confupdtype": " ", "confdeltype": " ", "confmatchtype": " ", "conislocal": 1,
		"coninhcount": 0, "connoinherit": kind == "c"}
	for k, v := range more {
		r[k] = v
	}
	return r
}

// systemColumns are the columns every PostgreSQL table has besides its
// own, with their attnums and types.
var systemColumns = []struct {
	name   string
	attnum int
	typoid int64
}{{"tableoid", -6, 26}, {"cmax", -5, 29}, {"xmax", -4, 28}, {"cmin", -3, 29}, {"xmin", -2, 28}, {"ctid", -1, 27}}

// fillColumns writes t's columns and their defaults. A default depends
// on its column, and one that calls nextval on the sequence (seqOIDs by
// name): pg_dump, finding the sequence owned by the table in turn, sets
// such a default after both.
func fillColumns(w *rowWriter, t *catalogTable, seqOIDs map[string]int64) {
	for _, sc := range systemColumns {
		info, _ := pgparse.TypeByOID(uint32(sc.typoid))
		l := typeLayout(info)
		w.row("pg_attribute", map[string]any{"attrelid": t.oid, "attname": sc.name, "atttypid": sc.typoid, "attlen": info.Len,
			"attnum": sc.attnum, "attcacheoff": -1, "atttypmod": -1, "attndims": 0, "attbyval": l.byval, "attalign": l.align,
			"attstorage": l.storage, "attcompression": "", "attnotnull": 1, "atthasdef": 0, "atthasmissing": 0, "attidentity": "",
			"attgenerated": "", "attisdropped": 0, "attislocal": 1, "attinhcount": 0, "attstattarget": 0, "attcollation": 0})
	}
	for i, col := range t.cols {
		typoid := columnTypeOID(col.decl)
		info, _ := pgparse.TypeByOID(uint32(typoid))
		facts := typeFacts(col.decl, typoid)
		l := typeLayout(info)
		w.row("pg_attribute", map[string]any{"attrelid": t.oid, "attname": col.name, "atttypid": typoid, "attlen": info.Len,
			"attnum": i + 1, "attcacheoff": -1, "atttypmod": facts.typmod, "attndims": 0, "attbyval": l.byval, "attalign": l.align,
			"attstorage": l.storage, "attcompression": "", "attnotnull": col.notNull, "atthasdef": col.dflt != "",
			"atthasmissing": 0, "attidentity": col.identity, "attgenerated": "", "attisdropped": 0, "attislocal": 1,
			"attinhcount": 0, "attstattarget": -1, "attcollation": collationOf(typoid)})
		if col.dflt != "" {
			oid := t.oid*1000 + int64(i+1)
			w.row("pg_attrdef", map[string]any{"oid": oid, "adrelid": t.oid, "adnum": i + 1, "adbin": col.dflt})
			w.row("pg_depend", map[string]any{"classid": oidPgAttrdef, "objid": oid, "objsubid": 0, "refclassid": oidPgClass,
				"refobjid": t.oid, "refobjsubid": i + 1, "deptype": "a"})
			if seq, ok := seqOIDs[col.seq]; ok {
				w.row("pg_depend", map[string]any{"classid": oidPgAttrdef, "objid": oid, "objsubid": 0, "refclassid": oidPgClass,
					"refobjid": seq, "refobjsubid": 0, "deptype": "n"})
			}
		}
		nullable := "YES"
		if col.notNull {
			nullable = "NO"
		}
		isIdentity, generation, increment, start, minimum, maximum := "NO", any(nil), any(nil), any(nil), any(nil), any(nil)
		if col.identity != "" {
			isIdentity, generation, increment, start, minimum = "YES", "BY DEFAULT", "1", "1", "1"
			maximum = strconv.FormatInt(maxOfType(col.decl), 10)
			if col.identity == "a" {
				generation = "ALWAYS"
			}
		}
		// character_octet_length: 4 bytes a character in UTF8, or the
		// largest value of an unbounded text.
		var octets any
		if n, ok := facts.charLen.(int64); ok {
			octets = 4 * n
		} else if typoid == 25 || typoid == 1043 || typoid == 1042 {
			octets = 1073741824
		}
		w.row("information_schema.columns", map[string]any{"table_catalog": "certa", "table_schema": t.schema(),
			"table_name": t.name, "column_name": col.name, "ordinal_position": i + 1, "column_default": nullIfEmpty(col.dflt),
			"is_nullable": nullable, "data_type": info.Name, "character_maximum_length": facts.charLen,
			"character_octet_length": octets, "identity_minimum": minimum, "identity_maximum": maximum, "identity_cycle": "NO",
			"numeric_precision": facts.precision, "numeric_precision_radix": facts.radix, "numeric_scale": facts.scale,
			"datetime_precision": facts.dtPrecision, "udt_catalog": "certa", "udt_schema": "pg_catalog", "udt_name": info.Typname,
			"dtd_identifier": strconv.Itoa(i + 1), "is_self_referencing": "NO", "is_identity": isIdentity,
			"identity_generation": generation, "identity_start": start, "identity_increment": increment,
			"is_generated": "NEVER", "is_updatable": "YES"})
	}
}

// columnTypeOID is the oid of the type a column was declared with: the
// PostgreSQL type of that name, else the type certa reports its values as.
func columnTypeOID(decl string) int64 {
	base := decl
	if i := strings.IndexByte(base, '('); i >= 0 {
		base = base[:i]
	}
	switch strings.ToLower(strings.TrimSpace(base)) {
	case "":
		return 25
	case "char", "character":
		return 1042 // SQL's char(n) is bpchar; "char" is the catalogs' one-byte type
	}
	if t, ok := pgparse.LookupType(base); ok {
		return int64(t.OID)
	}
	return int64(declaredType(decl).OID())
}

// collationOf is attcollation: the default collation (100) for text types.
func collationOf(typoid int64) int {
	switch typoid {
	case 25, 1043, 1042, 19:
		return 100
	}
	return 0
}

func fillIndexes(w *rowWriter, db *catalogDB, t *catalogTable) {
	for _, ix := range t.indexes {
		db.relNames[ix.oid] = pgparse.QuoteIdent(ix.name)
		db.indexDefs[ix.oid] = ix.sql
		db.indexCols[ix.oid] = ix.cols
		db.indexExprs[ix.oid] = ix.exprs
		w.row("pg_class", t.inSchema(relation(ix.oid, ix.name, "i", len(ix.cols), map[string]any{"relam": oidBtreeAM})))
		w.row("pg_indexes", map[string]any{"schemaname": t.schema(), "tablename": t.name, "indexname": ix.name, "indexdef": ix.sql})
		for _, rel := range []string{"pg_stat_user_indexes", "pg_stat_all_indexes"} {
			w.row(rel, map[string]any{"relid": t.oid, "indexrelid": ix.oid, "schemaname": t.schema(), "relname": t.name,
				"indexrelname": ix.name, "idx_scan": 0})
		}
		var keys, classes []int
		for _, name := range ix.cols {
			n := t.column(name)
			keys = append(keys, n)
			class := 0
			if n > 0 {
				class = int(opclassOf(columnTypeOID(t.cols[n-1].decl)))
			}
			classes = append(classes, class)
		}
		zeros := make([]int, len(keys))
		w.row("pg_index", map[string]any{"indexrelid": ix.oid, "indrelid": t.oid, "indnatts": len(keys), "indnkeyatts": len(keys),
			"indisunique": ix.unique, "indnullsnotdistinct": 0, "indisprimary": ix.primary, "indisexclusion": 0,
			"indimmediate": 1, "indisclustered": 0, "indisvalid": 1, "indcheckxmin": 0, "indisready": 1, "indislive": 1,
			"indisreplident": 0, "indkey": jsonInts(keys), "indcollation": jsonInts(zeros), "indclass": jsonInts(classes),
			"indoption": jsonInts(zeros)})
		if ix.primary || ix.unique && ix.constraint {
			kind, def := "u", "UNIQUE ("+quoteIdentList(ix.cols)+")"
			if ix.primary {
				kind, def = "p", "PRIMARY KEY ("+quoteIdentList(ix.cols)+")"
			}
			oid := ix.oid + 500000
			w.row("pg_constraint", constraint(oid, ix.name, kind, t.oid, map[string]any{"conindid": ix.oid, "conkey": jsonInts(keys)}))
			db.constraintDefs[oid] = def
		}
	}
}

func fillForeignKeys(w *rowWriter, db *catalogDB, tables []*catalogTable, byName map[string]*catalogTable) {
	fkOID := int64(900000)
	for _, t := range tables {
		for _, fk := range t.fks {
			p := byName[strings.ToLower(fk.parent)]
			if p == nil {
				continue
			}
			fk.parent = p.name
			var conkey, confkey []int
			for _, c := range fk.cols {
				conkey = append(conkey, t.column(c))
			}
			for _, c := range fk.parentCols {
				confkey = append(confkey, p.column(c))
			}
			// conindid: the parent's unique index on the referenced columns.
			var index int64
			unique := ""
			for _, ix := range p.indexes {
				if ix.unique && strings.EqualFold(strings.Join(ix.cols, ","), strings.Join(fk.parentCols, ",")) {
					index, unique = ix.oid, ix.name
				}
			}
			fkOID++
			w.row("pg_constraint", t.inSchema(constraint(fkOID, fk.name, "f", t.oid, map[string]any{"condeferrable": fk.deferrable,
				"condeferred": fk.defered, "conindid": index, "confrelid": p.oid, "conkey": jsonInts(conkey), "confkey": jsonInts(confkey),
				"confupdtype": string(fk.update), "confdeltype": string(fk.delete), "confmatchtype": string(fk.match)})))
			db.constraintDefs[fkOID] = fk.def()
			rules := map[byte]string{'a': "NO ACTION", 'r': "RESTRICT", 'c': "CASCADE", 'n': "SET NULL", 'd': "SET DEFAULT"}
			match := map[byte]string{'s': "NONE", 'f': "FULL", 'p': "PARTIAL"}
			w.row("information_schema.referential_constraints", map[string]any{"constraint_catalog": "certa",
				"constraint_schema": t.schema(), "constraint_name": fk.name, "unique_constraint_catalog": "certa",
				"unique_constraint_schema": t.schema(), "unique_constraint_name": nullIfEmpty(unique),
				"match_option": match[fk.match], "update_rule": rules[fk.update], "delete_rule": rules[fk.delete]})
		}
	}
}

// sequenceOID is the oid of the i-th sequence.
func sequenceOID(i int) int64 { return 800000 + int64(i) }

// fillSequences writes the sequences certa keeps (SERIAL, IDENTITY and
// CREATE SEQUENCE): pg_class, pg_sequence, and the dependency of one a
// column owns on its table. One a column owns has the column's type and,
// an identity column's, its START; certa keeps no other type, START or
// MINVALUE of a sequence (they are bigint, 1 and 1).
func fillSequences(w *rowWriter, db *catalogDB, seqs []catalogSequence, byName map[string]*catalogTable) {
	for i, s := range seqs {
		oid := sequenceOID(i)
		db.relNames[oid] = pgparse.QuoteIdent(s.name)
		t := byName[strings.ToLower(s.table)]
		var col *catalogColumn
		if t != nil {
			if c := t.column(s.column); c > 0 {
				col = &t.cols[c-1]
			}
		}
		typ, _ := pgparse.TypeByOID(20)
		start := int64(1)
		if col != nil {
			typ, _ = pgparse.TypeByOID(uint32(columnTypeOID(col.decl)))
			if col.identity != "" {
				start = col.start
			}
		}
		minValue := min(1, start)
		w.row("pg_class", relation(oid, s.name, "S", 3, nil))
		w.row("pg_sequence", map[string]any{"seqrelid": oid, "seqtypid": typ.OID, "seqstart": start, "seqincrement": 1,
			"seqmax": s.max, "seqmin": minValue, "seqcache": 1, "seqcycle": 0})
		w.row("pg_sequences", map[string]any{"schemaname": "public", "sequencename": s.name, "sequenceowner": "certa",
			"data_type": typ.OID, "start_value": start, "min_value": minValue, "max_value": s.max, "increment_by": 1, "cycle": 0,
			"cache_size": 1})
		// information_schema leaves out the sequences of identity
		// columns, as PostgreSQL's does.
		if col == nil || col.identity == "" {
			w.row("information_schema.sequences", map[string]any{"sequence_catalog": "certa", "sequence_schema": "public",
				"sequence_name": s.name, "data_type": typ.Name, "numeric_precision": map[int]int{2: 16, 4: 32, 8: 64}[typ.Len],
				"numeric_precision_radix": 2, "numeric_scale": 0, "start_value": strconv.FormatInt(start, 10),
				"minimum_value": strconv.FormatInt(minValue, 10), "maximum_value": strconv.FormatInt(s.max, 10), "increment": "1",
				"cycle_option": "NO"})
		}
		if t == nil {
			continue
		}
		db.serialSeqs[strings.ToLower(t.name)+"."+s.column] = s.name
		deptype := "a" // SERIAL: OWNED BY
		if col != nil && col.identity != "" {
			deptype = "i"
		}
		w.row("pg_depend", map[string]any{"classid": oidPgClass, "objid": oid, "objsubid": 0, "refclassid": oidPgClass,
			"refobjid": t.oid, "refobjsubid": t.column(s.column), "deptype": deptype})
	}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
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
		if len(mods) == 0 && declaredMod(decl) > 4 {
			mods = []int64{int64(declaredMod(decl)) - 4} // char alone is char(1)
		}
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
