package replica

import (
	"context"
	"errors"
	"time"

	"certa/orderlog"
	"certa/writeset"
)

// Batching limits. Up to maxInFlight entries are handed to the leader at
// once; the Raft leader already packs everything that arrives while it
// writes the log into one disk write and one append request, and the state
// machine applies all committed entries in one SQLite transaction. Beyond
// that, write sets that queue up go into one log entry, up to
// maxBatchWriteSets of them and maxBatchBytes of their encodings; a write
// set larger than that goes alone (see size.go). (Measured with `certa
// bench`: fewer entries in flight means more waiting, not more packing; 4
// in flight gave 2,230 commits/s, 32 gave 2,490.)
const (
	maxBatchWriteSets = 1024
	maxBatchBytes     = 4 << 20
	maxInFlight       = 32
)

// submitLoop takes write sets from the queue, packs them into log entries
// and hands each entry to the leader, with at most maxInFlight outstanding.
func (n *Node) submitLoop() {
	defer n.wg.Done()
	sem := make(chan struct{}, maxInFlight)
	var next *writeset.WriteSet // taken from the queue, did not fit the last batch
	for {
		first := next
		next = nil
		if first == nil {
			select {
			case <-n.stop:
				return
			case first = <-n.queue:
			}
		}
		select {
		case sem <- struct{}{}:
		case <-n.stop:
			return
		}
		batch := []*writeset.WriteSet{first}
		size := first.Size()
	drain:
		for len(batch) < maxBatchWriteSets {
			select {
			case ws := <-n.queue:
				wsSize := ws.Size()
				if size+wsSize > maxBatchBytes {
					next = ws
					break drain
				}
				batch = append(batch, ws)
				size += wsSize
			default:
				break drain
			}
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			defer func() { <-sem }()
			n.dispatch(batch)
		}()
	}
}

// dispatch appends one batch. The sessions waiting on it learn their
// outcome from the state machine; only when the batch was certainly not
// appended are they told here. A batch the leader refused as too large
// (its limit is lower than ours) is sent again one write set at a time, so
// that only the write sets over its limit are refused.
func (n *Node) dispatch(batch []*writeset.WriteSet) {
	entry := writeset.EncodeBatch(batch)
	if len(batch) == 1 {
		// The entry holds all of it now; nothing reads a write set's
		// rows and keys after submission (the origin applies it from the
		// log like every node), and dropping them lets the collector free
		// a large one while it replicates and applies.
		batch[0].Changes, batch[0].Keys = nil, nil
	}
	err := n.appendEntry(entry)
	switch {
	case errors.Is(err, orderlog.ErrTooLarge) && len(batch) > 1:
		for _, ws := range batch {
			n.dispatch([]*writeset.WriteSet{ws})
		}
		return
	case errors.Is(err, orderlog.ErrTooLarge):
		err = errLeaderRefusedSize(err)
	case errors.Is(err, orderlog.ErrNotLeader), errors.Is(err, orderlog.ErrTimeout):
		err = errNoQuorum("the commit could not be appended to the log: %v", err)
	default:
		return // committed, or unknown: the waiters time out unless it applies
	}
	for _, ws := range batch {
		n.waiters.deliver(ws.TxID, outcome{err: err})
	}
}

// appendEntry appends entry on the leader, retrying while leadership moves.
func (n *Node) appendEntry(entry []byte) error {
	deadline := time.Now().Add(n.cfg.CommitTimeout / 2)
	for {
		err := n.appendOnce(entry)
		if err == nil || !errors.Is(err, orderlog.ErrNotLeader) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-n.stop:
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (n *Node) appendOnce(entry []byte) error {
	leader := n.log.Leader()
	if leader == "" {
		return orderlog.ErrNotLeader
	}
	if leader == n.cfg.Self.ID {
		return n.log.Append(entry, n.cfg.CommitTimeout)
	}
	mb, ok := n.sm.member(leader)
	if !ok {
		return orderlog.ErrNotLeader
	}
	ctx, cancel := context.WithTimeout(context.Background(), n.commitWait(len(entry)))
	defer cancel()
	return n.peers.Forward(ctx, mb.HTTPAddr, entry)
}
