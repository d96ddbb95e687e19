// Package localcluster runs a certa cluster of separate `certa node`
// processes on this machine, on loopback ports, and controls them: kill,
// pause, resume, restart, add a node, read status and checksums. The cluster
// tests (through testcluster) and the fault-injection harness (chaos) use
// it.
package localcluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"certa/orderlog/raftlog"
	"certa/peertls"
	"certa/replica"
)

// Config describes a cluster to start.
type Config struct {
	Binary string   // the certa executable
	Dir    string   // holds each node's data directory and log
	Args   []string // extra flags for every node
	// NodeArgs, if not nil, returns extra flags for node i, at each of its
	// starts (a database of its own: --postgres-dsn).
	NodeArgs func(i int) []string
	// Net places the nodes in a network of their own; nil runs them on
	// loopback ports.
	Net Network
	// PeerTLS makes node-to-node traffic mutual TLS, with a CA made in
	// Dir/certs and a certificate per node (CertFiles); the cluster's own
	// HTTP calls present node 1's.
	PeerTLS bool
}

// Network is where nodes run when they do not share loopback.
type Network interface {
	// Addrs returns node i's client, HTTP and Raft listen addresses.
	Addrs(i int) (pg, http, raft string, err error)
	// Command returns the command running name with args in node i's
	// network; its process must be the node's (signals reach the node).
	Command(i int, name string, args ...string) *exec.Cmd
}

// NodeID is the id of the i-th node (from 0); its data directory is
// Config.Dir/NodeID(i).
func NodeID(i int) string { return fmt.Sprintf("n%d", i+1) }

// Node is one node process.
type Node struct {
	ID, PGAddr, HTTPAddr, RaftAddr, DataDir string
	Log                                     string // file the node's output goes to

	cmd     *exec.Cmd
	done    chan struct{}
	killing atomic.Bool // Kill ended it
	exitErr error       // as cmd.Wait reported it; set before done closes
}

// PID returns the process id of the node's current or last process (0:
// never started).
func (n *Node) PID() int {
	if n.cmd == nil || n.cmd.Process == nil {
		return 0
	}
	return n.cmd.Process.Pid
}

// Exit is a node process that ended without being killed.
type Exit struct {
	Node string
	Err  error // as cmd.Wait reported it
}

// Running reports whether the node's process is running (it may be paused).
func (n *Node) Running() bool {
	if n.done == nil {
		return false
	}
	select {
	case <-n.done:
		return false
	default:
		return true
	}
}

// Cluster is a running cluster.
type Cluster struct {
	Nodes []*Node
	cfg   Config
	http  *http.Client
	// scheme of the nodes' HTTP API: "https" with PeerTLS.
	scheme string

	mu    sync.Mutex
	exits []Exit
	// removed are the nodes taken out of the cluster's membership
	// (MarkRemoved): Ready and Converged do not expect them.
	removed map[int]bool
}

// MarkRemoved records that node i was removed from the cluster's
// membership (certa member remove).
func (c *Cluster) MarkRemoved(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.removed == nil {
		c.removed = map[int]bool{}
	}
	c.removed[i] = true
}

// members returns the indexes of the nodes that belong to the cluster.
func (c *Cluster) members() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []int
	for i := range c.Nodes {
		if !c.removed[i] {
			out = append(out, i)
		}
	}
	return out
}

// Exits returns the node processes that ended by themselves (a crash, or
// a node stopping itself), oldest first.
func (c *Cluster) Exits() []Exit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Exit(nil), c.exits...)
}

// Start starts an n-node cluster: the first node bootstraps (--bootstrap),
// the others join through it. It does not wait for the cluster to be ready
// (Ready).
func Start(cfg Config, n int) (*Cluster, error) {
	c := &Cluster{cfg: cfg, http: &http.Client{Timeout: 10 * time.Second}, scheme: "http"}
	for range n {
		if _, err := c.newNode(); err != nil {
			return nil, err
		}
	}
	if cfg.PeerTLS {
		if err := peertls.MakeCA(c.CertDir(), 24*time.Hour); err != nil {
			return nil, err
		}
		if err := c.makeCert(0); err != nil {
			return nil, err
		}
		peer, err := peertls.Load(c.CertFiles(0))
		if err != nil {
			return nil, err
		}
		c.http.Transport = &http.Transport{TLSClientConfig: peer.Client()}
		c.scheme = "https"
	}
	for i := range c.Nodes {
		args := []string{"--bootstrap"}
		if i > 0 {
			args = []string{"--join", c.Nodes[0].HTTPAddr}
		}
		if err := c.start(i, args...); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// newNode adds the description of one more node (not started).
func (c *Cluster) newNode() (int, error) {
	i := len(c.Nodes)
	id := NodeID(i)
	var addrs [3]string
	if c.cfg.Net != nil {
		var err error
		if addrs[0], addrs[1], addrs[2], err = c.cfg.Net.Addrs(i); err != nil {
			return 0, err
		}
	}
	for k := range addrs {
		if addrs[k] != "" {
			continue
		}
		a, err := FreeAddr()
		if err != nil {
			return 0, err
		}
		addrs[k] = a
	}
	c.Nodes = append(c.Nodes, &Node{
		ID: id, PGAddr: addrs[0], HTTPAddr: addrs[1], RaftAddr: addrs[2],
		DataDir: filepath.Join(c.cfg.Dir, id), Log: filepath.Join(c.cfg.Dir, id+".log"),
	})
	return len(c.Nodes) - 1, nil
}

// Add starts one more node that joins through node via and returns its index.
func (c *Cluster) Add(via int) (int, error) {
	i, err := c.newNode()
	if err != nil {
		return 0, err
	}
	return i, c.start(i, "--join", c.Nodes[via].HTTPAddr)
}

// CertDir is where a PeerTLS cluster's CA and node certificates are.
func (c *Cluster) CertDir() string { return filepath.Join(c.cfg.Dir, "certs") }

// CertFiles are node i's peer TLS files.
func (c *Cluster) CertFiles(i int) peertls.Files { return peertls.NodeFiles(c.CertDir(), NodeID(i)) }

// makeCert makes node i's certificate, for the hosts of its addresses,
// unless it has one.
func (c *Cluster) makeCert(i int) error {
	if _, err := os.Stat(c.CertFiles(i).Cert); err == nil {
		return nil
	}
	n := c.Nodes[i]
	var hosts []string
	for _, a := range []string{n.HTTPAddr, n.RaftAddr} {
		if h, _, err := net.SplitHostPort(a); err == nil && !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	return peertls.MakeNodeCert(c.CertDir(), n.ID, hosts, 24*time.Hour)
}

// start starts node i's process with the cluster's flags and extra.
func (c *Cluster) start(i int, extra ...string) error {
	n := c.Nodes[i]
	args := []string{"node", "--id", n.ID, "--data-dir", n.DataDir,
		"--pg-addr", n.PGAddr, "--http-addr", n.HTTPAddr, "--raft-addr", n.RaftAddr}
	if c.cfg.PeerTLS {
		if err := c.makeCert(i); err != nil {
			return err
		}
		f := c.CertFiles(i)
		args = append(args, "--peer-cert", f.Cert, "--peer-key", f.Key, "--peer-ca", f.CA)
	}
	args = append(args, extra...)
	args = append(args, c.cfg.Args...)
	if c.cfg.NodeArgs != nil {
		args = append(args, c.cfg.NodeArgs(i)...)
	}
	logf, err := os.OpenFile(n.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(c.cfg.Binary, args...)
	if c.cfg.Net != nil {
		cmd = c.cfg.Net.Command(i, c.cfg.Binary, args...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	// A test binary killed by its timeout runs no cleanup: the kernel
	// ends the nodes with it (and each node's PostgreSQL with the node).
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	n.cmd, n.done = cmd, make(chan struct{})
	n.killing.Store(false)
	go func() {
		err := cmd.Wait()
		logf.Close()
		n.exitErr = err
		if !n.killing.Load() {
			c.mu.Lock()
			c.exits = append(c.exits, Exit{Node: n.ID, Err: err})
			c.mu.Unlock()
		}
		close(n.done)
	}()
	return nil
}

// Stop kills every node and waits until they are gone.
func (c *Cluster) Stop() {
	for i := range c.Nodes {
		c.Kill(i)
	}
}

// Kill kills node i with SIGKILL (also when paused) and waits until it is
// gone. Killing a node that is not running does nothing.
func (c *Cluster) Kill(i int) {
	n := c.Nodes[i]
	if !n.Running() {
		return
	}
	n.killing.Store(true)
	n.cmd.Process.Signal(syscall.SIGCONT)
	n.cmd.Process.Kill()
	<-n.done
}

// Restart starts node i again on its data directory (after Kill), with
// extra flags for this start only (e.g. "--join", addr after its data
// directory was removed).
func (c *Cluster) Restart(i int, extra ...string) error {
	if c.Nodes[i].Running() {
		return fmt.Errorf("%s is still running", c.Nodes[i].ID)
	}
	return c.start(i, extra...)
}

// Wait waits until node i's process has ended (it must have been started)
// and returns how it ended: nil after Kill or a clean exit.
func (c *Cluster) Wait(i int, timeout time.Duration) error {
	n := c.Nodes[i]
	select {
	case <-n.done:
	case <-time.After(timeout):
		return fmt.Errorf("%s still running after %s", n.ID, timeout)
	}
	if n.killing.Load() {
		return nil
	}
	return n.exitErr
}

// DivergenceLogs are messages a node logs only when its data may differ
// from the cluster's: tests fail when a node logs one.
var DivergenceLogs = []string{replica.UnforeseenConflictLog, replica.TookStateLog, raftlog.TruncatingCommittedLog}

// Pause stops node i with SIGSTOP and waits (up to 5 s) until every
// thread of the process has stopped. The kernel stops the threads one after
// another, the last ones only once the first has taken the signal: on a
// busy machine a thread of a "paused" node went on answering Raft for a
// while, and a write on the minority committed.
func (c *Cluster) Pause(i int) {
	c.signal(i, syscall.SIGSTOP)
	if n := c.Nodes[i]; n.Running() {
		deadline := time.Now().Add(5 * time.Second)
		for !allThreadsStopped(n.cmd.Process.Pid) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
	}
}

// Resume continues node i after Pause.
func (c *Cluster) Resume(i int) { c.signal(i, syscall.SIGCONT) }

// allThreadsStopped reports whether every thread of process pid is in the
// stopped state ('T' in /proc/pid/task/*/stat).
func allThreadsStopped(pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false
	}
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			return false
		}
		// The state follows the command name, which is in parentheses.
		end := bytes.LastIndexByte(b, ')')
		if end < 0 || end+2 >= len(b) || b[end+2] != 'T' {
			return false
		}
	}
	return true
}

func (c *Cluster) signal(i int, sig syscall.Signal) {
	if n := c.Nodes[i]; n.Running() {
		n.cmd.Process.Signal(sig)
	}
}

// LogTail returns the last max bytes of node i's output.
func (c *Cluster) LogTail(i, max int) string {
	b, err := os.ReadFile(c.Nodes[i].Log)
	if err != nil {
		return ""
	}
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// Status is the part of a node's /status that callers read.
type Status struct {
	ID           string `json:"id"`
	Role         string `json:"role"`
	Leader       string `json:"leader"`
	AppliedSeqno uint64 `json:"applied_seqno"`
	CommitSeqno  uint64 `json:"commit_seqno"`
	Certified    uint64 `json:"certified"`
	Conflicts    uint64 `json:"conflicts"`
	// UnforeseenConflicts: certified write sets that did not match the
	// node's rows at apply (should stay 0).
	UnforeseenConflicts uint64 `json:"unforeseen_conflicts"`
	// SnapshotIndex is the newest Raft snapshot the node took or received.
	SnapshotIndex  uint64 `json:"log_snapshot_index"`
	Term           uint64 `json:"log_term"`
	StateTransfers uint64 `json:"state_transfers"`
	// Resyncs: state transfers the node made because a write set that
	// failed there applied on another node (its data had differed).
	Resyncs uint64 `json:"resyncs"`
	Members []struct {
		ID       string `json:"id"`
		PGAddr   string `json:"pg_addr"`
		RaftAddr string `json:"raft_addr"`
		Voter    bool   `json:"voter"`
	} `json:"members"`
	// Connected is false while the node knows no leader; CutOffSince and
	// CutOff then say since when and why.
	Connected   bool   `json:"connected"`
	CutOffSince string `json:"cut_off_since"`
	CutOff      string `json:"cut_off"`
	// CatchingUp: the node joined with no state and takes no part in
	// elections until it has caught up.
	CatchingUp bool `json:"catching_up"`
}

// Status fetches node i's status.
func (c *Cluster) Status(i int) (Status, error) {
	var st Status
	err := c.getJSON(c.Nodes[i].HTTPAddr, "/status", &st)
	return st, err
}

// Checksums fetches node i's GET /checksum: its applied seqno and its
// per-table checksums as one comparable string.
func (c *Cluster) Checksums(i int) (seqno uint64, tables string, err error) {
	var cs struct {
		Seqno  uint64            `json:"applied_seqno"`
		Tables []json.RawMessage `json:"tables"`
	}
	if err := c.getJSON(c.Nodes[i].HTTPAddr, "/checksum", &cs); err != nil {
		return 0, "", err
	}
	for _, t := range cs.Tables {
		tables += string(t) + "\n"
	}
	return cs.Seqno, tables, nil
}

// Goroutines returns node i's goroutine dump (GET /debug/pprof/goroutine),
// to see where a stuck node waits.
func (c *Cluster) Goroutines(i int) ([]byte, error) {
	resp, err := c.http.Get(c.scheme + "://" + c.Nodes[i].HTTPAddr + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

func (c *Cluster) getJSON(addr, path string, v any) error {
	resp, err := c.http.Get(c.scheme + "://" + addr + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s GET %s: %s", addr, path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Ready reports nil when every running node knows a leader and every
// member with its client address. A member whose process ended by itself
// (not by Kill) is named in the error, as it will not become ready.
func (c *Cluster) Ready() error {
	members := c.members()
	for _, i := range members {
		n := c.Nodes[i]
		if !n.Running() {
			if n.done != nil && !n.killing.Load() {
				return fmt.Errorf("%s exited: %v", n.ID, n.exitErr)
			}
			continue
		}
		st, err := c.Status(i)
		if err != nil {
			return err
		}
		if st.Leader == "" || len(st.Members) != len(members) {
			return fmt.Errorf("%s: leader %q, %d members", st.ID, st.Leader, len(st.Members))
		}
		for _, m := range st.Members {
			if m.PGAddr == "" {
				return fmt.Errorf("%s: member %s has no address yet", st.ID, m.ID)
			}
		}
	}
	return nil
}

// Converged reports nil when every node has applied the same seqno and
// reports the same checksums of every table.
func (c *Cluster) Converged() error {
	members := c.members()
	first := members[0]
	seq0, sums0, err := c.Checksums(first)
	if err != nil {
		return err
	}
	for _, i := range members[1:] {
		seq, sums, err := c.Checksums(i)
		if err != nil {
			return err
		}
		if seq != seq0 || sums != sums0 {
			return fmt.Errorf("%s at seqno %d, %s at seqno %d:\n%s\n%s", c.Nodes[first].ID, seq0, c.Nodes[i].ID, seq, sums0, sums)
		}
	}
	return nil
}

// Leader returns the index of the node that reports itself leader.
func (c *Cluster) Leader() (int, error) {
	for i, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		if st, err := c.Status(i); err == nil && st.Role == "leader" {
			return i, nil
		}
	}
	return 0, errors.New("no leader")
}

// Poll calls f until it returns nil or timeout passes, then returns f's
// last error.
func Poll(timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// handedOut are the ports FreeAddr returned: a port found free is not
// bound until its node starts, so without this two nodes could be given
// the same one.
var (
	handedOutMu sync.Mutex
	handedOut   = map[int]bool{}
)

// FreeAddr returns a loopback address with a free port below the
// kernel's ephemeral range (32768 and up on Linux): a port found free
// there could be taken by some outgoing connection's local end before the
// node binds it. It never returns the same port twice in one process.
func FreeAddr() (string, error) {
	handedOutMu.Lock()
	defer handedOutMu.Unlock()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		if handedOut[port] {
			continue
		}
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			ln.Close()
			handedOut[port] = true
			return addr, nil
		}
	}
	return "", errors.New("no free port found in 20000-31999")
}
