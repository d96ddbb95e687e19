package replica

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"certa/engine"
	"certa/sqlerr"
)

// A certified write set applies on every node or on none: every node
// holds the same rows at the same seqno and applies the same changes (with
// the PostgreSQL engine the origin's COMMIT is its apply). So a write set
// that fails here and applied on another node means this node's data
// differs from the cluster's, whatever the cause (a bug in capture or
// certification, a write made to this node's database behind certa's
// back). Logging that and going on would leave the node different for
// good; stopping would leave it down. Instead the node compares each item
// that failed with the other members and, when one of them applied it,
// takes that member's state (a snapshot, as a joining node does) before it
// applies anything further. An item that failed on the others too failed
// alike everywhere: its error is the client's answer.

// Comparing waits for the other members to reach the item, or for a
// majority to have seen it fail (see compareFailure).
const (
	compareWait  = 30 * time.Second
	compareRetry = 200 * time.Millisecond
	outcomeAsk   = 2 * time.Second
)

// TookStateLog starts the message logged when this node took another's
// state because its data differed (tests look for it).
const TookStateLog = "this node's data differed from the cluster's: took another node's state"

// errStopping: the node stopped while comparing.
var errStopping = errors.New("the node is stopping")

// errSnapshotBehind: a member's snapshot ends before the item compared.
var errSnapshotBehind = errors.New("the member's snapshot ends before the write set compared")

// errFailedOnCluster is the outcome of a write set of this node's that
// failed on the member whose state this node took: the error it failed
// with there is not known here.
var errFailedOnCluster = sqlerr.New(sqlerr.SerializationFailure,
	"could not serialize access: the transaction's changes could not be applied on the cluster")

// settle compares each item that failed here with the other members, and
// takes the state of one that applied it (see above). items were applied
// up to m.seqno; afterwards the engine holds m.engineSeqno (at least
// m.seqno) and each item's Err is its outcome on the cluster. It returns
// an error only when the node stops or cannot take a member's state.
func (m *stateMachine) settle(items []engine.ApplyItem) error {
	for i := range items {
		it := &items[i]
		if it.Err == nil || it.Seqno <= m.tookUpTo {
			continue
		}
		m.itemFailed(*it)
		upTo, err := m.resolve(it.Seqno, it.WS.Origin)
		if err != nil {
			return err
		}
		if upTo == 0 {
			continue // failed alike everywhere
		}
		if err := m.afterTaking(items, upTo); err != nil {
			return err
		}
	}
	return nil
}

// recheck compares again the replayed items (certified, already in the
// engine: a replay after a restart) that failed here. A node stopped while
// settle compared one had recorded its failure with the batch, and no
// one else would compare it again. It cannot have taken a Raft snapshot
// since (snapshots come between Apply calls), so the replay holds it.
func (m *stateMachine) recheck(replayed []engine.ApplyItem) error {
	if len(replayed) == 0 {
		return nil
	}
	failed, err := m.engine.FailedSeqnos(replayed[0].Seqno, replayed[len(replayed)-1].Seqno)
	if err != nil {
		return fmt.Errorf("read failed seqnos: %w", err)
	}
	for _, it := range replayed {
		if !failed[it.Seqno] || it.Seqno <= m.tookUpTo {
			continue
		}
		upTo, err := m.resolve(it.Seqno, it.WS.Origin)
		if err != nil {
			return err
		}
		if upTo > 0 {
			m.tookUpTo = upTo
			m.engineSeqno = max(m.engineSeqno, upTo)
		}
	}
	return nil
}

// resolve compares the failed item at seqno with the other members, asking
// its origin first. It returns 0 when it failed there too, else the seqno
// of the state it took from a member that applied it.
func (m *stateMachine) resolve(seqno uint64, origin string) (uint64, error) {
	m.stalled.Store(fmt.Sprintf("comparing write set %d, which failed here, with the other nodes", seqno))
	defer m.stalled.Store("")
	for {
		snap, from, err := m.compare(seqno, origin)
		if err != nil || snap == nil {
			return 0, err
		}
		m.stalled.Store(fmt.Sprintf("taking the state of %s: write set %d applied there and failed here", from, seqno))
		upTo, err := m.take(snap, seqno)
		snap.Close()
		if errors.Is(err, errSnapshotBehind) {
			select {
			case <-m.stop:
				return 0, errStopping
			case <-time.After(compareRetry):
			}
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("take the state of %s: %w", from, err)
		}
		m.resyncs.Add(1)
		m.logger.Warn(TookStateLog+": a write set that failed here applied there",
			"seqno", seqno, "from", from, "state_seqno", upTo)
		return upTo, nil
	}
}

// take replaces the engine's data with a member's snapshot that holds the
// item at seqno, and returns the snapshot's seqno. The log-derived state
// (certification, members) stays this node's own: it is the same.
func (m *stateMachine) take(snap io.Reader, seqno uint64) (uint64, error) {
	br := bufio.NewReaderSize(snap, 1<<16)
	head, err := readSnapshotHead(br)
	if err != nil {
		return 0, err
	}
	if head.seqno < seqno {
		return 0, errSnapshotBehind
	}
	if err := m.engine.Restore(context.Background(), br); err != nil {
		return 0, err
	}
	m.transfers.Add(1)
	return head.seqno, nil
}

// afterTaking brings items in line with a state taken up to upTo: those
// it covers get their outcome there, the rest are applied again on it.
func (m *stateMachine) afterTaking(items []engine.ApplyItem, upTo uint64) error {
	m.tookUpTo = upTo
	var rest []engine.ApplyItem
	for i := range items {
		if items[i].Seqno > upTo {
			rest = items[i:]
			break
		}
		err, ferr := m.outcomeTaken(items[i].Seqno)
		if ferr != nil {
			return ferr
		}
		if err == nil || items[i].Err == nil {
			items[i].Err = err // else it failed alike there: keep its error
		}
	}
	if upTo >= m.seqno {
		m.engineSeqno = upTo
		return nil
	}
	for i := range rest {
		rest[i].Err = nil
	}
	if err := m.applyItems(rest); err != nil {
		return fmt.Errorf("apply write sets up to seqno %d again: %w", m.seqno, err)
	}
	m.engineSeqno = m.seqno
	return nil
}

// outcomeTaken returns the outcome of the write set at seqno in a state
// this node took from another (errFailedOnCluster or nil).
func (m *stateMachine) outcomeTaken(seqno uint64) (outcome error, err error) {
	failed, err := m.engine.FailedSeqnos(seqno, seqno)
	if err != nil {
		return nil, fmt.Errorf("read the outcome of seqno %d: %w", seqno, err)
	}
	if failed[seqno] {
		return errFailedOnCluster, nil
	}
	return nil, nil
}

// compareFailure implements stateMachine.compare: it asks the voters how
// the write set at seqno, which failed here, went there (origin first),
// until one applied it (it returns that member's snapshot and id), or
// until it failed alike (nil): on all others, or on a majority of the
// voters with its origin among them (the origin's outcome is what its
// client was told), or, after compareWait, on a majority without word
// from the origin. Members down or behind do not hold the cluster up.
func (n *Node) compareFailure(seqno uint64, origin string) (io.ReadCloser, string, error) {
	select {
	case <-n.started:
	default:
		// Replaying the log before Start: the log says who else there is.
		if !n.knowsOthers() {
			return nil, "", nil
		}
		select {
		case <-n.started:
		case <-n.stop:
			return nil, "", errStopping
		}
	}
	deadline := time.Now().Add(compareWait)
	for {
		voters, others := n.otherVoters(origin)
		failed, pending := 1, 0 // this node saw it fail
		originFailed := origin == n.cfg.Self.ID
		for _, mb := range others {
			if mb.HTTPAddr == "" {
				pending++
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), outcomeAsk)
			applied, failedThere, err := n.peers.Outcome(ctx, mb.HTTPAddr, seqno)
			cancel()
			switch {
			case err != nil || applied < seqno:
				pending++
			case failedThere:
				failed++
				originFailed = originFailed || mb.ID == origin
			default:
				snap, err := n.snapshotOf(mb.HTTPAddr)
				if err == nil {
					return snap, mb.ID, nil
				}
				n.cfg.Logger.Warn("cannot read another node's state", "node", mb.ID, "err", err)
				pending++
			}
		}
		majority := 2*failed > voters
		if pending == 0 || (majority && (originFailed || time.Now().After(deadline))) {
			if pending > 0 {
				n.cfg.Logger.Info("a write set failed here and on a majority of the nodes, its origin among them or not answering; not waiting for the rest",
					"seqno", seqno, "failed_on", failed, "voters", voters)
			}
			return nil, "", nil
		}
		select {
		case <-n.stop:
			return nil, "", errStopping
		case <-time.After(compareRetry):
		}
	}
}

// knowsOthers reports whether the log named a member other than this node.
func (n *Node) knowsOthers() bool {
	for _, mb := range n.sm.memberList() {
		if mb.ID != n.cfg.Self.ID {
			return true
		}
	}
	return false
}

// snapshotOf opens the state of the member at httpAddr; reading it ends
// when the node stops.
func (n *Node) snapshotOf(httpAddr string) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-n.stop:
		case <-ctx.Done():
		}
		cancel()
	}()
	rc, err := n.peers.Snapshot(ctx, httpAddr)
	if err != nil {
		cancel()
		return nil, err
	}
	return cancelOnClose{rc, cancel}, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// otherVoters returns the number of voters and the voters other than this
// node, origin first (HTTPAddr "" when not yet known).
func (n *Node) otherVoters(origin string) (int, []memberAddr) {
	servers, err := n.log.Servers()
	if err != nil {
		return 0, nil
	}
	voters := 0
	var out []memberAddr
	for _, sv := range servers {
		if !sv.Voter {
			continue
		}
		voters++
		if sv.ID == n.cfg.Self.ID {
			continue
		}
		a := memberAddr{ID: sv.ID}
		if mb, ok := n.sm.member(sv.ID); ok {
			a.HTTPAddr = mb.HTTPAddr
		}
		if sv.ID == origin {
			out = append([]memberAddr{a}, out...)
		} else {
			out = append(out, a)
		}
	}
	return voters, out
}

type memberAddr struct{ ID, HTTPAddr string }

// Outcome tells another node how the write set at seqno went here:
// applied is the last seqno this node applied; failed says whether the
// write set at seqno failed (when applied >= seqno).
func (n *Node) Outcome(seqno uint64) (applied uint64, failed bool, err error) {
	applied, err = n.engine.AppliedSeqno()
	if err != nil || applied < seqno {
		return applied, false, err
	}
	f, err := n.engine.FailedSeqnos(seqno, seqno)
	return applied, f[seqno], err
}

// OpenSnapshot opens this node's state for another node to take.
func (n *Node) OpenSnapshot() (io.ReadCloser, error) { return n.log.OpenSnapshot() }
