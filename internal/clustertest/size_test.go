package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// A transaction whose write set is over --max-writeset-size is refused at
// COMMIT with 54000, from a follower as from the leader, and nothing of it
// reaches the log; one just under the limit commits, is visible on every
// node, and a node restarted afterwards replays it and comes back.
func TestWriteSetSizeLimit(t *testing.T) {
	const limit = 64 << 10
	c := testcluster.Start(t, 3, append([]string{"--max-writeset-size", "64KiB"}, testArgs...)...)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	mustExec(t, c.Conn(leader), "CREATE TABLE big (id integer PRIMARY KEY, v text)")

	for _, origin := range []int{follower, leader} {
		conn := c.Conn(origin)
		c.WaitConverged(30 * time.Second)
		before := appliedSeqnos(t, c)
		// One row whose value alone is the limit: its write set is over it.
		_, err := conn.Exec(ctxT(t), "INSERT INTO big VALUES (1, $1)", strings.Repeat("x", limit))
		checkTooLarge(t, err)
		// A transaction block of many rows, refused at COMMIT.
		mustExec(t, conn, "BEGIN")
		for i := 0; i < 10; i++ {
			mustExec(t, conn, "INSERT INTO big VALUES ($1, $2)", 100+i, strings.Repeat("y", limit/8))
		}
		_, err = conn.Exec(ctxT(t), "COMMIT")
		checkTooLarge(t, err)
		// The session goes on, and the next commit takes the next seqno:
		// nothing of the refused ones was appended on any node.
		mustExec(t, conn, "INSERT INTO big VALUES ($1, 'small')", 10+origin)
		for i, want := range before {
			want++
			c.Eventually(10*time.Second, fmt.Sprintf("node %d applies the small commit", i), func() error {
				if got := appliedSeqnos(t, c)[i]; got != want {
					return fmt.Errorf("applied seqno %d, want %d (the refused transactions must not take one)", got, want)
				}
				return nil
			})
		}
	}

	// Just under the limit: committed, through a follower, and on every node.
	under := strings.Repeat("z", limit-1024)
	mustExec(t, c.Conn(follower), "INSERT INTO big VALUES (2, $1)", under)
	for i := range c.Nodes {
		if n, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT length(v) FROM big WHERE id = 2"); err != nil || n != int64(len(under)) {
			t.Fatalf("node %d: length of the row just under the limit %d, %v; want %d", i, n, err, len(under))
		}
		if n, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT count(*) FROM big"); err != nil || n != 3 {
			t.Fatalf("node %d: %d rows, %v; want 3 (two small rows and the one under the limit)", i, n, err)
		}
	}

	// A restarted node replays its log, the large entry included, and
	// serves it again.
	c.Kill(follower)
	c.Restart(follower)
	c.WaitReady(60 * time.Second)
	if n, err := syncConn(t, c, follower).QueryInt(ctxT(t), "SELECT length(v) FROM big WHERE id = 2"); err != nil || n != int64(len(under)) {
		t.Fatalf("restarted node: length %d, %v; want %d", n, err, len(under))
	}
	mustExec(t, c.Conn(follower), "INSERT INTO big VALUES (3, 'after restart')")
	c.WaitConverged(30 * time.Second)
}

// The largest write set allowed (60 MiB, what a log entry holds) commits,
// and every node can restart from a log that holds it. Before the limit,
// a 64 MiB write set replicated and no node could restart.
func TestLargestWriteSetSurvivesRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 60 MiB on three nodes")
	}
	// The commit timeout stays testArgs' 6s: a COMMIT of a large write set
	// waits longer by itself.
	c := testcluster.Start(t, 3, append(testArgs, "--max-writeset-size", "60MiB")...)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	conn := c.Conn(follower)
	mustExec(t, conn, "CREATE TABLE big (id integer PRIMARY KEY, v text)")
	_, err = conn.Exec(ctxT(t), "INSERT INTO big VALUES (1, $1)", strings.Repeat("x", 60<<20))
	checkTooLarge(t, err)
	mustExec(t, conn, "INSERT INTO big VALUES (2, $1)", strings.Repeat("x", 60<<20-4096))
	for _, i := range []int{follower, leader} {
		c.Kill(i)
		c.Restart(i)
		c.WaitReady(60 * time.Second)
		if n, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT count(*) FROM big WHERE length(v) = 60*1024*1024-4096"); err != nil || n != 1 {
			t.Fatalf("node %d after restart: %d rows, %v; want the large one", i, n, err)
		}
	}
	if exits := c.Exits(); len(exits) != 0 {
		t.Fatalf("nodes exited by themselves: %v", exits)
	}
}

// checkTooLarge checks err is the refusal of a write set over the limit.
func checkTooLarge(t *testing.T, err error) {
	t.Helper()
	if pgclient.SQLState(err) != "54000" || !strings.Contains(err.Error(), "too large to replicate") {
		t.Fatalf("got %v, want 54000 saying the transaction is too large to replicate", err)
	}
}

// appliedSeqnos returns every node's applied seqno.
func appliedSeqnos(t *testing.T, c *testcluster.Cluster) []uint64 {
	t.Helper()
	var out []uint64
	for i := range c.Nodes {
		st, err := c.Status(i)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st.AppliedSeqno)
	}
	return out
}
