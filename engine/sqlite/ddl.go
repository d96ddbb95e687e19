package sqlite

import (
	"context"
	"errors"
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/pgparse"
	"certa/sqlerr"
)

// CheckDDL validates a schema statement and returns it as translated
// (createtable.go) with the tables it touches (sorted). It takes the write
// lock like any local writer, so the applier may brute-force abort it: it is
// tried again a few times.
//
// A statement that makes or reshapes a table (CREATE TABLE or VIEW, ALTER
// TABLE other than DROP COLUMN) runs in a transaction that is always rolled
// back, so that the table it would make is checked (keys.go) and the tables
// it touched are found by comparing the schema before and after. Any other
// (CREATE INDEX, DROP ...) can take long on a big table and would be
// brute-force aborted by replication: it is only prepared, which checks its
// names, and its tables are those SQLite names while preparing it. What
// fails only when it runs (a unique index over duplicates) fails at its
// position in the log, the same on every node.
func (e *Engine) CheckDDL(ctx context.Context, stmt string) (engine.DDL, error) {
	if err := pgparse.CheckSyntax(stmt); err != nil {
		return engine.DDL{}, err // not SQLite's own syntax either (guide: Schema changes)
	}
	stmt = pgparse.UnqualifyPublic(foldNames(stmt))
	if word, ok := unsupportedDDL(stmt); ok {
		return engine.DDL{}, errUnsupportedDDL(word)
	}
	stmt, err := translateChecks(stmt)
	if err != nil {
		return engine.DDL{}, err
	}
	for tries, renewals := 0, 0; tries < checkDDLTries; {
		var ddl engine.DDL
		ddl, err = e.checkDDL(ctx, stmt)
		switch {
		case errors.Is(err, errConnRenewed) && renewals < maxRenewals && ctx.Err() == nil:
			renewals++ // another connection (beginTx)
		case sqlerr.Code(err) != sqlerr.SerializationFailure || ctx.Err() != nil:
			return ddl, err
		default:
			tries++
		}
	}
	return engine.DDL{}, err
}

// foldNames returns a schema statement with its unquoted names in lower
// case (pgparse.FoldIdentifiers), as PostgreSQL makes them: SQLite keeps a
// table's and its columns' names as written, and shows them so in SELECT
// * and the catalogs. A view keeps the client's text, its query being
// printed from PostgreSQL's parse tree, whose names are folded already.
func foldNames(sql string) string {
	if tag := pgparse.SchemaTag(sql); tag == "CREATE VIEW" {
		return sql
	}
	return pgparse.FoldIdentifiers(sql)
}

// unsupportedDDL names a schema statement SQLite has no counterpart of.
func unsupportedDDL(stmt string) (string, bool) {
	word, _, _ := strings.Cut(strings.TrimSpace(stmt), " ")
	word = strings.ToUpper(word)
	switch word {
	case "GRANT", "REVOKE":
		return word, true
	case "REFRESH", "CREATE":
		if tag := pgparse.SchemaTag(stmt); tag == "REFRESH MATERIALIZED VIEW" || tag == "CREATE MATERIALIZED VIEW" {
			return tag, true
		}
	}
	return "", false
}

// checkDDLTries bounds CheckDDL's tries when replication aborts it.
const checkDDLTries = 5

func (e *Engine) checkDDL(ctx context.Context, stmt string) (engine.DDL, error) {
	tx, err := e.newTx(ctx, nil)
	if err != nil {
		return engine.DDL{}, err
	}
	defer tx.Rollback() // ROLLBACK and release the lock
	// The schema version the trial reaches may come to mean another schema.
	defer tx.conn.forgetSchema()
	tx.mu.Lock()
	defer tx.mu.Unlock()
	// The statement runs under a Tx, busy throughout (never parked), so
	// that the applier can brute-force abort it like any local writer.
	tx.setBusy()
	if err := tx.takeLock(ctx); err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	done := tx.interruptOn(ctx)
	defer done()
	// A touch trigger the connection keeps for a table another one has
	// since renamed or dropped would fail SQLite's rename of a table or a
	// column ("error in trigger ...: no such table"): brought up to date,
	// the connection has none.
	if _, err := tx.conn.syncTouchTriggers(); err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	if tx.conn.lingering {
		tx.conn.close()
		return engine.DDL{}, errConnRenewed
	}
	if err := tx.conn.exec("BEGIN IMMEDIATE"); err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	skipped, err := tx.conn.skippedDrops(stmt)
	if err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	if !needsTrial(stmt) {
		tables, err := prepareDDL(tx.conn, stmt)
		if err != nil {
			return engine.DDL{}, tx.classify(err)
		}
		sendNotices(ctx, skipped)
		return engine.DDL{Statement: stmt, Tables: tables}, nil
	}
	ran, tables, err := runDDL(tx.conn, stmt, 0)
	if err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	sendNotices(ctx, skipped)
	return engine.DDL{Statement: ran, Tables: tables}, nil
}

// needsTrial reports whether a schema statement must run to be checked:
// whether it makes or reshapes a table or view.
func needsTrial(sql string) bool {
	if pgparse.ParseSequenceStmt(sql) != nil {
		return true
	}
	if _, ok := pgparse.ParseComment(sql); ok {
		return true
	}
	if _, ok, _ := pgparse.ViewToSQLite(sql); ok {
		return true // also CREATE OR REPLACE VIEW
	}
	switch firstKeyword(sql) {
	case "CREATE":
		rest := skipBlank(sql)[len("CREATE"):]
		switch firstKeyword(rest) {
		case "TABLE", "VIEW", "TEMP", "TEMPORARY", "VIRTUAL":
			return true
		}
		return false
	case "ALTER":
		if at := pgparse.ParseAlterTable(sql); at != nil && editsDefinition(at) {
			return true
		}
		return !hasKeyword(sql, "DROP")
	}
	return false
}

// prepareDDL checks a schema statement by preparing it, without running it,
// and returns the tables and views it names (sorted).
func prepareDDL(c *conn, sql string) ([]string, error) {
	sql = skipBlank(sql)
	if sql == "" {
		return nil, sqlerr.New(sqlerr.SyntaxError, "empty schema statement")
	}
	if idx, ok, err := pgparse.IndexToSQLite(sql); ok {
		if err != nil {
			return nil, err
		}
		sql = idx
	}
	if firstKeyword(sql) == "TRUNCATE" {
		if err := c.refreshSchema(); err != nil {
			return nil, err
		}
		tables, ok, err := c.truncateTables(sql)
		if !ok || err != nil {
			return nil, errOr(err, errNotSchema())
		}
		return tables, nil
	}
	if at := pgparse.ParseAlterTable(sql); at != nil && isEditAlter(at) {
		// DROP COLUMN with what SQLite does not say (CASCADE, IF
		// EXISTS): its table is checked; the rest fails, if it does, at
		// its position in the log.
		if err := c.refreshSchema(); err != nil {
			return nil, err
		}
		ti, err := c.table(at.Table)
		switch {
		case err != nil:
			return nil, err
		case !ti.exists && !at.IfExists:
			return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", at.Table)
		}
		return []string{at.Table}, nil
	}
	if err := c.refreshSchema(); err != nil {
		return nil, err
	}
	stmts, drop, ok, err := c.dropStatements(sql)
	if err != nil {
		return nil, err
	}
	if !ok {
		stmts = []string{sql}
	}
	var tables []string
	for _, s := range stmts {
		objects, err := prepareOne(c, s)
		if err != nil {
			return nil, err
		}
		tables = append(tables, objects...)
	}
	sort.Strings(tables)
	if drop != nil && drop.Kind == "TABLE" {
		err = c.checkDropReferenced(tables, drop.Cascade)
	}
	return tables, err
}

// prepareOne prepares one schema statement SQLite knows and returns the
// tables and views it names.
func prepareOne(c *conn, sql string) ([]string, error) {
	stmt, rec, tail, err := c.prepare(sql, modeDDL)
	if err != nil {
		return nil, err
	}
	defer c.endStatement()
	defer stmt.Finalize()
	if !isBlank(tail) {
		return nil, errOneStatement()
	}
	switch firstKeyword(sql) {
	case "CREATE", "ALTER", "DROP":
	default:
		return nil, errNotSchema()
	}
	return rec.schemaObjects, nil
}

// errOr returns err, or alt if err is nil.
func errOr(err error, alt *sqlerr.Error) error {
	if err != nil {
		return err
	}
	return alt
}

func errNotSchema() *sqlerr.Error {
	return sqlerr.New(sqlerr.FeatureNotSupported,
		"only CREATE, ALTER and DROP of tables, indexes and views, and TRUNCATE, can run as schema changes")
}

// schemaEntry is one row of sqlite_schema.
type schemaEntry struct {
	typ, name, table, sql string
}

// readSchema returns the main database's schema, keyed by type and name.
func (c *conn) readSchema() (map[string]schemaEntry, error) {
	m := make(map[string]schemaEntry)
	err := c.execResult("SELECT type, name, tbl_name, sql FROM sqlite_schema", func(s *sqlite.Stmt) {
		e := schemaEntry{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3)}
		m[e.typ+"\x00"+strings.ToLower(e.name)] = e
	})
	return m, err
}

// runDDL executes one schema statement on c inside the caller's transaction
// and checks that the result can be replicated; it keeps the sequences in
// step with the columns that use them (syncSequences), seqno being the
// statement's position (0 when it is only tried). It returns the statement as
// it ran (translated: createtable.go) and the tables the
// statement touched, found by comparing the schema before and after (this
// also catches the new name of a renamed table and the tables whose schema a
// rename rewrote). Errors are *sqlerr.Error refusals or SQLite errors.
func runDDL(c *conn, sql string, seqno uint64) (ran string, tables []string, err error) {
	sql = skipBlank(sql)
	if sql == "" {
		return "", nil, sqlerr.New(sqlerr.SyntaxError, "empty schema statement")
	}
	if firstKeyword(sql) == "TRUNCATE" {
		if err := c.refreshSchema(); err != nil {
			return "", nil, err
		}
		tables, ok, err := c.truncateTables(sql)
		if !ok || err != nil {
			return "", nil, errOr(err, errNotSchema())
		}
		return sql, tables, runTruncate(c, tables)
	}
	if cm, ok := pgparse.ParseComment(sql); ok {
		// Only comments change: certification and parked transactions
		// look at their table alone.
		return sql, []string{commentsTable}, runComment(c, cm)
	}
	if s := pgparse.ParseSequenceStmt(sql); s != nil {
		// It changes the sequences' table, and OWNED BY what its table's
		// DROP does: certification and parked transactions (history.go)
		// look at those alone, not every table.
		tables := []string{sequencesTable}
		if len(s.OwnedBy) == 2 {
			tables = append(tables, s.OwnedBy[0])
		}
		return sql, tables, runSequenceStmt(c, s, seqno)
	}
	if err := refuseNodeDependent(c, sql); err != nil {
		return "", nil, err
	}
	// run is what SQLite runs. An index or a view goes to the log as the
	// client wrote it: its SQLite statement keeps that in a comment,
	// which a translation of the translation would not.
	run := ""
	switch firstKeyword(sql) {
	case "CREATE":
		if idx, ok, err := pgparse.IndexToSQLite(sql); ok {
			if err != nil {
				return "", nil, err
			}
			run = idx
		} else if v, ok, err := pgparse.ViewToSQLite(sql); ok {
			if err != nil {
				return "", nil, err
			}
			if run, err = c.createView(v); err != nil {
				return "", nil, err
			}
		} else if sql, err = translateCreateTable(sql); err != nil {
			return "", nil, err
		}
	case "ALTER":
		if err := c.refuseRenameUnderView(sql); err != nil {
			return "", nil, err
		}
		edit := pgparse.ParseAlterTable(sql)
		if edit != nil && isEditAlter(edit) {
			return runEditDDL(c, sql, edit, seqno)
		}
		if err := refusedAddColumn(sql); err != nil {
			return "", nil, err
		}
		sql = translateAddColumn(sql)
	}
	if err := c.refreshSchema(); err != nil {
		return "", nil, err
	}
	stmts, drop, ok, err := c.dropStatements(sql)
	if err != nil {
		return "", nil, err
	}
	if !ok {
		stmts = []string{sql}
		if run != "" {
			stmts = []string{run}
		}
	}
	if drop != nil && drop.Kind == "TABLE" {
		if err := c.checkDropReferenced(drop.Names, drop.Cascade); err != nil {
			return "", nil, err
		}
	}
	before, err := c.readSchema()
	if err != nil {
		return "", nil, err
	}
	for _, s := range stmts {
		if err := stepDDL(c, s); err != nil {
			return "", nil, err
		}
	}
	return finishDDL(c, sql, seqno, before)
}

// runEditDDL is runDDL for an ALTER TABLE that alterTable carries out.
func runEditDDL(c *conn, sql string, at *pgparse.AlterTable, seqno uint64) (ran string, tables []string, err error) {
	before, err := c.readSchema()
	if err != nil {
		return "", nil, err
	}
	if err := alterTable(c, sql, at); err != nil {
		return "", nil, err
	}
	return finishDDL(c, sql, seqno, before)
}

// stepDDL prepares and runs one schema statement SQLite knows.
func stepDDL(c *conn, sql string) error {
	stmt, _, tail, err := c.prepare(sql, modeDDL)
	if err != nil {
		return err
	}
	defer c.endStatement()
	defer stmt.Finalize()
	if !isBlank(tail) {
		return errOneStatement()
	}
	switch firstKeyword(sql) {
	case "CREATE", "ALTER", "DROP":
	default:
		return errNotSchema()
	}
	return stepAll(stmt)
}

// stepAll steps stmt to its end, its rows unread.
func stepAll(stmt *sqlite.Stmt) error {
	for {
		row, err := stmt.Step()
		if err != nil || !row {
			return err
		}
	}
}

// renameInIndexes renames in the PostgreSQL definitions of indexes
// (pgparse.IndexDefinition) what sql, a schema statement that changed
// them from before to after, renamed in SQLite's.
func renameInIndexes(c *conn, sql string, before, after map[string]schemaEntry) error {
	for k, a := range after {
		if b, ok := before[k]; !ok || a.typ != "index" || a.sql == b.sql {
			continue
		}
		if renamed, ok := pgparse.RenamedIndex(a.sql, sql); ok {
			if err := c.writeSchemaSQL("index", a.name, renamed); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishDDL ends runDDL once the statement ran: it finds the tables the
// statement touched (before is the schema before it), checks them, and
// keeps the sequences in step.
func finishDDL(c *conn, sql string, seqno uint64, before map[string]schemaEntry) (ran string, tables []string, err error) {
	after, err := c.readSchema()
	if err != nil {
		return "", nil, err
	}

	touched := map[string]bool{}
	var changed []schemaEntry // tables created or altered
	for k, a := range after {
		b, ok := before[k]
		if ok && b.sql == a.sql && b.table == a.table {
			continue
		}
		touched[a.table] = true
		if a.typ == "table" {
			changed = append(changed, a)
		}
	}
	for k, b := range before {
		if _, ok := after[k]; !ok {
			touched[b.table] = true
		}
	}
	if err := c.refreshSchema(); err != nil {
		return "", nil, err
	}
	for _, t := range changed {
		if strings.EqualFold(t.name, "sqlite_sequence") || hasKeyword(t.sql, "AUTOINCREMENT") {
			return "", nil, sqlerr.New(sqlerr.FeatureNotSupported,
				"AUTOINCREMENT is not supported: sqlite_sequence is not replicated; an INTEGER PRIMARY KEY alone assigns ids")
		}
		ti, err := c.table(t.name)
		if err != nil {
			return "", nil, err
		}
		if ti.keyProblem != "" {
			return "", nil, errKeyProblem(ti.keyProblem)
		}
	}
	if err := renameInIndexes(c, sql, before, after); err != nil {
		return "", nil, err
	}
	tables = make([]string, 0, len(touched))
	for t := range touched {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	if err := syncSequences(c, seqno, tables); err != nil {
		return "", nil, err
	}
	if err := syncComments(c); err != nil {
		return "", nil, err
	}
	return sql, tables, nil
}
