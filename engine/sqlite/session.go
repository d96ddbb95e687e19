package sqlite

import (
	"context"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
)

// session is engine.Session over the SQLite engine. It runs on the
// engine's shared connections until it makes a temporary object
// (temp.go): from then on it keeps the connection that holds its
// temporary objects (pinned), out of the pool, for its transactions,
// reads and descriptions, and closes it at Close, which drops them.
// A pinned connection does not count against the pool's connections.
type session struct {
	e       *Engine
	pinned  *conn
	catalog catalogCache // with its temporary objects (catalog.go)
	// lost: the pinned connection broke; the session's temporary
	// objects are gone.
	lost bool
}

// NewSession returns a session that runs on the engine's shared
// connections until it makes a temporary object.
func (e *Engine) NewSession() engine.Session {
	return &session{e: e, catalog: catalogCache{withTemp: true}}
}

// errLost is what every call of a session whose temporary tables were
// lost fails with.
func errLost() error {
	e := sqlerr.Wrap(engine.ErrSessionLost, sqlerr.AdminShutdown,
		"certa: this session's temporary tables were lost: the SQLite connection that held them failed")
	e.Hint = "Connect again."
	return e
}

func (s *session) Begin(ctx context.Context) (engine.Tx, error) {
	if s.lost {
		return nil, errLost()
	}
	tx, err := s.e.beginTx(ctx, s)
	if err != nil {
		return nil, err
	}
	return tx, nil
}

func (s *session) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	if s.lost {
		return errLost()
	}
	if s.pinned == nil {
		return s.e.Read(ctx, sql, w, args...)
	}
	if sql = skipBlank(sql); !mayRead(sql) {
		return engine.ErrNotReadOnly
	}
	if s.e.closed.Load() {
		return errClosed
	}
	c := s.pinned
	return s.e.readOn(ctx, c, sql, w, args, func(broken bool) { s.keep(c, broken) })
}

func (s *session) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	if s.lost {
		return nil, nil, errLost()
	}
	if s.pinned == nil {
		return s.e.Describe(ctx, sql)
	}
	return s.pinned.describe(sql)
}

func (s *session) Setting(ctx context.Context, set, name string) (string, error) {
	return s.e.Setting(ctx, set, name)
}

// Close closes the pinned connection, which drops the session's
// temporary objects.
func (s *session) Close() {
	if s.pinned != nil {
		s.pinned.close()
		s.pinned = nil
	}
	s.catalog.close()
}

// keep takes back c, which a Tx or read of the session used: the pinned
// connection stays the session's (or is closed, broken); a pooled one
// that now holds temporary objects becomes it; any other goes back to
// the pool.
func (s *session) keep(c *conn, broken bool) {
	switch {
	case c == s.pinned && broken:
		c.close()
		s.pinned, s.lost = nil, true
	case c == s.pinned:
	case !broken && !c.closed && len(c.temps) > 0:
		s.e.pool.detach()
		s.pinned = c
	default:
		s.e.pool.put(c, broken)
	}
}

// CommitLocal commits a transaction without a write set: what it did to
// the session's temporary tables stays (temp.go); one that changed none
// changed nothing here, and rolls back.
func (tx *Tx) CommitLocal(context.Context) error {
	tx.mu.Lock()
	var err error
	if tx.conn != nil && tx.tempChanged && !tx.changesReplicated() {
		if err = tx.usable(); err == nil {
			err = tx.commitTemp()
		}
	}
	tx.mu.Unlock()
	if rerr := tx.Rollback(); err == nil {
		err = rerr
	}
	return err
}
