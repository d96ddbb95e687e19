package clustertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// postmasterPID returns the pid of the PostgreSQL server of node i (its
// postmaster.pid under the node's data directory), or 0.
func postmasterPID(c *testcluster.Cluster, i int) int {
	b, err := os.ReadFile(filepath.Join(c.Nodes[i].DataDir, "pg", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// clientBackend returns the pid of a backend of node i's server that
// serves the node's database (a pooled client connection or the
// applier's), or 0.
func clientBackend(c *testcluster.Cluster, i int) int {
	pm := postmasterPID(c, i)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pm, pm))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmd), " certa ") { // "postgres: <role> certa [local] ..."
			return pid
		}
	}
	return 0
}

// A node survives its PostgreSQL dying under load, with no restart by
// hand: node 2's postmaster killed with SIGKILL (pgproc starts it again),
// then one of its backends crashed with SIGSEGV (the postmaster ends every
// backend and starts again). Writes go through every node all along; node
// 2 takes writes again by itself, every acknowledged write is on every
// node, and the nodes' data converge.
func TestPostgresKilledUnderLoad(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE acked (id integer PRIMARY KEY, node integer)")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	writers := make([]*writer, 3)
	for i := range writers {
		writers[i] = &writer{c: c, node: i, id: i + 1}
		wg.Add(1)
		go func() { defer wg.Done(); writers[i].run(stop) }()
	}
	stopped := false
	defer func() {
		if !stopped {
			close(stop)
			wg.Wait()
		}
	}()
	total := func() int {
		n := 0
		for _, w := range writers {
			n += w.count()
		}
		return n
	}
	c.Eventually(30*time.Second, "writes before the faults", func() error {
		if total() < 60 {
			return fmt.Errorf("%d acknowledged", total())
		}
		return nil
	})

	const victim = 1
	for _, fault := range []struct {
		name string
		pid  func() int
		sig  syscall.Signal
	}{
		{"postmaster killed", func() int { return postmasterPID(c, victim) }, syscall.SIGKILL},
		{"backend crashed", func() int { return clientBackend(c, victim) }, syscall.SIGSEGV},
	} {
		pid := fault.pid()
		if pid == 0 {
			t.Fatalf("%s: no process to signal", fault.name)
		}
		before := writers[victim].count()
		start := time.Now()
		if err := syscall.Kill(pid, fault.sig); err != nil {
			t.Fatal(err)
		}
		c.Eventually(60*time.Second, fault.name+": writes through node 2 again", func() error {
			if n := writers[victim].count(); n < before+20 {
				return fmt.Errorf("%d new acknowledged writes", n-before)
			}
			return nil
		})
		t.Logf("%s: node 2 took 20 writes again %v after the fault", fault.name, time.Since(start).Round(time.Millisecond))
		if !c.Nodes[victim].Running() || len(c.Exits()) > 0 {
			t.Fatalf("%s: node 2 stopped: %v", fault.name, c.Exits())
		}
	}
	close(stop)
	wg.Wait()
	stopped = true

	var want []int
	for _, w := range writers {
		want = append(want, w.acked...)
	}
	for i := range c.Nodes {
		rows, err := syncConn(t, c, i).Query(ctxT(t), "SELECT id FROM acked")
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		have := map[int64]bool{}
		for _, r := range rows {
			have[toInt64(r[0])] = true
		}
		for _, k := range want {
			if !have[int64(k)] {
				t.Fatalf("node %d lost acknowledged insert %d", i+1, k)
			}
		}
		t.Logf("node %d: %d rows, %d acknowledged", i+1, len(rows), len(want))
	}
	checkConverged(t, c)
	log := c.LogTail(victim, 1<<20)
	if !strings.Contains(log, "reconnected to PostgreSQL") {
		t.Fatalf("node 2 logged no reconnection:\n%s", c.LogTail(victim, 6000))
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "reconnected to PostgreSQL") || strings.Contains(line, "PostgreSQL server restarted") {
			t.Log(line)
		}
	}
}
