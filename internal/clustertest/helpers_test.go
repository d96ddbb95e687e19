package clustertest

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// migrateUnderLoad runs a migration block on node 1 (alter, then setting
// pages = 100 on the books titled '... book') while node 3 inserts books
// without pause, retrying it on 40001 up to 20 times; it fails the test
// unless the block commits.
func migrateUnderLoad(t *testing.T, c *testcluster.Cluster, alter string) {
	t.Helper()
	a, w := c.Conn(0), syncConn(t, c, 2)
	stop := make(chan struct{})
	done := make(chan struct{})
	var written atomic.Int64
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := w.Exec(ctxT(t), "INSERT INTO book (author_id, title) VALUES (NULL, $1)", fmt.Sprint("load ", i)); err == nil {
				written.Add(1)
			}
		}
	}()
	c.Eventually(10*time.Second, "the writer under way", func() error {
		if written.Load() < 20 {
			return fmt.Errorf("%d rows written", written.Load())
		}
		return nil
	})
	before := written.Load()
	committed, tries := false, 0
	for ; tries < 20 && !committed; tries++ {
		mustExec(t, a, "BEGIN")
		_, err := a.Exec(ctxT(t), alter)
		if err == nil {
			_, err = a.Exec(ctxT(t), "UPDATE book SET pages = 100 WHERE title LIKE '%book'")
		}
		if err == nil {
			_, err = a.Exec(ctxT(t), "COMMIT")
		} else {
			a.Exec(ctxT(t), "ROLLBACK")
		}
		switch {
		case err == nil:
			committed = true
		case !strings.Contains(err.Error(), "40001"):
			close(stop)
			<-done
			t.Fatalf("migration under load: %v", err)
		}
	}
	close(stop)
	<-done
	t.Logf("migration under load committed at try %d; the writer committed %d rows meanwhile", tries, written.Load()-before)
	if !committed {
		t.Fatal("the migration failed with 40001 20 times")
	}
}

// referencePostgres starts a plain PostgreSQL server with what a client
// finds on a cluster: database certa of superuser certa.
func referencePostgres(t *testing.T) *pgserver.Server {
	t.Helper()
	ref := pgserver.Start(t)
	conn, err := pgclient.ConnectString(ctxT(t), ref.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, sql := range []string{"CREATE ROLE certa SUPERUSER LOGIN", "CREATE DATABASE certa OWNER certa"} {
		mustExec(t, conn, sql)
	}
	return ref
}

// superuserConn connects to node i's PostgreSQL server as its superuser,
// through the server's socket: what certa keeps from its clients is in
// sight there.
func superuserConn(t *testing.T, c *testcluster.Cluster, i int) *pgclient.Conn {
	t.Helper()
	conn, err := pgclient.ConnectString(ctxT(t), "host="+filepath.Join(c.Nodes[i].DataDir, "pg")+" user=postgres dbname=certa")
	if err != nil {
		t.Fatal(err)
	}
	return conn
}
