package sqlite

import (
	"context"
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/sqlerr"
)

// CheckDDL validates a schema statement by running it in a transaction that
// is always rolled back, and returns it as translated (createtable.go) with
// the tables it touches (sorted; empty if it changes nothing). It takes the
// write lock like any local writer.
func (e *Engine) CheckDDL(ctx context.Context, stmt string) (engine.DDL, error) {
	tx, err := e.newTx(ctx)
	if err != nil {
		return engine.DDL{}, err
	}
	defer tx.Rollback() // ROLLBACK and release the lock
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
	if err := tx.conn.exec("BEGIN IMMEDIATE"); err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	ran, tables, err := runDDL(tx.conn, stmt)
	if err != nil {
		return engine.DDL{}, tx.classify(err)
	}
	return engine.DDL{Statement: ran, Tables: tables}, nil
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
// and checks that the result can be replicated. It returns the statement as
// it ran (translated: createtable.go) and the tables the
// statement touched, found by comparing the schema before and after (this
// also catches the new name of a renamed table and the tables whose schema a
// rename rewrote). Errors are *sqlerr.Error refusals or SQLite errors.
func runDDL(c *conn, sql string) (ran string, tables []string, err error) {
	sql = skipBlank(sql)
	if sql == "" {
		return "", nil, sqlerr.New(sqlerr.SyntaxError, "empty schema statement")
	}
	if firstKeyword(sql) == "CREATE" {
		if sql, err = translateCreateTable(sql); err != nil {
			return "", nil, err
		}
	}
	before, err := c.readSchema()
	if err != nil {
		return "", nil, err
	}
	stmt, _, tail, err := c.prepare(sql, modeDDL)
	if err != nil {
		return "", nil, err
	}
	defer c.endStatement()
	defer stmt.Finalize()
	if !isBlank(tail) {
		return "", nil, errOneStatement()
	}
	switch firstKeyword(sql) {
	case "CREATE", "ALTER", "DROP":
	default:
		return "", nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"only CREATE, ALTER and DROP of tables, indexes and views can run as schema changes")
	}
	for {
		row, err := stmt.Step()
		if err != nil {
			return "", nil, err
		}
		if !row {
			break
		}
	}
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
		if !ti.hasPK {
			return "", nil, errNoPK(t.name)
		}
		if ti.keyProblem != "" {
			return "", nil, errKeyProblem(ti.keyProblem)
		}
	}
	tables = make([]string, 0, len(touched))
	for t := range touched {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	return sql, tables, nil
}
