package raftlog

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"certa/orderlog"

	"github.com/hashicorp/raft"
)

// countingSM counts the entries applied.
type countingSM struct{ n atomic.Uint64 }

func (c *countingSM) Apply(entries []orderlog.Entry) { c.n.Add(uint64(len(entries))) }
func (c *countingSM) Snapshot() (orderlog.Snapshot, error) {
	return nil, errors.New("no snapshots in this test")
}
func (c *countingSM) Restore(io.Reader) error { return nil }

// refusingStore fails the next `refuse` appends, as a full disk does.
type refusingStore struct {
	raft.LogStore
	refuse atomic.Int32
}

func (s *refusingStore) StoreLogs(logs []*raft.Log) error {
	if s.refuse.Load() > 0 {
		s.refuse.Add(-1)
		return errors.New("write: no space left on device")
	}
	return s.LogStore.StoreLogs(logs)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// A follower that refuses appends now and then (its disk is full, then
// freed) must catch up each time. With hashicorp/raft's pipelined
// replication, a refusal could deadlock the leader's pipeline to that
// follower: it kept getting heartbeats, so no election healed it, and never
// got another entry. Found by `certa chaos` (disk-full).
func TestFollowerCatchesUpAfterRefusedAppends(t *testing.T) {
	store := &refusingStore{}
	var nodes []*Log
	for i := range 3 {
		var hooks testHooks
		if i == 2 {
			hooks.wrapStore = func(s raft.LogStore) raft.LogStore { store.LogStore = s; return store }
		}
		l, err := open(Config{ID: fmt.Sprintf("n%d", i+1), Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: i == 0,
			HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond}, &countingSM{}, hooks)
		if err != nil {
			t.Fatal(err)
		}
		// Closing waits for the replication goroutines: after a failure
		// they may be deadlocked, so the nodes are then left running.
		defer func() {
			if !t.Failed() {
				l.Close()
			}
		}()
		nodes = append(nodes, l)
	}
	leader := nodes[0]
	eventually(t, 10*time.Second, "n1 leads", leader.IsLeader)
	for i, l := range nodes[1:] {
		if err := leader.AddVoter(fmt.Sprintf("n%d", i+2), string(l.transport.LocalAddr()), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// Steady appends, so replication to the follower is always busy.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				leader.Append([]byte("entry"), time.Second)
			}
		}()
	}
	defer func() {
		close(stop)
		if !t.Failed() {
			wg.Wait()
		}
	}()

	follower := nodes[2]
	for round := range 20 {
		store.refuse.Store(1)
		eventually(t, 5*time.Second, "the follower refuses an append", func() bool { return store.refuse.Load() == 0 })
		target := leader.Stats().CommitIndex
		eventually(t, 10*time.Second, fmt.Sprintf("round %d: the follower applies up to %d again", round, target), func() bool {
			return follower.Stats().AppliedIndex >= target
		})
	}
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A follower whose log has a tail the new leader does not share truncates
// it and appends the leader's entries. If that append fails (the disk is
// full), hashicorp/raft keeps counting the truncated entries as its own and
// rejects every later append; the node must still catch up once the disk
// has room. Found by `certa chaos` (disk-full): the leader walked the
// follower back one entry per retry, every ten seconds, for good.
func TestFollowerWithDivergentTailCatchesUp(t *testing.T) {
	fast := func(id, dir, addr string, bootstrap bool) Config {
		return Config{ID: id, Dir: dir, RaftAddr: addr, Bootstrap: bootstrap,
			HeartbeatTimeout: 500 * time.Millisecond, ElectionTimeout: 500 * time.Millisecond}
	}
	dir1, addr1 := t.TempDir(), freeAddr(t)
	var refusing []*refusingStore
	var nodes []*Log
	for i := range 3 {
		var hooks testHooks
		if i > 0 {
			s := &refusingStore{}
			refusing = append(refusing, s)
			hooks.wrapStore = func(ls raft.LogStore) raft.LogStore { s.LogStore = ls; return s }
		}
		dir, addr := t.TempDir(), freeAddr(t)
		if i == 0 {
			dir, addr = dir1, addr1
		}
		l, err := open(fast(fmt.Sprintf("n%d", i+1), dir, addr, i == 0), &countingSM{}, hooks)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, l)
	}
	defer func() {
		for _, l := range nodes[1:] {
			l.Close()
		}
	}()
	n1 := nodes[0]
	eventually(t, 10*time.Second, "n1 leads", n1.IsLeader)
	for i, l := range nodes[1:] {
		if err := n1.AddVoter(fmt.Sprintf("n%d", i+2), string(l.transport.LocalAddr()), 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		if err := n1.Append([]byte("shared"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// n2 and n3 refuse appends: n1's next entries stay in its log alone.
	for _, s := range refusing {
		s.refuse.Store(1 << 30)
	}
	last := n1.Stats().LastIndex
	for range 10 {
		go n1.Append([]byte("n1 only"), time.Second) // never commits
	}
	eventually(t, 5*time.Second, "n1 has entries of its own", func() bool { return n1.Stats().LastIndex >= last+10 })
	n1.Close()
	for _, s := range refusing {
		s.refuse.Store(0)
	}
	var leader *Log
	eventually(t, 20*time.Second, "n2 or n3 leads", func() bool {
		for _, l := range nodes[1:] {
			if l.IsLeader() {
				leader = l
				return true
			}
		}
		return false
	})
	for range 5 {
		if err := leader.Append([]byte("new term"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}

	// n1 comes back; once it has removed its own tail, its disk is full
	// (every change fails) for a while: the append of the leader's entries
	// that follows the removal fails.
	var full atomic.Bool
	var failed atomic.Int32
	watch := &truncationWatch{}
	full.Store(true)
	n1, err := open(fast("n1", dir1, addr1, false), &countingSM{}, testHooks{
		wrapStore: func(ls raft.LogStore) raft.LogStore { watch.LogStore = ls; return watch },
		failOp: func() error {
			if full.Load() && watch.truncated.Load() {
				failed.Add(1)
				return errors.New("write: no space left on device")
			}
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	nodes[0] = n1
	defer n1.Close()
	eventually(t, 10*time.Second, "n1's changes fail", func() bool { return failed.Load() >= 1 })
	full.Store(false)
	if err := leader.Append([]byte("after"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	target := leader.Stats().CommitIndex
	eventually(t, 20*time.Second, fmt.Sprintf("n1 applies up to %d", target), func() bool {
		return n1.Stats().AppliedIndex >= target
	})
}

// truncationWatch notes that Raft removed entries from the end of the log.
type truncationWatch struct {
	raft.LogStore
	truncated atomic.Bool
}

func (w *truncationWatch) DeleteRange(min, max uint64) error {
	first, _ := w.FirstIndex()
	err := w.LogStore.DeleteRange(min, max)
	if err == nil && min > first {
		w.truncated.Store(true)
	}
	return err
}
