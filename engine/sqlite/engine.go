package sqlite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"zombiezen.com/go/sqlite"

	"certa/engine"
)

var _ engine.Engine = (*Engine)(nil)

// Engine is certa's engine on one SQLite database file. See the package doc.
type Engine struct {
	cfg     Config
	lock    writeLock
	pool    *pool
	applier *conn // used only while holding the write lock with priority
	hist    history
	seqs    *sequences
	catalog catalogCache // catalog.go
	// advisory are the advisory locks this node's transactions hold.
	advisory advisoryLocks

	applied atomic.Uint64 // the applied seqno, as committed by the last Apply
	epoch   atomic.Uint64 // bumped by Restore: older transactions must fail
	closed  atomic.Bool
}

// applierBusyTimeout bounds how long the applier waits for SQLite's own file
// lock, which only a foreign process could hold.
const applierBusyTimeout = 10 * time.Second

// schemaSQL creates certa's own tables: the applied seqno, recorded in the
// same transaction as each applied batch, the seqnos of write sets that
// failed deterministically in Apply (so that a replay certifies as before),
// and the sequences of SERIAL and identity columns (sequence.go).
const schemaSQL = `
CREATE TABLE IF NOT EXISTS _certa_meta (id INTEGER PRIMARY KEY CHECK (id = 1), seqno INTEGER NOT NULL);
INSERT OR IGNORE INTO _certa_meta (id, seqno) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS _certa_failed (seqno INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS _certa_sequences (name TEXT NOT NULL PRIMARY KEY, tbl TEXT NOT NULL, col TEXT NOT NULL,
	reserved INTEGER NOT NULL, created INTEGER NOT NULL, maxval INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS _certa_comments (kind TEXT NOT NULL, name TEXT NOT NULL, col TEXT NOT NULL, comment TEXT NOT NULL,
	PRIMARY KEY (kind, name, col));
`

// Open opens (creating if needed) the database at cfg.Path.
func Open(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	// SQLite would create the database 0644 (less the umask), and it gives
	// its -wal and -shm files the database's mode: created here, all three
	// are the owner's only. An error is SQLite's to report.
	if f, err := os.OpenFile(cfg.Path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
	applier, err := openConn(cfg.Path, false)
	if err != nil {
		return nil, fmt.Errorf("sqlite engine: %w", err)
	}
	// Our write lock keeps local writers off the file while the applier
	// writes, so the applier never has to wait inside SQLite; if something
	// else (another process) holds the file's lock, fail loudly rather than
	// wait forever.
	applier.c.SetBusyTimeout(applierBusyTimeout)
	fail := func(err error) (*Engine, error) {
		applier.close()
		return nil, fmt.Errorf("sqlite engine: open %s: %w", cfg.Path, err)
	}
	// WAL lets readers keep their snapshots while the applier commits; it
	// is a property of the file, so setting it once suffices.
	var mode string
	err = execResult(applier.c, "PRAGMA journal_mode=WAL", func(s *sqlite.Stmt) { mode = s.ColumnText(0) })
	if err != nil {
		return fail(err)
	}
	if mode != "wal" {
		return fail(fmt.Errorf("journal_mode is %q, not wal", mode))
	}
	if err := execScript(applier.c, schemaSQL); err != nil {
		return fail(err)
	}
	seqno, _, err := applier.queryInt("SELECT seqno FROM _certa_meta")
	if err != nil {
		return fail(err)
	}
	e := &Engine{cfg: cfg, applier: applier, seqs: newSequences()}
	if err := e.registerNextval(applier); err != nil {
		return fail(err)
	}
	if err := e.seqs.load(applier); err != nil {
		return fail(err)
	}
	e.pool = newPool(cfg.MaxConns, func() (*conn, error) {
		c, err := openConn(cfg.Path, true)
		if err == nil {
			if err = e.registerNextval(c); err == nil {
				err = registerSetval(c)
			}
			if err == nil {
				err = e.registerCurrval(c)
			}
			if err != nil {
				c.close()
			}
		}
		return c, err
	})
	e.applied.Store(uint64(seqno))
	e.hist.reset(uint64(seqno))
	return e, nil
}

// AppliedSeqno returns the seqno recorded by the last Apply (0 when new).
func (e *Engine) AppliedSeqno() (uint64, error) {
	if e.closed.Load() {
		return 0, errClosed
	}
	return e.applied.Load(), nil
}

// FailedSeqnos returns which seqnos in [from, to] failed in Apply.
func (e *Engine) FailedSeqnos(from, to uint64) (map[uint64]bool, error) {
	c, err := e.pool.get(context.Background())
	if err != nil {
		return nil, err
	}
	failed := make(map[uint64]bool)
	err = execResult(c.c, "SELECT seqno FROM _certa_failed WHERE seqno BETWEEN ? AND ?", func(s *sqlite.Stmt) {
		failed[uint64(s.ColumnInt64(0))] = true
	}, int64(from), int64(to))
	e.pool.put(c, err != nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite engine: failed seqnos: %w", err)
	}
	return failed, nil
}

// Close closes the engine. A local transaction holding the write lock is
// aborted; other open transactions fail at their next call, and their
// connections are closed when they end.
func (e *Engine) Close() error {
	if !e.closed.CompareAndSwap(false, true) {
		return nil
	}
	// Taking the lock with priority aborts a local writer and waits for a
	// running Apply to finish with the applier connection.
	e.lock.lockPriority(context.Background(), e.cfg.ApplyGrace)
	e.pool.close()
	e.applier.close()
	e.lock.unlock()
	e.catalog.close()
	return nil
}

// dir returns the directory of the database file (for temporary files).
func (e *Engine) dir() string { return filepath.Dir(e.cfg.Path) }

// pool hands out at most max connections, opening them lazily.
type pool struct {
	open   func() (*conn, error)
	tokens chan struct{} // one per connection out of the pool
	mu     sync.Mutex
	idle   []*conn
	closed bool
}

func newPool(max int, open func() (*conn, error)) *pool {
	return &pool{open: open, tokens: make(chan struct{}, max)}
}

// get returns a connection, waiting for a free one until ctx ends.
func (p *pool) get(ctx context.Context) (*conn, error) {
	select {
	case p.tokens <- struct{}{}:
	case <-ctx.Done():
		return nil, mapErr(ctx.Err())
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.tokens
		return nil, errClosed
	}
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	c, err := p.open()
	if err != nil {
		<-p.tokens
		return nil, mapErr(err)
	}
	return c, nil
}

// put returns c to the pool; a broken connection (or any, once the pool is
// closed) is closed instead.
func (p *pool) put(c *conn, broken bool) {
	p.mu.Lock()
	if p.closed || broken || c.closed {
		p.mu.Unlock()
		c.close()
	} else {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
	}
	<-p.tokens
}

// detach takes a connection get handed out out of the pool for good: its
// holder closes it (a session's pinned connection, session.go).
func (p *pool) detach() { <-p.tokens }

// close closes the idle connections; the others are closed by put.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	for _, c := range idle {
		c.close()
	}
}
