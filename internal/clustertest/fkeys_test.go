package clustertest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// Issue 16: foreign keys were off, so ON DELETE CASCADE and SET NULL did
// nothing and orphans were accepted. Now orphans are refused on every node,
// the rows an action changes are replicated with the statement that caused
// them, and a child insert racing a delete of its parent on another node
// ends with one 40001 and no orphan anywhere.
func TestForeignKeysReplicated(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE parent (id integer PRIMARY KEY, name text)")
	mustExec(t, a, "CREATE TABLE child (id integer PRIMARY KEY, pid integer REFERENCES parent (id) ON DELETE CASCADE)")
	mustExec(t, a, "CREATE TABLE ref (id integer PRIMARY KEY, pid integer REFERENCES parent (id) ON DELETE SET NULL)")
	mustExec(t, a, "INSERT INTO parent VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
	mustExec(t, a, "INSERT INTO child VALUES (10, 1), (11, 1), (12, 2)")
	mustExec(t, a, "INSERT INTO ref VALUES (20, 1), (21, 2)")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		mustFail(t, conn, "23503", "INSERT INTO child VALUES (99, 42)")
		mustFail(t, conn, "23503", "UPDATE ref SET pid = 42 WHERE id = 21")
	}

	mustExec(t, syncConn(t, c, 1), "DELETE FROM parent WHERE id = 1")
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT id, pid FROM child ORDER BY id"); got != "12=2" {
			t.Fatalf("node %d: child holds %q", i, got)
		}
		if got := values(t, conn, "SELECT id, coalesce(pid, -1) FROM ref ORDER BY id"); got != "20=-1,21=2" {
			t.Fatalf("node %d: ref holds %q", i, got)
		}
	}

	// A child insert on node 0 and a delete of its parent on node 1, both
	// begun before either commits, in both commit orders.
	for _, parent := range []int{3, 4} {
		ins, del := syncConn(t, c, 0), syncConn(t, c, 1)
		mustExec(t, ins, "BEGIN")
		mustExec(t, del, "BEGIN")
		mustExec(t, ins, "INSERT INTO child VALUES ($1, $2)", parent*10, parent)
		mustExec(t, del, "DELETE FROM parent WHERE id = $1", parent)
		first, second := ins, del
		if parent == 4 {
			first, second = del, ins
		}
		mustExec(t, first, "COMMIT")
		if _, err := second.Exec(ctxT(t), "COMMIT"); pgclient.SQLState(err) != "40001" {
			t.Fatalf("parent %d: second commit: %v, want 40001", parent, err)
		}
	}
	checkNoOrphans(t, c)
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		if got := values(t, conn, "SELECT id, pid FROM child ORDER BY id"); got != "12=2,30=3" {
			t.Fatalf("node %d: child holds %q", i, got)
		}
	}

	// The same with both COMMITs sent at once: often both write sets are
	// captured before either is applied, and only certification (the
	// child's write set carries its parent's key) stands between them and
	// an orphan.
	ins, del := syncConn(t, c, 0), syncConn(t, c, 1)
	for parent := 100; parent < 120; parent++ {
		mustExec(t, ins, "INSERT INTO parent VALUES ($1, 'p')", parent)
		mustExec(t, ins, "BEGIN")
		mustExec(t, del, "BEGIN")
		mustExec(t, ins, "INSERT INTO child VALUES ($1, $1)", parent)
		mustExec(t, del, "DELETE FROM parent WHERE id = $1", parent)
		errs := make(chan error, 2)
		for _, conn := range []*pgclient.Conn{ins, del} {
			go func() {
				_, err := conn.Exec(context.Background(), "COMMIT")
				errs <- err
			}()
		}
		failed := 0
		for range 2 {
			err := <-errs
			switch code := pgclient.SQLState(err); {
			case err == nil:
			case code == "40001":
				failed++
			default:
				t.Fatalf("parent %d: COMMIT: %v", parent, err)
			}
		}
		if failed != 1 {
			t.Fatalf("parent %d: %d of the two commits failed, want 1", parent, failed)
		}
	}
	checkNoOrphans(t, c)

	// A deferred key is checked at COMMIT: an orphan left at the end fails
	// the COMMIT with 23503 and nothing reaches the log.
	mustExec(t, a, "CREATE TABLE later (id integer PRIMARY KEY, pid integer REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)")
	conn := syncConn(t, c, 2)
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO later VALUES (1, 500)") // parent comes later
	mustExec(t, conn, "INSERT INTO parent VALUES (500, 'late')")
	mustExec(t, conn, "COMMIT")
	before := settledSeqnos(t, c)
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO later VALUES (2, 501)")
	mustFail(t, conn, "23503", "COMMIT")
	mustExec(t, conn, "SELECT 1") // the session goes on
	if after := settledSeqnos(t, c); after != before {
		t.Fatalf("applied seqnos %s after a refused COMMIT, %s before: something was appended", after, before)
	}
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, pid FROM later ORDER BY id"); got != "1=500" {
			t.Fatalf("node %d: later holds %q", i, got)
		}
	}
	c.WaitConverged(20 * time.Second)
}

// checkNoOrphans checks on every node that each child references a parent.
func checkNoOrphans(t *testing.T, c *testcluster.Cluster) {
	t.Helper()
	for i := range c.Nodes {
		n, err := syncConn(t, c, i).QueryInt(ctxT(t),
			"SELECT count(*) FROM child WHERE pid IS NOT NULL AND NOT EXISTS (SELECT 1 FROM parent WHERE parent.id = child.pid)")
		if err != nil || n != 0 {
			t.Fatalf("node %d: %d orphans (%v)", i, n, err)
		}
	}
}

// settledSeqnos returns every node's applied seqno once each has applied
// everything committed (a sync read on each).
func settledSeqnos(t *testing.T, c *testcluster.Cluster) string {
	t.Helper()
	for i := range c.Nodes {
		mustExec(t, syncConn(t, c, i), "SELECT 1")
	}
	return fmt.Sprint(appliedSeqnos(t, c))
}
