package sqlite

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"
)

// Baseline is one connection to a plain SQLite database with no
// replication: `certa bench` measures it as the baseline certa is compared
// to. It runs with WAL and synchronous=FULL, i.e. every commit is durable on
// its own, as certa's commits are (through the Raft log). Several Baselines
// may open the same file, one per benchmark client; SQLite lets one of them
// write at a time and makes the others wait (busy timeout). It lives here so
// that no other package imports SQLite. Its methods are safe for concurrent
// use.
type Baseline struct {
	mu sync.Mutex
	c  *sqlite.Conn
}

// baselineBusyTimeout is how long a writer waits for another to finish.
const baselineBusyTimeout = 30 * time.Second

// OpenBaseline opens (creating if needed) the database at path.
func OpenBaseline(path string) (*Baseline, error) {
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate|sqlite.OpenWAL)
	if err != nil {
		return nil, fmt.Errorf("sqlite baseline: %w", err)
	}
	c.SetBusyTimeout(baselineBusyTimeout)
	if err := sqlitex.ExecuteTransient(c, "PRAGMA synchronous=FULL", nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("sqlite baseline: %w", err)
	}
	return &Baseline{c: c}, nil
}

// Exec runs one statement with arguments $1, $2 ... and returns how many
// rows it changed.
func (b *Baseline) Exec(sql string, args ...any) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return 0, fmt.Errorf("sqlite baseline: closed")
	}
	if err := sqlitex.ExecuteTransient(b.c, numbered(sql), &sqlitex.ExecOptions{Args: args}); err != nil {
		return 0, err
	}
	return int64(b.c.Changes()), nil
}

// Query runs one query with arguments $1, $2 ... and returns its rows,
// each value an int64, float64, string, []byte or nil.
func (b *Baseline) Query(sql string, args ...any) ([][]any, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c == nil {
		return nil, fmt.Errorf("sqlite baseline: closed")
	}
	var rows [][]any
	err := sqlitex.ExecuteTransient(b.c, numbered(sql), &sqlitex.ExecOptions{
		Args: args,
		ResultFunc: func(stmt *sqlite.Stmt) error {
			row := make([]any, stmt.ColumnCount())
			for i := range row {
				switch stmt.ColumnType(i) {
				case sqlite.TypeInteger:
					row[i] = stmt.ColumnInt64(i)
				case sqlite.TypeFloat:
					row[i] = stmt.ColumnFloat(i)
				case sqlite.TypeText:
					row[i] = stmt.ColumnText(i)
				case sqlite.TypeBlob:
					row[i] = stmt.ColumnBytes(i, make([]byte, stmt.ColumnLen(i)))
				}
			}
			rows = append(rows, row)
			return nil
		},
	})
	return rows, err
}

// IsBusy reports whether err means another connection held the database
// for longer than the busy timeout.
func IsBusy(err error) bool {
	code := sqlite.ErrCode(err)
	return code.ToPrimary() == sqlite.ResultBusy || code.ToPrimary() == sqlite.ResultLocked
}

// numbered rewrites PostgreSQL's $n placeholders to SQLite's ?n, which
// bind argument n wherever they appear ($n would bind by first appearance).
func numbered(sql string) string {
	var b strings.Builder
	for i := 0; i < len(sql); i++ {
		if sql[i] == '$' && i+1 < len(sql) && sql[i+1] >= '0' && sql[i+1] <= '9' {
			b.WriteByte('?')
			continue
		}
		b.WriteByte(sql[i])
	}
	return b.String()
}

// Close closes the connection. Safe to call more than once.
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
