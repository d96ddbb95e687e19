// Package testcluster runs real certa clusters for tests: separate `certa
// node` processes built from this module, on loopback ports, that tests
// kill, pause, restart and query with a real PostgreSQL client.
package testcluster

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

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

// Node is one node process of a test cluster.
type Node struct {
	ID, PGAddr, HTTPAddr, RaftAddr, DataDir string
	Log                                     string // file the node's output goes to

	cmd  *exec.Cmd
	done chan struct{}
}

// Cluster is a running test cluster.
type Cluster struct {
	t     testing.TB
	Nodes []*Node
	Args  []string // extra flags for every node
	base  string   // directory holding the nodes' data directories and logs
}

// Start starts an n-node cluster and waits until every node knows every
// member and a leader. The cluster is stopped when the test ends.
func Start(t testing.TB, n int, extraArgs ...string) *Cluster {
	t.Helper()
	Binary(t)
	c := &Cluster{t: t, Args: extraArgs, base: t.TempDir()}
	for range n {
		c.newNode()
	}
	t.Cleanup(c.stopAll)
	for i := range c.Nodes {
		join := ""
		if i > 0 {
			join = c.Nodes[0].HTTPAddr
		}
		c.start(i, join)
	}
	c.WaitReady(60 * time.Second)
	return c
}

// newNode adds the description of one more node (not started).
func (c *Cluster) newNode() int {
	id := fmt.Sprintf("n%d", len(c.Nodes)+1)
	c.Nodes = append(c.Nodes, &Node{
		ID: id, PGAddr: freeAddr(c.t), HTTPAddr: freeAddr(c.t), RaftAddr: freeAddr(c.t),
		DataDir: filepath.Join(c.base, id), Log: filepath.Join(c.base, id+".log"),
	})
	return len(c.Nodes) - 1
}

// Add starts one more node that joins through node via, waits until every
// node knows every member and a leader, and returns the new node's index.
func (c *Cluster) Add(via int) int {
	c.t.Helper()
	i := c.newNode()
	c.start(i, c.Nodes[via].HTTPAddr)
	c.WaitReady(60 * time.Second)
	return i
}

func (c *Cluster) start(i int, join string) {
	n := c.Nodes[i]
	args := []string{"node", "--id", n.ID, "--data-dir", n.DataDir,
		"--pg-addr", n.PGAddr, "--http-addr", n.HTTPAddr, "--raft-addr", n.RaftAddr}
	if join != "" {
		args = append(args, "--join", join)
	}
	args = append(args, c.Args...)
	logf, err := os.OpenFile(n.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	n.cmd, n.done = cmd, make(chan struct{})
	go func() {
		cmd.Wait()
		logf.Close()
		close(n.done)
	}()
}

func (c *Cluster) stopAll() {
	for _, n := range c.Nodes {
		if n.cmd != nil {
			n.cmd.Process.Signal(syscall.SIGCONT)
			n.cmd.Process.Kill()
			<-n.done
		}
	}
	if c.t.Failed() {
		for _, n := range c.Nodes {
			if b, err := os.ReadFile(n.Log); err == nil {
				tail := b
				if len(tail) > 6000 {
					tail = tail[len(tail)-6000:]
				}
				c.t.Logf("---- log of %s (tail) ----\n%s", n.ID, tail)
			}
		}
	}
}

// Kill kills node i with SIGKILL and waits until it is gone.
func (c *Cluster) Kill(i int) {
	n := c.Nodes[i]
	n.cmd.Process.Kill()
	<-n.done
}

// Restart starts node i again on its data directory (after Kill).
func (c *Cluster) Restart(i int) { c.start(i, "") }

// Pause stops node i with SIGSTOP; Resume continues it.
func (c *Cluster) Pause(i int)  { c.Nodes[i].cmd.Process.Signal(syscall.SIGSTOP) }
func (c *Cluster) Resume(i int) { c.Nodes[i].cmd.Process.Signal(syscall.SIGCONT) }

// Status is the part of a node's /status the tests read.
type Status struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Leader       string `json:"leader"`
	AppliedSeqno uint64 `json:"applied_seqno"`
	CommitSeqno  uint64 `json:"commit_seqno"`
	Certified    uint64 `json:"certified"`
	Conflicts    uint64 `json:"conflicts"`
	// SnapshotIndex is the newest Raft snapshot the node took or received.
	SnapshotIndex  uint64 `json:"log_snapshot_index"`
	StateTransfers uint64 `json:"state_transfers"`
	Members        []struct {
		ID     string `json:"id"`
		PGAddr string `json:"pg_addr"`
		Voter  bool   `json:"voter"`
	} `json:"members"`
}

// Status fetches node i's status.
func (c *Cluster) Status(i int) (Status, error) {
	var st Status
	cl := http.Client{Timeout: 2 * time.Second}
	resp, err := cl.Get("http://" + c.Nodes[i].HTTPAddr + "/status")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&st)
	return st, err
}

// Checksums fetches node i's GET /checksum: its applied seqno and its
// per-table checksums as one comparable string.
func (c *Cluster) Checksums(i int) (seqno uint64, tables string, err error) {
	var cs struct {
		Seqno  uint64            `json:"applied_seqno"`
		Tables []json.RawMessage `json:"tables"`
	}
	cl := http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get("http://" + c.Nodes[i].HTTPAddr + "/checksum")
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("%s: GET /checksum: %s", c.Nodes[i].ID, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&cs); err != nil {
		return 0, "", err
	}
	for _, t := range cs.Tables {
		tables += string(t) + "\n"
	}
	return cs.Seqno, tables, nil
}

// WaitConverged waits until every node has applied the same seqno and
// reports the same checksums of every table (load must have stopped).
func (c *Cluster) WaitConverged(timeout time.Duration) time.Duration {
	c.t.Helper()
	start := time.Now()
	c.Eventually(timeout, "every node with the same data", func() error {
		seq0, sums0, err := c.Checksums(0)
		if err != nil {
			return err
		}
		for i := 1; i < len(c.Nodes); i++ {
			seq, sums, err := c.Checksums(i)
			if err != nil {
				return err
			}
			if seq != seq0 || sums != sums0 {
				return fmt.Errorf("%s at seqno %d, %s at seqno %d:\n%s\n%s", c.Nodes[0].ID, seq0, c.Nodes[i].ID, seq, sums0, sums)
			}
		}
		return nil
	})
	return time.Since(start)
}

// WaitReady waits until every node reports a leader and all members with
// their client addresses.
func (c *Cluster) WaitReady(timeout time.Duration) {
	c.t.Helper()
	c.Eventually(timeout, "cluster ready", func() error {
		for i := range c.Nodes {
			st, err := c.Status(i)
			if err != nil {
				return err
			}
			if st.Leader == "" || len(st.Members) != len(c.Nodes) {
				return fmt.Errorf("%s: leader %q, %d members", st.ID, st.Leader, len(st.Members))
			}
			for _, m := range st.Members {
				if m.PGAddr == "" {
					return fmt.Errorf("%s: member %s has no address yet", st.ID, m.ID)
				}
			}
		}
		return nil
	})
}

// Eventually polls f until it returns nil or timeout passes (then fails the test).
func (c *Cluster) Eventually(timeout time.Duration, what string, f func() error) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not reached within %s: %v", what, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
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

func freeAddr(t testing.TB) string {
	// Below the kernel's ephemeral range (32768 and up on Linux): a port
	// found free there could be taken by some outgoing connection's local
	// end before the node binds it.
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", 20000+rand.IntN(12000))
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("no free port found in 20000-31999")
	return ""
}
