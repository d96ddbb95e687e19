package sqlite

import (
	"errors"
	"fmt"
	"time"
)

// Config configures an Engine. The zero value of every field but Path means
// its default, applied by Open.
type Config struct {
	// Path is the SQLite database file. It is created if missing; the WAL
	// (Path-wal, Path-shm) and temporary snapshot files live next to it.
	Path string

	// MaxConns is the size of the pool of connections that run local
	// transactions (and CheckDDL, Snapshot). Begin waits for a free one.
	// Default 32.
	MaxConns int

	// ApplyGrace is how long Apply (and Restore) waits for a local
	// transaction that holds the write lock and is busy in a statement,
	// before brute-force aborting it. (A holder idle between statements is
	// parked at once instead: see park.go.) Short, so that replication never
	// stalls behind a client. Default 100ms.
	ApplyGrace time.Duration

	// LockTimeout is how long a local writer waits for the write lock while
	// another local transaction holds it and is busy in statements; it then
	// fails with 40001. (A holder idle for 10ms is parked.) Default 5s.
	LockTimeout time.Duration

	// SchemaGrace is how long Apply waits for a statement of a local
	// transaction block that changed the schema (txschema.go) before
	// brute-force aborting the block (idle, it is parked: schemapark.go).
	// Such statements (a table rebuilt) may run longer than others, and a
	// block's re-application after a park costs more. Default 2s.
	SchemaGrace time.Duration

	// NodeID is this node's id, the Origin of the write sets it commits.
	// A schema change made here reserves the first values of the
	// sequences it makes (the client that made a table takes 1, 2, 3, as
	// in PostgreSQL); the other nodes ask for theirs once a reservation
	// of a sequence has been applied. Empty: every node asks at once, and
	// which gets the first values is a race.
	NodeID string
}

// Defaults.
const (
	DefaultMaxConns    = 32
	DefaultApplyGrace  = 100 * time.Millisecond
	DefaultLockTimeout = 5 * time.Second
	DefaultSchemaGrace = 2 * time.Second
)

// Validate reports whether c is usable (zero values stand for defaults).
func (c Config) Validate() error {
	if c.Path == "" {
		return errors.New("sqlite engine: Path is required")
	}
	if c.MaxConns < 0 {
		return fmt.Errorf("sqlite engine: MaxConns %d is negative", c.MaxConns)
	}
	if c.ApplyGrace < 0 {
		return fmt.Errorf("sqlite engine: ApplyGrace %v is negative", c.ApplyGrace)
	}
	if c.LockTimeout < 0 {
		return fmt.Errorf("sqlite engine: LockTimeout %v is negative", c.LockTimeout)
	}
	if c.SchemaGrace < 0 {
		return fmt.Errorf("sqlite engine: SchemaGrace %v is negative", c.SchemaGrace)
	}
	return nil
}

// withDefaults returns c with zero fields set to their defaults.
func (c Config) withDefaults() Config {
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.ApplyGrace == 0 {
		c.ApplyGrace = DefaultApplyGrace
	}
	if c.LockTimeout == 0 {
		c.LockTimeout = DefaultLockTimeout
	}
	if c.SchemaGrace == 0 {
		c.SchemaGrace = DefaultSchemaGrace
	}
	return c
}
