package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"certa/engine/postgres/pgproc"
)

// ManagedConfig configures an engine over a PostgreSQL server the node
// runs itself (pgproc).
type ManagedConfig struct {
	DataDir string // the server's data directory, made by initdb on first start
	BinDir  string // where postgres and initdb are; empty: look for them (pgproc.FindBinDir)
	NodeID  string
	Founder bool // see Config
	// LockTimeout: see Config.
	LockTimeout time.Duration
	Logger      *slog.Logger
}

// database is the database of a managed server that holds the node's data.
const database = "certa"

// Managed is an engine over a server it started; Close stops both.
type Managed struct {
	*Engine
	srv *pgproc.Server
}

// OpenManaged starts (or restarts) the node's PostgreSQL server, makes
// its database on first start, and opens the engine on it.
func OpenManaged(ctx context.Context, cfg ManagedConfig) (*Managed, error) {
	dir, err := filepath.Abs(cfg.DataDir) // the server runs in another directory
	if err != nil {
		return nil, fmt.Errorf("postgres engine: data directory: %w", err)
	}
	srv, err := pgproc.Start(pgproc.Config{DataDir: dir, BinDir: cfg.BinDir, Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	admin, err := connect(ctx, srv.DSN("postgres"), "", nil)
	if err != nil {
		srv.Stop()
		return nil, fmt.Errorf("postgres engine: %w", err)
	}
	r := admin.ExecParams(ctx, "SELECT 1 FROM pg_database WHERE datname = $1", [][]byte{[]byte(database)}, nil, nil, nil).Read()
	if r.Err == nil && len(r.Rows) == 0 {
		_, r.Err = admin.Exec(ctx, "CREATE DATABASE "+database).ReadAll()
	}
	admin.Close(ctx)
	if r.Err != nil {
		srv.Stop()
		return nil, fmt.Errorf("postgres engine: make database %s: %w", database, r.Err)
	}
	e, err := Open(ctx, Config{DSN: srv.DSN(database), NodeID: cfg.NodeID, Founder: cfg.Founder, BinDir: srv.BinDir(), LockTimeout: cfg.LockTimeout, Logger: cfg.Logger})
	if err != nil {
		srv.Stop()
		return nil, err
	}
	return &Managed{Engine: e, srv: srv}, nil
}

// Close closes the engine and stops the server.
func (m *Managed) Close() error {
	err := m.Engine.Close()
	m.srv.Stop()
	return err
}
