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

	"certa/internal/testcluster"
)

// A node whose data came to differ from the cluster's (here: rows changed
// in its database behind certa's back, as a bug in capture or
// certification would) does not skip the write sets it then cannot apply
// and go on different: it finds that the other nodes applied them, takes
// their state, and every node ends with the same rows. A write set that
// fails on every node alike stays the client's error.
func TestDivergedNodeTakesTheClusterState(t *testing.T) {
	forEachEngine(t, func(t *testing.T, start startFunc) {
		c := start(t, 3)
		mustExec(t, c.Conn(0), "CREATE TABLE acct (id integer PRIMARY KEY, v integer NOT NULL)")
		mustExec(t, c.Conn(0), "INSERT INTO acct SELECT g, g FROM generate_series(1, 5) g")
		c.WaitConverged(30 * time.Second)

		// A row 9 made on node 3 alone: an insert of row 9 cannot apply
		// there (the key is taken).
		c.DivergenceMade()
		behindCertasBack(t, c, 2, "INSERT INTO acct VALUES (9, 9)")
		mustExec(t, c.Conn(1), "INSERT INTO acct VALUES (9, 90)")
		waitResyncs(t, c, 1)
		checkRows(t, c, "1=1,2=2,3=3,4=4,5=5,9=90")

		// Row 2 gone on node 3 alone: an update of it cannot apply there.
		behindCertasBack(t, c, 2, "DELETE FROM acct WHERE id = 2")
		if got, err := c.Conn(2).QueryString(ctxT(t), "SELECT string_agg(id::text, ',' ORDER BY id) FROM acct"); err != nil || got != "1,3,4,5,9" {
			t.Fatalf("node 3 after the write behind certa's back holds rows %s, %v", got, err)
		}
		mustExec(t, c.Conn(0), "UPDATE acct SET v = 20 WHERE id = 2")
		waitResyncs(t, c, 2)
		checkRows(t, c, "1=1,2=20,3=3,4=4,5=5,9=90")
		for i := range 2 {
			if st, err := c.Status(i); err != nil || st.Resyncs != 0 {
				t.Fatalf("node %d: %+v, %v (only node 3 should have taken another's state)", i+1, st, err)
			}
		}

		// The node goes on: it takes writes, and statements that fail on
		// every node alike (two nodes create one table at once) fail for
		// the client without any node taking another's state.
		mustExec(t, c.Conn(2), "UPDATE acct SET v = v + 1 WHERE id = 9")
		errs := make(chan error, 2)
		for i := range 2 {
			go func() {
				_, err := c.Conn(i).Exec(ctxT(t), "CREATE TABLE dup (id integer)")
				errs <- err
			}()
		}
		failed := 0
		for range 2 {
			if err := <-errs; err != nil {
				if !strings.Contains(err.Error(), "42P07") {
					t.Fatalf("the second CREATE TABLE failed with %v, want 42P07", err)
				}
				failed++
			}
		}
		if failed != 1 {
			t.Fatalf("%d of two CREATE TABLE dup failed, want 1", failed)
		}
		c.WaitConverged(30 * time.Second)
		checkRows(t, c, "1=1,2=20,3=3,4=4,5=5,9=91")
		for i := range c.Nodes {
			if st, err := c.Status(i); err != nil || st.Resyncs != uint64(2*(i/2)) {
				t.Fatalf("node %d after statements that failed alike: %+v, %v", i+1, st, err)
			}
		}
	})
}

// waitResyncs waits until node 3 has taken the cluster's state n times.
func waitResyncs(t *testing.T, c *testcluster.Cluster, n uint64) {
	t.Helper()
	c.Eventually(60*time.Second, "node 3 takes the cluster's state", func() error {
		st, err := c.Status(2)
		if err != nil {
			return err
		}
		if st.Resyncs != n {
			return fmt.Errorf("%d resyncs, want %d", st.Resyncs, n)
		}
		return nil
	})
}

// checkRows checks that every node holds want in acct, and the same data.
func checkRows(t *testing.T, c *testcluster.Cluster, want string) {
	t.Helper()
	c.WaitConverged(60 * time.Second)
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, v FROM acct ORDER BY id"); got != want {
			t.Fatalf("node %d holds %s, want %s", i+1, got, want)
		}
	}
}

// behindCertasBack runs statements in node i's database directly, not
// through certa: nothing of them is replicated.
func behindCertasBack(t *testing.T, c *testcluster.Cluster, i int, stmts ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := c.Nodes[i].DataDir
	var cmd *exec.Cmd
	if pg := filepath.Join(dir, "pg"); fileExists(filepath.Join(pg, "PG_VERSION")) {
		args := []string{"-X", "-v", "ON_ERROR_STOP=1", "-h", pg, "-U", "postgres", "-d", "certa",
			"-c", "SET session_replication_role = replica"}
		for _, s := range stmts {
			args = append(args, "-c", s)
		}
		cmd = exec.CommandContext(ctx, "psql", args...)
	} else {
		script := "PRAGMA busy_timeout = 10000;\n"
		for _, s := range stmts {
			script += s + ";\n"
		}
		cmd = exec.CommandContext(ctx, "sqlite3", filepath.Join(dir, "data.db"), script)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
