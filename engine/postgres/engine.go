package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
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
	// server gives one): it makes schema certa, the client role and event
	// triggers, and applies rows with session_replication_role. Local
	// transactions connect with the same DSN as the client role.
	DSN string
	// NodeID is this node's id: the Origin of the write sets its sessions
	// hand over (Tx.HandOver), which Apply commits at their position.
	NodeID string
	// MaxConns bounds the connections of local transactions (default 64).
	MaxConns int
}

func (c *Config) setDefaults() {
	if c.MaxConns == 0 {
		c.MaxConns = 64
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
	}
	return nil
}

// Engine is engine.Engine over one PostgreSQL database.
type Engine struct {
	cfg  Config
	pool *pool

	applyMu sync.Mutex // held by Apply; guards applier and its tables
	applier *pgconn.PgConn
	applyTS tables
	lastGC  time.Time // of capture rows (gcCapture)
	token   string    // lets an origin's transaction record its seqno (certa.commit_at)

	watch *pgconn.PgConn // the brute-force abort's connection (watch.go); used under applyMu

	checkMu sync.Mutex
	checker *pgconn.PgConn // CheckDDL's (superuser) connection

	localMu sync.Mutex
	local   map[uint32]*atomic.Bool // backends of local work: their aborted flags

	heldMu sync.Mutex
	held   map[uint64]*Tx // handed-over transactions awaiting their position, by TxID

	schemaEpoch atomic.Uint64 // raised by every applied DDL: connections drop their table caches
	closed      atomic.Bool
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
	applier, err := connect(ctx, cfg.DSN, "")
	if err != nil {
		return nil, fmt.Errorf("postgres engine: connect: %w", err)
	}
	if _, err := applier.Exec(ctx, bootstrapSQL).ReadAll(); err != nil {
		applier.Close(ctx)
		return nil, fmt.Errorf("postgres engine: install certa's schema: %w", err)
	}
	var admin [2]*pgconn.PgConn
	for i := range admin {
		if admin[i], err = connect(ctx, cfg.DSN, ""); err != nil {
			for _, c := range append(admin[:i], applier) {
				c.Close(ctx)
			}
			return nil, fmt.Errorf("postgres engine: connect: %w", err)
		}
	}
	e := &Engine{cfg: cfg, applier: applier, watch: admin[0], checker: admin[1], held: map[uint64]*Tx{}, local: map[uint32]*atomic.Bool{}}
	e.token = rand.Text()
	_, err = applier.Exec(ctx, "DELETE FROM certa.token").ReadAll()
	r := applier.ExecParams(ctx, "INSERT INTO certa.token VALUES ($1)", [][]byte{[]byte(e.token)}, nil, nil, nil).Read()
	if r.Err = errors.Join(err, r.Err); r.Err != nil {
		e.Close()
		return nil, fmt.Errorf("postgres engine: %w", r.Err)
	}
	e.pool = newPool(cfg.DSN, cfg.MaxConns)
	return e, nil
}

// Close closes the engine's connections; open transactions fail.
func (e *Engine) Close() error {
	if e.closed.Swap(true) {
		return nil
	}
	e.pool.close()
	e.checkMu.Lock()
	e.checker.Close(context.Background())
	e.checkMu.Unlock()
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	e.watch.Close(context.Background())
	return e.applier.Close(context.Background())
}

// AppliedSeqno returns the largest seqno in certa.applied.
func (e *Engine) AppliedSeqno() (uint64, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	return appliedSeqno(context.Background(), e.applier)
}

// FailedSeqnos returns the seqnos in [from, to] whose items failed.
func (e *Engine) FailedSeqnos(from, to uint64) (map[uint64]bool, error) {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	return failedSeqnos(context.Background(), e.applier, from, to)
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

// Snapshot is not supported yet (state transfer, issue 18).
func (e *Engine) Snapshot(context.Context) (engine.Snapshot, error) {
	return nil, errUnsupported("state transfer (snapshots)")
}

// Restore is not supported yet (state transfer, issue 18).
func (e *Engine) Restore(context.Context, io.Reader) error {
	return errUnsupported("state transfer (restore)")
}

// SequencesWanted returns nil: this engine reserves no sequence values
// through the log (sequences are to be interleaved by node).
func (e *Engine) SequencesWanted() <-chan string { return nil }

// ReserveSequence reserves nothing (see SequencesWanted).
func (e *Engine) ReserveSequence(context.Context, string) (*writeset.WriteSet, engine.SequenceBlock, error) {
	return nil, engine.SequenceBlock{}, nil
}

// GrantSequence does nothing (see SequencesWanted).
func (e *Engine) GrantSequence(engine.SequenceBlock) {}

// WaitSequenceValues returns at once: values are never reserved.
func (e *Engine) WaitSequenceValues(context.Context, string) error { return nil }

// Describe asks PostgreSQL for the types of sql's parameters and result.
func (e *Engine) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	c, err := e.pool.get(ctx)
	if err != nil {
		return nil, nil, err
	}
	sd, err := c.pg.Prepare(ctx, "", sql, nil)
	e.pool.put(c, err != nil && c.pg.IsClosed())
	if err != nil {
		return nil, nil, pgError(err)
	}
	params := make([]result.Type, len(sd.ParamOIDs))
	for i, oid := range sd.ParamOIDs {
		params[i], _ = result.TypeForOID(oid)
	}
	var cols []result.Column
	if len(sd.Fields) > 0 {
		cols = columns(sd.Fields)
	}
	return params, cols, nil
}

// waitGrace is how long an operation on a connection may wait at most
// when its context has no deadline.
const waitGrace = 30 * time.Second
