package sqlite

import (
	"fmt"
	"sync"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Baseline is a plain SQLite database on one connection, with no replication:
// `certa bench` measures it as the baseline certa is compared to. It runs
// with WAL and synchronous=FULL, i.e. every commit is durable on its own, as
// certa's commits are (through the Raft log). It lives here so that no other
// package imports SQLite. Its methods are safe for concurrent use; statements
// are serialized on the one connection.
type Baseline struct {
	mu sync.Mutex
	c  *sqlite.Conn
}

// OpenBaseline opens (creating if needed) the database at path.
func OpenBaseline(path string) (*Baseline, error) {
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		return nil, fmt.Errorf("sqlite baseline: %w", err)
	}
	if err := sqlitex.ExecuteTransient(c, "PRAGMA synchronous=FULL", nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite baseline: %w", err)
	}
	return &Baseline{c: c}, nil
}

// Exec runs one statement with positional arguments (?), discarding rows.
func (b *Baseline) Exec(sql string, args ...any) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return fmt.Errorf("sqlite baseline: closed")
	}
	return sqlitex.ExecuteTransient(b.c, sql, &sqlitex.ExecOptions{Args: args})
}

// Close closes the database. Safe to call more than once.
func (b *Baseline) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return nil
	}
	err := b.c.Close()
	b.c = nil
	return err
}
