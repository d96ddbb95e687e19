package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"certa/internal/testcluster"
)

// startFunc starts a cluster of n nodes with testArgs.
type startFunc func(t *testing.T, n int) *testcluster.Cluster

// forEachEngine runs test once per engine, as subtests named after it.
func forEachEngine(t *testing.T, test func(*testing.T, startFunc)) {
	t.Run("sqlite", func(t *testing.T) {
		test(t, func(t *testing.T, n int) *testcluster.Cluster { return testcluster.Start(t, n, testArgs...) })
	})
	t.Run("postgres", func(t *testing.T) {
		test(t, func(t *testing.T, n int) *testcluster.Cluster { return startPostgresCluster(t, n) })
	})
}

// startPostgresCluster starts n nodes with --engine postgres: each runs a
// PostgreSQL server in its data directory (as the postgres user when the
// test runs as root, so the directories above must let it through).
func startPostgresCluster(t *testing.T, n int, args ...string) *testcluster.Cluster {
	t.Helper()
	if os.Geteuid() == 0 {
		for d := filepath.Dir(t.TempDir()); d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(args) == 0 {
		args = testArgs
	}
	return testcluster.Start(t, n, append([]string{"--engine", "postgres"}, args...)...)
}

// A cluster over real PostgreSQL servers, used as a client would: DDL,
// writes on every node seen on every node with PostgreSQL's own types,
// casts and catalogs, a conflicting transaction across nodes refused with
// 40001, and every node's tables the same.
func TestPostgresEngineCluster(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE acct (id bigint PRIMARY KEY, owner text NOT NULL, balance numeric(12,2), tags text[])")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		tag := mustExec(t, conn, "INSERT INTO acct VALUES ($1, $2, 10.05, '{a,b}'::text[])", i+1, fmt.Sprintf("owner %d", i+1))
		if tag != "INSERT 0 1" {
			t.Fatalf("tag %q", tag)
		}
	}
	for i := range c.Nodes {
		got := values(t, syncConn(t, c, i), "SELECT id, owner || ' ' || balance::text || ' ' || tags::text FROM acct ORDER BY id")
		if want := "1=owner 1 10.05 {a,b},2=owner 2 10.05 {a,b},3=owner 3 10.05 {a,b}"; got != want {
			t.Fatalf("node %d sees %q, want %q", i+1, got, want)
		}
	}
	// PostgreSQL's own catalogs and types.
	if typ, err := syncConn(t, c, 2).QueryString(ctxT(t), "SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'acct'::regclass AND attname = 'balance'"); err != nil || typ != "numeric(12,2)" {
		t.Fatalf("balance column type %q, %v", typ, err)
	}

	// First committer wins across nodes.
	a, b := syncConn(t, c, 0), syncConn(t, c, 1)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE acct SET balance = balance + 1 WHERE id = 1")
	mustExec(t, b, "UPDATE acct SET balance = balance + 100 WHERE id = 1")
	mustFail(t, a, "40001", "COMMIT")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, balance::text FROM acct WHERE id = 1"); got != "1=110.05" {
			t.Fatalf("node %d: %s, want 1=110.05", i+1, got)
		}
	}
	// What would reach past replication is refused.
	mustFail(t, a, "0A000", "TRUNCATE acct")
	mustFail(t, a, "42P16", "CREATE TABLE nokey (v int)")
	mustFail(t, a, "42501", "DELETE FROM certa.capture")
	if err := c.Converged(); err != nil {
		t.Fatal(err)
	}
}

// SERIAL and identity columns hand out values on every node at once
// without two nodes ever giving the same one.
func TestPostgresEngineSequences(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE s (id serial PRIMARY KEY, node int)")
	mustExec(t, c.Conn(0), "CREATE TABLE g (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, node int)")
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				for _, table := range []string{"s", "g"} {
					if _, err := conn.Exec(ctxT(t), "INSERT INTO "+table+" (node) VALUES ($1)", i); err != nil {
						errs <- fmt.Errorf("node %d, table %s: %w", i+1, table, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, table := range []string{"s", "g"} {
		got := values(t, syncConn(t, c, 1), "SELECT count(*), count(DISTINCT id) FROM "+table)
		if got != "90=90" {
			t.Fatalf("%s: rows=distinct ids %s, want 90=90", table, got)
		}
		// Each node's values are its own residue of the stride.
		if n, err := syncConn(t, c, 2).QueryInt(ctxT(t), "SELECT count(DISTINCT (node, id % 128)) FROM "+table); err != nil || n != 3 {
			t.Fatalf("%s: %d (node, residue) pairs, %v; want 3", table, n, err)
		}
	}
	if err := c.Converged(); err != nil {
		t.Fatal(err)
	}
}
