package postgres

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// ExecSchema runs a schema statement inside the transaction (engine.Tx):
// the engine permits it for this statement alone (certa.permit_ddl, which
// records it in the capture, in its place among the rows), in a savepoint
// of its own, so that a statement refused afterwards leaves nothing.
// Sequences it made move into this node's blocks at once, as those of an
// applied schema change do (the other nodes move theirs when they run it).
func (t *Tx) ExecSchema(ctx context.Context, sql string, w result.Writer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if pgparse.OfPrepared(sql) {
		return t.failed(errOfPrepared)
	}
	tc, _ := pgparse.ParseTableCopy(sql)
	return t.runSchema(ctx, sql, tc, w)
}

// errOfPrepared refuses CREATE TABLE AS EXECUTE (pgparse.OfPrepared):
// every node runs a schema statement, and the prepared statement is
// this session's alone.
var errOfPrepared = func() error {
	e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: CREATE TABLE AS EXECUTE is not supported: the prepared statement is this session's, and every node runs the schema statement")
	e.Hint = "Write the prepared statement's query in place of EXECUTE."
	return e
}()

// runSchema is ExecSchema; the caller holds t.mu. A CREATE TABLE AS or
// SELECT INTO that fills a replicated table (tc) runs as execTableCopy.
func (t *Tx) runSchema(ctx context.Context, sql string, tc *pgparse.TableCopy, w result.Writer) error {
	if t.reads != nil {
		t.reads.opaque = true // the schema its statements read may change
	}
	var buf result.Buffer
	var err error
	if tc != nil {
		err = t.execTableCopy(ctx, tc, &buf)
	} else {
		_, err = t.execSchema(ctx, sql, &buf)
	}
	t.c.ts.reset()
	if err != nil {
		return t.failed(err)
	}
	return buf.Replay(w)
}

// execSchema returns the tables the statement made or changed, as
// certa.ddl_tables notes them.
func (t *Tx) execSchema(ctx context.Context, sql string, w result.Writer) ([]string, error) {
	pg := t.c.pg
	if err := refuseTemporaryNames(ctx, pg, sql); err != nil {
		return nil, err
	}
	if _, err := pg.Exec(ctx, "SAVEPOINT certa_schema").ReadAll(); err != nil {
		return nil, pgError(err)
	}
	undo := func(err error) ([]string, error) {
		pg.Exec(context.WithoutCancel(ctx), "ROLLBACK TO SAVEPOINT certa_schema; RELEASE SAVEPOINT certa_schema").ReadAll()
		return nil, err
	}
	token := []byte(t.e.token)
	indexTables := droppedIndexTables(ctx, pg, sql)
	// Replicated with the settings it runs under here.
	settings, err := readSchemaSettings(ctx, pg)
	if err != nil {
		return undo(pgError(err))
	}
	role, err := sessionRole(ctx, pg)
	if err != nil {
		return undo(pgError(err))
	}
	replicated := schemaChange{Settings: settings, SQL: sql, Role: role}.encode()
	r := pg.ExecParams(ctx, "SELECT certa.permit_ddl($1, $2), current_setting('certa.ddl_tables', true)",
		[][]byte{token, []byte(replicated)}, nil, nil, nil).Read()
	if r.Err != nil {
		return undo(pgError(r.Err))
	}
	at, before := r.Rows[0][0], string(r.Rows[0][1])
	there, err := columnsThere(ctx, pg, sql)
	if err != nil {
		return undo(pgError(err))
	}
	if rs, ok := pgparse.ParseRoleStatement(sql); ok {
		stop := t.c.forwardNotices(ctx)
		err := execRoleStatement(ctx, pg, t.e.token, role, sql, rs)
		stop()
		if err != nil {
			return undo(pgError(err))
		}
		if err := w.Complete(rs.Tag); err != nil {
			return undo(err)
		}
	} else if err := run(ctx, t.c, sql, w, nil); err != nil {
		return undo(t.e.localError(err))
	}
	pinned, values, err := pinOrRefuse(ctx, pg, sql, true, there, nil)
	if err != nil {
		return undo(pgError(err))
	}
	var again []byte // the statement replicated, if pinOrRefuse pinned values or sends them
	if pinned != sql || len(values.Columns) > 0 {
		again = []byte(schemaChange{Settings: settings, SQL: pinned, Role: role, Travel: values.Columns}.encode())
	}
	r = pg.ExecParams(ctx, "SELECT current_setting('certa.ddl_tables', true)", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return undo(pgError(r.Err))
	}
	tables := append(indexTables, notedSince(before, string(r.Rows[0][0]))...)
	tablesJSON := []byte("null") // it named no table of its own: it may change any
	if len(tables) > 0 {
		tablesJSON, _ = json.Marshal(tables)
	}
	r = pg.ExecParams(ctx, "SELECT certa.end_permit($1, $2, $3, $4)", [][]byte{token, at, tablesJSON, again}, nil, nil, nil).Read()
	if r.Err != nil {
		return undo(pgError(r.Err))
	}
	if n := string(r.Rows[0][0]); n != "0" {
		if err := refuseWrittenRows(ctx, pg, sql, n, at, tables); err != nil {
			return undo(err)
		}
	}
	if len(values.Columns) > 0 {
		// After the statement, in its place: every row as it left it.
		r := pg.ExecParams(ctx, "SELECT certa.capture_all_rows($1, $2::pg_catalog.regclass)", [][]byte{token, []byte(values.Table)}, nil, nil, nil).Read()
		if r.Err != nil {
			return undo(pgError(r.Err))
		}
	}
	if err := t.placeNew(ctx); err != nil {
		return undo(err)
	}
	if _, err := pg.Exec(ctx, "RELEASE SAVEPOINT certa_schema").ReadAll(); err != nil {
		return nil, pgError(err)
	}
	return tables, nil
}

// refuseWrittenRows refuses a schema statement that wrote n rows (captured
// after capture seq at): its rows would travel and the statement run again
// on the other nodes, which would write them twice. Not a TRUNCATE: what
// writes rows there is its tables' TRUNCATE triggers, which the appliers
// do not fire, so its rows travel, after it, unless they are of a table
// it emptied (tables): a BEFORE TRUNCATE trigger's rows of it are gone
// here and would stay on the other nodes.
func refuseWrittenRows(ctx context.Context, pg *pgconn.PgConn, sql, n string, at []byte, tables []string) error {
	if pgparse.SchemaTag(sql) == "TRUNCATE TABLE" {
		names, _ := json.Marshal(tables)
		r := pg.ExecParams(ctx, truncatedRowsSQL, [][]byte{at, names}, nil, nil, nil).Read()
		if r.Err != nil {
			return pgError(r.Err)
		}
		if string(r.Rows[0][0]) == "0" {
			return nil
		}
		e := sqlerr.New(sqlerr.FeatureNotSupported,
			"certa: a TRUNCATE trigger wrote rows of a table the TRUNCATE empties, which cannot be replicated in order with it")
		e.Hint = "Write them from the trigger into another table, or after the TRUNCATE."
		return e
	}
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"certa: this schema change also wrote %s rows, which cannot be replicated inside a transaction block", n)
	e.Hint = "Run it on its own, outside a transaction block: it then runs in total order on every node."
	return e
}

// truncatedRowsSQL counts the rows the transaction captured after seq $1
// of the tables named in $2 (a JSON array, as certa.note_tables names
// them).
const truncatedRowsSQL = `SELECT count(*) FROM certa.captured() c
	JOIN pg_catalog.pg_class k ON k.oid = c.rel JOIN pg_catalog.pg_namespace s ON s.oid = k.relnamespace
	WHERE c.seq > $1::bigint
		AND CASE WHEN s.nspname = 'public' THEN k.relname ELSE s.nspname || '.' || k.relname END
			IN (SELECT pg_catalog.jsonb_array_elements_text($2::pg_catalog.jsonb))`

// placeNew moves the sequences the transaction made (or changed) into
// this node's blocks (sequences.go) before a client takes a value.
func (t *Tx) placeNew(ctx context.Context) error {
	return pgError(placeAsClient(ctx, t.c.pg, t.e.token, t.e.slot.Load()))
}

// notedSince returns the tables noted in certa.ddl_tables (schema.go)
// after it read before.
func notedSince(before, after string) []string {
	if after == "" || after == before {
		return nil
	}
	if before != "" {
		after = strings.TrimPrefix(after, before+"\x01")
	}
	return strings.Split(after, "\x01")
}

// Describe prepares sql on the transaction's connection, which sees the
// transaction's own schema changes.
func (t *Tx) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return nil, nil, err
	}
	sd, err := t.c.pg.Prepare(ctx, "", sql, nil)
	if err != nil {
		return nil, nil, t.failed(pgError(err))
	}
	params, cols := described(sd)
	return params, cols, nil
}

// refuseTemporaryNames refuses a block's schema statement that names a
// temporary relation of the session (CREATE TABLE t (LIKE temp_t)): it
// runs in the client's session here and on the other nodes without that
// relation, where it would fail or mean another table. (A statement sent
// on its own is tried by CheckDDL on a connection with no temporary
// relations, which PostgreSQL refuses there.)
func refuseTemporaryNames(ctx context.Context, pg *pgconn.PgConn, sql string) error {
	names := pgparse.Relations(sql)
	if len(names) == 0 {
		return nil
	}
	list, err := json.Marshal(names)
	if err != nil {
		return err
	}
	r := pg.ExecParams(ctx, `SELECT n FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) n
		JOIN pg_catalog.pg_class c ON c.oid = pg_catalog.to_regclass(n) WHERE c.relpersistence = 't' LIMIT 1`,
		[][]byte{list}, nil, nil, nil).Read()
	if r.Err != nil {
		return pgError(r.Err)
	}
	if len(r.Rows) == 0 {
		return nil
	}
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"certa: %s names temporary table %s, which only this session has: the other nodes would run it without it", pgparse.SchemaTag(sql), r.Rows[0][0])
	e.Hint = "Name permanent tables in schema statements of a transaction block, or make the new object temporary too."
	return e
}
