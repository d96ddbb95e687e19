package replica

import (
	"context"
	"time"

	"certa/engine"
)

// MemberStatus is one member as the status reports it.
type MemberStatus struct {
	ID       string `json:"id"`
	PGAddr   string `json:"pg_addr"`
	RaftAddr string `json:"raft_addr"`
	HTTPAddr string `json:"http_addr"`
	Voter    bool   `json:"voter"`
}

// Status is a node's view of itself and the cluster.
type Status struct {
	ID      string         `json:"id"`
	Role    string         `json:"role"`
	Leader  string         `json:"leader"`
	Members []MemberStatus `json:"members"`
	// Connected says whether this node knows a leader. A node that does
	// not is cut off from its cluster: it refuses writes and 'sync' reads
	// (57P03), and its 'local' reads may be stale.
	Connected bool `json:"connected"`
	// CutOffSince is when a node that is not connected lost sight of a
	// leader (or started), RFC 3339 in UTC; CutOff says why it is cut off.
	// Both are empty while it is connected.
	CutOffSince string `json:"cut_off_since,omitempty"`
	CutOff      string `json:"cut_off,omitempty"`
	// CatchingUp: this node joined with no state (new, or its data
	// directory was lost) and takes no part in elections until its log
	// holds everything committed in the cluster.
	CatchingUp bool `json:"catching_up,omitempty"`
	// AppliedSeqno is the last log position this node has certified and applied.
	AppliedSeqno uint64 `json:"applied_seqno"`
	// CommitSeqno is the position of the last write set that passed certification.
	CommitSeqno uint64 `json:"commit_seqno"`
	// Certified and Conflicts count write sets that passed and failed
	// certification on this node since it started.
	Certified uint64 `json:"certified"`
	Conflicts uint64 `json:"conflicts"`
	// UnforeseenConflicts counts certified write sets whose changes did
	// not match this node's rows at apply (failed with 40001). Certification
	// should make that impossible: each one means a conflict it missed, or
	// that this node's data differs from the cluster's. The node then
	// compares the write set with the other nodes (Resyncs).
	UnforeseenConflicts uint64 `json:"unforeseen_conflicts"`
	// ReadSets counts the serializable write sets this node's clients
	// submitted (each carries what its transaction read), ReadSetBytes
	// the bytes those reads took in them, and ReadFilterFalsePositives
	// those that failed certification only because a Bloom filter of
	// their keys read matched a row they did not read.
	ReadSets                 uint64 `json:"read_sets"`
	ReadSetBytes             uint64 `json:"read_set_bytes"`
	ReadFilterFalsePositives uint64 `json:"read_filter_false_positives"`
	// StateTransfers counts the times this node's database was replaced
	// by a snapshot from the cluster since it started.
	StateTransfers uint64 `json:"state_transfers"`
	// Resyncs counts the state transfers this node made because a write
	// set that failed here applied on another node: its data had come to
	// differ from the cluster's, and it took that node's.
	Resyncs uint64 `json:"resyncs"`
	// Log positions (Raft indexes): the gap between commit and applied is
	// this node's apply lag.
	LogLastIndex    uint64 `json:"log_last_index"`
	LogCommitIndex  uint64 `json:"log_commit_index"`
	LogAppliedIndex uint64 `json:"log_applied_index"`
	LogTerm         uint64 `json:"log_term"`
	// LogSnapshotIndex is the newest snapshot taken or received (0: none).
	LogSnapshotIndex uint64 `json:"log_snapshot_index"`
	// ApplyStalled says why this node cannot apply the log right now
	// ("disk full"); empty when it can.
	ApplyStalled string `json:"apply_stalled,omitempty"`
}

// Status returns the node's current status.
func (n *Node) Status() Status {
	st := n.log.Stats()
	s := Status{
		ID:                       n.cfg.Self.ID,
		Role:                     n.log.State(),
		Leader:                   n.log.Leader(),
		AppliedSeqno:             n.sm.applied.get(),
		CommitSeqno:              n.sm.committed.Load(),
		Certified:                n.sm.certified.Load(),
		Conflicts:                n.sm.conflicts.Load(),
		UnforeseenConflicts:      n.sm.unforeseen.Load(),
		ReadSets:                 n.readSets.Load(),
		ReadSetBytes:             n.readSetBytes.Load(),
		ReadFilterFalsePositives: n.filterFalsePositives.Load(),
		StateTransfers:           n.sm.transfers.Load(),
		Resyncs:                  n.sm.resyncs.Load(),
		LogLastIndex:             st.LastIndex,
		LogCommitIndex:           st.CommitIndex,
		LogAppliedIndex:          st.AppliedIndex,
		LogTerm:                  st.Term,
		LogSnapshotIndex:         st.SnapshotIndex,
		ApplyStalled:             n.sm.stalledReason(),
		CatchingUp:               st.CatchingUp,
	}
	if s.Connected = s.Leader != ""; !s.Connected {
		since := n.cut.cutOffSince()
		if since.IsZero() { // lost since the last observation
			since = time.Now()
		}
		s.CutOffSince = since.UTC().Format(time.RFC3339)
		s.CutOff = n.cutOffReason()
	}
	servers, _ := n.log.Servers()
	for _, sv := range servers {
		ms := MemberStatus{ID: sv.ID, RaftAddr: sv.Address, Voter: sv.Voter}
		if mb, ok := n.sm.member(sv.ID); ok {
			ms.PGAddr, ms.HTTPAddr = mb.PGAddr, mb.HTTPAddr
		}
		s.Members = append(s.Members, ms)
	}
	return s
}

// Checksums summarises this node's data at its current applied seqno
// (GET /checksum): after load stops and faults heal, every node must
// report the same.
func (n *Node) Checksums(ctx context.Context) (engine.Checksums, error) {
	return n.engine.Checksums(ctx)
}
