// Package testcluster runs real certa clusters for tests: separate `certa
// node` processes built from this module (localcluster), on loopback
// ports, that tests kill, pause, restart and query with a real PostgreSQL
// client; failures fail the test.
package testcluster

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"certa/internal/localcluster"
	"certa/internal/pgclient"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// Main runs a test package that uses clusters and removes the binary
// afterwards. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// Binary builds the certa binary once per test process and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildErr = statSources(); buildErr != nil {
			return
		}
		dir, err := os.MkdirTemp("", "certa-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "certa")
		out, err := exec.Command("go", "build", "-o", binary, "certa/cmd/certa").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// statSources looks at every source file of the module. go test caches a
// package's result until a file the test looked at changes; the binary is
// built from the whole module, so the test must look at all of it.
func statSources() error {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(out)))
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != root {
			return filepath.SkipDir
		}
		if name := d.Name(); strings.HasSuffix(name, ".go") || name == "go.mod" || name == "go.sum" {
			_, err = os.Stat(path)
		}
		return err
	})
}

// Cluster is a running test cluster: a localcluster.Cluster whose
// failures fail the test.
type Cluster struct {
	*localcluster.Cluster
	t testing.TB
	// divergenceMade: the test made a node differ on purpose.
	divergenceMade bool
}

// DivergenceMade tells the cluster that the test makes a node's data
// differ on purpose: the signs of it in the nodes' logs do not fail the
// test.
func (c *Cluster) DivergenceMade() { c.divergenceMade = true }

// Node is one node process of a test cluster.
type Node = localcluster.Node

// Status is the part of a node's /status the tests read.
type Status = localcluster.Status

// Start starts an n-node cluster and waits until every node knows every
// member and a leader. The cluster is stopped when the test ends (with
// the nodes' log tails printed if the test failed).
func Start(t testing.TB, n int, extraArgs ...string) *Cluster {
	t.Helper()
	return start(t, localcluster.Config{Binary: Binary(t), Dir: t.TempDir(), Args: extraArgs}, n)
}

// StartNodeArgs is Start with extra flags per node: nodeArgs(i) at each
// start of node i (localcluster.Config.NodeArgs).
func StartNodeArgs(t testing.TB, n int, nodeArgs func(i int) []string, extraArgs ...string) *Cluster {
	t.Helper()
	return start(t, localcluster.Config{Binary: Binary(t), Dir: t.TempDir(), Args: extraArgs, NodeArgs: nodeArgs}, n)
}

// StartPeerTLS is Start with node-to-node traffic over mutual TLS
// (localcluster.Config.PeerTLS).
func StartPeerTLS(t testing.TB, n int, extraArgs ...string) *Cluster {
	t.Helper()
	return start(t, localcluster.Config{Binary: Binary(t), Dir: t.TempDir(), Args: extraArgs, PeerTLS: true}, n)
}

func start(t testing.TB, cfg localcluster.Config, n int) *Cluster {
	t.Helper()
	lc, err := localcluster.Start(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{Cluster: lc, t: t}
	t.Cleanup(c.stop)
	c.WaitReady(60 * time.Second)
	return c
}

func (c *Cluster) stop() {
	c.Stop()
	// Every cluster test also checks that no node logged a sign of
	// divergence (localcluster.DivergenceLogs).
	for _, n := range c.Nodes {
		if c.divergenceMade {
			break
		}
		if log, err := os.ReadFile(n.Log); err == nil {
			for _, msg := range localcluster.DivergenceLogs {
				if bytes.Contains(log, []byte(msg)) {
					c.t.Errorf("%s logged %q: a node diverged, or certification missed a conflict", n.ID, msg)
				}
			}
		}
	}
	if c.t.Failed() {
		for i, n := range c.Nodes {
			c.t.Logf("---- log of %s (tail) ----\n%s", n.ID, c.LogTail(i, 6000))
		}
	}
}

// Add starts one more node that joins through node via, waits until every
// node knows every member and a leader, and returns the new node's index.
func (c *Cluster) Add(via int) int {
	c.t.Helper()
	i, err := c.Cluster.Add(via)
	if err != nil {
		c.t.Fatal(err)
	}
	c.WaitReady(60 * time.Second)
	return i
}

// Restart starts node i again on its data directory (after Kill), with
// extra flags for this start only.
func (c *Cluster) Restart(i int, extra ...string) {
	c.t.Helper()
	if err := c.Cluster.Restart(i, extra...); err != nil {
		c.t.Fatal(err)
	}
}

// WaitConverged waits until every node has applied the same seqno and
// reports the same checksums of every table (load must have stopped), and
// returns how long that took.
func (c *Cluster) WaitConverged(timeout time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	c.Eventually(timeout, "every node with the same data", c.Converged)
	return time.Since(start)
}

// WaitReady waits until every node reports a leader and all members with
// their client addresses.
func (c *Cluster) WaitReady(timeout time.Duration) {
	c.t.Helper()
	c.Eventually(timeout, "cluster ready", c.Ready)
}

// Eventually polls f until it returns nil or timeout passes (then fails the test).
func (c *Cluster) Eventually(timeout time.Duration, what string, f func() error) {
	c.t.Helper()
	if err := localcluster.Poll(timeout, f); err != nil {
		c.t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
	}
}

// Conn connects a client to node i; it is closed when the cluster's test ends.
func (c *Cluster) Conn(i int) *pgclient.Conn { return c.ConnFor(c.t, i) }

// ConnFor connects a client to node i; it is closed when t ends.
func (c *Cluster) ConnFor(t testing.TB, i int) *pgclient.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgclient.Connect(ctx, c.Nodes[i].PGAddr)
	if err != nil {
		t.Fatalf("connect to %s: %v", c.Nodes[i].ID, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
