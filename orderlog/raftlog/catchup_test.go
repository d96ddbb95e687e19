package raftlog

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// TestWipedVoterElectsNoStaleLeader: an entry E commits on n1 and n3 while
// n2 is down; n1 loses its data and n3 goes down. n2 (without E) and the
// empty n1 are a majority of the configuration, but n1 must not vote
// before it has caught up: n2 elected would lead without E, a committed
// entry lost. Once n3 is back, n3 leads, E survives, and n1 catches up and
// takes part in elections again.
func TestWipedVoterElectsNoStaleLeader(t *testing.T) {
	var addrs, dirs [3]string
	for i := range 3 {
		addrs[i], dirs[i] = freeAddr(t), t.TempDir()
	}
	openNode := func(i int, bootstrap bool) *Log {
		t.Helper()
		l, err := Open(Config{ID: fmt.Sprintf("n%d", i+1), Dir: dirs[i], RaftAddr: addrs[i], Bootstrap: bootstrap,
			HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond, LeaderLeaseTimeout: 300 * time.Millisecond},
			&countingSM{})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	caughtUp := func(i int) bool {
		_, err := os.Stat(filepath.Join(dirs[i], catchingUpFile))
		return os.IsNotExist(err)
	}
	var nodes [3]*Log
	defer func() {
		for _, l := range nodes {
			if l != nil {
				l.Close()
			}
		}
	}()
	closeNode := func(i int) {
		t.Helper()
		if err := nodes[i].Close(); err != nil {
			t.Fatal(err)
		}
		nodes[i] = nil
	}

	nodes[0] = openNode(0, true)
	eventually(t, 10*time.Second, "n1 leads", nodes[0].IsLeader)
	for i := 1; i < 3; i++ {
		nodes[i] = openNode(i, false)
		if caughtUp(i) {
			t.Fatalf("n%d joins with no state but is not marked as catching up", i+1)
		}
		if err := nodes[0].AddVoter(fmt.Sprintf("n%d", i+1), addrs[i], 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[0].Append([]byte("a"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < 3; i++ {
		eventually(t, 10*time.Second, fmt.Sprintf("n%d caught up", i+1), func() bool { return caughtUp(i) })
	}

	closeNode(1)
	if err := nodes[0].Append([]byte("E"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	e := nodes[0].Stats().LastIndex
	closeNode(0)
	closeNode(2)
	if err := os.RemoveAll(dirs[0]); err != nil {
		t.Fatal(err)
	}
	nodes[1] = openNode(1, false)
	nodes[0] = openNode(0, false) // wiped, restarted to rejoin
	if !nodes[0].Stats().CatchingUp || nodes[1].Stats().CatchingUp {
		t.Fatal("Stats.CatchingUp is not true for the wiped n1 alone")
	}

	// Ten election timeouts: without the gate n2 is elected within two.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if nodes[1].IsLeader() {
			t.Fatalf("n2, which lacks entry %d, was elected with the vote of the wiped n1", e)
		}
		time.Sleep(10 * time.Millisecond)
	}

	nodes[2] = openNode(2, false)
	eventually(t, 10*time.Second, "n3 leads", nodes[2].IsLeader)
	for i := range 3 {
		eventually(t, 10*time.Second, fmt.Sprintf("n%d holds entry %d", i+1, e), func() bool { return nodes[i].Stats().LastIndex >= e })
	}
	eventually(t, 10*time.Second, "n1 caught up", func() bool { return caughtUp(0) })
	if at := nodes[0].transport.openedAt.Load(); at < e {
		t.Fatalf("n1 took part in elections again at log index %d, before it held entry %d", at, e)
	}
	if nodes[0].Stats().CatchingUp {
		t.Fatal("Stats.CatchingUp still true for n1")
	}
	// n1 votes again: with n3 down, n1 and n2 elect a leader.
	closeNode(2)
	eventually(t, 10*time.Second, "n1 or n2 leads", func() bool { return nodes[0].IsLeader() || nodes[1].IsLeader() })
}

// TestCaughtUp: a node has caught up once its log reaches the leader's
// commit index at an entry of the leader's term.
func TestCaughtUp(t *testing.T) {
	store := raft.NewInmemStore()
	if err := store.StoreLogs([]*raft.Log{{Index: 1, Term: 1}, {Index: 2, Term: 1}, {Index: 3, Term: 2}}); err != nil {
		t.Fatal(err)
	}
	g := &gatedTransport{logs: store}
	entries := []*raft.Log{{Index: 4, Term: 3}, {Index: 5, Term: 3}}
	for _, c := range []struct {
		term, commit, last uint64
		entries            []*raft.Log
		want               bool
	}{
		{term: 3, commit: 0, last: 3, want: false},                   // a new leader that committed nothing yet
		{term: 2, commit: 3, last: 3, want: true},                    // the entry at the commit index is of the leader's term
		{term: 3, commit: 3, last: 3, want: false},                   // of an earlier term: more may be committed
		{term: 3, commit: 4, last: 3, want: false},                   // the log does not reach the commit index
		{term: 3, commit: 5, last: 5, entries: entries, want: true},  // found among the entries appended
		{term: 3, commit: 2, last: 5, entries: entries, want: false}, // behind the leader's own entries
	} {
		req := &raft.AppendEntriesRequest{Term: c.term, LeaderCommitIndex: c.commit, Entries: c.entries}
		if got := g.caughtUp(req, &raft.AppendEntriesResponse{Success: true, LastLog: c.last}); got != c.want {
			t.Errorf("term %d, commit %d, last %d: caughtUp %v, want %v", c.term, c.commit, c.last, got, c.want)
		}
	}
	// After a snapshot up to the commit index, its last entry is not in
	// the log: its term comes from the snapshot.
	g = &gatedTransport{logs: raft.NewInmemStore(), snapIndex: 9, snapTerm: 3}
	for _, c := range []struct {
		term, commit uint64
		want         bool
	}{{3, 9, true}, {4, 9, false}, {3, 8, false}} {
		req := &raft.AppendEntriesRequest{Term: c.term, LeaderCommitIndex: c.commit}
		if got := g.caughtUp(req, &raft.AppendEntriesResponse{Success: true, LastLog: 9}); got != c.want {
			t.Errorf("after a snapshot to 9 of term 3: term %d, commit %d: caughtUp %v, want %v", c.term, c.commit, got, c.want)
		}
	}
}
