package replica

import (
	"context"
	"fmt"
	"slices"

	"certa/orderlog"
)

// 'sync' reads are served without writing to the log (Raft's read index,
// section 6.4 of Ongaro's thesis). A read needs the commit index of the
// leader, read after the read began, and a majority of the voters saying,
// also after it began, that they follow that leader in its term; then it
// waits until its node has applied up to that index. Every commit
// acknowledged before the read began is at or below that index: a newer
// leader would have needed the votes of a majority before the read began,
// and voting raises a node's term, so the two majorities cannot both exist.
// A leader's commit index counts only once an entry of its own term has
// committed, so its first read index in a term takes a barrier (a log entry
// written and fsync'd on a majority); afterwards a read costs requests only.
//
// On the leader the majority is itself and the followers it asks. A
// follower asks the leader for its term and commit index (the leader counts:
// it was the leader when it read the index) and counts itself if it still
// follows that leader in that term; in a 3-node cluster that is a majority
// and nobody else is asked.
//
// hashicorp/raft's VerifyLeader is not used: it also counts replies to
// requests sent before it was called, which do not prove the leadership
// lasted until the read began.

// Leadership reports this node's term and the leader it knows in that term
// ("" if none). A node never reports a term it has left: the term is read on
// both sides of the leader.
func (n *Node) Leadership() (term uint64, leader string) {
	for {
		term = n.log.Term()
		leader = n.log.Leader()
		if n.log.Term() == term {
			return term, leader
		}
	}
}

// LeaderReadIndex returns, on the leader, its term and its commit index, at
// or above every entry committed before the call. orderlog.ErrNotLeader if
// this node is not the leader.
func (n *Node) LeaderReadIndex() (term, index uint64, err error) {
	term = n.log.Term()
	if !n.log.IsLeader() {
		return 0, 0, orderlog.ErrNotLeader
	}
	if n.readyTerm.Load() != term {
		// A barrier commits an entry of this term; it fails if leadership
		// was lost meanwhile.
		if err := n.log.Barrier(n.cfg.SyncTimeout); err != nil {
			return 0, 0, err
		}
		n.readyTerm.Store(term)
	}
	index = n.log.CommitIndex()
	if n.log.Term() != term || !n.log.IsLeader() {
		return 0, 0, orderlog.ErrNotLeader
	}
	return term, index, nil
}

// leaderReadIndex returns, on the leader, a Raft index at or above every
// commit acknowledged before the call.
func (n *Node) leaderReadIndex() (uint64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.SyncTimeout)
	defer cancel()
	term, index, err := n.LeaderReadIndex()
	if err != nil {
		return 0, err
	}
	self := n.cfg.Self.ID
	if err := n.confirmLeader(ctx, term, self, self); err != nil {
		return 0, err
	}
	// Its own vote counts only if it has not moved on itself.
	if n.log.Term() != term || !n.log.IsLeader() {
		return 0, orderlog.ErrNotLeader
	}
	return index, nil
}

// followerReadIndex returns, on a follower, a Raft index at or above every
// commit acknowledged before the call.
func (n *Node) followerReadIndex() (uint64, error) {
	leader := n.log.Leader()
	if leader == "" {
		return 0, errNoQuorum("no leader is known, so a 'sync' read cannot be served")
	}
	mb, ok := n.sm.member(leader)
	if !ok {
		return 0, errNoQuorum("the leader's address is not known yet")
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.cfg.SyncTimeout)
	defer cancel()
	term, index, err := n.peers.ReadIndex(ctx, mb.HTTPAddr)
	if err != nil {
		return 0, errNoQuorum("could not get the read index from the leader %s: %v", leader, err)
	}
	if t, l := n.Leadership(); t != term || l != leader {
		return 0, errNoQuorum("leadership changed while reading (term %d, leader %q; now term %d, leader %q)", term, leader, t, l)
	}
	if err := n.confirmLeader(ctx, term, leader, n.cfg.Self.ID, leader); err != nil {
		return 0, errNoQuorum("could not confirm the latest commit with a majority: %v", err)
	}
	return index, nil
}

// confirmLeader returns nil once a majority of the voters have said, after
// the call began, that they follow leader in term: the voters in confirmed
// already have, and it asks the others.
func (n *Node) confirmLeader(ctx context.Context, term uint64, leader string, confirmed ...string) error {
	servers, err := n.log.Servers()
	if err != nil {
		return err
	}
	voters, votes, asked := 0, 0, 0
	// Requests still out when the majority is reached are left to finish
	// (within SyncTimeout): cancelling one closes its connection, and the
	// next round would open a new one.
	answers := make(chan bool, len(servers))
	ask := func(addr string) {
		ctx, cancel := context.WithTimeout(context.Background(), n.cfg.SyncTimeout)
		defer cancel()
		t, l, err := n.peers.Leadership(ctx, addr)
		answers <- err == nil && t == term && l == leader
	}
	var others []string
	for _, s := range servers {
		if !s.Voter {
			continue
		}
		voters++
		switch mb, known := n.sm.member(s.ID); {
		case slices.Contains(confirmed, s.ID):
			votes++
		case known:
			others = append(others, mb.HTTPAddr)
		}
	}
	need := voters/2 + 1
	if votes >= need {
		return nil
	}
	for _, addr := range others {
		asked++
		go ask(addr)
	}
	for ; votes < need && asked > 0; asked-- {
		select {
		case yes := <-answers:
			if yes {
				votes++
			}
		case <-ctx.Done():
			return fmt.Errorf("%d of the %d voters confirmed %s as the leader in term %d before the timeout", votes, voters, leader, term)
		}
	}
	if votes < need {
		return fmt.Errorf("only %d of the %d voters confirmed %s as the leader in term %d", votes, voters, leader, term)
	}
	return nil
}
