package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// readOnlySQL starts a read-only transaction at the latest applied state.
const readOnlySQL = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"

// Read runs one statement in a read-only transaction. PostgreSQL itself
// says what writes: a statement refused with 25006 (it writes, locks rows
// or calls nextval) is ErrNotReadOnly, with nothing reported to w. A
// read-only transaction may still write temporary tables (PostgreSQL
// allows it): it commits, so that those writes stay.
func (e *Engine) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	return e.read(ctx, nil, sql, w, args)
}

// read is Read for session s (nil: none), on its pinned backend if it
// has one.
func (e *Engine) read(ctx context.Context, s *Session, sql string, w result.Writer, args []any) error {
	hidden := withoutCertaRows(sql)
	sql = withSessionSequences(engine.SequenceValuesFrom(ctx), hidden.SQL)
	err := e.readRewritten(ctx, s, sql, w, args)
	if sql != hidden.SQL {
		return withoutPosition(err)
	}
	return clientPosition(err, hidden)
}

// readRewritten is read of sql as rewritten for the session.
func (e *Engine) readRewritten(ctx context.Context, s *Session, sql string, w result.Writer, args []any) error {
	cp, isCopy := pgparse.ParseCopy(sql)
	if isCopy && cp.From {
		// PostgreSQL would refuse it only after the client was asked
		// for its data (pgconn reads it at once).
		return engine.ErrNotReadOnly
	}
	if maintenance(sql) {
		return e.maintain(ctx, s, sql, w)
	}
	buf := result.BufferFor(w)
	var err error
	if isCopy {
		err = e.readOnly(ctx, s, "COMMIT", func(c *conn) error { return run(ctx, c, sql, buf, args) })
	} else {
		err = e.readPipelined(ctx, s, sql, buf, args)
	}
	if sqlerr.Code(err) == "25006" {
		return engine.ErrNotReadOnly
	}
	if err != nil && s.lostWith(err) {
		// Its backend went before the engine saw it go (recover
		// checks pg_stat_activity, which shows a backend ended a moment
		// ago): the session's answer is errLost's, as after.
		return errLost()
	}
	if err != nil {
		return err
	}
	return buf.Replay(w)
}

// ServerVersion returns the server's version, as its server_version
// parameter says it: what clients are told they talk to.
func (e *Engine) ServerVersion(ctx context.Context) (string, error) {
	c, err := e.pool.Load().get(ctx, nil)
	if err != nil {
		return "", err
	}
	defer c.release(false)
	return c.pg.ParameterStatus("server_version"), nil
}

// maintenance reports whether sql is VACUUM, ANALYZE, CLUSTER or
// REINDEX: this node's own upkeep, which changes no rows (nothing to
// replicate), and which VACUUM, CLUSTER of every table and REINDEX
// CONCURRENTLY do only outside a transaction.
func maintenance(sql string) bool {
	word, _, _ := strings.Cut(strings.TrimLeft(sql, " \t\r\n"), " ")
	word = strings.TrimRight(word, ";\r\n\t")
	for _, w := range []string{"VACUUM", "ANALYZE", "ANALYSE", "CLUSTER", "REINDEX"} {
		if strings.EqualFold(word, w) {
			return true
		}
	}
	return false
}

// maintain runs a maintenance command on the session's backend (which
// sees its temporary tables) or a pooled one, outside a transaction,
// under the session's settings (its role: a VACUUM after SET ROLE skips
// the tables that role does not own, as in PostgreSQL), which a pooled
// backend then resets. The applier's watcher knows
// its backend (watch.go): VACUUM FULL, CLUSTER and REINDEX lock their
// tables against the applier's writes, and one that blocks the applier
// for longer than the grace is cancelled, with errMaintenanceCancelled.
func (e *Engine) maintain(ctx context.Context, s *Session, sql string, w result.Writer) error {
	c, err := e.acquire(ctx, s)
	if err != nil {
		return err
	}
	pid := c.pg.PID()
	set := setSettingsSQL(ctx, false)
	// done resets what the session's settings left on a pooled backend
	// before it goes back to the pool (a pinned one is the session's),
	// and gives it back.
	done := func(broken bool) {
		if set != "" && c.resets() && !broken {
			_, rerr := c.pg.Exec(context.WithoutCancel(ctx), "RESET ALL; RESET ROLE").ReadAll()
			broken = rerr != nil
		}
		e.finish(s, c, broken || c.pg.IsClosed(), false, tempState{})
	}
	if set != "" {
		if _, err := c.pg.Exec(ctx, set).ReadAll(); err != nil {
			done(true) // in an unknown state: not for another session
			return pgError(err)
		}
	}
	cancelled := new(atomic.Bool)
	e.trackMaintenance(pid, cancelled, applyGrace)
	skips, err := ownerSkips(ctx, c.pg)
	if err != nil {
		e.untrack(pid)
		done(false)
		return pgError(err)
	}
	stop := c.forwardNoticesTo(maintenanceNotices(ctx, skips)) // VERBOSE's INFO, REINDEX's skips
	res, err := c.pg.Exec(ctx, sql).ReadAll()
	stop()
	e.untrack(pid)
	done(false)
	if err != nil {
		if cancelled.Load() {
			return errMaintenanceCancelled(sql, err)
		}
		return pgError(err)
	}
	return w.Complete(res[len(res)-1].CommandTag.String())
}

// skipsSQL reads what ownerSkips returns: whether the session acts as
// certa_client, and the names of certa's relations, their indexes and
// TOAST tables.
const skipsSQL = `SELECT pg_catalog.current_setting('role') IN ('none', 'certa_client'), coalesce(pg_catalog.array_agg(r.relname), '{}') FROM (
	SELECT c.relname FROM pg_catalog.pg_class c WHERE c.relnamespace = 'certa'::pg_catalog.regnamespace
	UNION SELECT t.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_class t ON t.oid IN (c.reltoastrelid,
		(SELECT x.indexrelid FROM pg_catalog.pg_index x WHERE x.indrelid = c.reltoastrelid LIMIT 1))
		WHERE c.relnamespace = 'certa'::pg_catalog.regnamespace) r`

// ownerSkips returns which of the warnings of a relation a maintenance
// command skips ("skipping "t" --- only table or database owner can
// vacuum it") are certa's to drop: those of certa's own relations, which
// a plain PostgreSQL does not have, and, for a session acting as
// certa_client, all: it stands for the database's owner and superuser,
// and a whole-database VACUUM or ANALYZE skips PostgreSQL's catalogs,
// which those maintain (the warnings filled psql's screen).
func ownerSkips(ctx context.Context, c *pgconn.PgConn) (func(msg string) bool, error) {
	r := c.ExecParams(ctx, skipsSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	owner := string(r.Rows[0][0]) == "t"
	certa := map[string]bool{}
	for _, name := range strings.Split(strings.Trim(string(r.Rows[0][1]), "{}"), ",") {
		certa[name] = true
	}
	return func(msg string) bool {
		rest, skipped := strings.CutPrefix(msg, `skipping "`)
		name, _, ok := strings.Cut(rest, `" --- only `)
		return skipped && ok && (owner || certa[name])
	}, nil
}

// maintenanceNotices is where a maintenance command's notices go: to the
// client of ctx, at the level its client_min_messages lets through (the
// command runs outside a transaction, where the session's settings are
// not set), without the warnings of relations it skipped that skip
// drops (ownerSkips).
func maintenanceNotices(ctx context.Context, skip func(msg string) bool) func(*sqlerr.Error) {
	send := sqlerr.NoticesFrom(ctx)
	if send == nil {
		return nil
	}
	level := map[string]int{"notice": 1, "warning": 2, "error": 3}
	least := level[strings.ToLower(engine.SettingsFrom(ctx)["client_min_messages"])]
	return func(n *sqlerr.Error) {
		if skip(n.Message) {
			return
		}
		if n.Severity != "INFO" && level[strings.ToLower(n.Severity)] < least {
			return
		}
		send(n)
	}
}

// errMaintenanceCancelled is what a maintenance command the applier's
// watcher cancelled reports: 57014, as a statement cancelled on a
// PostgreSQL standby for a conflict with recovery, which it resembles.
func errMaintenanceCancelled(sql string, err error) error {
	word, _, _ := strings.Cut(strings.TrimLeft(sql, " \t\r\n"), " ")
	se := sqlerr.Wrap(err, sqlerr.QueryCanceled,
		"canceling statement due to conflict with replication: %s held or waited for a lock that replicated commits need, for longer than %v",
		strings.ToUpper(strings.TrimRight(word, ";")), applyGrace)
	se.Detail = "This node applies the commits of every node in log order; a command that locks a table against writes stops them all while it runs."
	se.Hint = "Run VACUUM FULL, CLUSTER or REINDEX when no writes reach the table, or use what does not block writes: VACUUM, REINDEX CONCURRENTLY."
	return se
}

// errTrialCancelled is what a schema statement reports whose trial run
// (CheckDDL) the applier's watcher cancelled: 57014, as
// errMaintenanceCancelled.
func errTrialCancelled(err error) error {
	se := sqlerr.Wrap(err, sqlerr.QueryCanceled,
		"canceling statement due to conflict with replication: the schema change held locks that replicated commits need, for longer than %v", trialGrace)
	se.Detail = "certa runs a schema change first on this node alone, to check it, and then at its position on every node; meanwhile this node's replicated commits wait for the tables it locks."
	se.Hint = "Run it when fewer writes reach the table, or in smaller steps (ADD COLUMN without a volatile default, then UPDATE in batches)."
	return se
}

// RunsPostgreSQL is true: catalog queries and run-time parameters are
// PostgreSQL's own.
func (e *Engine) RunsPostgreSQL() bool { return true }

// Setting runs a SET or RESET in a transaction it rolls back and returns
// the value it leaves name with ("" for a RESET: the default).
func (e *Engine) Setting(ctx context.Context, set, name string) (string, error) {
	return e.setting(ctx, nil, set, name)
}

// setting is Setting on session s's backend (nil: a pooled one): inside
// its open transaction if it has one, and kept for the session if the
// backend is the session's for good.
func (e *Engine) setting(ctx context.Context, s *Session, set, name string) (string, error) {
	if t := e.openTx(s); t != nil {
		return t.setting(ctx, set, name)
	}
	end := "ROLLBACK"
	if s.keepsState() && !engine.InBlock(ctx) {
		// In a block the session keeps the value only if the block
		// commits: its transactions set it (settingsSQL), and the
		// backend's own stays as it was.
		end = "COMMIT"
	}
	var value string
	err := e.readOnly(ctx, s, end, func(c *conn) error {
		if _, err := c.pg.Exec(ctx, set).ReadAll(); err != nil {
			return pgError(err)
		}
		r := c.pg.ExecParams(ctx, "SELECT current_setting($1)", [][]byte{[]byte(name)}, nil, nil, nil).Read()
		if r.Err != nil {
			return pgError(r.Err)
		}
		value = string(r.Rows[0][0])
		return nil
	})
	return value, err
}

// Catalog runs a query on PostgreSQL's own catalogs.
func (e *Engine) Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error {
	hidden := withoutCertaRows(sql)
	err := e.readOnly(ctx, nil, "ROLLBACK", func(c *conn) error { return run(ctx, c, hidden.SQL, w, args) })
	return clientPosition(err, hidden)
}

// readOnly runs f in a read-only transaction on session s's backend
// (nil: a pooled one), and ends it with end (COMMIT keeps what f wrote
// to temporary tables; a read-only transaction can make none); the
// applier may abort it (watch.go).
func (e *Engine) readOnly(ctx context.Context, s *Session, end string, f func(*conn) error) error {
	c, aborted, err := e.acquireRead(ctx, s)
	if err != nil {
		return err
	}
	defer e.untrack(c.pg.PID())
	if _, err := c.pg.Exec(ctx, readOnlySQL+settingsSQL(ctx)).ReadAll(); err != nil {
		_, rerr := c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK"+c.resetSQL()).ReadAll()
		e.finish(s, c, rerr != nil || c.pg.IsClosed(), false, tempState{})
		return pgError(err)
	}
	err = f(c)
	if err != nil {
		end = "ROLLBACK"
	}
	// The reset (conn.resets) follows the end, in its round trip; if it
	// fails, it runs again alone (else the backend is closed), and the
	// transaction's result stands.
	res, rerr := c.pg.Exec(context.WithoutCancel(ctx), end+c.resetSQL()).ReadAll()
	broken := rerr != nil
	if len(res) > 0 && res[0].Err == nil {
		// It ended.
		if rerr != nil {
			broken = !c.resetAgain(ctx, rerr)
		}
		rerr = nil
		if end == "COMMIT" && res[0].CommandTag.String() != "COMMIT" {
			rerr = sqlerr.New(sqlerr.InFailedTransaction, "certa: the read-only transaction failed: it rolled back")
			broken = true
		}
	}
	e.finish(s, c, broken, aborted.Load(), tempState{})
	if err != nil && aborted.Load() {
		return abortedErr()
	}
	if err == nil && rerr != nil {
		return pgError(rerr)
	}
	return err
}

// acquireRead acquires a backend for a read of session s (nil: a pooled
// one) and tracks it for the applier (watch.go): the caller untracks it
// before it hands the backend back.
func (e *Engine) acquireRead(ctx context.Context, s *Session) (*conn, *atomic.Bool, error) {
	c, err := e.acquire(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	aborted := new(atomic.Bool)
	e.track(c.pg.PID(), aborted)
	return c, aborted, nil
}

// readPipelined runs one statement as readOnly does with run and COMMIT,
// in one round trip: BEGIN, the session's settings, the statement and
// COMMIT go to the server at once (pipelined). A point select took three
// round trips before, each costing more than the select.
func (e *Engine) readPipelined(ctx context.Context, s *Session, sql string, w result.Writer, args []any) error {
	vals, oids, paramFormats, err := textArgs(args)
	if err != nil {
		return err
	}
	c, aborted, err := e.acquireRead(ctx, s)
	if err != nil {
		return err
	}
	defer e.untrack(c.pg.PID())
	formats, wire := result.WireFormats(w)
	name, err := c.clientStatement(ctx, sql, oids)
	if err != nil {
		e.finish(s, c, c.pg.IsClosed(), aborted.Load(), tempState{})
		return err
	}
	c.prepareReset(ctx)
	b := &pgconn.Batch{}
	parts := 4 // BEGIN, [the settings,] the statement, the check, COMMIT
	b.ExecParams(readOnlySQL, nil, nil, nil, nil)
	if set := settingsSQL(ctx); set != "" {
		b.ExecParams(strings.TrimPrefix(set, "; "), nil, nil, nil, nil)
		parts++
	}
	if name != "" {
		b.ExecPrepared(name, vals, paramFormats, formats)
	} else {
		b.ExecParams(sql, vals, oids, paramFormats, formats)
	}
	b.ExecParams(refuseUncapturedSQL, nil, nil, nil, nil)
	b.ExecParams("COMMIT", nil, nil, nil, nil)
	c.queueReset(b) // after the COMMIT (conn.resets)
	mrr := c.pg.ExecBatch(ctx, b)
	var (
		n      int   // results read
		werr   error // from the statement's result: PostgreSQL's, the writer's
		cerr   error // the check's
		commit string
	)
	stop := c.forwardNotices(ctx) // the statement's, read as its result begins
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		switch n {
		case parts - 3:
			var tag string
			tag, werr = writeResult(rr, w, wire)
			stop()
			c.ran(tag)
		case parts - 2:
			if werr == nil {
				_, cerr = rr.Close()
			} else {
				rr.Close()
			}
		case parts - 1:
			commit = rr.Read().CommandTag.String()
		default:
			rr.Close()
		}
		n++
	}
	stop()
	err = mrr.Close()
	broken := c.pg.IsClosed()
	switch {
	case werr != nil:
		err = werr
	case cerr != nil:
		err = pgError(cerr)
	case commit == "COMMIT":
		// It committed: an error after the COMMIT is the reset's, which
		// runs again alone (the client's DEALLOCATE ALL, before it in the
		// pipeline, dropped its prepared statements), or the backend is
		// closed.
		if err != nil && !broken {
			broken = !c.resetAgain(ctx, err)
		}
		err = nil
	case err != nil:
		err = resultChanged(pgError(err))
	default:
		err = sqlerr.New(sqlerr.InFailedTransaction, "certa: the read-only transaction failed: it rolled back")
	}
	if err != nil && !broken {
		// The statement or the writer failed: the transaction may be
		// open still, or failed.
		_, rerr := c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK"+c.resetSQL()).ReadAll()
		broken = rerr != nil
	}
	e.finish(s, c, broken, aborted.Load(), tempState{})
	if err != nil && aborted.Load() {
		return abortedErr()
	}
	return err
}

// refuseUncapturedSQL fails a read-only transaction that made a table
// certa cannot replicate (errUncaptured), before its COMMIT.
const refuseUncapturedSQL = "SELECT certa.refuse_uncaptured()"

// CheckDDL runs a schema statement in a transaction it rolls back, as
// the applier will run it (runSchemaChange): what PostgreSQL refuses is
// refused before it reaches the log, and the event triggers (schema.go)
// note the tables it touches. A statement that names no table of its own
// (a schema, a function) gets nil tables: it conflicts with every table.
// The statement is replicated with the settings it ran under here: the
// session's (engine.WithSettings) over the server's.
func (e *Engine) CheckDDL(ctx context.Context, stmt string) (engine.DDL, error) {
	if e.closed.Load() {
		return engine.DDL{}, errClosed
	}
	if _, ok := pgparse.ParseTableCopy(stmt); ok {
		return engine.DDL{}, engine.ErrRunAsTransaction // its rows travel (Tx.ExecSchema)
	}
	if pgparse.OfPrepared(stmt) {
		return engine.DDL{}, errOfPrepared
	}
	// Run in a transaction on every node, as PostgreSQL runs no
	// CONCURRENTLY: the same objects, with stronger locks meanwhile.
	cc, concurrently := pgparse.ParseConcurrently(stmt)
	if concurrently {
		stmt = cc.SQL
	}
	e.checkMu.Lock()
	defer e.checkMu.Unlock()
	c := e.checker
	indexTables := droppedIndexTables(ctx, c, stmt)
	pid, cancelled := c.PID(), new(atomic.Bool)
	e.trackMaintenance(pid, cancelled, trialGrace)
	// The trial's notices are the client's ("... does not exist,
	// skipping"); the applier's run of it later sends none. A routine
	// definition's body was checked in the session's try (Tx.ExecLocal),
	// which sent what the check said; here it is not checked.
	if !pgparse.IsRoutineDefinition(stmt) {
		e.checkerNotices.send = sqlerr.NoticesFrom(ctx)
	}
	sc, tables, held, err := checkSchemaChange(ctx, c, e.token, stmt, cc)
	e.checkerNotices.send = nil
	e.untrack(pid)
	c.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
	if held != "" {
		// The rollback brought back the sequences as they were held.
		if err := releaseSequences(context.WithoutCancel(ctx), c, held, false); err != nil {
			return engine.DDL{}, fmt.Errorf("put back the sequences the trial of a schema change held: %w", err)
		}
	}
	if err != nil {
		if cancelled.Load() {
			return engine.DDL{}, errTrialCancelled(err)
		}
		if inSession(err) || errors.Is(err, errValuesTravel) {
			return engine.DDL{}, engine.ErrRunAsTransaction // Tx.ExecSchema runs it as a block's
		}
		return engine.DDL{}, pgError(err)
	}
	ddl := engine.DDL{Statement: sc.encode(), Tables: indexTables}
	if tables != "" {
		ddl.Tables = append(ddl.Tables, strings.Split(tables, "\x01")...)
	}
	slices.Sort(ddl.Tables)
	ddl.Tables = slices.Compact(ddl.Tables)
	return ddl, nil
}

// errValuesTravel: a schema statement's values travel as rows after it
// (pinOrRefuse), which a transaction of its own carries (Tx.Exec).
var errValuesTravel = errors.New("the values the schema statement computes travel as rows")

// checkSchemaChange runs stmt in a transaction it leaves open on c, under
// the session settings of ctx, and returns it as it is replicated and the
// tables the event triggers noted (certa.ddl_tables). cc is what stmt
// was with CONCURRENTLY (pgparse.ParseConcurrently), if it had it.
func checkSchemaChange(ctx context.Context, c *pgconn.PgConn, token, stmt string, cc pgparse.Concurrently) (schemaChange, string, string, error) {
	if _, err := c.Exec(ctx, "BEGIN; SET LOCAL lock_timeout = '5s'").ReadAll(); err != nil {
		return schemaChange{}, "", "", err
	}
	if err := applySettings(ctx, c, engine.SettingsFrom(ctx)); err != nil {
		return schemaChange{}, "", "", err
	}
	settings, err := readSchemaSettings(ctx, c)
	if err != nil {
		return schemaChange{}, "", "", err
	}
	role, err := sessionRole(ctx, c)
	if err != nil {
		return schemaChange{}, "", "", err
	}
	if cc.Kind != "" {
		if err := refuseConcurrently(ctx, c, cc); err != nil {
			return schemaChange{}, "", "", err
		}
	}
	sc := schemaChange{Settings: settings, SQL: stmt, Role: role}
	held, pinned, values, err := runSchemaChangeHeld(ctx, c, token, sc, false, nil, true)
	if err != nil {
		return schemaChange{}, "", held, err
	}
	if len(values.Columns) > 0 {
		return schemaChange{}, "", held, errValuesTravel
	}
	sc.SQL = pinned
	r := c.ExecParams(ctx, "SELECT current_setting('certa.ddl_tables', true)", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return schemaChange{}, "", held, r.Err
	}
	return sc, string(r.Rows[0][0]), held, nil
}

// droppedIndexTables returns the tables of the indexes stmt drops (DROP
// INDEX names no table; the event triggers see none), as write-set keys
// name them.
func droppedIndexTables(ctx context.Context, conn *pgconn.PgConn, stmt string) []string {
	var tables []string
	for _, idx := range pgparse.DroppedIndexes(stmt) {
		r := conn.ExecParams(ctx, `SELECT CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END
			FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE i.indexrelid = to_regclass($1)`, [][]byte{[]byte(idx)}, nil, nil, nil).Read()
		for _, row := range r.Rows {
			tables = append(tables, string(row[0]))
		}
	}
	return tables
}

// checksumTablesSQL lists the user tables and materialized views, with
// their names as write-set keys name them, and whether they hold rows (a
// materialized view made WITH NO DATA does not).
const checksumTablesSQL = `SELECT n.nspname, c.relname, c.relispopulated FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relkind IN ('r', 'p', 'm') AND c.relpersistence <> 't'
	AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'certa') AND n.nspname NOT LIKE 'pg_toast%'
	ORDER BY 1, 2`

// checksumSequencesSQL sums each user sequence's definition: its values
// are this node's own (its blocks: sequences.go), but its type,
// bounds, step and cycling must be the same on every node.
const checksumSequencesSQL = `SELECT CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END,
	md5(concat_ws(' ', s.seqtypid::regtype, s.seqincrement, s.seqmin, s.seqmax, s.seqcycle))
	FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relpersistence <> 't' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'certa')
	ORDER BY 1`

// checksumOwnersSQL sums who owns each user relation, schema and routine
// and who may use it: changes that touch no row (ALTER ... OWNER TO,
// REASSIGN OWNED, GRANT) must not differ between nodes either.
const checksumOwnersSQL = `SELECT 'owners and privileges', md5(string_agg(line, E'\n' ORDER BY line)) FROM (
	SELECT concat_ws(' ', 'class', c.oid::regclass::text, pg_get_userbyid(c.relowner), c.relacl) AS line
	FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relpersistence <> 't' AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'certa') AND n.nspname NOT LIKE 'pg\_%'
	UNION ALL
	SELECT concat_ws(' ', 'schema', n.nspname, pg_get_userbyid(n.nspowner), n.nspacl)
	FROM pg_namespace n WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'certa') AND n.nspname NOT LIKE 'pg\_%'
	UNION ALL
	SELECT concat_ws(' ', 'routine', p.oid::regprocedure::text, pg_get_userbyid(p.proowner), p.proacl)
	FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
	WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'certa') AND n.nspname NOT LIKE 'pg\_%') l`

// checksumRolesSQL sums the client roles (roles.go: their attributes,
// memberships and comments) and the settings of those and certa's roles
// (ALTER ROLE certa_client SET ...), if there are any: global objects,
// which schema changes make alike on every node, and which must not
// differ.
const checksumRolesSQL = `SELECT 'roles', md5(string_agg(line, E'\n' ORDER BY line)) FROM (
	SELECT concat_ws(' ', r.rolname, r.rolinherit, r.rolcreatedb, r.rolcanlogin, r.rolconnlimit, extract(epoch FROM r.rolvaliduntil),
		(SELECT string_agg(g.rolname || CASE WHEN m.admin_option THEN '+' ELSE '' END, ',' ORDER BY g.rolname)
			FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid),
		shobj_description(r.oid, 'pg_authid')) AS line
	FROM pg_roles r WHERE certa.client_role(r.oid)
	UNION ALL
	SELECT r.rolname || ' ' || array_to_string(s.setconfig, ' ')
	FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole
	WHERE (r.rolname IN ('` + clientRole + `', '` + applierRole + `') OR certa.client_role(r.oid))
	AND s.setdatabase IN (0, (SELECT oid FROM pg_database WHERE datname = current_database()))) l
	HAVING count(*) > 0`

// Checksums sums every user table's and materialized view's rows (in the
// text form of the rows, sorted), every sequence's definition, the
// client roles and who owns and may use what, at one snapshot, with its applied seqno.
func (e *Engine) Checksums(ctx context.Context) (engine.Checksums, error) {
	var sums engine.Checksums
	err := e.readOnly(ctx, nil, "ROLLBACK", func(c *conn) error {
		res, err := c.pg.Exec(ctx, "SELECT coalesce(max(seqno), 0) FROM certa.applied; "+checksumTablesSQL+"; "+checksumSequencesSQL+"; "+checksumRolesSQL+"; "+checksumOwnersSQL).ReadAll()
		if err != nil {
			return pgError(err)
		}
		if sums.Seqno, err = strconv.ParseUint(string(res[0].Rows[0][0]), 10, 64); err != nil {
			return err
		}
		for _, row := range res[1].Rows {
			m := tableMeta{schema: string(row[0]), name: string(row[1])}
			if string(row[2]) != "t" {
				sums.Tables = append(sums.Tables, engine.TableChecksum{Table: m.keyTable(), Sum: "not populated"})
				continue
			}
			r := c.pg.ExecParams(ctx, "SELECT count(*), coalesce(md5(string_agg(t::text, E'\\n' ORDER BY t::text)), '') FROM "+m.sqlName()+" t",
				nil, nil, nil, nil).Read()
			if r.Err != nil {
				return pgError(r.Err)
			}
			n, err := strconv.ParseInt(string(r.Rows[0][0]), 10, 64)
			if err != nil {
				return err
			}
			sums.Tables = append(sums.Tables, engine.TableChecksum{Table: m.keyTable(), Rows: n, Sum: string(r.Rows[0][1])})
		}
		for _, row := range res[2].Rows {
			sums.Tables = append(sums.Tables, engine.TableChecksum{Table: string(row[0]), Sum: "sequence " + string(row[1])})
		}
		for _, r := range res[3:] {
			for _, row := range r.Rows {
				sums.Tables = append(sums.Tables, engine.TableChecksum{Table: string(row[0]), Sum: string(row[1])})
			}
		}
		return nil
	})
	if err != nil {
		return engine.Checksums{}, errors.Join(errors.New("postgres engine: checksums"), err)
	}
	return sums, nil
}
