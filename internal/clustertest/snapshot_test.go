package clustertest

import (
	"fmt"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// Snapshots every 32 entries, keeping only 8 behind, in 8 KiB log files: a
// node that falls further behind, or a new one, must receive the database
// as a snapshot.
var snapshotArgs = append([]string{"--snapshot-entries", "32", "--snapshot-interval", "100ms",
	"--trailing-entries", "8", "--log-segment-bytes", "8192"}, testArgs...)

// insertRows inserts n rows with ids from..from+n-1, spread over the given
// nodes, each an autocommit statement (one log entry each).
func insertRows(t *testing.T, c *testcluster.Cluster, nodes []int, from, n int) {
	t.Helper()
	for k := range n {
		node := nodes[k%len(nodes)]
		mustExec(t, c.Conn(node), "INSERT INTO acked VALUES ($1, $2)", from+k, node)
	}
}

// snapshotAdvanced waits until node i took a snapshot after index after.
func snapshotAdvanced(t *testing.T, c *testcluster.Cluster, i int, after uint64) uint64 {
	t.Helper()
	var idx uint64
	c.Eventually(30*time.Second, fmt.Sprintf("a snapshot on %s after index %d", c.Nodes[i].ID, after), func() error {
		st, err := c.Status(i)
		if err != nil {
			return err
		}
		if st.SnapshotIndex <= after {
			return fmt.Errorf("snapshot index %d", st.SnapshotIndex)
		}
		idx = st.SnapshotIndex
		return nil
	})
	return idx
}

// A node restarted after the log it missed was compacted away, and a node
// that joins late, both catch up through a snapshot (state transfer), serve
// the same data, take writes, and resume from their own data after a
// restart; with either engine, and over an operator's server that the
// nodes reach over TLS with a client certificate.
func TestStateTransferAfterLogCompaction(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testStateTransfer(t, testcluster.Start(t, 3, snapshotArgs...)) })
	t.Run("postgres", func(t *testing.T) { testStateTransfer(t, startPostgresCluster(t, 3, snapshotArgs...)) })
	t.Run("postgres-dsn", func(t *testing.T) {
		c, _ := startPostgresDSNCluster(t, 3, snapshotArgs...)
		testStateTransfer(t, c)
	})
	t.Run("postgres-dsn-client-certificate", func(t *testing.T) {
		testStateTransfer(t, startPostgresDSNClusterTLS(t, 3, snapshotArgs...))
	})
}

func testStateTransfer(t *testing.T, c *testcluster.Cluster) {
	mustExec(t, c.Conn(0), "CREATE TABLE acked (id integer PRIMARY KEY, node integer)")
	mustExec(t, syncConn(t, c, 1), "SELECT 1 FROM acked") // node 1 has the table
	insertRows(t, c, []int{0, 1}, 1, 50)
	first := snapshotAdvanced(t, c, 0, 0)

	c.Kill(2)
	st2, _ := c.Status(0)
	insertRows(t, c, []int{0, 1}, 1000, 120)
	snapshotAdvanced(t, c, 0, first+40) // well past what node 2 has, plus the trailing entries
	snapshotAdvanced(t, c, 1, first+40)
	c.Restart(2)
	c.Eventually(30*time.Second, "node 2 installs a snapshot", func() error {
		st, err := c.Status(2)
		if err != nil {
			return err
		}
		if st.StateTransfers == 0 || st.AppliedSeqno < st2.AppliedSeqno+120 {
			return fmt.Errorf("%d state transfers, applied %d", st.StateTransfers, st.AppliedSeqno)
		}
		return nil
	})
	checkConverged(t, c)

	joined := c.Add(1)
	if st, err := c.Status(joined); err != nil || st.StateTransfers == 0 {
		t.Fatalf("the new node did not start from a snapshot: %+v, %v", st, err)
	}
	checkConverged(t, c)
	mustExec(t, c.Conn(joined), "INSERT INTO acked VALUES (5000, 4)")
	mustExec(t, c.Conn(2), "INSERT INTO acked VALUES (5001, 3)")
	checkConverged(t, c)

	c.Kill(joined)
	c.Restart(joined)
	c.WaitReady(30 * time.Second)
	if got := values(t, syncConn(t, c, joined), "SELECT id, node FROM acked WHERE id >= 5000 ORDER BY id"); got != "5000=4,5001=3" {
		t.Fatalf("after restart the new node has %q", got)
	}
	checkConverged(t, c)
}
