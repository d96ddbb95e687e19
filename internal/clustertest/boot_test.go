package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/localcluster"
	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// runNodeProcess runs `certa node` with a fresh set of loopback addresses
// and extra flags, and returns its output once it exits; a node still
// running after 20s fails the test (a node that must refuse to start must
// never hang).
func runNodeProcess(t *testing.T, id, dataDir string, extra ...string) (string, error) {
	t.Helper()
	args := []string{"node", "--id", id, "--data-dir", dataDir}
	for _, flag := range []string{"--pg-addr", "--http-addr", "--raft-addr"} {
		a, err := localcluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, flag, a)
	}
	bin := testcluster.Binary(t) // built before the clock starts: a build takes long on a busy machine
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, append(args, extra...)...).CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("certa node %v still running after 20s; output:\n%s", extra, out)
	}
	return string(out), err
}

// TestNodeRefusesToStartWithoutBootstrapOrJoin: a node with an empty data
// directory must be told whether to start a new cluster or to join one.
func TestNodeRefusesToStartWithoutBootstrapOrJoin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	out, err := runNodeProcess(t, "n1", dir)
	if err == nil {
		t.Fatalf("a node with no state, no --join and no --bootstrap started; output:\n%s", out)
	}
	for _, want := range []string{"holds no node state", "--join", "--bootstrap", dir} {
		if !strings.Contains(out, want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
	out, err = runNodeProcess(t, "n1", dir, "--bootstrap", "--join", "127.0.0.1:1")
	if err == nil || !strings.Contains(out, "--bootstrap and --join exclude each other") {
		t.Errorf("--bootstrap with --join: %v\n%s", err, out)
	}
}

// TestSecondProcessOnDataDirFails starts a second node on the data
// directory of a running one: it must fail at once, naming the directory
// and the process holding it, and the first node must go on.
func TestSecondProcessOnDataDirFails(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	n := c.Nodes[0]
	for _, extra := range [][]string{nil, {"--bootstrap"}} {
		start := time.Now()
		out, err := runNodeProcess(t, "n1", n.DataDir, extra...)
		if err == nil {
			t.Fatalf("second node on %s (flags %v) ran; output:\n%s", n.DataDir, extra, out)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("second node took %s to fail", d)
		}
		for _, want := range []string{"data directory in use", n.DataDir, fmt.Sprintf("process %d", n.PID())} {
			if !strings.Contains(out, want) {
				t.Errorf("flags %v: output does not say %q:\n%s", extra, want, out)
			}
		}
	}
	mustExec(t, c.Conn(0), "CREATE TABLE t (id integer PRIMARY KEY)")
}

// TestBootstrapRefusedOnDataDirWithState: --bootstrap is for the first start
// of a new cluster only.
func TestBootstrapRefusedOnDataDirWithState(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	c.Kill(0)
	out, err := runNodeProcess(t, "n1", c.Nodes[0].DataDir, "--bootstrap")
	if err == nil || !strings.Contains(out, "--bootstrap is only for the first start of a new cluster") {
		t.Fatalf("--bootstrap on a member's data directory: %v\n%s", err, out)
	}
	c.Restart(0)
	c.WaitReady(30 * time.Second)
}

// TestWipedNodeRejoinsItsCluster wipes a node's data directory while every
// node is down and restarts it alone: without --join it refuses to start;
// with --join it waits, cut off, and never acknowledges a write until the
// others are back, and then it is a member of their cluster with its data.
func TestWipedNodeRejoinsItsCluster(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	mustExec(t, c.Conn(0), "CREATE TABLE t (id integer PRIMARY KEY, v text)")
	mustExec(t, syncConn(t, c, 1), "INSERT INTO t VALUES (1, 'before')")
	for i := range c.Nodes {
		c.Kill(i)
	}
	if err := os.RemoveAll(c.Nodes[0].DataDir); err != nil {
		t.Fatal(err)
	}

	c.Restart(0)
	if err := c.Wait(0, 20*time.Second); err == nil || c.Nodes[0].Running() {
		t.Fatalf("wiped node without --join or --bootstrap did not fail to start (%v):\n%s", err, c.LogTail(0, 2000))
	}
	if log := c.LogTail(0, 2000); !strings.Contains(log, "holds no node state") {
		t.Fatalf("wiped node's log does not say why it stopped:\n%s", log)
	}

	c.Restart(0, "--join", c.Nodes[1].HTTPAddr+","+c.Nodes[2].HTTPAddr)
	c.Eventually(20*time.Second, "wiped node reports it is cut off", func() error {
		st, err := c.Status(0)
		if err != nil {
			return err
		}
		if st.Connected || st.CutOff == "" || st.CutOffSince == "" || st.Leader != "" {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	// It takes no client while it has not joined: nothing can be
	// acknowledged by a cluster of its own.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if conn, err := pgclient.Connect(ctx, c.Nodes[0].PGAddr); err == nil {
		_, err := conn.Exec(ctx, "INSERT INTO t VALUES (2, 'alone')")
		conn.Close()
		if err == nil {
			cancel()
			t.Fatal("the wiped node acknowledged a write while the rest of its cluster was down")
		}
	}
	cancel()

	c.Restart(1)
	c.Restart(2)
	c.WaitReady(60 * time.Second)
	// It takes clients once it has joined.
	c.Eventually(60*time.Second, "the wiped node takes clients", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgclient.Connect(ctx, c.Nodes[0].PGAddr)
		if err == nil {
			conn.Close()
		}
		return err
	})
	for i := range c.Nodes {
		st, err := c.Status(i)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Members) != 3 || !st.Connected {
			t.Fatalf("%s: %d members, connected %v", st.ID, len(st.Members), st.Connected)
		}
	}
	// Once caught up, it takes part in elections again: without it, n2
	// and n3 keep a majority only together.
	c.Eventually(30*time.Second, "the wiped node caught up", func() error {
		if st, err := c.Status(0); err != nil || st.CatchingUp {
			return fmt.Errorf("catching up (%v)", err)
		}
		return nil
	})
	sync0 := syncConn(t, c, 0)
	if got := values(t, sync0, "SELECT id, v FROM t ORDER BY id"); got != "1=before" {
		t.Fatalf("wiped node after rejoining: %s, want 1=before", got)
	}
	mustExec(t, sync0, "INSERT INTO t VALUES (3, 'after')")
	if got := values(t, syncConn(t, c, 2), "SELECT id, v FROM t ORDER BY id"); got != "1=before,3=after" {
		t.Fatalf("n3 after the wiped node's write: %s", got)
	}
	c.WaitConverged(60 * time.Second)
}

// TestCutOffNodeSaysSo stops the majority: the node left reports in
// /status and in its log that it is cut off, refuses writes, and says when
// it is connected again.
func TestCutOffNodeSaysSo(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	conn := c.Conn(0)
	mustExec(t, conn, "CREATE TABLE t (id integer PRIMARY KEY)")
	mustExec(t, conn, "INSERT INTO t VALUES (1)")
	if st, err := c.Status(0); err != nil || !st.Connected || st.CutOff != "" || st.CutOffSince != "" {
		t.Fatalf("connected node's status: %+v %v", st, err)
	}
	c.Kill(1)
	c.Kill(2)
	c.Eventually(20*time.Second, "n1 reports it is cut off", func() error {
		st, err := c.Status(0)
		if err != nil {
			return err
		}
		if st.Connected || !strings.Contains(st.CutOff, "cannot reach a majority") || st.CutOffSince == "" {
			return fmt.Errorf("status %+v", st)
		}
		if _, err := time.Parse(time.RFC3339, st.CutOffSince); err != nil {
			return err
		}
		return nil
	})
	mustFail(t, conn, "57P03", "INSERT INTO t VALUES (2)")
	if got := values(t, conn, "SELECT id, id FROM t"); got != "1=1" {
		t.Fatalf("local read while cut off: %s", got)
	}
	c.Eventually(20*time.Second, "a warning in n1's log", func() error {
		if !strings.Contains(c.LogTail(0, 20000), "cut off from the cluster") {
			return fmt.Errorf("no warning yet")
		}
		return nil
	})
	c.Restart(1)
	c.Restart(2)
	c.WaitReady(60 * time.Second)
	c.Eventually(20*time.Second, "n1 connected again", func() error {
		st, err := c.Status(0)
		if err != nil {
			return err
		}
		if !st.Connected || st.CutOff != "" {
			return fmt.Errorf("status %+v", st)
		}
		if !strings.Contains(c.LogTail(0, 20000), "connected to the cluster again") {
			return fmt.Errorf("log does not say so")
		}
		return nil
	})
	mustExec(t, conn, "INSERT INTO t VALUES (2)")
}

// TestNewRaftAddr restarts a node on another Raft address. Knowing no
// member's HTTP address (no snapshot yet, no --join), it reports why it is
// cut off; restarted with --join, it has the cluster update its address
// and serves writes again.
func TestNewRaftAddr(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	mustExec(t, c.Conn(0), "CREATE TABLE t (id integer PRIMARY KEY)")
	c.WaitConverged(30 * time.Second)
	c.Kill(2)
	old := c.Nodes[2].RaftAddr
	addr, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes[2].RaftAddr = addr
	c.Restart(2)
	c.Eventually(20*time.Second, "n3 reports the address mismatch", func() error {
		st, err := c.Status(2)
		if err != nil {
			return err
		}
		if st.Connected || !strings.Contains(st.CutOff, old) || !strings.Contains(st.CutOff, addr) {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
	mustFail(t, c.Conn(2), "57P03", "INSERT INTO t VALUES (1)")

	c.Kill(2)
	c.Restart(2, "--join", c.Nodes[0].HTTPAddr)
	c.Eventually(30*time.Second, "n3 connected on its new address", func() error {
		st, err := c.Status(2)
		if err != nil {
			return err
		}
		if !st.Connected {
			return fmt.Errorf("status %+v", st)
		}
		for _, m := range st.Members {
			if m.ID == c.Nodes[2].ID && m.RaftAddr != addr {
				return fmt.Errorf("member %s at %s", m.ID, m.RaftAddr)
			}
		}
		return nil
	})
	mustExec(t, c.Conn(2), "INSERT INTO t VALUES (1)")
	if got := values(t, syncConn(t, c, 0), "SELECT id, id FROM t"); got != "1=1" {
		t.Fatalf("n1 after n3's write: %s", got)
	}
	c.WaitConverged(60 * time.Second)
}

// TestNewRaftAddrAfterSnapshot restarts a node that has a snapshot (so it
// knows its members' HTTP addresses) on another Raft address, without
// --join: it has the cluster update its address by itself.
func TestNewRaftAddrAfterSnapshot(t *testing.T) {
	c := testcluster.Start(t, 3, snapshotArgs...)
	mustExec(t, c.Conn(0), "CREATE TABLE acked (id integer PRIMARY KEY, node integer)")
	mustExec(t, syncConn(t, c, 1), "SELECT 1 FROM acked") // node 2 has the table
	insertRows(t, c, []int{0, 1}, 1, 50)
	c.WaitConverged(30 * time.Second)
	snapshotAdvanced(t, c, 2, 0)
	c.Kill(2)
	addr, err := localcluster.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes[2].RaftAddr = addr
	c.Restart(2)
	c.Eventually(30*time.Second, "n3 connected on its new address", func() error {
		st, err := c.Status(2)
		if err != nil {
			return err
		}
		if !st.Connected {
			return fmt.Errorf("status %+v", st)
		}
		for _, m := range st.Members {
			if m.ID == c.Nodes[2].ID && m.RaftAddr != addr {
				return fmt.Errorf("member %s at %s", m.ID, m.RaftAddr)
			}
		}
		return nil
	})
	mustExec(t, syncConn(t, c, 2), "INSERT INTO acked VALUES (1000, 2)")
	c.WaitConverged(60 * time.Second)
}
