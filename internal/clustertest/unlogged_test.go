package clustertest

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// UNLOGGED tables and sequences are replicated like any others: every
// node holds their rows, and a node whose PostgreSQL merely restarts
// keeps them. PostgreSQL empties them on a node whose server crashed:
// that node stops, saying so and how to rebuild it, rather than serve or
// apply on other rows than the cluster's (or hand out a sequence's
// values again). Rebuilt as it says (its data directory moved away, then
// started with --join), it holds the cluster's rows again.
func TestUnloggedTables(t *testing.T) {
	c := startPostgresCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE UNLOGGED TABLE cache (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)")
	mustExec(t, c.Conn(0), "CREATE UNLOGGED SEQUENCE tickets")
	mustExec(t, c.Conn(0), "INSERT INTO cache (v) VALUES ('a'), ('b')")
	mustExec(t, syncConn(t, c, 1), "INSERT INTO cache (v) SELECT 'from n2 ' || nextval('tickets')")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT left(v, 7), relpersistence::text FROM cache, pg_class WHERE relname = 'cache' ORDER BY v"); got != "a=u,b=u,from n2=u" {
			t.Fatalf("node %d: %s", i+1, got)
		}
	}
	c.WaitConverged(30 * time.Second)
	// Node 3's applier commits asynchronously: a crash may lose its last
	// commits (it applies them again from the log), and a relation whose
	// creation was lost is not named. A checkpoint makes them durable.
	super := superuserConn(t, c, 2)
	mustExec(t, super, "CHECKPOINT")
	super.Close()

	// A backend of node 3 crashes: its server restarts every backend and
	// empties the unlogged tables. The node stops at its next apply.
	pid := clientBackend(c, 2)
	if pid == 0 {
		t.Fatal("node 3 has no backend to crash")
	}
	c.DivergenceMade()
	if err := syscall.Kill(pid, syscall.SIGSEGV); err != nil {
		t.Fatal(err)
	}
	c.Eventually(60*time.Second, "node 3 stops", func() error {
		// Writes go on through node 1; node 3 applies them, or stops.
		if _, err := c.Conn(0).Exec(ctxT(t), "INSERT INTO cache (v) VALUES ('after')"); err != nil {
			return err
		}
		if c.Nodes[2].Running() {
			return fmt.Errorf("node 3 still runs")
		}
		return nil
	})
	if log := c.LogTail(2, 1<<16); !strings.Contains(log, "emptied this node's unlogged tables") || !strings.Contains(log, "public.cache") ||
		!strings.Contains(log, "public.tickets") || !strings.Contains(log, "--join") {
		t.Fatalf("node 3's log does not say why it stopped:\n%s", log)
	}
	// Started again on its data, it still refuses.
	c.Restart(2)
	if err := c.Wait(2, 60*time.Second); err == nil || c.Nodes[2].Running() {
		t.Fatalf("node 3 with emptied unlogged tables started again (%v)", err)
	}

	// Rebuilt as the log says.
	if err := os.Rename(c.Nodes[2].DataDir, c.Nodes[2].DataDir+".lost"); err != nil {
		t.Fatal(err)
	}
	c.Restart(2, "--join", c.Nodes[0].HTTPAddr)
	c.WaitReady(60 * time.Second)
	want := values(t, syncConn(t, c, 0), "SELECT v, v FROM cache ORDER BY v")
	if got := values(t, syncConn(t, c, 2), "SELECT v, v FROM cache ORDER BY v"); got != want {
		t.Fatalf("rebuilt node 3 holds %s, node 1 %s", got, want)
	}
	c.WaitConverged(60 * time.Second)
}
