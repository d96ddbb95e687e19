package raftlog

import "github.com/hashicorp/raft"

// Every request another node sends passes through run before Raft sees it
// (the heartbeats of hashicorp/raft's fast path excepted: they carry no
// entries and no commit index). Two things are done there:
//
//   - an append request's commit index is bounded by the last entry the
//     request proves this node shares with the leader (clampCommit);
//   - while the node catches up, votes are kept out (catchup.go).

func (g *gatedTransport) run() {
	in := g.NetworkTransport.Consumer()
	for {
		var rpc raft.RPC
		select {
		case rpc = <-in:
		case <-g.done:
			return
		}
		if req, ok := rpc.Command.(*raft.AppendEntriesRequest); ok {
			clampCommit(req)
		}
		if !g.open.Load() && !g.admit(&rpc) {
			continue
		}
		select {
		case g.consumer <- rpc:
		case <-g.done:
			return
		}
	}
}

// clampCommit lowers an append request's commit index to the index of its
// last entry, or of its previous entry if it has none. Raft's rule is
// commitIndex = min(leaderCommit, index of last new entry); hashicorp/raft
// takes min(leaderCommit, the follower's last index), and the follower's
// log past what the request proves may hold entries of an older term that
// were never committed. A leader deposed while it had such entries would
// apply them on the first append of the new leader that carries no
// entries and a commit index past its previous entry (hashicorp/raft
// reads the commit index after choosing the entries, so a new leader's
// append can), and would never apply the new leader's entries at those
// indexes: its data would differ from the cluster's for good, its clients
// told that uncommitted transactions committed (seen in the chaos suite's
// pause-leader scenario; TestFollowerAppliesNoStaleEntry). The entries the
// request proves were either in the log already with the same term (Raft's
// log matching: then equal to the leader's) or are stored by it.
func clampCommit(req *raft.AppendEntriesRequest) {
	proven := req.PrevLogEntry
	if n := len(req.Entries); n > 0 {
		proven = req.Entries[n-1].Index
	}
	if req.LeaderCommitIndex > proven {
		req.LeaderCommitIndex = proven
	}
}
