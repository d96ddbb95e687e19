package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcluster"
)

// Flags every test cluster runs with: short lock waits keep same-node
// conflicts quick to show.
var testArgs = []string{"--lock-timeout", "500ms", "--commit-timeout", "6s"}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// mustExec runs sql and fails the test on error.
func mustExec(t *testing.T, c *pgclient.Conn, sql string, args ...any) string {
	t.Helper()
	tag, err := c.Exec(ctxT(t), sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag
}

// mustFail runs sql and checks it fails with SQLSTATE code.
func mustFail(t *testing.T, c *pgclient.Conn, code, sql string, args ...any) {
	t.Helper()
	_, err := c.Exec(ctxT(t), sql, args...)
	if got := pgclient.SQLState(err); got != code {
		t.Fatalf("%s: want SQLSTATE %s, got %v", sql, code, err)
	}
}

// values returns "id=value,..." of the test table, ordered by id.
func values(t *testing.T, c *pgclient.Conn, sql string) string {
	t.Helper()
	rows, err := c.Query(ctxT(t), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	s := ""
	for _, r := range rows {
		if s != "" {
			s += ","
		}
		s += fmt.Sprintf("%v=%v", r[0], r[1])
	}
	return s
}

// syncConn connects to node i with certa.consistency = 'sync', so its reads
// see every commit acknowledged before them.
func syncConn(t *testing.T, c *testcluster.Cluster, i int) *pgclient.Conn {
	conn := c.Conn(i)
	mustExec(t, conn, "SET certa.consistency = 'sync'")
	return conn
}

// toInt64 converts an integer column's value to int64.
func toInt64(v any) int64 {
	n, ok := pgclient.Int64(v)
	if !ok {
		panic(fmt.Sprintf("not an integer: %T %v", v, v))
	}
	return n
}

// startReference starts a real PostgreSQL server for a differential test
// and connects to it, by the extended protocol (as drivers with parameters
// do) or the simple one; both end with the test.
func startReference(t *testing.T, ctx context.Context, extended bool) *pgclient.Conn {
	t.Helper()
	pg := pgserver.Start(t)
	connect := pgclient.ConnectString
	if extended {
		connect = pgclient.ConnectExtended
	}
	ref, err := connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	return ref
}
