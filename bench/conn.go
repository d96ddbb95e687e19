package bench

import (
	"context"
	"fmt"
	"strconv"
)

// Conn is one client connection to a target. Statements use PostgreSQL's
// $1, $2 ... placeholders; each target rewrites them as its server needs.
// A Conn is used by one goroutine.
type Conn interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, sql string, args ...any) (int64, error)
	// Query runs a query and returns all its rows. Values come as the
	// driver decodes them; read them with asInt, asFloat and asString.
	Query(ctx context.Context, sql string, args ...any) ([][]any, error)
	Close()
}

// Target is a system under test: a certa cluster, a PostgreSQL or MySQL
// server or cluster, or a local SQLite file.
type Target interface {
	// Name labels the target in reports ("certa", "galera", ...).
	Name() string
	// Nodes is how many nodes clients are spread over.
	Nodes() int
	// Open connects to node i % Nodes(), with the read consistency asked
	// for (ConsistencyLocal or ConsistencySync).
	Open(ctx context.Context, node int, consistency string) (Conn, error)
	// IsConflict reports whether err aborted a transaction that may be
	// retried: a certification conflict, a serialization failure, a
	// deadlock, a busy database.
	IsConflict(err error) bool
	// Durability says how a commit is made durable, for the report.
	Durability() string
	// Close releases what the target holds (temporary files).
	Close()
}

// Read consistency levels a benchmark session asks for.
const (
	// ConsistencyLocal reads the node's latest applied state (certa's
	// default; Galera with wsrep_sync_wait=0).
	ConsistencyLocal = "local"
	// ConsistencySync reads everything committed anywhere before the read
	// began (certa.consistency 'sync'; Galera with wsrep_sync_wait=1).
	ConsistencySync = "sync"
)

// asInt reads an integer value of a row.
func asInt(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	}
	return 0, fmt.Errorf("bench: %v (%T) is not an integer", v, v)
}

// asFloat reads a numeric value of a row.
func asFloat(v any) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case string:
		return strconv.ParseFloat(x, 64)
	case []byte:
		return strconv.ParseFloat(string(x), 64)
	}
	n, err := asInt(v)
	return float64(n), err
}

// asString reads a text value of a row.
func asString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// queryInt runs a query that returns one row whose first column is an integer.
func queryInt(ctx context.Context, c Conn, sql string, args ...any) (int64, error) {
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	if len(rows) == 0 || len(rows[0]) == 0 {
		return 0, errNoRows
	}
	return asInt(rows[0][0])
}
