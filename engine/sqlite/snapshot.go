package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/engine"
)

// pinnedSnapshot is the applied state at one seqno, held by a read
// transaction on a connection of its own. The copy is made when it is
// written out, so the apply loop (which takes Raft snapshots) is not held
// while a large database is copied, and a copy costs a page-by-page backup
// rather than the row-by-row rebuild of VACUUM INTO.
type pinnedSnapshot struct {
	e     *Engine
	seqno uint64

	mu   sync.Mutex
	src  *sqlite.Conn // nil once released
	path string       // the copy, once made
}

// WriteTo copies the pinned state to a temporary file with SQLite's backup
// API, once, and streams the file to w.
func (s *pinnedSnapshot) WriteTo(w io.Writer) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.src == nil {
		return 0, errors.New("sqlite engine: snapshot: already released")
	}
	if s.path == "" {
		path, err := s.copy()
		if err != nil {
			return 0, fmt.Errorf("sqlite engine: snapshot at seqno %d: %w", s.seqno, err)
		}
		s.path = path
	}
	f, err := os.Open(s.path)
	if err != nil {
		return 0, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	defer f.Close()
	return io.Copy(w, f)
}

// copy backs the pinned state up into a new temporary file: the backup
// reads through the source connection's open read transaction.
func (s *pinnedSnapshot) copy() (string, error) {
	path, err := s.e.tempPath("snapshot")
	if err != nil {
		return "", err
	}
	err = func() error {
		dst, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
		if err != nil {
			return err
		}
		defer dst.Close()
		// A copy that a crash interrupts is thrown away: no journal, no fsync.
		for _, p := range []string{"PRAGMA journal_mode=OFF", "PRAGMA synchronous=OFF"} {
			if err := sqlitex.ExecuteTransient(dst, p, nil); err != nil {
				return err
			}
		}
		b, err := sqlite.NewBackup(dst, "main", s.src, "main")
		if err != nil {
			return err
		}
		for more := true; more; {
			if more, err = b.Step(-1); err != nil {
				b.Close()
				return err
			}
		}
		return b.Close()
	}()
	if err != nil {
		removeDB(path)
		return "", err
	}
	return path, nil
}

// Release ends the read transaction and deletes the copy. Safe to call more
// than once.
func (s *pinnedSnapshot) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.src != nil {
		s.src.Close() // rolls the read transaction back
		s.src = nil
	}
	if s.path != "" {
		removeDB(s.path)
		s.path = ""
	}
}

// tempPath returns the name of a new, empty temporary file next to the
// database (same file system: no surprise about space or rename).
func (e *Engine) tempPath(kind string) (string, error) {
	f, err := os.CreateTemp(e.dir(), filepath.Base(e.cfg.Path)+"."+kind+"-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	f.Close()
	return name, nil
}

// Snapshot pins the applied state (with its applied seqno and failed
// seqnos): a new connection begins a read transaction, which in WAL mode
// keeps seeing this state while applies go on. It is copied when written
// out (pinnedSnapshot.WriteTo). Apply must not run concurrently with it.
func (e *Engine) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	src, err := sqlite.OpenConn(e.cfg.Path, sqlite.OpenReadWrite)
	if err != nil {
		return nil, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	var seqno int64
	err = sqlitex.ExecuteTransient(src, "BEGIN", nil)
	if err == nil {
		err = execResult(src, "SELECT seqno FROM _certa_meta", func(s *sqlite.Stmt) { seqno = s.ColumnInt64(0) })
	}
	if err == nil && uint64(seqno) != e.applied.Load() {
		err = fmt.Errorf("read applied seqno %d, want %d (an apply ran concurrently)", seqno, e.applied.Load())
	}
	if err != nil {
		src.Close()
		return nil, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	return &pinnedSnapshot{e: e, seqno: uint64(seqno), src: src}, nil
}

// Restore replaces the database with a snapshot's contents. The snapshot is
// copied into the live database with SQLite's backup API, in one write
// transaction under the write lock (a local writer is brute-force aborted),
// so readers see the old state or the new one, never a mix. Transactions open
// before Restore fail at their next call.
func (e *Engine) Restore(ctx context.Context, r io.Reader) (err error) {
	if e.closed.Load() {
		return errClosed
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("sqlite engine: restore: %w", err)
		}
	}()
	path, err := e.tempPath("restore")
	if err != nil {
		return err
	}
	defer removeDB(path)
	if err := copyToFile(path, r); err != nil {
		return err
	}
	src, err := sqlite.OpenConn(path, sqlite.OpenReadWrite)
	if err != nil {
		return err
	}
	defer src.Close()
	var seqno int64
	found := false
	err = execResult(src, "SELECT seqno FROM _certa_meta", func(s *sqlite.Stmt) { seqno, found = s.ColumnInt64(0), true })
	if err != nil || !found {
		return fmt.Errorf("not a certa snapshot (no applied seqno): %v", err)
	}

	if err := e.lock.lockPriority(ctx, e.cfg.ApplyGrace); err != nil {
		return err
	}
	defer e.lock.unlock()
	if e.closed.Load() {
		return errClosed
	}
	dst := e.applier
	if dst.closed {
		return errors.New("the applier connection broke earlier; restart the node")
	}
	// Transactions begun before now must fail rather than mix states.
	e.epoch.Add(1)
	b, err := sqlite.NewBackup(dst.c, "main", src, "main")
	if err != nil {
		return err
	}
	for more := true; more; {
		more, err = b.Step(-1)
		if err != nil && !more {
			b.Close()
			return err
		}
	}
	b.Close()
	e.epoch.Add(1)
	got, _, err := dst.queryInt("SELECT seqno FROM _certa_meta")
	if err != nil {
		return err
	}
	if got != seqno {
		return fmt.Errorf("restored applied seqno %d, want %d", got, seqno)
	}
	// A snapshot of an older version may lack certa's newer tables.
	if err := execScript(dst.c, schemaSQL); err != nil {
		return err
	}
	if err := e.seqs.load(dst); err != nil {
		return err
	}
	e.applied.Store(uint64(seqno))
	e.hist.reset(uint64(seqno))
	return nil
}

// copyToFile writes r to the file at path.
func copyToFile(path string, r io.Reader) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeDB removes a database file and its WAL files.
func removeDB(path string) {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		os.Remove(p)
	}
}
