package regress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"certa/internal/localcluster"
)

// Cluster is a fresh 3-node certa cluster of `certa node` processes on
// loopback (localcluster); the tests run through node 1.
type Cluster struct {
	Engine string
	lc     *localcluster.Cluster
	// seen are the counters and log bytes Check has already looked at.
	exits      int
	unforeseen []uint64
	transfers  []uint64
	logSeen    []int64
	// lastChecksum is the checksum difference seen last ("" if none).
	lastChecksum string
	// lagging: the last check found a node behind node 1.
	lagging bool
}

// clusterNodes is the number of nodes of a cluster.
const clusterNodes = 3

// StartCluster starts a cluster of binary with engine (sqlite or
// postgres) in dir and waits until it is ready. dir and its parent must
// let the postgres user through (mode 0711) for the postgres engine when
// running as root.
func StartCluster(binary, dir, engine string, timeout time.Duration) (*Cluster, error) {
	lc, err := localcluster.Start(localcluster.Config{Binary: binary, Dir: dir, Args: []string{"--engine", engine}}, clusterNodes)
	if err != nil {
		return nil, fmt.Errorf("start %s cluster: %w", engine, err)
	}
	c := &Cluster{Engine: engine, lc: lc, unforeseen: make([]uint64, clusterNodes),
		transfers: make([]uint64, clusterNodes), logSeen: make([]int64, clusterNodes)}
	if err := poll(context.Background(), timeout, lc.Ready); err != nil {
		c.Stop()
		var logs strings.Builder
		for i, n := range lc.Nodes {
			fmt.Fprintf(&logs, "\n--- %s log (tail):\n%s", n.ID, lc.LogTail(i, 1500))
		}
		return nil, fmt.Errorf("%s cluster not ready within %s: %w%s", engine, timeout, err, logs.String())
	}
	return c, nil
}

// Target is node 1, as the tests connect to it.
func (c *Cluster) Target() Target {
	host, port, _ := net.SplitHostPort(c.lc.Nodes[0].PGAddr)
	p, _ := strconv.Atoi(port)
	return Target{Host: host, Port: p, User: "certa", DB: "certa"}
}

// PIDs are the nodes' process ids.
func (c *Cluster) PIDs() []int {
	var out []int
	for _, n := range c.lc.Nodes {
		out = append(out, n.PID())
	}
	return out
}

// Logs are the nodes' log files.
func (c *Cluster) Logs() []string {
	var out []string
	for _, n := range c.lc.Nodes {
		out = append(out, n.Log)
	}
	return out
}

// Stop kills the nodes by their PIDs and waits until they and their
// PostgreSQL servers (postgres engine: they get SIGQUIT when their node
// dies) are gone.
func (c *Cluster) Stop() {
	c.lc.Stop()
	deadline := time.Now().Add(30 * time.Second)
	for _, n := range c.lc.Nodes {
		pid := postmasterPID(filepath.Join(n.DataDir, "pg"))
		for pid != 0 && processAlive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// postmasterPID returns the PID in dataDir/postmaster.pid, 0 if none.
func postmasterPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, _ := strconv.Atoi(strings.TrimSpace(first))
	return pid
}

// processAlive reports whether process pid exists (and is not a zombie).
func processAlive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	end := bytes.LastIndexByte(b, ')')
	return end < 0 || end+2 >= len(b) || b[end+2] != 'Z'
}

// Problem is something wrong with the cluster seen after a test.
type Problem struct {
	Test   string
	Kind   string // crash, status, lag, unforeseen, state transfer, checksum, log, hung
	Detail string
}

// Check looks at the cluster after a test: no node exited, every node
// applied what node 1 has within bound, no new unforeseen conflicts or
// state transfers, no new divergence messages in the logs, and, if
// checksums, every node's tables have the same checksums (within bound).
// A node found behind is reported once: until it has caught up, the
// following checks do not wait for it (a slow node would otherwise cost
// bound after every test), except the final one.
func (c *Cluster) Check(ctx context.Context, bound time.Duration, checksums, final bool) []Problem {
	var out []Problem
	add := func(kind, format string, args ...any) {
		out = append(out, Problem{Kind: kind, Detail: fmt.Sprintf(format, args...)})
	}
	exits := c.lc.Exits()
	for _, e := range exits[c.exits:] {
		add("crash", "%s exited: %v", e.Node, e.Err)
	}
	c.exits = len(exits)
	first, err := c.lc.Status(0)
	if err != nil {
		add("status", "node 1: %v", err)
		return out
	}
	wait := bound
	if c.lagging && !final {
		wait = 0
	}
	var last []localcluster.Status
	err = poll(ctx, wait, func() error {
		last = last[:0]
		for i := range c.lc.Nodes {
			st, err := c.lc.Status(i)
			if err != nil {
				return err
			}
			last = append(last, st)
		}
		var behind []string
		for _, st := range last {
			if st.AppliedSeqno < first.AppliedSeqno {
				behind = append(behind, fmt.Sprintf("%s at applied seqno %d", st.ID, st.AppliedSeqno))
			}
		}
		if len(behind) > 0 {
			return fmt.Errorf("%s, node 1 at %d", strings.Join(behind, ", "), first.AppliedSeqno)
		}
		return nil
	})
	switch {
	case err != nil && (!c.lagging || final):
		add("lag", "not caught up within %s: %v", bound, err)
		c.lagging = true
	case err != nil:
	default:
		c.lagging = false
	}
	for i, st := range last {
		if st.UnforeseenConflicts > c.unforeseen[i] {
			add("unforeseen", "%s: unforeseen_conflicts %d (was %d)", st.ID, st.UnforeseenConflicts, c.unforeseen[i])
			c.unforeseen[i] = st.UnforeseenConflicts
		}
		if st.Resyncs > c.transfers[i] {
			add("state transfer", "%s: resyncs %d (was %d): its data had differed", st.ID, st.Resyncs, c.transfers[i])
			c.transfers[i] = st.Resyncs
		}
	}
	for i, n := range c.lc.Nodes {
		for _, msg := range c.newDivergenceLogs(i) {
			add("log", "%s logged %s", n.ID, msg)
		}
	}
	if checksums && err == nil {
		// A difference is reported when it appears or changes, and
		// again at the end if it is still there.
		msg := ""
		if err := c.compareChecksums(ctx, bound); err != nil {
			msg = err.Error()
		}
		if msg != "" && (msg != c.lastChecksum || final) {
			add("checksum", "%s", msg)
		}
		c.lastChecksum = msg
	}
	return out
}

// tableSum is one table's entry in a node's GET /checksum.
type tableSum struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
	Sum   string `json:"checksum"`
}

// compareChecksums waits (up to bound) until every node reports its
// checksums at the same applied seqno, then compares them: a difference
// at the same seqno is a divergence. The error names the tables that
// differ.
func (c *Cluster) compareChecksums(ctx context.Context, bound time.Duration) error {
	sums := make([]map[string]tableSum, len(c.lc.Nodes))
	err := poll(ctx, bound, func() error {
		var seq0 uint64
		for i := range c.lc.Nodes {
			seq, tables, err := c.lc.Checksums(i)
			if err != nil {
				return err
			}
			if i == 0 {
				seq0 = seq
			} else if seq != seq0 {
				return fmt.Errorf("%s at seqno %d, %s at %d", c.lc.Nodes[0].ID, seq0, c.lc.Nodes[i].ID, seq)
			}
			if sums[i], err = parseSums(tables); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("no checksums at one seqno within %s: %v", bound, err)
	}
	var diffs []string
	for i := 1; i < len(sums); i++ {
		for _, name := range tableNames(sums[0], sums[i]) {
			a, b := sums[0][name], sums[i][name]
			if a != b {
				diffs = append(diffs, fmt.Sprintf("table %s: %s %d rows %s, %s %d rows %s", name,
					c.lc.Nodes[0].ID, a.Rows, a.Sum, c.lc.Nodes[i].ID, b.Rows, b.Sum))
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("nodes differ at the same seqno: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// parseSums parses localcluster's Checksums tables: a JSON object a line.
func parseSums(tables string) (map[string]tableSum, error) {
	out := map[string]tableSum{}
	dec := json.NewDecoder(strings.NewReader(tables))
	for dec.More() {
		var t tableSum
		if err := dec.Decode(&t); err != nil {
			return nil, fmt.Errorf("parse checksums: %w", err)
		}
		out[t.Table] = t
	}
	return out, nil
}

// tableNames returns the tables of a and b, sorted.
func tableNames(a, b map[string]tableSum) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// newDivergenceLogs returns the lines of node i's log written since the
// last call that carry one of localcluster.DivergenceLogs.
func (c *Cluster) newDivergenceLogs(i int) []string {
	f, err := os.Open(c.lc.Nodes[i].Log)
	if err != nil {
		return nil
	}
	defer f.Close()
	if _, err := f.Seek(c.logSeen[i], io.SeekStart); err != nil {
		return nil
	}
	b, _ := io.ReadAll(f)
	// Up to the last whole line: the rest is read next time.
	if end := bytes.LastIndexByte(b, '\n'); end >= 0 {
		b = b[:end+1]
	} else {
		b = nil
	}
	c.logSeen[i] += int64(len(b))
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		for _, msg := range localcluster.DivergenceLogs {
			if strings.Contains(line, msg) {
				// The fields after the message: seqno, origin, error.
				_, fields, ok := strings.Cut(line, "\" node=")
				if !ok {
					fields = line
				}
				out = append(out, truncate(msg+": node="+fields, 600))
			}
		}
	}
	return out
}

// poll calls f until it returns nil, timeout passes or ctx ends, and
// returns f's last error (ctx's if it ended first). It calls f at least
// once.
func poll(ctx context.Context, timeout time.Duration, f func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Alive reports nil when node 1 answers its status and a query within
// timeout each: after a test timed out, whether the cluster hangs.
func (c *Cluster) Alive(ctx context.Context, env Env, timeout time.Duration) error {
	if _, err := c.lc.Status(0); err != nil {
		return fmt.Errorf("node 1 status: %w", err)
	}
	_, err := Psql(ctx, env, c.Target(), "SELECT 1", timeout)
	return err
}

// LogTail is the end of node i's log.
func (c *Cluster) LogTail(i, max int) string { return c.lc.LogTail(i, max) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
