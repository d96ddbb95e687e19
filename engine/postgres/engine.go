package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Config configures an Engine.
type Config struct {
	// DSN connects to the node's database as a superuser (pgproc's
	// server gives one): it makes schema certa, the roles and event
	// triggers, and watches and ends local work. Local transactions
	// connect with the same DSN as the client role, the applier and
	// CheckDDL as the applier's (ApplierLogin): no connection that runs
	// a client's code is a superuser's.
	DSN string
	// NodeID is this node's id: the Origin of the write sets its sessions
	// hand over (Tx.HandOver), which Apply commits at their position.
	NodeID string
	// Founder says the node founded the cluster (certa node --bootstrap):
	// it takes slot 0, whose sequence values are those a lone PostgreSQL
	// hands out (sequences.go); no other node takes it.
	Founder bool
	// MaxConns bounds the connections of local transactions (default 64).
	MaxConns int
	// LockTimeout bounds how long a local statement waits for a row lock
	// another local transaction holds (PostgreSQL's lock_timeout of
	// client sessions; default 5s); then it fails with 40001, as the
	// SQLite engine's writers do. A session may SET its own.
	LockTimeout time.Duration
	// BinDir holds pg_dump and pg_restore, for state transfer (Snapshot,
	// Restore). Empty: looked for as pgproc finds postgres.
	BinDir string
	// ClientLogin, if not empty, is the role local transactions log in
	// as, with ClientPassword: Open makes it (a member of certa_client,
	// which then cannot log in itself) and sets its password, and its
	// connections take the role certa_client at startup. For an
	// operator's server (OpenDSN), whose roles several nodes may share.
	// Empty: they log in as certa_client, with the DSN's authentication
	// (a managed server trusts its socket).
	ClientLogin, ClientPassword string
	// ApplierLogin, if not empty, is the role the applier and CheckDDL
	// log in as, with ClientPassword: Open makes it (a member of
	// certa_applier, which then cannot log in itself). Set with
	// ClientLogin. Empty: they log in as certa_applier.
	ApplierLogin string
	// Claim, if not empty, marks the database as this node's (in
	// certa.node, with NodeID): Open refuses a database another node
	// claimed (errDatabaseInUse), and, on first start, one that holds
	// tables certa did not make.
	Claim string
	// Logger receives the engine's reconnections after its PostgreSQL
	// server restarted or ended its connections (reconnect.go). Default
	// slog.Default().
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.MaxConns == 0 {
		c.MaxConns = 64
	}
	if c.LockTimeout == 0 {
		c.LockTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	switch {
	case c.DSN == "":
		return errors.New("postgres engine: DSN is required")
	case c.NodeID == "":
		return errors.New("postgres engine: NodeID is required")
	case c.MaxConns < 1:
		return errors.New("postgres engine: MaxConns must be at least 1")
	case c.ClientLogin != "" && c.ClientPassword == "":
		return errors.New("postgres engine: ClientLogin needs ClientPassword")
	case c.ClientLogin == clientRole:
		return errors.New("postgres engine: ClientLogin must not be " + clientRole)
	case (c.ClientLogin == "") != (c.ApplierLogin == "") || c.ApplierLogin == applierRole:
		return errors.New("postgres engine: ApplierLogin goes with ClientLogin, and must not be " + applierRole)
	}
	return nil
}

// asyncCommit is the synchronous_commit of the applier's and the local
// transactions' sessions: off. A commit is durable once its write set is
// in the Raft log on a majority; PostgreSQL's own flush at COMMIT would
// only add a disk wait per commit. A crash loses at most the last commits
// (in commit order, with the certa.applied rows that name them), and the
// node replays them from the log, as Galera advises with
// innodb_flush_log_at_trx_commit = 2.
const asyncCommit = "off"

// Engine is engine.Engine over one PostgreSQL database.
type Engine struct {
	cfg  Config
	pool atomic.Pointer[pool] // replaced by Restore

	applyMu sync.Mutex // held by Apply; guards applier and its tables
	// dumping is held shared from Snapshot to its Release, while pg_dump
	// may read the database, and by Apply to apply a schema change: pg_dump
	// reads the catalogs at its snapshot but formats types and
	// expressions from the current ones, so a type dropped meanwhile came
	// out as "???" and the snapshot did not restore.
	dumping sync.RWMutex
	applier *pgconn.PgConn // as applierRole
	applyTS tables
	// appliedUpTo is the applied seqno, as the last Apply left it (or the
	// database when opened): Apply skips what stayed of a batch it failed.
	appliedUpTo uint64
	token       string // lets an origin's transaction record its seqno (certa.commit_at)

	watch *pgconn.PgConn // the brute-force abort's connection (watch.go); used under applyMu

	checkMu sync.Mutex
	checker *pgconn.PgConn // CheckDDL's connection (as applierRole)
	// checkerNotices passes on the notices of a trial of a client's
	// schema statement on the checker (CheckDDL); held with checkMu.
	checkerNotices noticeSink

	gcMu   sync.Mutex
	gcConn *pgconn.PgConn // gcLoop's (superuser) connection; nil while closed
	gcStop chan struct{}  // closed by Close: gcLoop returns
	gcDone chan struct{}  // closed when gcLoop has returned

	localMu sync.Mutex
	local   map[uint32]*atomic.Bool  // backends of local work: their aborted flags
	pinned  map[uint32]bool          // backends pinned to a session (session.go)
	waiting map[uint32]bool          // backends of handed-over transactions (watch.go)
	maint   map[uint32]time.Duration // backends running a maintenance command or a schema change's trial: their grace (watch.go)

	// Reconnection (reconnect.go): what the engine holds when its server
	// restarts or ends its connections.
	stopCtx  context.Context // ends with Close
	stop     func()
	healthOK chan struct{} // closed when healthLoop has returned
	// broken: a connection the engine holds was found lost; Apply and
	// healthLoop reconnect (recover) before anything else. Guarded by
	// applyMu for writes that clear it.
	broken atomic.Bool
	// gen counts recoveries (healthLoop's durability marks of an older
	// one are dropped).
	gen atomic.Uint64
	// adminPIDs are the backends of the applier's, watcher's, checker's
	// and gcLoop's connections, for healthLoop's sweep.
	adminPIDs atomic.Pointer[[]uint32]
	// appliedMark is appliedUpTo once Apply returned, for healthLoop;
	// durable is the applied seqno known to be on disk (its commit's WAL
	// flushed).
	appliedMark, durable atomic.Uint64
	// retained are the batches applied since durable (under applyMu):
	// their commits may be lost if the server crashes (asyncCommit), and
	// recover applies them again. Nothing at or below retainedFrom is
	// retained.
	retained      []appliedBatch
	retainedBytes int
	retainedFrom  uint64
	gated         *pool // the pool recover keeps shut until it replayed (under applyMu)

	heldMu sync.Mutex
	held   map[uint64]*Tx // handed-over transactions awaiting their position, by TxID

	slot atomic.Int64 // this node's sequence slot; -1: none yet (sequences.go)
	// slotReserving: the node is reserving a slot (ReserveSequence ran).
	slotReserving atomic.Bool
	wanted        chan string   // SequencesWanted
	slotMu        sync.Mutex    // guards slotCh
	slotCh        chan struct{} // closed and replaced when the slot is granted

	schemaEpoch   atomic.Uint64      // raised by every applied DDL: connections drop their table caches
	hiddenLockers hiddenLockersCache // what may lock rows unseen (txlocks.go)
	closed        atomic.Bool
}

var _ engine.Engine = (*Engine)(nil)

// errClosed is returned once the engine is closed.
var errClosed = sqlerr.New(sqlerr.AdminShutdown, "certa: the node's engine is closed")

// errUnsupported refuses what this engine does not do yet.
func errUnsupported(what string) error {
	return sqlerr.New(sqlerr.FeatureNotSupported, "certa: the PostgreSQL engine does not support %s yet", what)
}

// Open connects to the database, installs certa's objects in it (schema.go)
// and returns the engine.
func Open(ctx context.Context, cfg Config) (*Engine, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, held: map[uint64]*Tx{}, local: map[uint32]*atomic.Bool{}, pinned: map[uint32]bool{}, waiting: map[uint32]bool{},
		maint: map[uint32]time.Duration{}, token: rand.Text(), wanted: make(chan string, 1), slotCh: make(chan struct{}),
		gcStop: make(chan struct{}), gcDone: make(chan struct{}), healthOK: make(chan struct{})}
	e.stopCtx, e.stop = context.WithCancel(context.Background())
	if err := e.openAdmin(ctx); err != nil {
		e.stop()
		return nil, fmt.Errorf("postgres engine: %w", err)
	}
	e.pool.Store(newPool(cfg, &e.schemaEpoch))
	go e.gcLoop()
	go e.healthLoop()
	return e, nil
}

// openAdmin opens the engine's connections to its database (connectAdmin)
// on a database that is new to the engine (Open, Restore): what it applied
// is all there, none of it retained for a replay (reconnect.go). The
// caller holds applyMu or has the only reference to e.
func (e *Engine) openAdmin(ctx context.Context) error {
	if err := e.connectAdmin(ctx, true); err != nil {
		return err
	}
	e.retained, e.retainedBytes, e.retainedFrom = nil, 0, e.appliedUpTo
	e.appliedMark.Store(e.appliedUpTo)
	e.durable.Store(e.appliedUpTo)
	e.gen.Add(1)
	e.broken.Store(false)
	return nil
}

// connectAdmin opens the engine's connections to its database: as the
// superuser the watcher's and gcLoop's, which run no client code, and
// also, if install, install certa's objects and record the engine's
// token (certa.commit_at); as the applier's role (applierRole) the
// applier's and CheckDDL's, which run clients' statements and code. It
// sets appliedUpTo to the applied seqno the database holds. The caller
// holds applyMu or has the only reference to e.
func (e *Engine) connectAdmin(ctx context.Context, install bool) error {
	var conns []*pgconn.PgConn
	closeAll := func() {
		for _, c := range conns {
			c.Close(ctx)
		}
	}
	for range 2 {
		c, err := connect(ctx, e.cfg.DSN, "", map[string]string{"synchronous_commit": asyncCommit})
		if err != nil {
			closeAll()
			return fmt.Errorf("connect: %w", err)
		}
		conns = append(conns, c)
	}
	admin := conns[0]
	if install {
		if err := e.install(ctx, admin); err != nil {
			closeAll()
			return err
		}
	}
	login, password := applierRole, ""
	if e.cfg.ApplierLogin != "" {
		login, password = e.cfg.ApplierLogin, e.cfg.ClientPassword
	}
	for i := range 2 {
		var onNotice pgconn.NoticeHandler
		if i == 1 { // the checker's: a trial's notices are its client's
			onNotice = e.checkerNotices.handle
		}
		c, err := connectWith(ctx, e.cfg.DSN, login, password, map[string]string{"synchronous_commit": asyncCommit}, onNotice)
		if err != nil {
			closeAll()
			return fmt.Errorf("connect as %s: %w", login, err)
		}
		conns = append(conns, c)
	}
	applier := conns[2]
	applied, err := appliedSeqno(ctx, applier)
	if err != nil {
		closeAll()
		return fmt.Errorf("read the applied seqno: %w", err)
	}
	e.appliedUpTo = applied
	if err := e.loadSlot(ctx, applier); err != nil {
		closeAll()
		return fmt.Errorf("read this node's sequence slot: %w", err)
	}
	if e.slot.Load() < 0 {
		e.askSlot()
	}
	// The applier's transactions run as replica (applyItems); set for
	// the session too, the SET LOCAL of each batch changes nothing, and
	// PostgreSQL keeps the applier's plans: every change of
	// session_replication_role resets the backend's plan cache, so a SET
	// LOCAL alone had every prepared statement planned again twice a batch.
	if _, err := applier.Exec(ctx, "SET session_replication_role = replica").ReadAll(); err != nil {
		closeAll()
		return fmt.Errorf("set the applier's replication role: %w", err)
	}
	e.applier, e.watch = applier, conns[1]
	e.checkMu.Lock()
	e.checker = conns[3]
	e.checkMu.Unlock()
	e.gcMu.Lock()
	e.gcConn = admin
	e.gcMu.Unlock()
	pids := []uint32{admin.PID(), conns[1].PID(), applier.PID(), conns[3].PID()}
	e.adminPIDs.Store(&pids)
	return nil
}

// install makes certa's objects and roles in the database through admin,
// a superuser's connection, and records the engine's token.
func (e *Engine) install(ctx context.Context, admin *pgconn.PgConn) error {
	if e.cfg.Claim != "" {
		if err := checkClaim(ctx, admin, e.cfg.Claim); err != nil {
			return err
		}
	}
	if err := checkIntact(ctx, admin); err != nil {
		return err
	}
	// Roles and parameter privileges are the server's: nodes that share
	// one server (--postgres-dsn, a database each) may create or change
	// them at the same moment (retryShared). The bootstrap is idempotent.
	if err := retryShared(func() error {
		_, err := admin.Exec(ctx, bootstrapSQL(e.cfg.ClientLogin)).ReadAll()
		return err
	}); err != nil {
		return fmt.Errorf("install certa's schema: %w", err)
	}
	if e.cfg.Claim != "" {
		if err := claim(ctx, admin, e.cfg.NodeID, e.cfg.Claim); err != nil {
			return err
		}
	}
	if e.cfg.ClientLogin != "" {
		for login, role := range map[string]string{e.cfg.ClientLogin: clientRole, e.cfg.ApplierLogin: applierRole} {
			if err := retryShared(func() error { return makeLogin(ctx, admin, login, role, e.cfg.ClientPassword) }); err != nil {
				return fmt.Errorf("make the login role %s: %w", login, err)
			}
		}
	}
	_, err := admin.Exec(ctx, "DELETE FROM certa.token").ReadAll()
	r := admin.ExecParams(ctx, "INSERT INTO certa.token VALUES ($1)", [][]byte{[]byte(e.token)}, nil, nil, nil).Read()
	return errors.Join(err, r.Err)
}

// closeAdmin closes what openAdmin opened, if it is open: a recover that
// failed to connect again may call it once more. The caller holds
// applyMu.
func (e *Engine) closeAdmin() {
	ctx := context.Background()
	closeConn := func(c *pgconn.PgConn) {
		if c != nil {
			c.Close(ctx)
		}
	}
	e.checkMu.Lock()
	closeConn(e.checker)
	e.checkMu.Unlock()
	e.gcMu.Lock()
	closeConn(e.gcConn)
	e.gcConn = nil
	e.gcMu.Unlock()
	closeConn(e.watch)
	closeConn(e.applier)
}

// Close closes the engine's connections; open transactions fail.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.pool.Load().close()
	e.stop()
	close(e.gcStop)
	<-e.gcDone
	<-e.healthOK
	e.pool.Load().close() // one a recovery put in meanwhile (reconnect.go)
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	e.closeAdmin()
	return nil
}

// AppliedSeqno returns the largest seqno in certa.applied. A lost
// connection is opened again first (reconnect.go).
func (e *Engine) AppliedSeqno() (uint64, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	var n uint64
	err := e.withApplier(func(ctx context.Context) (err error) {
		n, err = appliedSeqno(ctx, e.applier)
		return err
	})
	return n, err
}

// FailedSeqnos returns the seqnos in [from, to] whose items failed.
func (e *Engine) FailedSeqnos(from, to uint64) (map[uint64]bool, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	var failed map[uint64]bool
	err := e.withApplier(func(ctx context.Context) (err error) {
		failed, err = failedSeqnos(ctx, e.applier, from, to)
		return err
	})
	return failed, err
}

// CheckChanges refuses row changes not in this engine's format.
func (e *Engine) CheckChanges(ws *writeset.WriteSet) error {
	if ws.IsDDL() || len(ws.Changes) == 0 {
		return nil
	}
	if _, err := decodeRows(ws.Changes); err != nil {
		return sqlerr.Wrap(err, sqlerr.DataCorrupted, "certa: write set rows are not in the PostgreSQL engine's format: %v", err)
	}
	return nil
}

// Describe asks PostgreSQL for the types of sql's parameters and result.
// With session settings (a search path) it prepares inside a transaction
// that has them.
func (e *Engine) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	return e.describe(ctx, nil, sql)
}

// describe is Describe on session s's backend (nil: a pooled one).
func (e *Engine) describe(ctx context.Context, s *Session, client string) ([]result.Type, []result.Column, error) {
	hidden := withoutCertaRows(client)
	sql := hidden.SQL
	var sd *pgconn.StatementDescription
	var err error
	if t := e.openTx(s); t != nil {
		sd, err = t.describe(ctx, sql)
	} else if len(engine.SettingsFrom(ctx)) > 0 {
		err = e.readOnly(ctx, s, "ROLLBACK", func(c *conn) error {
			sd, err = c.pg.Prepare(ctx, "", sql, nil)
			return err
		})
	} else {
		var c *conn
		if c, err = e.acquire(ctx, s); err != nil {
			return nil, nil, err
		}
		sd, err = c.pg.Prepare(ctx, "", sql, nil)
		e.finish(s, c, err != nil && c.pg.IsClosed(), false, tempState{})
	}
	if err != nil {
		return nil, nil, clientPosition(pgError(err), hidden)
	}
	params, cols := described(sd)
	return params, cols, nil
}

// described converts PostgreSQL's description of a statement.
func described(sd *pgconn.StatementDescription) (params []result.Type, cols []result.Column) {
	params = make([]result.Type, len(sd.ParamOIDs))
	for i, oid := range sd.ParamOIDs {
		params[i] = result.TypeOf(oid)
	}
	if sd.Fields != nil { // a RowDescription, of no columns too (SELECT;)
		cols = columns(sd.Fields, true)
	}
	return params, cols
}

// waitGrace is how long an operation on a connection may wait at most
// when its context has no deadline.
const waitGrace = 30 * time.Second

// retryShared runs f, which changes what the whole server shares (roles,
// their grants, parameter privileges), up to three times: another node
// on the same server (--postgres-dsn) changing the same shared row at the
// same moment makes it fail with 23505 (a role made twice) or XX000
// ("tuple concurrently updated"); f is idempotent, and runs again to find
// what the other made.
func retryShared(f func() error) error {
	for try := 1; ; try++ {
		err := f()
		var pe *pgconn.PgError
		if err == nil || try == 3 || !errors.As(err, &pe) || pe.Code != "23505" && pe.Code != "XX000" {
			return err
		}
	}
}
