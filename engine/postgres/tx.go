package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Tx is a local transaction: a REPEATABLE READ transaction on a connection
// of its own, as the client role (schema.go).
type Tx struct {
	e        *Engine
	s        *Session   // the session it runs for, or nil
	mu       sync.Mutex // serialises the Tx's calls with Apply's commit of it
	c        *conn      // nil once ended
	pid      uint32     // the backend's process id
	snapshot uint64
	sps      int            // savepoints held
	txid     uint64         // set by HandOver
	locked   []writeset.Key // rows locked by SELECT ... FOR UPDATE/SHARE (locking.go)
	lockedAt []int          // len(locked) at each savepoint held
	aborted  atomic.Bool
	// scansBase counts, per table, the scans the backend had recorded
	// when TrackReads began (readtables.go); nil: not tracking.
	scansBase map[uint32]int64
	reads     *readLog // what its statements say of their reads (readkeys.go)
	// globalBase is certa.global_changes() as the transaction began: the
	// backend's counts of earlier transactions not yet flushed to the
	// statistics (PostgreSQL flushes them when idle, not at each end),
	// plus what ExecLocal undid (a savepoint rolled back keeps its counts).
	globalBase int64
	// madeLocal: ExecLocal kept a statement (the transaction made or
	// changed temporary objects, which later ones may name).
	madeLocal bool
	// seqs are the session's sequence values (seqstate.go), nil for
	// none; seqNamed is set once a statement named nextval or setval.
	seqs     *engine.SequenceValues
	seqNamed bool
	// setvalNamed: a statement named setval (namesSetval).
	setvalNamed bool
	// lockers are the hidden lockers as the transaction began, and
	// fnBase the calls of their functions the backend had counted then
	// (txlocks.go).
	lockers hiddenLockers
	fnBase  int64
	// unseenLock: a statement locked rows through a view, which certa
	// cannot name (txlocks.go).
	unseenLock bool
	// notices is where the client's statements send their notices
	// (sqlerr.WithNotices), which WriteSet has no context to find:
	// deferred triggers fire there.
	notices func(*sqlerr.Error)
}

var _ engine.Tx = (*Tx)(nil)

// beginSQL starts a local transaction and reads the seqno its snapshot
// holds: the first statement fixes a REPEATABLE READ snapshot, and every
// apply inserts its seqno in its own transaction, in log order. The
// connection is the client role's, so the capture triggers record its
// changes. It also reads the base of the count of shared catalog rows
// changed (globalChangesSQL), and the calls of the hidden lockers'
// functions (fnCallsSQL) follow, before FROM. READ WRITE: whether the
// transaction is read-only is the session's to say (SetReadOnly), not
// the default_transaction_read_only a pinned backend was given.
const beginSQL = `BEGIN ISOLATION LEVEL REPEATABLE READ, READ WRITE; SELECT coalesce(max(seqno), 0), certa.global_changes()`

// settingsSQL returns the statement (with a leading "; ") that applies the
// session settings ctx carries to the transaction, or "".
func settingsSQL(ctx context.Context) string {
	if set := setSettingsSQL(ctx, true); set != "" {
		return "; " + set
	}
	return ""
}

// setSettingsSQL returns the statement that applies the session settings
// ctx carries, to the transaction (local) or to the backend's session,
// or "" if it carries none.
func setSettingsSQL(ctx context.Context, local bool) string {
	settings := engine.SettingsFrom(ctx)
	if len(settings) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("SELECT ")
	first := true
	for name, value := range settings {
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "set_config(%s, %s, %t)", quoteLiteral(name), quoteLiteral(value), local)
	}
	return b.String()
}

// quoteLiteral quotes s as a string constant (standard_conforming_strings
// is on: backslashes are plain).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// Begin starts a local transaction at the latest applied state, on a
// pooled backend.
func (e *Engine) Begin(ctx context.Context) (engine.Tx, error) { return e.begin(ctx, nil) }

// begin starts a local transaction for session s (nil: none), on its
// pinned backend if it has one.
func (e *Engine) begin(ctx context.Context, s *Session) (engine.Tx, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	if e.slot.Load() < 0 && e.slotReserving.Load() {
		// A node that just started waits a moment for the slot being
		// reserved, rather than fail the statements that need a value.
		wctx, cancel := context.WithTimeout(ctx, slotWait)
		e.WaitSequenceValues(wctx, slotSequence)
		cancel()
	}
	c, err := e.acquire(ctx, s)
	if err != nil {
		return nil, err
	}
	c.schemaSeen()
	c.prepareReset(ctx) // for commitAt's
	// A session's sequence state stays on the backend for its next
	// transaction (conn.seqOwner); another's is discarded by the reset.
	c.seqState = s == nil
	c.seqTaking = s != nil
	lockers, err := e.hiddenLockers.get(ctx, c.pg, e.schemaEpoch.Load())
	if err != nil {
		e.finish(s, c, c.pg.IsClosed(), false, tempState{})
		return nil, err
	}
	res, err := c.pg.Exec(ctx, beginSQL+fnCallsSQL(lockers.functions)+" FROM certa.applied"+settingsSQL(ctx)).ReadAll()
	if err != nil {
		_, rerr := c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK"+c.resetSQL()).ReadAll()
		e.finish(s, c, rerr != nil || c.pg.IsClosed(), false, tempState{})
		return nil, pgError(err)
	}
	snap, err := strconv.ParseUint(string(res[1].Rows[0][0]), 10, 64)
	if err != nil {
		e.finish(s, c, true, false, tempState{}) // closed: nothing to reset
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "certa: read the applied seqno: %v", err)
	}
	base, err := strconv.ParseInt(string(res[1].Rows[0][1]), 10, 64)
	if err != nil {
		e.finish(s, c, true, false, tempState{})
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "certa: read the count of shared catalog changes: %v", err)
	}
	fnBase, err := strconv.ParseInt(string(res[1].Rows[0][2]), 10, 64)
	if err != nil {
		e.finish(s, c, true, false, tempState{})
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "certa: read the count of function calls: %v", err)
	}
	t := &Tx{e: e, s: s, c: c, pid: c.pg.PID(), snapshot: snap, globalBase: base, seqs: engine.SequenceValuesFrom(ctx),
		lockers: lockers, fnBase: fnBase}
	c.tx.Store(t)
	e.track(t.pid, &t.aborted)
	return t, nil
}

// usable returns the error every call gets once the transaction cannot go
// on. The caller holds t.mu.
func (t *Tx) usable() error {
	switch {
	case t.e.closed.Load():
		return errClosed
	case t.aborted.Load():
		return abortedErr()
	case t.c == nil:
		return sqlerr.New(sqlerr.NoActiveTransaction, "certa: the transaction has ended")
	}
	return nil
}

// abortedErr is what a transaction the applier aborted reports.
func abortedErr() error {
	return sqlerr.Wrap(engine.ErrAbortedForApply, sqlerr.SerializationFailure,
		"could not serialize access: the transaction was aborted so that a replicated commit could be applied")
}

// Snapshot returns the applied seqno the transaction reads.
func (t *Tx) Snapshot() uint64 { return t.snapshot }

// Exec runs one statement in the transaction and reports its result to w.
func (t *Tx) Exec(ctx context.Context, sql string, w result.Writer, args ...any) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if send := sqlerr.NoticesFrom(ctx); send != nil {
		t.notices = send
	}
	if tc, ok := pgparse.ParseTableCopy(sql); ok && len(args) == 0 {
		return t.runSchema(ctx, sql, tc, w) // SELECT INTO, and CREATE TABLE AS (CheckDDL)
	}
	lower := strings.ToLower(sql) // once, for the cheap checks below
	if strings.Contains(lower, "truncate") && len(args) == 0 && pgparse.SchemaTag(sql) == "TRUNCATE TABLE" {
		return t.runSchema(ctx, sql, nil, w) // of a table with a TRUNCATE trigger (CheckDDL)
	}
	if t.reads != nil {
		t.reads.note(sql, lower, args)
	}
	t.seqNamed = t.seqNamed || namesSequenceWrite(lower)
	t.setvalNamed = t.setvalNamed || namesSetval(lower)
	hidden := withoutCertaRows(sql)
	sql = withSessionSequences(t.seqs, hidden.SQL)
	if ls, err := t.lockingSelect(ctx, sql, lower); err != nil {
		return err
	} else if ls != nil {
		return t.failed(withoutPosition(t.runLocking(ctx, ls, w, args)))
	}
	err := t.e.localError(run(ctx, t.c, sql, w, args))
	if sql != hidden.SQL {
		err = withoutPosition(err)
	}
	return t.failed(clientPosition(err, hidden))
}

// withoutPosition returns err without the position in the query text it
// may carry: the text PostgreSQL ran was certa's rewriting of the
// client's, whose positions are not the client's.
func withoutPosition(err error) error {
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Position == 0 {
		return err
	}
	c := *e
	c.Position = 0
	return &c
}

// failed returns err, or the abort error if the applier aborted the
// transaction meanwhile (its connection was ended under it).
func (t *Tx) failed(err error) error {
	if err != nil && t.aborted.Load() {
		// Doomed: it lets go of its locks now, which the applier waits
		// for, not at the client's ROLLBACK (Tx.Rollback's own then
		// finds no transaction, which is harmless). A backend the
		// watcher ended is closed: nothing to roll back.
		if t.c != nil && !t.c.pg.IsClosed() {
			t.c.pg.Exec(context.Background(), "ROLLBACK").ReadAll()
		}
		return abortedErr()
	}
	return err
}

// run runs one statement on c and reports its result to w. A Writer that
// takes Wire values gets PostgreSQL's own, in the formats it asks for,
// and every column's own type; others get values of certa's types.
func run(ctx context.Context, c *conn, sql string, w result.Writer, args []any) error {
	if cp, ok := pgparse.ParseCopy(sql); ok && len(args) == 0 {
		return runCopy(ctx, c, cp, sql, w)
	}
	vals, oids, paramFormats, err := textArgs(args)
	if err != nil {
		return err
	}
	formats, wire := result.WireFormats(w)
	name, err := c.clientStatement(ctx, sql, oids)
	if err != nil {
		return err
	}
	defer c.forwardNotices(ctx)()
	if name == "" && len(args) == 0 && result.SimpleQuery(w) {
		return runSimple(ctx, c, sql, w)
	}
	var rr *pgconn.ResultReader
	if name != "" {
		rr = c.pg.ExecPrepared(ctx, name, vals, paramFormats, formats)
	} else {
		rr = c.pg.ExecParams(ctx, sql, vals, oids, paramFormats, formats)
	}
	tag, err := writeResult(rr, w, wire)
	c.ran(tag)
	return err
}

// runSimple runs a statement the client sent in a simple Query message
// as one (result.SimpleQuery), in text, and reports each result
// PostgreSQL sends for it to w.
func runSimple(ctx context.Context, c *conn, sql string, w result.Writer) error {
	mrr := c.pg.Exec(ctx, sql)
	var err error
	for err == nil && mrr.NextResult() {
		var tag string
		tag, err = writeResult(mrr.ResultReader(), w, true)
		c.ran(tag)
	}
	if cerr := mrr.Close(); err == nil && cerr != nil {
		err = resultChanged(pgError(cerr))
	}
	return err
}

// ran notes what a client's statement that ended with tag did to c's
// prepared statements: DEALLOCATE ALL took certa's too.
func (c *conn) ran(tag string) {
	if tag == "DEALLOCATE ALL" {
		c.ts.deallocated()
	}
}

// noteSessionState records on c what sql leaves in the backend's session
// beyond its transaction (an advisory lock, a setting, a prepared
// statement or cursor of the client's): the backend is then the client
// session's alone, as in PostgreSQL, and handed to no other session,
// which would find another's settings or locks. LISTEN is refused:
// certa does not pass notifications on.
func (c *conn) noteSessionState(sql string) error {
	switch state := pgparse.SessionState(sql); state {
	case pgparse.StateNone:
	case pgparse.StateListen:
		e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: LISTEN is not supported: notifications are not passed on to clients")
		e.Hint = "Poll a table instead."
		return e
	default:
		c.keeps = state
	}
	return nil
}

// clientStatement returns the name of a client's statement with
// parameters (oids: one per parameter) prepared on c, or "" for one to
// run unnamed, parsed and planned afresh. With parameters, a statement
// is likely sent again and again (a point select took more CPU to plan
// than to run); without, its values are written in its text, which is
// rarely sent twice.
//
// A backend that held temporary objects runs every statement unnamed: a
// statement prepared there for another session would keep reading the
// table its name found then, where a temporary table of the session's
// now comes first (certa.local_ddl discards the plans of a backend when
// it makes one, so that the transaction making it sees it too). The
// schema epoch drops prepared statements after a schema change; one that
// commits between that check and the statement's run makes PostgreSQL
// refuse a statement whose result columns changed (0A000, cached plan
// must not change result type), as it does for a client's own.
//
// It first notes what sql leaves in the session (noteSessionState). Its
// error is the client's.
func (c *conn) clientStatement(ctx context.Context, sql string, oids []uint32) (string, error) {
	if err := c.noteSessionState(sql); err != nil {
		return "", err
	}
	if len(oids) == 0 || c.hadTemps {
		return "", nil
	}
	c.schemaSeen()
	name, err := c.ts.prepared(ctx, c.pg, sql, oids)
	if err != nil {
		return "", resultChanged(pgError(err))
	}
	return name, nil
}

// writeResult reports a statement's result to w (see run), closes rr and
// returns its command tag.
func writeResult(rr *pgconn.ResultReader, w result.Writer, wire bool) (string, error) {
	var cols []result.Column
	// A plan: EXPLAIN's, or its lines as a function of the client's
	// returns them (one text column).
	plan := false
	if fields := rr.FieldDescriptions(); fields != nil { // of no columns too (SELECT;)
		cols = columns(fields, wire)
		if err := w.Columns(cols); err != nil {
			rr.Close()
			return "", err
		}
		plan = len(fields) == 1 && (fields[0].Name == "QUERY PLAN" || fields[0].DataTypeOID == textOID)
	}
	row := make([]result.Value, len(cols))
	for rr.NextRow() {
		values := rr.Values()
		if plan {
			var keep bool
			if values[0], keep = withoutCapture(values[0]); !keep {
				continue
			}
		}
		for i, b := range values {
			if wire {
				row[i] = nil
				if b != nil {
					row[i] = result.Wire(b)
				}
				continue
			}
			v, err := value(cols[i].Type, b)
			if err != nil {
				rr.Close()
				return "", sqlerr.Wrap(err, sqlerr.Internal, "certa: column %s: %v", cols[i].Name, err)
			}
			row[i] = v
		}
		if err := w.Row(row); err != nil {
			rr.Close()
			return "", err
		}
	}
	tag, err := rr.Close()
	if err != nil {
		return "", resultChanged(pgError(err))
	}
	return tag.String(), w.Complete(tag.String())
}

// textOID is the OID of type text.
const textOID = 25

// resultChanged turns PostgreSQL's refusal of a client's result formats
// that no longer fit the statement's columns (the client prepared it
// before a schema change; certa runs it afresh) into what PostgreSQL
// says of such a prepared statement, which drivers know to prepare again.
func resultChanged(err error) error {
	if sqlerr.Code(err) == sqlerr.ProtocolViolation && strings.Contains(err.Error(), "result formats but query has") {
		return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	return err
}

// simple runs statements on the transaction's connection.
func (t *Tx) simple(ctx context.Context, sql string) error {
	if err := t.usable(); err != nil {
		return err
	}
	_, err := t.c.pg.Exec(ctx, sql).ReadAll()
	return t.failed(pgError(err))
}

func savepointName(n int) string { return "certa_sp_" + strconv.Itoa(n) }

// Savepoint pushes a savepoint.
func (t *Tx) Savepoint(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.simple(ctx, "SAVEPOINT "+savepointName(t.sps+1)); err != nil {
		return err
	}
	t.sps++
	t.lockedAt = append(t.lockedAt, len(t.locked))
	return nil
}

// RollbackTo returns to savepoint n, which stays.
func (t *Tx) RollbackTo(ctx context.Context, n int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 1 || n > t.sps {
		return sqlerr.New(sqlerr.InvalidSavepoint, "certa: no savepoint %d", n)
	}
	if err := t.simple(ctx, "ROLLBACK TO SAVEPOINT "+savepointName(n)); err != nil {
		return err
	}
	t.sps = n
	t.locked = t.locked[:t.lockedAt[n-1]] // PostgreSQL released those locks
	t.lockedAt = t.lockedAt[:n]
	return nil
}

// Release drops savepoint n and the later ones.
func (t *Tx) Release(ctx context.Context, n int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n < 1 || n > t.sps {
		return sqlerr.New(sqlerr.InvalidSavepoint, "certa: no savepoint %d", n)
	}
	if err := t.simple(ctx, "RELEASE SAVEPOINT "+savepointName(n)); err != nil {
		return err
	}
	t.sps = n - 1
	t.lockedAt = t.lockedAt[:n-1]
	return nil
}

// WriteSet makes deferred constraints fire now (their cascades are
// changes too), reads back what the capture triggers recorded, and
// returns it as a write set with the keys of the rows it locked and, as
// read, the tables it locked rows of where certa could not see them
// (txlocks.go); nil if the transaction changed and locked nothing.
func (t *Tx) WriteSet() (*writeset.WriteSet, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ctx := context.Background()
	if err := t.usable(); err != nil {
		return nil, err
	}
	// Deferred checks and cascades fire now, inside the capture; one
	// round trip for all four.
	b := &pgconn.Batch{}
	b.ExecParams("SET CONSTRAINTS ALL IMMEDIATE", nil, nil, nil, nil)
	b.ExecParams(captureSQL, nil, nil, nil, nil)
	b.ExecParams(globalChangesSQL+strconv.FormatInt(t.globalBase, 10)+", certa.uncaptured_tables()", nil, nil, nil, nil)
	counted, err := t.queueCalled(ctx, b)
	if err != nil {
		return nil, t.failed(err)
	}
	stop := t.c.forwardNoticesTo(t.notices)
	res, err := t.c.pg.ExecBatch(ctx, b).ReadAll()
	stop()
	if err != nil {
		return nil, t.failed(pgError(err))
	}
	if string(res[2].Rows[0][0]) != "0" {
		return nil, errGlobalChange
	}
	if loose := res[2].Rows[0][1]; loose != nil {
		return nil, errUncaptured(string(loose))
	}
	called := counted && string(res[3].Rows[0][0]) == "t"
	c, err := captureRows(ctx, t.c.pg, &t.c.ts, res[1].Rows)
	if err != nil {
		return nil, t.failed(pgError(err))
	}
	locked := append(c.locked, t.locked...)
	if len(c.rows) == 0 && len(locked) == 0 {
		if t.seqNamed { // SELECT nextval(...) alone
			locks, err := t.readLocks(ctx, true, false, false, nil)
			if err == nil {
				err = t.checkSequenceValues(ctx, locks)
			}
			if err != nil {
				return nil, t.failed(err)
			}
		}
		return nil, nil
	}
	keys, tabs := append(c.keys, locked...), c.tables
	for _, k := range locked {
		tabs = append(tabs, k.Table())
	}
	unseen, err := t.unseenLocks(ctx, called, c.schema != writeset.SchemaNone, c.rows)
	if err != nil {
		return nil, t.failed(err)
	}
	ws := &writeset.WriteSet{Snapshot: t.snapshot, Keys: keys, Tables: tabs, Changes: appendRows(nil, c.rows), Schema: c.schema,
		ReadTables: unseen, SharedKeys: c.shared, IndexKeys: c.index}
	ws.Normalize()
	return ws, nil
}

// globalChangesSQL counts the rows of the server's shared catalogs
// (roles, their settings and memberships, databases, tablespaces...) the
// transaction changed other than through a schema statement the engine
// permitted (which every node runs). No trigger sees those catalogs, so
// a change made inside a function or DO block would stay on this node.
// PostgreSQL counts them per backend, in its statistics: the count
// the transaction began with (Tx.globalBase, a number) follows.
const globalChangesSQL = "SELECT certa.unpermitted_global_changes() - "

// errUncaptured refuses a transaction after which tables exist without
// certa's triggers: made where no event trigger fires (EXPLAIN ANALYZE
// runs CREATE TABLE AS and SELECT INTO in the executor, outside the
// statements event triggers see; PostgreSQL even allows it in a read-only
// transaction), they and their rows would stay on this node.
// certa.uncaptured_tables looks only when the backend made a relation;
// read-only transactions run certa.refuse_uncaptured, which says the
// same, before they commit.
func errUncaptured(tables string) error {
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"certa: this transaction made %s where certa cannot see it (EXPLAIN ANALYZE of CREATE TABLE AS, SELECT INTO or CREATE MATERIALIZED VIEW): it and its rows would stay on this node", tables)
	e.Hint = "Send CREATE TABLE ... AS (or SELECT ... INTO) as a statement of its own, without EXPLAIN: it then runs on every node."
	return e
}

// errGlobalChange refuses a transaction that changed the server's shared
// catalogs where no node but this one would see it.
var errGlobalChange = func() error {
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"certa: this transaction changed a role, a database or another object the whole server shares, inside a function or DO block: that change would stay on this node")
	e.Hint = "Send ALTER ROLE, ALTER DATABASE, GRANT of a role or COMMENT ON ROLE as a statement of its own: it then runs on every node."
	return e
}()

// SetReadOnly implements engine.Tx: PostgreSQL refuses the writes.
func (t *Tx) SetReadOnly(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	if _, err := t.c.pg.Exec(ctx, "SET TRANSACTION READ ONLY").ReadAll(); err != nil {
		return t.failed(pgError(err))
	}
	return nil
}

// HandOver keeps the transaction open, unchanged, for Apply to commit at
// the position of the write set with this TxID.
func (t *Tx) HandOver(txid uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c == nil {
		return
	}
	t.txid = txid
	t.e.heldMu.Lock()
	t.e.held[txid] = t
	t.e.heldMu.Unlock()
	t.e.setWaiting(t.pid)
}

// Prioritize is not needed yet: the applier aborts what blocks it after
// the grace (applier.go).
func (t *Tx) Prioritize(time.Duration) {}

// Rollback ends the transaction unless Apply committed it; a transaction
// still held is no longer: its write set's rows are applied at its
// position instead.
func (t *Tx) Rollback() error {
	if t.txid != 0 {
		t.e.heldMu.Lock()
		delete(t.e.held, t.txid)
		t.e.heldMu.Unlock()
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c == nil {
		return nil
	}
	// The reset (conn.resets) follows: a session-level advisory lock
	// outlives the ROLLBACK. So do the values nextval took: read first,
	// unless the transaction failed (nothing more runs in it then).
	ctx := context.Background()
	if t.seqNamed && t.c.pg.TxStatus() == 'T' {
		t.readLocks(ctx, true, false, false, nil)
	}
	b := &pgconn.Batch{}
	b.ExecParams("ROLLBACK", nil, nil, nil, nil)
	b.ExecParams(tempsSQL, nil, nil, nil, nil)
	t.c.queueReset(b)
	res, err := t.c.pg.ExecBatch(ctx, b).ReadAll()
	t.ended(ctx, res, err, 1)
	return nil
}

// ended hands the connection back (end) once the transaction ended, from
// the results res (and error err) of the round trip that ended it:
// tempsSQL's at temps, then the reset's (conn.resets). If the reset
// alone failed, it runs again (conn.resetAgain); if that failed too, or
// tempsSQL or what came before it did, the backend is closed.
func (t *Tx) ended(ctx context.Context, res []*pgconn.Result, err error, temps int) {
	if len(res) <= temps || res[temps].Err != nil {
		t.end(true, tempState{})
		return
	}
	t.end(err != nil && !t.c.resetAgain(ctx, err), readTemps(res[temps].Rows))
}

// CommitLocal commits a transaction that changed nothing replicated:
// what it did to the session's temporary objects stays.
func (t *Tx) CommitLocal(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	// The reset (conn.resets) runs after the COMMIT, in its round trip.
	res, err := t.c.pg.Exec(ctx, "COMMIT; "+tempsSQL+t.c.resetSQL()).ReadAll()
	if len(res) > 0 && res[0].Err == nil && res[0].CommandTag.String() == "COMMIT" {
		t.ended(ctx, res, err, 1) // committed, whatever failed after
		return nil
	}
	if err == nil {
		err = sqlerr.New(sqlerr.InFailedTransaction, "certa: the transaction had failed: it rolled back")
	}
	_, rerr := t.c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK"+t.c.resetSQL()).ReadAll()
	t.end(rerr != nil || t.c.pg.IsClosed(), tempState{})
	return t.failed(pgError(err))
}

// end hands the connection back (Engine.finish), with what the end of
// the transaction found in its temporary schema. The caller holds t.mu.
func (t *Tx) end(broken bool, temps tempState) {
	t.c.tx.Store(nil)
	t.e.untrack(t.pid)
	t.e.finish(t.s, t.c, broken, t.aborted.Load(), temps)
	t.c = nil
}

// commitAt commits a held transaction at its position in the log, with
// the seqno recorded in it; false if it is no longer held (rolled back,
// aborted) or its commit failed: its rows are then to be applied.
func (t *Tx) commitAt(ctx context.Context, seqno uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.c == nil || t.aborted.Load() {
		return false
	}
	// One round trip for all: the applier waits for it. A failed
	// commit_at makes the server skip the rest. The backend's temporary
	// tables decide whether it stays with its session (session.go); the
	// reset (conn.resets) follows the COMMIT.
	b := &pgconn.Batch{}
	b.ExecParams("SELECT certa.commit_at($1, $2)", [][]byte{[]byte(strconv.FormatUint(seqno, 10)), []byte(t.e.token)}, nil, nil, nil)
	b.ExecParams("COMMIT", nil, nil, nil, nil)
	b.ExecParams(tempsSQL, nil, nil, nil, nil)
	t.c.queueReset(b)
	res, err := t.c.pg.ExecBatch(ctx, b).ReadAll()
	// COMMIT of a failed transaction rolls back. One that committed is
	// committed even if what follows it failed (Tx.ended): its rows must
	// not be applied again.
	if len(res) > 1 && res[0].Err == nil && res[1].Err == nil && res[1].CommandTag.String() == "COMMIT" {
		t.ended(ctx, res, err, 2)
		return true
	}
	t.c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
	t.end(true, tempState{})
	return false
}
