package sqlite

import (
	"context"

	"certa/engine"
	"certa/result"
)

// session is engine.Session over the SQLite engine: its sessions have
// nothing of their own on the node (temporary tables are refused: they
// would live on a connection that all sessions share, and a local write
// transaction is rolled back at COMMIT, its changes applied from its
// write set), so a session is the engine itself.
type session struct{ e *Engine }

// NewSession returns a session that runs on the engine's shared
// connections.
func (e *Engine) NewSession() engine.Session { return session{e} }

func (s session) Begin(ctx context.Context) (engine.Tx, error) { return s.e.Begin(ctx) }

func (s session) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	return s.e.Read(ctx, sql, w, args...)
}

func (s session) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	return s.e.Describe(ctx, sql)
}

func (s session) Setting(ctx context.Context, set, name string) (string, error) {
	return s.e.Setting(ctx, set, name)
}

func (s session) Close() {}

// CommitLocal rolls back: a transaction without a write set changed
// nothing here.
func (tx *Tx) CommitLocal(context.Context) error { return tx.Rollback() }
