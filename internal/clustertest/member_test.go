package clustertest

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// A dead member is removed with `certa member remove` while a client
// writes, and a new node takes its place; the writes go on throughout
// (the two live nodes keep the quorum) and every node ends with all of
// them. With peer TLS, as in production.
func TestMemberRemoveAndReplace(t *testing.T) {
	forEachEngineName(t, testMemberRemoveAndReplace)
}

func testMemberRemoveAndReplace(t *testing.T, engine string) {
	c := testcluster.StartPeerTLS(t, 3, append(engineArgs(t, engine), testArgs...)...)
	ctx := ctxT(t)
	mustExec(t, c.Conn(0), "CREATE TABLE w (id int PRIMARY KEY)")
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	victim := (leader + 1) % 3
	other := 3 - leader - victim
	// A writer on the leader for the whole test.
	var written, failed atomic.Int64
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	var stopOnce sync.Once
	stopWriter := func() { stopOnce.Do(func() { close(stop) }); <-writerDone }
	defer stopWriter() // before the test ends, whatever fails
	go func() {
		defer close(writerDone)
		conn := c.Conn(leader)
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := conn.Exec(context.Background(), "INSERT INTO w VALUES ($1)", i); err != nil {
				if failed.Add(1) <= 5 {
					t.Logf("insert %d: %v", i, err)
				}
			} else {
				written.Add(1)
			}
		}
	}()
	f := c.CertFiles(leader)
	certa := func(args ...string) string {
		t.Helper()
		args = append(args, "--http", c.Nodes[other].HTTPAddr, "--peer-cert", f.Cert, "--peer-key", f.Key, "--peer-ca", f.CA)
		out, err := exec.CommandContext(ctx, testcluster.Binary(t), args...).CombinedOutput()
		if err != nil {
			t.Fatalf("certa %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	c.Kill(victim)
	certa("member", "remove", c.Nodes[victim].ID) // through a follower: passed on to the leader
	c.MarkRemoved(victim)
	if out := certa("member", "list"); strings.Contains(out, c.Nodes[victim].ID+" ") || strings.Count(out, "\n") != 2 {
		t.Errorf("members after the removal:\n%s", out)
	}
	n := c.Add(leader) // the replacement, a new node
	if out := certa("member", "list"); !strings.Contains(out, c.Nodes[n].ID) || strings.Count(out, "\n") != 3 {
		t.Errorf("members after the replacement:\n%s", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for written.Load() < 200 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stopWriter()
	if failed.Load() > 0 || written.Load() == 0 {
		t.Errorf("writes: %d committed, %d failed", written.Load(), failed.Load())
	}
	c.WaitConverged(60 * time.Second)
	for _, i := range []int{leader, other, n} {
		var got int64
		if err := syncConn(t, c, i).QueryRow(ctx, "SELECT count(*) FROM w", nil, &got); err != nil || got != written.Load() {
			t.Errorf("%s: %d rows (%v), want %d", c.Nodes[i].ID, got, err, written.Load())
		}
	}
}
