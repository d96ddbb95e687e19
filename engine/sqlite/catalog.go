package sqlite

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// PostgreSQL's system catalogs: a catalog query is printed by
// pgparse.CatalogToSQLite for the relations of catalogdef.go and runs on
// an in-memory database that holds them, filled from this node's schema
// (catalogdb.go). That database is kept while the schema stays as it was
// and built again after it changes.

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
	q, err := pgparse.CatalogToSQLite(sql, catalogNames{})
	if err != nil {
		return err
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		return err
	}
	buf := &result.Buffer{}
	err = e.catalog.query(ctx, c, q, buf, args)
	e.pool.put(c, err != nil)
	if err != nil {
		return err
	}
	return buf.Replay(w)
}

// Catalog is Engine.Catalog with the session's temporary objects, in
// schema pg_temp_3, once it has made some: its catalog database is its
// own then, built again when its temporary objects change.
func (s *session) Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error {
	if s.pinned == nil {
		return s.e.Catalog(ctx, sql, w, args...)
	}
	if s.e.closed.Load() {
		return errClosed
	}
	q, err := pgparse.CatalogToSQLite(sql, catalogNames{})
	if err != nil {
		return err
	}
	buf := &result.Buffer{}
	if err := s.catalog.query(ctx, s.pinned, q, buf, args); err != nil {
		return err
	}
	return buf.Replay(w)
}

// catalogCache keeps the catalog database of the last schema it was
// built from. Its one connection answers one query at a time. A
// session's (withTemp) shows its temporary objects too.
type catalogCache struct {
	mu       sync.Mutex
	key      string
	db       *catalogDB
	withTemp bool
}

// query runs q on the catalog database of c's schema, into buf.
func (cc *catalogCache) query(ctx context.Context, c *conn, q *pgparse.SQLite, buf *result.Buffer, args []any) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	db, err := cc.current(c)
	if err != nil {
		return err
	}
	db.c.c.SetInterrupt(ctx.Done())
	defer db.c.c.SetInterrupt(nil)
	stmt, _, err := db.c.c.PrepareTransient(q.SQL)
	if err != nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "certa cannot answer this catalog query (%v); the embedded engine answers the parts of pg_catalog and information_schema that drivers and tools commonly read", err)
	}
	defer stmt.Finalize()
	if err := bindArgs(stmt, args); err != nil {
		return err
	}
	db.c.takeFuncErr() // none of an earlier query's
	err = db.c.streamTo(ctx, stmt, "SELECT", &record{columns: q.Columns}, buf)
	if fe := db.c.takeFuncErr(); fe != nil {
		return fe // what a function refused ('nope'::regclass), whatever SQLite said
	}
	return err
}

// current returns the catalog database of the schema c reads, building it
// if the schema changed since the last one was built.
func (cc *catalogCache) current(c *conn) (*catalogDB, error) {
	defer c.internal()()
	// A session's connection may be in its transaction, whose schema
	// the catalogs then show.
	if c.c.AutocommitEnabled() {
		if err := c.exec("BEGIN"); err != nil {
			return nil, mapErr(err)
		}
		defer c.exec("COMMIT")
	}
	var key string
	query := "SELECT (SELECT schema_version FROM pragma_schema_version) || '/' || (SELECT count(*) || '/' || coalesce(sum(length(name)), 0) FROM _certa_sequences) || '/' || (SELECT coalesce(group_concat(kind || name || col || comment, '/'), '') FROM _certa_comments)"
	if cc.withTemp {
		query += " || '/' || (SELECT coalesce(group_concat(type || name || coalesce(sql, ''), '/'), '') FROM sqlite_temp_schema)"
	}
	err := execResult(c.c, query, func(s *sqlite.Stmt) { key = s.ColumnText(0) })
	if err != nil {
		return nil, mapErr(err)
	}
	if cc.db != nil && cc.key == key {
		return cc.db, nil
	}
	tables, seqs, err := readCatalog(c)
	if err != nil {
		return nil, mapErr(err)
	}
	if cc.withTemp {
		temps, err := readTempCatalog(c)
		if err != nil {
			return nil, mapErr(err)
		}
		tables = append(tables, temps...)
	}
	comments, err := readCatalogComments(c)
	if err != nil {
		return nil, mapErr(err)
	}
	db, err := openCatalogDB(tables, seqs, comments)
	if err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "build catalog: %v", err)
	}
	if cc.db != nil {
		cc.db.close()
	}
	cc.db, cc.key = db, key
	return db, nil
}

// close releases the catalog database.
func (cc *catalogCache) close() {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.db != nil {
		cc.db.close()
		cc.db = nil
	}
}

// catalogTable is one user table as the catalogs show it.
type catalogTable struct {
	oid     int64
	name    string
	cols    []catalogColumn
	indexes []catalogIndex
	fks     []catalogFK
	checks  []catalogCheck
	// view is a view's query as pg_get_viewdef gives it ("" for a
	// table), reads the relations its query reads.
	view  string
	reads []string
	// temp: a session's temporary table or view (temp.go), in schema
	// pg_temp_3.
	temp bool
}

// tempSchema is the schema a session's temporary objects are in, as the
// catalogs show it (PostgreSQL's first backend's), and its oid.
const (
	tempSchema       = "pg_temp_3"
	oidTempNamespace = firstTempOID - 1
)

// catalogSchemaName is the schema the catalogs show for SQLite's
// database schema ("main" or "temp").
func catalogSchemaName(schema string) string {
	if schema == "temp" {
		return tempSchema
	}
	return "public"
}

// schema is the schema t is in.
func (t *catalogTable) schema() string {
	if t.temp {
		return tempSchema
	}
	return "public"
}

// namespace is the oid of t's schema.
func (t *catalogTable) namespace() int64 {
	if t.temp {
		return oidTempNamespace
	}
	return oidPublic
}

// catalogCheck is a CHECK constraint: its name (PostgreSQL's, if the
// declaration gives none), expression as declared, and the column it is
// declared with ("" for a table's).
type catalogCheck struct{ name, expr, column string }

// catalogSequence is a sequence certa keeps, with the column that owns it
// (table "" for none).
type catalogSequence struct {
	name, table, column string
	max                 int64
}

type catalogColumn struct {
	name, decl, dflt string
	notNull, pk      bool
	// identity is 'a' (GENERATED ALWAYS) or 'd' (BY DEFAULT) for an
	// identity column, whose default is then not shown (pg_attribute's
	// attidentity), and start its first value.
	identity string
	start    int64
	// seq is the sequence the column's default takes values from
	// (SERIAL, identity).
	seq string
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
	b.WriteString(pgparse.QuoteIdent(fk.parent))
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

func quoteIdentList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = pgparse.QuoteIdent(n)
	}
	return strings.Join(q, ", ")
}

type catalogIndex struct {
	oid             int64
	name, sql       string
	unique, primary bool
	// constraint: the index is a UNIQUE constraint's, not CREATE UNIQUE
	// INDEX's.
	constraint bool
	cols       []string
	// exprs are the expressions of its columns, "" for a column's name
	// (pgparse.IndexExpressions), where its definition is known.
	exprs []string
}

// readCatalog reads the user tables, their indexes and constraints, and
// the sequences of c's database.
func readCatalog(c *conn) ([]*catalogTable, []catalogSequence, error) {
	tables, err := readCatalogTables(c, "main", firstUserOID)
	if err != nil {
		return nil, nil, err
	}
	if tables, err = readCatalogViews(c, "main", tables, firstUserOID); err != nil {
		return nil, nil, err
	}
	var seqs []catalogSequence
	err = execResult(c.c, "SELECT name, tbl, col, maxval FROM _certa_sequences ORDER BY name", func(s *sqlite.Stmt) {
		seqs = append(seqs, catalogSequence{name: s.ColumnText(0), table: s.ColumnText(1), column: s.ColumnText(2), max: s.ColumnInt64(3)})
	})
	return tables, seqs, err
}

// readTempCatalog reads the tables and views of c's temp database: a
// session's temporary objects (temp.go), with oids of their own.
func readTempCatalog(c *conn) ([]*catalogTable, error) {
	tables, err := readCatalogTables(c, "temp", firstTempOID)
	if err != nil {
		return nil, err
	}
	if tables, err = readCatalogViews(c, "temp", tables, firstTempOID); err != nil {
		return nil, err
	}
	for _, t := range tables {
		t.temp = true
	}
	return tables, nil
}

// The first oid of a user table, and of a session's temporary object.
const (
	firstUserOID = 16384
	firstTempOID = 3_000_000
)

// readCatalogTables reads the tables of c's database schema ("main" or
// "temp"), numbered from oid on.
func readCatalogTables(c *conn, schema string, oid int64) ([]*catalogTable, error) {
	var tables []*catalogTable
	err := execResult(c.c, "SELECT name FROM "+schema+".sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_certa_%' ORDER BY name", func(s *sqlite.Stmt) {
		tables = append(tables, &catalogTable{name: s.ColumnText(0)})
	})
	if err != nil {
		return nil, err
	}
	for _, t := range tables {
		t.oid = oid
		oid++
		err := execResult(c.c, "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?1, ?2)", func(s *sqlite.Stmt) {
			col := catalogColumn{name: s.ColumnText(0), decl: s.ColumnText(1), notNull: s.ColumnInt64(2) != 0 || s.ColumnInt64(4) > 0,
				dflt: s.ColumnText(3), pk: s.ColumnInt64(4) > 0}
			if d, ok := parseSequenceDefault(col.dflt); ok {
				col.seq, col.start = d.seq, d.start
				switch d.identity {
				case identityAlways:
					col.identity, col.dflt = "a", ""
				case identityByDefault:
					col.identity, col.dflt = "d", ""
				default: // SERIAL, as PostgreSQL shows it
					col.dflt = "nextval('" + strings.ReplaceAll(pgparse.QuoteIdent(d.seq), "'", "''") + "'::regclass)"
				}
			} else if col.dflt != "" {
				col.dflt = pgparse.DefaultForCatalog(col.dflt)
			}
			t.cols = append(t.cols, col)
		}, t.name, schema)
		if err != nil {
			return nil, err
		}
		if t.fks, err = readCatalogFKs(c, schema, t.name); err != nil {
			return nil, err
		}
		if t.checks, err = readCatalogChecks(c, schema, t.name); err != nil {
			return nil, err
		}
		var idx []catalogIndex
		err = execResult(c.c, "SELECT l.name, l.\"unique\", l.origin, coalesce(m.sql, '') FROM pragma_index_list(?1, ?2) l LEFT JOIN "+schema+".sqlite_schema m ON m.name = l.name ORDER BY l.name", func(s *sqlite.Stmt) {
			idx = append(idx, catalogIndex{name: s.ColumnText(0), unique: s.ColumnInt64(1) != 0, primary: s.ColumnText(2) == "pk",
				constraint: s.ColumnText(2) == "u", sql: s.ColumnText(3)})
		}, t.name, schema)
		if err != nil {
			return nil, err
		}
		for i := range idx {
			err := execResult(c.c, "SELECT name FROM pragma_index_info(?1, ?2) ORDER BY seqno", func(s *sqlite.Stmt) {
				idx[i].cols = append(idx[i].cols, s.ColumnText(0))
			}, idx[i].name, schema)
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
				idx = append(idx, catalogIndex{name: catalogIndexName(t.name, "", true, pk), unique: true, primary: true, cols: pk})
			}
		}
		for i := range idx {
			idx[i].name = catalogIndexName(t.name, idx[i].name, idx[i].primary, idx[i].cols)
		}
		sort.Slice(idx, func(i, j int) bool { return idx[i].name < idx[j].name })
		for i := range idx {
			idx[i].oid = oid
			oid++
			// The definition the client made it with, else PostgreSQL's
			// pg_get_indexdef form of its columns, which psql shortens
			// to "btree (cols)".
			if def, ok := pgparse.IndexDefinition(idx[i].sql); ok {
				idx[i].sql, idx[i].exprs = def, pgparse.IndexExpressions(def)
				continue
			}
			kind := "UNIQUE INDEX"
			if !idx[i].unique {
				kind = "INDEX"
			}
			idx[i].sql = fmt.Sprintf("CREATE %s %s ON %s.%s USING btree (%s)", kind, pgparse.QuoteIdent(idx[i].name), catalogSchemaName(schema),
				pgparse.QuoteIdent(t.name), quoteIdentList(idx[i].cols))
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
func readCatalogFKs(c *conn, schema, table string) ([]catalogFK, error) {
	var fks []catalogFK
	lastID := int64(-1)
	var hasTo []bool
	err := execResult(c.c, `SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?1, ?2) ORDER BY id, seq`, func(s *sqlite.Stmt) {
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
	}, table, schema)
	if err != nil || len(fks) == 0 {
		return nil, err
	}
	// SQLite lists the keys last declared first.
	for i, j := 0, len(fks)-1; i < j; i, j = i+1, j-1 {
		fks[i], fks[j] = fks[j], fks[i]
		hasTo[i], hasTo[j] = hasTo[j], hasTo[i]
	}
	var decl string
	err = execResult(c.c, "SELECT sql FROM "+schema+".sqlite_schema WHERE type = 'table' AND name = ?", func(s *sqlite.Stmt) { decl = s.ColumnText(0) }, table)
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
		err := execResult(c.c, "SELECT name FROM "+schema+".sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE",
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
			err := execResult(c.c, "SELECT name FROM pragma_table_info(?1, ?2) WHERE pk > 0 ORDER BY pk",
				func(s *sqlite.Stmt) { fk.parentCols = append(fk.parentCols, s.ColumnText(0)) }, parent, schema)
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

// readCatalogChecks reads the CHECK constraints of table from its
// declaration, but for those certa adds to enforce column types
// (typeConditions, matchFullChecks). An unnamed one gets PostgreSQL's name: table_column_check
// for a column's, table_check for the table's.
func readCatalogChecks(c *conn, schema, table string) ([]catalogCheck, error) {
	var decl string
	err := execResult(c.c, "SELECT sql FROM "+schema+".sqlite_schema WHERE type = 'table' AND name = ?", func(s *sqlite.Stmt) { decl = s.ColumnText(0) }, table)
	if err != nil {
		return nil, err
	}
	ct := pgparse.ParseCreateTable(decl)
	if ct == nil {
		return nil, nil
	}
	internal := map[string]bool{}
	for _, col := range ct.Columns {
		for _, nc := range typeConditions(col) {
			internal[nc[0]], internal[truncatedIdent(nc[0])] = true, true
		}
	}
	taken := map[string]bool{}
	var out []catalogCheck
	add := func(con pgparse.Constraint, column string) {
		// certa's own: a type's, or MATCH FULL's (named by its message,
		// which the parser may have cut at 63 bytes).
		if con.Kind != pgparse.ConstraintCheck || internal[con.Name] ||
			strings.HasPrefix(con.Name, "insert or update on table ") && strings.Contains(con.Name, " violates foreign key") {
			return
		}
		text := decl[con.Start:con.End]
		open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
		if open < 0 || end < open {
			return
		}
		name := con.Name
		if name == "" {
			base := pgparse.CheckBaseName(table, strings.TrimSpace(text[open+1:end]))
			name = base
			for n := 1; taken[name]; n++ {
				name = fmt.Sprintf("%s%d", base, n)
			}
		}
		taken[name] = true
		out = append(out, catalogCheck{name: name, expr: pgparse.CheckForCatalog(strings.TrimSpace(text[open+1 : end])), column: column})
	}
	for _, col := range ct.Columns {
		for _, con := range col.Constraints {
			add(con, col.Name)
		}
	}
	for _, con := range ct.Constraints {
		add(con, "")
	}
	return out, nil
}

// catalogIndexName is the name the catalogs show for SQLite's index name
// of table on cols: a primary key's and a UNIQUE constraint's (SQLite's
// sqlite_autoindex_...) as PostgreSQL names them, t_pkey and t_a_b_key;
// another index's own.
func catalogIndexName(table, name string, primary bool, cols []string) string {
	switch {
	case primary:
		return table + "_pkey"
	case strings.HasPrefix(name, "sqlite_autoindex_"):
		return table + "_" + strings.Join(cols, "_") + "_key"
	}
	return name
}
