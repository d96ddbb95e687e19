package postgres

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"certa/sqlerr"
)

// conn is one connection of the pool, with its cache of table metadata
// and of the clients' statements prepared on it.
type conn struct {
	p     *pool // the pool it came from
	pg    *pgconn.PgConn
	ts    tables
	epoch uint64 // the engine's schema epoch ts was filled at
	// hadTemps: the backend held temporary objects once; clients'
	// statements run unnamed on it (clientStatement).
	hadTemps bool
	// keeps is what a client's statement left in the backend's session
	// beyond its transaction (pgparse.SessionState), "" for nothing: the
	// backend then stays with that client's session (Engine.finish).
	keeps string
	// seqState: a transaction of no session ran on the backend since it
	// was last handed back, whose statements may have left sequence state
	// (nextval): the reset discards it (discardSequences).
	seqState bool
	// seqOwner is the session whose transaction, which may have taken
	// sequence values, ran on the backend last (nil: none): currval,
	// lastval and the defaults and functions that call them answer from
	// the backend's state, which stays for that session's next
	// transaction if it comes back here (Session.seqBackend) and is
	// discarded before any other work (Engine.acquire).
	seqOwner *Session
	// seqTaking: the session's transaction on the backend may take
	// sequence values (a write transaction): its end makes the session
	// seqOwner.
	seqTaking bool
	// preparers are the hidden lockers' preparers (an oid[] literal) as
	// the engine last read them: if a transaction called one, the reset
	// drops the statements it prepared (certa.forget_prepared).
	preparers string
	// tx is the transaction open on the connection, or nil: other work
	// of its session (a SET's check, a description) runs inside it.
	tx atomic.Pointer[Tx]
	// notices passes on the notices of a client's statement (notices.go).
	notices *noticeSink
}

// resetStatements undo what a client's statements may have left in the
// backend's session beyond their transaction without certa seeing it
// (conn.noteSessionState reads only the statement's text, not what a
// function it calls does): a setting made with set_config(..., false),
// the role (RESET ALL leaves role and session_authorization: RESET ROLE
// goes back to the connection's startup value), session-level advisory
// locks, LISTEN and cursors WITH HOLD. They run after the COMMIT or
// ROLLBACK that ends a transaction, in its round trip and in an implicit
// transaction of their own (inside the client's, a ROLLBACK would undo
// them). What DISCARD ALL does besides is left alone: its DEALLOCATE
// ALL would drop certa's prepared statements and the clients' (tables.go),
// DISCARD TEMP a pinned session's temporary tables (its settings are
// applied again to each transaction, so RESET ALL is fine there).
// DISCARD SEQUENCES (discardSequences) follows when a transaction of no
// session that could call nextval ran (conn.seqState); a session's
// sequence state stays on the backend for the session's next transaction
// (conn.seqOwner), and its own values for currval and lastval
// (seqstate.go) serve it elsewhere. A read-only transaction cannot call
// nextval, and a point select would pay a tenth of its throughput for a
// DISCARD.
var resetStatements = []string{"RESET ALL", "RESET ROLE", "SELECT pg_catalog.pg_advisory_unlock_all()", "UNLISTEN *", "CLOSE ALL"}

// discardSequences ends the reset of a backend a transaction ran on.
const discardSequences = "DISCARD SEQUENCES"

// resetSQL is resetStatements for a simple Query, with a leading "; ".
var resetSQL = "; " + strings.Join(resetStatements, "; ")

// resets reports whether the end of a transaction on c resets the
// backend's session (resetStatements): unless the client's session
// keeps state on it by design (conn.keeps), which it keeps as
// PostgreSQL would.
func (c *conn) resets() bool { return c.keeps == "" }

// resetSQL returns resetSQL if c resets (conn.resets), else "".
func (c *conn) resetSQL() string {
	if !c.resets() {
		return ""
	}
	sql := resetSQL
	if c.seqState {
		sql += "; " + discardSequences
	}
	if f := c.forgetPrepared(); f != "" {
		sql += "; " + f
	}
	return sql
}

// forgetPrepared returns the statement that drops what the client's
// functions that PREPARE prepared, if the database has any (conn.preparers;
// the function looks whether one was called), else "". Client statements
// of their own that PREPARE make the backend the session's instead
// (conn.keeps), which is never reset.
func (c *conn) forgetPrepared() string {
	if c.preparers == "" || c.preparers == "{}" {
		return ""
	}
	return "SELECT certa.forget_prepared(" + quoteLiteral(c.preparers) + ")"
}

// prepareReset prepares resetStatements on c, among certa's statements
// (tables.go), unless they are or c does not reset (conn.resets): sent
// with the extended protocol (queueReset), each would otherwise be
// parsed, and the SELECT planned, after every transaction, a good part
// of what they cost a pipelined point select. c must be outside a
// transaction (a failed Prepare would end it); what fails to be prepared
// runs unnamed.
func (c *conn) prepareReset(ctx context.Context) {
	if !c.resets() {
		return
	}
	for _, s := range append(resetStatements, discardSequences) {
		if _, ok := c.ts.stmts[s]; !ok {
			c.ts.prepared(ctx, c.pg, s, nil)
		}
	}
}

// queueReset adds resetStatements to b if c resets (conn.resets): the
// ones prepared on c (prepareReset) by name, the others unnamed.
func (c *conn) queueReset(b *pgconn.Batch) {
	if !c.resets() {
		return
	}
	stmts := resetStatements
	if c.seqState {
		stmts = append(stmts[:len(stmts):len(stmts)], discardSequences)
	}
	if f := c.forgetPrepared(); f != "" {
		stmts = append(stmts[:len(stmts):len(stmts)], f)
	}
	for _, s := range stmts {
		if name, ok := c.ts.stmts[s]; ok {
			b.ExecPrepared(name, nil, nil, nil)
		} else {
			b.ExecParams(s, nil, nil, nil, nil)
		}
	}
}

// resetAgain runs the reset (conn.resets) alone, in a round trip of its
// own, after the one queued behind a transaction's end failed (err) while
// the end went through: a client's DEALLOCATE, in the same pipeline or in
// a function, dropped certa's prepared statements (26000: all of them are
// then deallocated, so that certa's cache and the backend agree again),
// or a cancel meant for the transaction came late. False if it failed
// too, or c does not reset (the error was not the reset's): the backend,
// in a state not known, is then to be closed.
func (c *conn) resetAgain(ctx context.Context, err error) bool {
	if c.pg.IsClosed() || !c.resets() {
		return false
	}
	sql := strings.TrimPrefix(c.resetSQL(), "; ")
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "26000" {
		sql = "DEALLOCATE ALL; " + sql
		c.ts.deallocated()
	}
	_, err = c.pg.Exec(context.WithoutCancel(ctx), sql).ReadAll()
	return err == nil
}

// schemaSeen drops c's table metadata and prepared statements if the
// schema changed since they were read.
func (c *conn) schemaSeen() {
	if epoch := c.p.epoch.Load(); c.epoch != epoch {
		c.ts.reset()
		c.epoch = epoch
	}
}

// pool holds the connections of local transactions: at most max open,
// idle ones kept for reuse.
type pool struct {
	dsn      string            // the engine's; connections log in as the client role
	user     string            // the role they log in as
	password string            // its password; empty: the DSN's authentication
	params   map[string]string // session defaults of the connections
	slots    chan struct{}     // one token per connection that may be open
	epoch    *atomic.Uint64    // the engine's schema epoch (conn.schemaSeen)
	mu       sync.Mutex
	idle     []*conn
	done     chan struct{}
	once     sync.Once
}

func newPool(cfg Config, epoch *atomic.Uint64) *pool {
	p := &pool{dsn: cfg.DSN, slots: make(chan struct{}, cfg.MaxConns), done: make(chan struct{}), epoch: epoch,
		params: map[string]string{"lock_timeout": strconv.FormatInt(cfg.LockTimeout.Milliseconds(), 10), "synchronous_commit": asyncCommit,
			"track_functions": "all"}} // txlocks.go
	p.user = clientRole
	if cfg.ClientLogin != "" {
		// The login role acts as certa_client from the start; a client's
		// RESET ROLE comes back to it (SET ROLE NONE makes it the login
		// role, a member of certa_client with nothing more, which
		// certa.refuse_ddl refuses schema changes).
		p.user, p.password = cfg.ClientLogin, cfg.ClientPassword
		p.params["role"] = clientRole
	}
	for range cfg.MaxConns {
		p.slots <- struct{}{}
	}
	return p
}

// get returns an idle connection (prefer if it is idle, else the one
// handed back last of those holding no session's sequence state, else the
// one handed back last) or a new one, waiting for a free slot
// until ctx ends; errClosed once the pool is closed, even with slots free
// (a select with both ready picks either: a pool that Restore closed
// would otherwise go on opening connections).
func (p *pool) get(ctx context.Context, prefer *conn) (*conn, error) {
	select {
	case <-p.slots:
	case <-p.done:
		return nil, errClosed
	case <-ctx.Done():
		// PostgreSQL's words for a cancel or a statement timeout: the
		// client cannot tell (nor needs to) that the statement had not
		// reached PostgreSQL yet.
		err := pgError(ctx.Err())
		if se, ok := err.(*sqlerr.Error); ok {
			se.Detail = "It was still waiting for a free connection to the node's PostgreSQL."
		}
		return nil, err
	}
	select {
	case <-p.done:
		p.slots <- struct{}{}
		return nil, errClosed
	default:
	}
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		i := -1
		if prefer != nil {
			i = slices.Index(p.idle, prefer)
		}
		for j := n - 1; j >= 0 && i < 0; j-- {
			if p.idle[j].seqOwner == nil {
				i = j
			}
		}
		if i < 0 {
			i = n - 1
		}
		c := p.idle[i]
		p.idle = slices.Delete(p.idle, i, i+1)
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	notices := &noticeSink{}
	pg, err := connectWith(ctx, p.dsn, p.user, p.password, p.params, notices.handle)
	if err != nil {
		p.slots <- struct{}{}
		return nil, sqlerr.Wrap(err, "08006", "certa: cannot connect to the node's PostgreSQL: %v", err)
	}
	return &conn{p: p, pg: pg, notices: notices}, nil
}

// connect opens a connection, as user if it is not empty, on which a context that ends cancels the
// statement running (the server answers 57014, and the connection and its
// transaction stay usable) rather than closing the connection.
func connect(ctx context.Context, dsn, user string, params map[string]string) (*pgconn.PgConn, error) {
	return connectAs(ctx, dsn, user, "", params)
}

// connectAs is connect with a password for user, if it is not empty.
func connectAs(ctx context.Context, dsn, user, password string, params map[string]string) (*pgconn.PgConn, error) {
	return connectWith(ctx, dsn, user, password, params, nil)
}

// connectWith is connectAs with a handler of the notices the server
// sends, if not nil.
func connectWith(ctx context.Context, dsn, user, password string, params map[string]string, onNotice pgconn.NoticeHandler) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if user != "" {
		cfg.User = user
		if password != "" {
			cfg.Password = password
		}
	}
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	cfg.OnNotice = onNotice
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 10 * time.Second}
	}
	return pgconn.ConnectConfig(ctx, cfg)
}

// put returns c to the pool; a broken connection is closed instead.
func (p *pool) put(c *conn, broken bool) {
	select {
	case <-p.done:
		broken = true
	default:
	}
	if broken || c.pg.IsClosed() {
		c.pg.Close(context.Background())
	} else {
		p.mu.Lock()
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	p.slots <- struct{}{}
}

// release returns c to its pool; a broken connection is closed.
func (c *conn) release(broken bool) { c.p.put(c, broken) }

// close closes the idle connections; connections in use are closed when
// they come back.
func (p *pool) close() {
	p.once.Do(func() { close(p.done) })
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.pg.Close(context.Background())
	}
}
