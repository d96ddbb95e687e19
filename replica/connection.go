package replica

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// A node is cut off from its cluster while it knows no leader: it cannot
// reach a majority (a partition, the others down), or the cluster cannot
// reach it (it listens on another Raft address than the cluster knows),
// or it has not joined yet. It then refuses writes and 'sync' reads
// (errNoQuorum) and its 'local' reads may be stale, so it says so: in
// Status (Connected, CutOffSince, CutOff) and in its log, with a warning
// repeated with back-off while it lasts.

// Back-off of the cut-off warning: the first once a node has been cut off
// for cutOffWarnAfter (an election takes a second or two and is not worth
// a warning), then after twice the previous interval, at most
// cutOffWarnMax apart.
const (
	cutOffWarnAfter = 5 * time.Second
	cutOffWarnMax   = 5 * time.Minute
)

// cutOff follows whether a node knows a leader and decides when to warn.
// Time is an input: it is tested without clocks. Safe for concurrent use.
type cutOff struct {
	mu       sync.Mutex
	since    time.Time     // when the leader was lost; zero while one is known
	nextWarn time.Time     // when to warn next while cut off
	interval time.Duration // between the last warning and nextWarn
	warned   bool          // a warning was logged since the leader was lost
}

// newCutOff starts cut off at now: a node starts knowing no leader.
func newCutOff(now time.Time) *cutOff {
	c := &cutOff{}
	c.observe(now, false)
	return c
}

// observe records whether a leader is known at now. It reports whether to
// warn that the node is (still) cut off, and whether to say that it is
// connected again after a warning; since is when it was cut off.
func (c *cutOff) observe(now time.Time, leaderKnown bool) (warn, reconnected bool, since time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	since = c.since
	if leaderKnown {
		reconnected = c.warned
		c.since, c.warned = time.Time{}, false
		return false, reconnected, since
	}
	if c.since.IsZero() {
		c.since, c.nextWarn, c.interval = now, now.Add(cutOffWarnAfter), cutOffWarnAfter
		return false, false, now
	}
	if now.Before(c.nextWarn) {
		return false, false, since
	}
	c.warned = true
	c.interval = min(2*c.interval, cutOffWarnMax)
	c.nextWarn = now.Add(c.interval)
	return true, false, since
}

// cutOffSince returns when the node was cut off (zero: it was not, when
// last observed).
func (c *cutOff) cutOffSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since
}

// watchLoop observes the leader every watchInterval and logs while the
// node is cut off.
func (n *Node) watchLoop() {
	defer n.wg.Done()
	const watchInterval = 250 * time.Millisecond
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		now := time.Now()
		leader := n.log.Leader()
		warn, reconnected, since := n.cut.observe(now, leader != "")
		switch {
		case warn:
			n.cfg.Logger.Warn("cut off from the cluster: refusing writes and 'sync' reads; 'local' reads may be stale",
				"reason", n.cutOffReason(), "role", n.log.State(), "since", since.UTC().Format(time.RFC3339), "for", now.Sub(since).Round(time.Second))
		case reconnected:
			n.cfg.Logger.Info("connected to the cluster again", "leader", leader, "after", now.Sub(since).Round(time.Second))
		}
	}
}

// cutOffReason says why a node that knows no leader is cut off.
func (n *Node) cutOffReason() string {
	servers, err := n.log.Servers()
	if err != nil {
		return "no leader known: " + err.Error()
	}
	for _, s := range servers {
		if s.ID != n.cfg.Self.ID {
			continue
		}
		if s.Address != n.cfg.Self.RaftAddr {
			if len(n.announceAddrs()) == 0 {
				return fmt.Sprintf("the cluster knows this node's Raft address as %s, but it listens on %s, and it knows no member's HTTP address to ask for an update: "+
					"restart it with --join <HTTP address of a member>, or with --raft-addr %s", s.Address, n.cfg.Self.RaftAddr, s.Address)
			}
			return fmt.Sprintf("the cluster knows this node's Raft address as %s, but it listens on %s: "+
				"it asks the members it knows (and those of --join) to update it, and stays cut off until one that reaches the leader does",
				s.Address, n.cfg.Self.RaftAddr)
		}
		return fmt.Sprintf("no leader known: this node cannot reach a majority of its cluster (%d members)", len(servers))
	}
	return "not a member of a cluster yet: waiting to be added by its leader"
}

// raftAddrKnown returns the Raft address the cluster's configuration has
// for this node ("" when it is not in it).
func (n *Node) raftAddrKnown() string {
	servers, err := n.log.Servers()
	if err != nil {
		return ""
	}
	for _, s := range servers {
		if s.ID == n.cfg.Self.ID {
			return s.Address
		}
	}
	return ""
}

// reannounce is called while no leader is known. When the configuration
// has another Raft address for this node than the one it listens on (it
// was restarted with a new --raft-addr), the leader sends it nothing, so
// it asks members by their HTTP addresses to pass its addresses on to the
// leader. It reports whether one of them did.
func (n *Node) reannounce() bool {
	known := n.raftAddrKnown()
	if known == "" || known == n.cfg.Self.RaftAddr {
		return false
	}
	stopped, cancelAll := context.WithCancel(context.Background())
	defer cancelAll()
	go func() { // Close must not wait for these requests
		select {
		case <-n.stop:
			cancelAll()
		case <-stopped.Done():
		}
	}()
	for _, a := range n.announceAddrs() {
		ctx, cancel := context.WithTimeout(stopped, 2*time.Second)
		err := n.peers.Join(ctx, a, n.cfg.Self)
		cancel()
		if err == nil {
			n.cfg.Logger.Info("asked the cluster to update this node's addresses", "via", a, "raft_addr", n.cfg.Self.RaftAddr, "was", known)
			return true
		}
		n.cfg.Logger.Debug("announce addresses", "via", a, "err", err)
	}
	return false
}

// announceAddrs are the HTTP addresses reannounce asks: the other members
// known from the log (a restarted node knows those of its newest snapshot
// until it hears from the leader), then --join's.
func (n *Node) announceAddrs() []string {
	var addrs []string
	for _, mb := range n.sm.memberList() {
		if mb.ID != n.cfg.Self.ID && mb.HTTPAddr != "" {
			addrs = append(addrs, mb.HTTPAddr)
		}
	}
	return append(addrs, n.cfg.JoinAddrs...)
}
