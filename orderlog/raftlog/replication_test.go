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
