package sqlite

import (
	"fmt"
	"strconv"
	"sync"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// Advisory locks: pg_try_advisory_xact_lock, which migration tools (Flyway)
// take around a migration. They are this node's: two sessions on one node
// exclude each other, sessions on different nodes do not (their schema
// changes then meet in certification, and the later one gets 40001). A
// lock is held until the transaction that took it ends. Session-level
// locks (pg_advisory_lock) are not kept: the engine has no sessions.

// advisoryLocks are the advisory locks held on this node, by key.
type advisoryLocks struct {
	mu   sync.Mutex
	held map[string]*advisoryHold
}

// advisoryHold is the advisory locks one transaction holds.
type advisoryHold struct {
	locks *advisoryLocks
	keys  []string
}

// try takes key for h unless another transaction holds it.
func (h *advisoryHold) try(key string) bool {
	l := h.locks
	l.mu.Lock()
	defer l.mu.Unlock()
	if owner, ok := l.held[key]; ok {
		return owner == h
	}
	if l.held == nil {
		l.held = map[string]*advisoryHold{}
	}
	l.held[key] = h
	h.keys = append(h.keys, key)
	return true
}

// release lets go of every lock h holds.
func (h *advisoryHold) release() {
	l := h.locks
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range h.keys {
		delete(l.held, k)
	}
	h.keys = nil
}

// advisoryKey reads an advisory lock's key: one bigint, or two integers
// (a key space of its own, as PostgreSQL's).
func advisoryKey(args []sqlite.Value) (string, error) {
	keys := make([]int64, len(args))
	for i, a := range args {
		n, err := strconv.ParseInt(a.Text(), 10, 64) // an integer, or a parameter's text
		if a.Type() != sqlite.TypeInteger && (a.Type() != sqlite.TypeText || err != nil) {
			return "", sqlerr.New(sqlerr.UndefinedFunction, "function pg_try_advisory_xact_lock takes bigint or (integer, integer) keys")
		}
		keys[i] = n
	}
	switch len(args) {
	case 1:
		return fmt.Sprintf("%d", keys[0]), nil
	case 2:
		return fmt.Sprintf("%d:%d", keys[0], keys[1]), nil
	}
	return "", sqlerr.New(sqlerr.UndefinedFunction, "function pg_try_advisory_xact_lock with %d arguments does not exist", len(args))
}

// tryAdvisoryXactLock is pg_try_advisory_xact_lock on c.
func tryAdvisoryXactLock(c *conn, args []sqlite.Value) (sqlite.Value, *sqlerr.Error) {
	key, err := advisoryKey(args)
	if err != nil {
		return sqlite.Value{}, err.(*sqlerr.Error)
	}
	if c.advisory == nil {
		return sqlite.Value{}, sqlerr.New(sqlerr.FeatureNotSupported, "pg_try_advisory_xact_lock outside a transaction")
	}
	if c.advisory.try(key) {
		return sqlite.IntegerValue(1), nil
	}
	return sqlite.IntegerValue(0), nil
}
