package postgres

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Session is engine.Session: one client session's use of the engine.
//
// Local transactions run on pooled backends, one per transaction. A
// transaction that leaves temporary objects on its backend (a temporary
// table, view, sequence or index, or a function, type, operator made in
// pg_temp: they are the session's own and never replicated) pins that
// backend to the session: the session's later
// transactions, reads and descriptions run there, and the backend goes
// back to the pool only once its temporary objects are gone (a later
// transaction dropped them), or is closed with the session. A backend
// with temporary objects is never given to another session. Whether a
// backend holds temporary objects is PostgreSQL's answer (tempsSQL),
// read in the round trip that ends each transaction.
//
// A statement that leaves other state in the session beyond its
// transaction (a session-level advisory lock, a set_config that is not
// local, PREPARE, a cursor WITH HOLD: conn.noteSessionState) pins its
// backend the same way, until the session ends: such state cannot be
// seen to be gone as cheaply, and another session must never find it
// (pg_dump's set_config of search_path to the empty string broke the next session on
// that backend). What the statement's text does not show (a function the
// client defined that calls set_config(..., false) or pg_advisory_lock,
// or EXECUTEs LISTEN or a DECLARE ... WITH HOLD) is undone at the end of
// every transaction on a backend that keeps no state on purpose, in the
// round trip of its COMMIT or ROLLBACK (conn.resets): such a backend goes
// back to the pool, or stays with its session for its temporary objects
// only, as clean as a new one but for those objects, prepared statements
// and sequences' last values (conn.resetStatements).
type Session struct {
	e  *Engine
	mu sync.Mutex // guards what follows: a transaction may end on Apply's goroutine (commitAt)
	// pinned is the backend holding the session's temporary objects,
	// or nil. It keeps its pool slot.
	pinned *conn
	// temps names the relations in the pinned backend's temporary
	// schema, as the last transaction left them (Tx.ExecLocal's filter).
	temps  []string
	lost   bool // the pinned backend was lost: every call fails (errLost)
	closed bool
	// seqBackend is the backend the session's last transaction that may
	// have taken sequence values ran on (conn.seqOwner), which its next
	// work prefers: there currval and lastval answer as in PostgreSQL,
	// in column defaults and functions too, which certa does not rewrite.
	seqBackend *conn
}

var _ engine.Session = (*Session)(nil)

// NewSession returns a session that has pinned no backend yet.
func (e *Engine) NewSession() engine.Session { return &Session{e: e} }

// tempsSQL lists the relations in the backend's temporary schema (none
// when it never made one), in the round trip that ends a transaction,
// or, when it holds none, one NULL if it holds other objects (a function,
// a type, an operator... made in pg_temp), which are the session's too:
// a session with temporary tables, pinned anyway, is spared that look.
// Qualified: it runs under whatever search_path a client's function left.
const tempsSQL = `SELECT c.relname FROM pg_catalog.pg_class c WHERE pg_catalog.pg_my_temp_schema() <> 0 AND c.relnamespace = pg_catalog.pg_my_temp_schema()
	UNION ALL SELECT NULL WHERE pg_catalog.pg_my_temp_schema() <> 0
		AND NOT EXISTS (SELECT FROM pg_catalog.pg_class WHERE relnamespace = pg_catalog.pg_my_temp_schema()) AND (
		EXISTS (SELECT FROM pg_catalog.pg_proc WHERE pronamespace = pg_catalog.pg_my_temp_schema())
		OR EXISTS (SELECT FROM pg_catalog.pg_type WHERE typnamespace = pg_catalog.pg_my_temp_schema() AND typrelid = 0)
		OR EXISTS (SELECT FROM pg_catalog.pg_operator WHERE oprnamespace = pg_catalog.pg_my_temp_schema())
		OR EXISTS (SELECT FROM pg_catalog.pg_collation WHERE collnamespace = pg_catalog.pg_my_temp_schema())
		OR EXISTS (SELECT FROM pg_catalog.pg_conversion WHERE connamespace = pg_catalog.pg_my_temp_schema())
		OR EXISTS (SELECT FROM pg_catalog.pg_ts_config WHERE cfgnamespace = pg_catalog.pg_my_temp_schema())
		OR EXISTS (SELECT FROM pg_catalog.pg_ts_dict WHERE dictnamespace = pg_catalog.pg_my_temp_schema()))`

// errLost is what every call of a session whose pinned backend was lost
// fails with: its temporary tables are gone, and carrying on without
// them would give the client wrong answers.
func errLost() error {
	e := sqlerr.Wrap(engine.ErrSessionLost, sqlerr.AdminShutdown,
		"certa: this session's temporary tables, advisory locks, settings or prepared statements were lost: its PostgreSQL backend was ended (so that a replicated commit could be applied, or by a state transfer)")
	e.Hint = "Connect again."
	return e
}

// Begin starts a local transaction on the session's backend.
func (s *Session) Begin(ctx context.Context) (engine.Tx, error) { return s.e.begin(ctx, s) }

// Read runs a read-only statement on the session's backend.
func (s *Session) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	return s.e.read(ctx, s, sql, w, args)
}

// Describe describes a statement on the session's backend, which knows
// its temporary tables.
func (s *Session) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	return s.e.describe(ctx, s, sql)
}

// Catalog is the engine's: PostgreSQL's catalogs are read by ordinary
// statements, in the session's transactions.
func (s *Session) Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error {
	return s.e.Catalog(ctx, sql, w, args...)
}

// Setting checks a SET on the session's backend.
func (s *Session) Setting(ctx context.Context, set, name string) (string, error) {
	return s.e.setting(ctx, s, set, name)
}

// Close closes the pinned backend, if any, and with it the session's
// temporary objects: it is not returned to the pool.
func (s *Session) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if c := s.pinned; c != nil {
		s.pinned, s.temps = nil, nil
		s.e.setPinned(c.pg.PID(), false)
		c.release(true)
	}
}

// acquire returns the connection work of session s (nil: none) runs on:
// its pinned backend, or a pooled one. Every acquire is followed by one
// finish.
func (e *Engine) acquire(ctx context.Context, s *Session) (*conn, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	var prefer *conn // the session's sequence state is there
	if s != nil {
		s.mu.Lock()
		lost, c := s.lost, s.pinned
		prefer = s.seqBackend
		if c != nil && (c.pg.IsClosed() || c.p != e.pool.Load()) {
			// Ended under us (a Restore replaced the database).
			s.pinned, s.temps, s.lost, lost = nil, nil, true, true
			e.setPinned(c.pg.PID(), false)
			c.release(true)
		}
		s.mu.Unlock()
		switch {
		case lost:
			return nil, errLost()
		case c != nil && c.tx.Load() != nil:
			// Work of the session's own outside its open transaction
			// would end that transaction (openTx says where to go).
			return nil, sqlerr.New(sqlerr.Internal, "certa: the session's PostgreSQL backend is inside its transaction")
		case c != nil:
			e.notePreparers(ctx, c)
			return c, nil
		}
	}
	c, err := e.pool.Load().get(ctx, prefer)
	if err != nil {
		return nil, err
	}
	if err := c.discardOthersSequences(ctx, s); err != nil {
		c.release(true)
		return nil, pgError(err)
	}
	e.notePreparers(ctx, c)
	return c, nil
}

// discardOthersSequences discards the sequence state c holds unless it is
// session s's latest (conn.seqOwner): s must not read another session's
// currval, nor its own of an older transaction.
func (c *conn) discardOthersSequences(ctx context.Context, s *Session) error {
	owner := c.seqOwner
	if owner == nil {
		return nil
	}
	if s != nil && owner == s {
		s.mu.Lock()
		latest := s.seqBackend == c
		s.mu.Unlock()
		if latest {
			return nil
		}
	}
	if _, err := c.pg.Exec(ctx, discardSequences).ReadAll(); err != nil {
		return err
	}
	c.seqOwner = nil
	return nil
}

// notePreparers gives c the hidden lockers' preparers (conn.preparers),
// read again if the schema changed. If they cannot be read, c keeps those
// it had: the transaction that follows will fail on what failed here.
func (e *Engine) notePreparers(ctx context.Context, c *conn) {
	if h, err := e.hiddenLockers.get(ctx, c.pg, e.schemaEpoch.Load()); err == nil {
		c.preparers = h.preparers
	}
}

// openTx returns the transaction open on session s's pinned backend, or
// nil: a SET's check and a description then run inside it, where the
// session's work is.
func (e *Engine) openTx(s *Session) *Tx {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pinned == nil {
		return nil
	}
	return s.pinned.tx.Load()
}

// pins reports whether c is session s's pinned backend (nil s: none).
func (s *Session) pins(c *conn) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pinned == c
}

// keepsState reports whether session s's pinned backend holds state
// beyond its transactions other than temporary objects (conn.keeps): it
// is the session's for good, and a SET or RESET changes it for the
// session, as in PostgreSQL (pg_dump's RESET search_path undoes its
// set_config).
func (s *Session) keepsState() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pinned != nil && s.pinned.keeps != ""
}

// tempState is what the end of a transaction found in its backend's
// temporary schema.
type tempState struct {
	checked bool     // false: not looked at (the work could not make any)
	names   []string // the relations there
	others  bool     // objects there that are not relations
}

// held reports whether the backend holds temporary objects.
func (ts tempState) held() bool { return len(ts.names) > 0 || ts.others }

// readTemps reads tempsSQL's result.
func readTemps(rows [][][]byte) tempState {
	ts := tempState{checked: true}
	for _, r := range rows {
		if r[0] == nil {
			ts.others = true
			continue
		}
		ts.names = append(ts.names, string(r[0]))
	}
	return ts
}

// finish hands back a connection acquired for session s (nil: none).
// A broken one is closed (a session whose pinned backend it was has lost
// its temporary objects); one aborted by the applier is closed unless it
// is pinned (the applier then only cancelled its statement, watch.go). A
// backend found to hold temporary objects is pinned to s, or closed if
// there is no session to keep it for; a pinned one found to hold none
// any more goes back to the pool.
func (e *Engine) finish(s *Session, c *conn, broken, aborted bool, temps tempState) {
	c.seqState = false // reset with the end of the transaction
	tookValues := c.seqTaking
	c.seqTaking = false
	if temps.held() {
		c.hadTemps = true
	}
	if s == nil {
		c.release(broken || aborted || temps.held() || c.keeps != "")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pinned := s.pinned == c
	broken = broken || c.pg.IsClosed() || aborted && !pinned
	pid := c.pg.PID()
	if tookValues && !broken {
		c.seqOwner, s.seqBackend = s, c
	}
	switch {
	case broken:
		if pinned {
			s.pinned, s.temps, s.lost = nil, nil, true
			e.setPinned(pid, false)
		}
		c.release(true)
	case temps.checked && temps.held() || c.keeps != "" && !pinned:
		if s.closed {
			c.release(true)
			return
		}
		s.pinned = c
		if temps.checked {
			s.temps = temps.names
		}
		e.setPinned(pid, true)
	case temps.checked && pinned && c.keeps == "":
		s.pinned, s.temps = nil, nil
		e.setPinned(pid, false)
		c.release(false)
	case temps.checked && pinned:
		s.temps = nil // it keeps other state: it stays, for good
	case pinned:
	default:
		c.release(false)
	}
}

// lostWith reports whether err, of work on s's backend, says the
// connection was lost and s has lost its pinned backend with it.
func (s *Session) lostWith(err error) bool {
	if s == nil || !connLost(err) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// localNames returns the session's temporary relations (nil s: none).
func (s *Session) localNames() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.temps
}

// mayBeLocal reports whether a schema statement may change only
// temporary objects, from its words: TEMP, TEMPORARY or pg_temp, or the
// name of one of temps. It only spares statements that cannot be local
// a try on the session's backend (Tx.ExecLocal); PostgreSQL's event
// triggers decide. A routine definition is always tried: PostgreSQL
// checks its body there, under the session's names (a temporary table
// of the session's the body reads), and nowhere else (runSchemaChange).
func mayBeLocal(sql string, temps []string) bool {
	if pgparse.IsRoutineDefinition(sql) {
		return true
	}
	for _, w := range identifiers(sql) {
		switch strings.ToLower(w) {
		case "temp", "temporary", "pg_temp":
			return true
		}
		for _, t := range temps {
			if w == t {
				return true
			}
		}
	}
	return false
}

// identifiers returns the words and quoted identifiers of sql as
// PostgreSQL names them (unquoted words in lower case), skipping string
// literals and comments roughly: a word too many only costs a try.
func identifiers(sql string) []string {
	var out []string
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '\'':
			j := i + 1
			for j < len(sql) && sql[j] != '\'' {
				j++
			}
			i = j + 1
		case c == '"':
			j := i + 1
			var b strings.Builder
			for j < len(sql) {
				if sql[j] == '"' {
					if j+1 < len(sql) && sql[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(sql[j])
				j++
			}
			out = append(out, b.String())
			i = j + 1
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i
			for j < len(sql) && (sql[j] == '_' || sql[j] == '$' || sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z' ||
				sql[j] >= '0' && sql[j] <= '9' || sql[j] >= 0x80) {
				j++
			}
			out = append(out, strings.ToLower(sql[i:j]))
			i = j
		default:
			i++
		}
	}
	return out
}

// ExecLocal runs a schema statement that may change only temporary
// objects (mayBeLocal) in a savepoint of the transaction: the event
// triggers let a client's statement run only if PostgreSQL reports that
// it changed temporary objects alone (schema.go: certa.local_ddl,
// certa.local_drop, TRUNCATE's trigger), and refuse it with
// codeNotLocal otherwise, and one that changed a shared catalog is not
// local either; it is then undone, and false tells the caller to
// replicate it.
func (t *Tx) ExecLocal(ctx context.Context, sql string, w result.Writer) (bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return false, err
	}
	// A block that made temporary objects may name them (t.s's names are
	// the last transaction's): its schema statements are all tried.
	if !mayBeLocal(sql, t.s.localNames()) && !t.madeLocal {
		return false, nil
	}
	pg := t.c.pg
	// It may make some: the session's statements run unnamed from now on,
	// unless it is undone.
	hadTemps := t.c.hadTemps
	t.c.hadTemps = true
	// No event trigger fires for roles and databases: a statement that
	// changed a shared catalog (ALTER ROLE ... SET search_path = pg_temp)
	// is not local either, as the count of such changes tells.
	res, err := pg.Exec(ctx, "SAVEPOINT certa_local; SELECT certa.global_changes(), pg_catalog.set_config('certa.local_try', 'on', true)").ReadAll()
	if err != nil {
		return false, t.failed(pgError(err))
	}
	before, _ := strconv.ParseInt(string(res[1].Rows[0][0]), 10, 64)
	// undo rolls the statement back; what it changed in shared catalogs
	// stays counted, so the transaction's base moves past it (WriteSet).
	undo := func() {
		t.c.hadTemps = hadTemps
		res, err := pg.Exec(context.WithoutCancel(ctx),
			"ROLLBACK TO SAVEPOINT certa_local; RELEASE SAVEPOINT certa_local; SELECT certa.global_changes()").ReadAll()
		if err == nil && len(res) == 3 {
			if after, err := strconv.ParseInt(string(res[2].Rows[0][0]), 10, 64); err == nil {
				t.globalBase += after - before
			}
		}
	}
	buf := result.BufferFor(w)
	if err := run(ctx, t.c, sql, buf, nil); err != nil {
		undo()
		if notLocal(err) && !t.aborted.Load() {
			return false, nil
		}
		return true, t.failed(t.e.localError(err))
	}
	res, err = pg.Exec(ctx, "SELECT certa.global_changes(), pg_catalog.set_config('certa.local_try', '', true)").ReadAll()
	if err != nil {
		undo()
		return true, t.failed(pgError(err))
	}
	if after, _ := strconv.ParseInt(string(res[0].Rows[0][0]), 10, 64); after != before {
		undo()
		return false, nil
	}
	if _, err := pg.Exec(ctx, "RELEASE SAVEPOINT certa_local").ReadAll(); err != nil {
		return true, t.failed(pgError(err))
	}
	t.madeLocal = true
	return true, buf.Replay(w)
}

// setting checks a SET or RESET inside the transaction, in a savepoint
// it rolls back to, and returns the value it leaves name with.
func (t *Tx) setting(ctx context.Context, set, name string) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.simple(ctx, "SAVEPOINT certa_setting"); err != nil {
		return "", err
	}
	_, err := t.c.pg.Exec(ctx, set).ReadAll()
	var value string
	if err == nil {
		r := t.c.pg.ExecParams(ctx, "SELECT current_setting($1)", [][]byte{[]byte(name)}, nil, nil, nil).Read()
		if err = r.Err; err == nil {
			value = string(r.Rows[0][0])
		}
	}
	if uerr := t.simple(ctx, "ROLLBACK TO SAVEPOINT certa_setting; RELEASE SAVEPOINT certa_setting"); uerr != nil {
		return "", uerr
	}
	if err != nil {
		return "", t.failed(pgError(err))
	}
	return value, nil
}

// describe describes a statement inside the transaction.
func (t *Tx) describe(ctx context.Context, sql string) (*pgconn.StatementDescription, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return nil, err
	}
	sd, err := t.c.pg.Prepare(ctx, "", sql, nil)
	return sd, t.failed(err)
}
