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

	"certa/engine"
)

// fileSnapshot is a consistent copy of the database in a temporary file.
type fileSnapshot struct {
	path string
	once sync.Once
}

// WriteTo streams the copy to w.
func (s *fileSnapshot) WriteTo(w io.Writer) (int64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	defer f.Close()
	return io.Copy(w, f)
}

// Release deletes the copy. Safe to call more than once.
func (s *fileSnapshot) Release() {
	s.once.Do(func() { os.Remove(s.path) })
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

// Snapshot copies the applied state (with its applied seqno and failed
// seqnos) to a temporary file with VACUUM INTO, which reads one consistent
// WAL snapshot and writes a compact database.
func (e *Engine) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	path, err := e.tempPath("snapshot")
	if err != nil {
		return nil, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	c.c.SetInterrupt(ctx.Done())
	err = c.exec("VACUUM INTO ?", path)
	c.c.SetInterrupt(nil)
	e.pool.put(c, err != nil)
	if err != nil {
		removeDB(path) // with the journal a failed VACUUM INTO leaves
		return nil, fmt.Errorf("sqlite engine: snapshot: %w", err)
	}
	return &fileSnapshot{path: path}, nil
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
