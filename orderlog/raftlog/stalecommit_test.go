package raftlog

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"certa/orderlog"
)

// recordingSM records the data of every entry it applies.
type recordingSM struct {
	countingSM
	mu      sync.Mutex
	applied []string
}

func (r *recordingSM) Apply(entries []orderlog.Entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range entries {
		r.applied = append(r.applied, string(e.Data))
	}
}

func (r *recordingSM) has(data string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.applied, data)
}

// fakePeer is the second voter of a two-node cluster, played by the test
// over a real Raft transport: it grants every vote, acknowledges appends
// while ack is set (heartbeats always), and can send requests of its own.
type fakePeer struct {
	trans *raft.NetworkTransport
	ack   chan bool // current setting, one value buffered
	done  chan struct{}
}

func newFakePeer(t *testing.T) *fakePeer {
	t.Helper()
	trans, err := raft.NewTCPTransport("127.0.0.1:0", nil, 3, 2*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakePeer{trans: trans, ack: make(chan bool, 1), done: make(chan struct{})}
	p.ack <- true
	go p.serve()
	t.Cleanup(func() { close(p.done); trans.Close() })
	return p
}

func (p *fakePeer) setAck(v bool) {
	<-p.ack
	p.ack <- v
}

func (p *fakePeer) serve() {
	for {
		select {
		case <-p.done:
			return
		case rpc := <-p.trans.Consumer():
			switch req := rpc.Command.(type) {
			case *raft.RequestVoteRequest:
				rpc.Respond(&raft.RequestVoteResponse{Term: req.Term, Granted: true}, nil)
			case *raft.RequestPreVoteRequest:
				rpc.Respond(&raft.RequestPreVoteResponse{Term: req.Term, Granted: true}, nil)
			case *raft.AppendEntriesRequest:
				ack := <-p.ack
				p.ack <- ack
				if !ack && len(req.Entries) > 0 {
					continue // never answered: the leader's request times out
				}
				last := req.PrevLogEntry
				if n := len(req.Entries); n > 0 {
					last = req.Entries[n-1].Index
				}
				rpc.Respond(&raft.AppendEntriesResponse{Term: req.Term, LastLog: last, Success: true}, nil)
			default:
				rpc.Respond(nil, nil)
			}
		}
	}
}

// TestFollowerAppliesNoStaleEntry: a leader appends an entry it cannot
// commit, and a new leader takes over whose log ends before that entry.
// The new leader's first append to the old one may carry no entries and a
// commit index beyond its own log (hashicorp/raft reads the commit index
// after choosing the entries to send). The old leader, now a follower,
// must not take that commit index as covering the entry it still holds
// from its own term: that entry was never committed, and the new leader
// has another one at its index. hashicorp/raft takes min(leader's commit,
// own last index); Raft takes min(leader's commit, last entry the request
// proves), which the node's transport enforces (incoming.go).
func TestFollowerAppliesNoStaleEntry(t *testing.T) {
	peer := newFakePeer(t)
	sm := &recordingSM{}
	l, err := Open(Config{ID: "n1", Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: true,
		HeartbeatTimeout: 300 * time.Millisecond, ElectionTimeout: 300 * time.Millisecond, LeaderLeaseTimeout: 300 * time.Millisecond}, sm)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eventually(t, 10*time.Second, "n1 leads", l.IsLeader)
	if err := l.AddVoter("n2", string(peer.trans.LocalAddr()), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := l.Append([]byte("committed"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the committed entry applied", func() bool { return sm.has("committed") })
	st := l.Stats()
	prevIndex, prevTerm := st.LastIndex, st.Term

	// n2 stops answering: the next entry stays uncommitted on n1.
	peer.setAck(false)
	go l.Append([]byte("stale"), 5*time.Second)
	eventually(t, 5*time.Second, "the stale entry in n1's log", func() bool { return l.Stats().LastIndex > prevIndex })

	// n2, leader of the next term, has nothing after prevIndex yet but
	// says its commit index is well past it.
	req := &raft.AppendEntriesRequest{
		RPCHeader:         raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("n2"), Addr: []byte(peer.trans.LocalAddr())},
		Term:              prevTerm + 1,
		PrevLogEntry:      prevIndex,
		PrevLogTerm:       prevTerm,
		LeaderCommitIndex: prevIndex + 5,
	}
	var resp raft.AppendEntriesResponse
	if err := peer.trans.AppendEntries("n1", raft.ServerAddress(l.transport.LocalAddr()), req, &resp); err != nil {
		t.Fatal(err)
	}
	if !resp.Success {
		t.Fatalf("n1 refused an append whose previous entry it holds: %+v", resp)
	}
	// Applying happens after the answer; give it the time it takes to
	// apply an entry that is committed (the one below), then look.
	req.Entries = []*raft.Log{{Index: prevIndex + 1, Term: prevTerm + 1, Type: raft.LogCommand, Data: []byte("new leader's")}}
	if err := peer.trans.AppendEntries("n1", raft.ServerAddress(l.transport.LocalAddr()), req, &resp); err != nil || !resp.Success {
		t.Fatalf("n1 refused the new leader's entry: %v %+v", err, resp)
	}
	req.Entries, req.PrevLogEntry, req.PrevLogTerm = nil, prevIndex+1, prevTerm+1
	if err := peer.trans.AppendEntries("n1", raft.ServerAddress(l.transport.LocalAddr()), req, &resp); err != nil || !resp.Success {
		t.Fatalf("n1 refused the new leader's commit: %v %+v", err, resp)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !sm.has("new leader's") && !sm.has("stale") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if sm.has("stale") || !sm.has("new leader's") {
		t.Fatalf("n1 applied an entry of its own term that was never committed; applied: %q", sm.applied)
	}
}

// TestCommittedEntriesStay: removing entries from the end of the log at or
// below the commit index is refused; above it, and from the start
// (compaction), it is done.
func TestCommittedEntriesStay(t *testing.T) {
	cache, err := raft.NewLogCache(16, raft.NewInmemStore())
	if err != nil {
		t.Fatal(err)
	}
	c := &smallEntryCache{LogCache: cache, store: cache, logger: slog.New(slog.DiscardHandler)}
	for i := uint64(1); i <= 10; i++ {
		if err := c.StoreLog(&raft.Log{Index: i, Term: 1}); err != nil {
			t.Fatal(err)
		}
	}
	commit := func() uint64 { return 8 }
	c.committed.Store(&commit)
	if err := c.DeleteRange(8, 10); !errors.Is(err, errTruncatingCommitted) {
		t.Fatalf("removing entries 8-10 with commit index 8: %v", err)
	}
	if last, _ := c.LastIndex(); last != 10 {
		t.Fatalf("last index %d after a refused removal", last)
	}
	if err := c.DeleteRange(9, 10); err != nil {
		t.Fatalf("removing uncommitted entries 9-10: %v", err)
	}
	if err := c.DeleteRange(1, 5); err != nil {
		t.Fatalf("compacting entries 1-5: %v", err)
	}
}
