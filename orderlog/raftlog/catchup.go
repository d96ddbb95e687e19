package raftlog

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// A node that joins a cluster with no state (a new node, or a member whose
// data directory was lost) must take no part in elections until its log
// holds every entry the leader had committed. Raft's safety rests on each
// voter's log: a member restarted empty under its old id is still a voter
// in the others' configuration, and hashicorp/raft grants a vote to any
// candidate while its own configuration is empty. Say an entry committed on
// n1 and n3 only; n1 loses its data and n3 is down: n1, empty, would vote
// for n2, which lacks the entry, and n2 would lead without it, the
// acknowledged commit lost. So until it has caught up such a node refuses
// vote and pre-vote requests and sends none (it cannot be elected either).
//
// It has caught up once an append from the leader succeeds with its log
// reaching the leader's commit index of that request, and the entry there
// is of the leader's term: by Raft's log matching its log then holds the
// leader's log up to that index, and a leader's commit index covers every
// entry committed before its term only once it has committed an entry of
// its own (a leader just elected after a restart sends 0). The file
// catchingUpFile, written before Raft starts, keeps the gate closed across
// restarts until then.

// catchingUpFile marks a Raft directory whose node has not caught up yet.
const catchingUpFile = "catching-up"

// errCatchingUp answers vote requests while the gate is closed.
var errCatchingUp = errors.New("raftlog: this node is catching up with the leader and takes no part in elections yet")

// gatedTransport is the node's transport (incoming.go). While the node
// catches up, it keeps votes out; it opens once the node has caught up.
type gatedTransport struct {
	*transport // the TCP transport (transport.go)
	consumer   chan raft.RPC
	open       atomic.Bool
	openedAt   atomic.Uint64 // the log index the node had when the gate opened
	logs       raft.LogStore // the node's log, to read an entry's term
	// snapIndex and snapTerm are of the last entry in the newest snapshot
	// the leader sent: that entry is not in the log.
	snapMu              sync.Mutex
	snapIndex, snapTerm uint64
	marker              string // catchingUpFile's path, removed when the gate opens
	logger              *slog.Logger
	done                chan struct{}
}

// newGatedTransport returns the node's transport over t; catchingUp says
// whether the gate starts closed.
func newGatedTransport(t *transport, logs raft.LogStore, catchingUp bool, marker string, logger *slog.Logger) *gatedTransport {
	g := &gatedTransport{transport: t, consumer: make(chan raft.RPC), logs: logs, marker: marker, logger: logger, done: make(chan struct{})}
	g.open.Store(!catchingUp)
	go g.run()
	return g
}

// Consumer implements raft.Transport.
func (g *gatedTransport) Consumer() <-chan raft.RPC { return g.consumer }

// Close implements raft.WithClose.
func (g *gatedTransport) Close() error {
	select {
	case <-g.done:
	default:
		close(g.done)
	}
	return g.transport.Close()
}

// admit answers vote requests itself, and watches the answers to appends
// to see when the node has caught up. It reports whether Raft gets rpc.
func (g *gatedTransport) admit(rpc *raft.RPC) bool {
	switch req := rpc.Command.(type) {
	case *raft.RequestVoteRequest, *raft.RequestPreVoteRequest:
		rpc.Respond(nil, errCatchingUp)
		return false
	case *raft.InstallSnapshotRequest:
		g.snapMu.Lock()
		g.snapIndex, g.snapTerm = req.LastLogIndex, req.LastLogTerm
		g.snapMu.Unlock()
	case *raft.AppendEntriesRequest:
		orig := rpc.RespChan
		watched := make(chan raft.RPCResponse, 1)
		rpc.RespChan = watched
		go func() {
			var r raft.RPCResponse
			select {
			case r = <-watched:
			case <-g.done:
				return
			}
			if resp, ok := r.Response.(*raft.AppendEntriesResponse); ok && r.Error == nil && resp.Success && g.caughtUp(req, resp) {
				g.openGate(resp.LastLog)
			}
			orig <- r
		}()
	}
	return true
}

// caughtUp reports whether the node's log, after a successful append,
// holds every entry committed in the cluster (see the top of this file).
func (g *gatedTransport) caughtUp(req *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) bool {
	commit := req.LeaderCommitIndex
	if commit == 0 || resp.LastLog < commit {
		return false
	}
	for _, e := range req.Entries {
		if e.Index == commit {
			return e.Term == req.Term
		}
	}
	var e raft.Log
	if err := g.logs.GetLog(commit, &e); err == nil {
		return e.Term == req.Term
	}
	g.snapMu.Lock()
	defer g.snapMu.Unlock()
	return commit == g.snapIndex && g.snapTerm == req.Term
}

// openGate lets the node take part in elections from now on.
func (g *gatedTransport) openGate(index uint64) {
	if !g.open.CompareAndSwap(false, true) {
		return
	}
	g.openedAt.Store(index)
	if err := os.Remove(g.marker); err != nil && !errors.Is(err, os.ErrNotExist) {
		g.logger.Warn("raftlog: remove catch-up marker", "err", err)
	}
	g.logger.Info("caught up with the leader: taking part in elections", "index", index)
}

// RequestVote implements raft.Transport: no campaign while catching up.
func (g *gatedTransport) RequestVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestVoteRequest, resp *raft.RequestVoteResponse) error {
	if !g.open.Load() {
		return errCatchingUp
	}
	return g.NetworkTransport.RequestVote(id, target, args, resp)
}

// RequestPreVote implements raft.WithPreVote.
func (g *gatedTransport) RequestPreVote(id raft.ServerID, target raft.ServerAddress, args *raft.RequestPreVoteRequest, resp *raft.RequestPreVoteResponse) error {
	if !g.open.Load() {
		return errCatchingUp
	}
	return g.NetworkTransport.RequestPreVote(id, target, args, resp)
}
