package replica

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"certa/engine"
	"certa/orderlog"
	"certa/sqlerr"
	"certa/writeset"
)

// Config configures a node's core. Zero values take the documented defaults.
type Config struct {
	// Self is this node's id and addresses, as announced to the cluster.
	Self writeset.Member
	// CommitTimeout bounds how long a COMMIT waits for its outcome once
	// submitted (default 8s). Past it the client gets 40003: the commit may
	// or may not have happened.
	CommitTimeout time.Duration
	// SyncTimeout bounds how long a 'sync' read or a wait_for waits (default 5s).
	SyncTimeout time.Duration
	// Horizon is the certification window in write sets (default 100000): a
	// transaction whose snapshot is older than that many commits fails.
	Horizon uint64
	// MaxWriteSetBytes is the largest write set a transaction may commit,
	// in bytes of its encoding (row changes, keys, tables; the statement
	// for DDL). Default DefaultMaxWriteSetBytes, at most
	// MaxWriteSetBytesLimit. A larger one is refused at COMMIT with 54000
	// before anything is appended; a leader refuses a forwarded one over
	// its own limit.
	MaxWriteSetBytes int
	// ReadFilterFPRate is the false-positive rate the Bloom filters of a
	// serializable transaction's keys read are sized for (default 0.01,
	// at most 0.5): a transaction that read more than
	// writeset.FilterMinKeys keys sends them as a filter, which may fail
	// it on a row it did not read at about this rate per row written
	// since its snapshot. Lower costs more bytes per key read.
	ReadFilterFPRate float64
	// AutocommitRetries is how often a single autocommit statement that
	// lost certification is re-executed on a fresh snapshot (default 3).
	AutocommitRetries int
	// StatementTimeout is the default statement_timeout of sessions (0:
	// none): a statement running longer is cancelled with 57014. It bounds
	// executing the statement and waiting for a consistent read, not a
	// COMMIT's replication (CommitTimeout does).
	StatementTimeout time.Duration
	// Fatal is called when the node cannot go on without diverging (a batch
	// that cannot be applied). Default: panic.
	Fatal func(error)
	// JoinAddrs are HTTP addresses of members (--join). Besides the members
	// the node knows from the log, it asks them to update its addresses
	// when the cluster knows it by another Raft address (connection.go).
	JoinAddrs []string
	// ObserveCommit, if set, receives the latency of every successful commit.
	ObserveCommit func(time.Duration)
	Logger        *slog.Logger
}

func (c *Config) setDefaults() {
	if c.CommitTimeout == 0 {
		c.CommitTimeout = 8 * time.Second
	}
	if c.SyncTimeout == 0 {
		c.SyncTimeout = 5 * time.Second
	}
	if c.Horizon == 0 {
		c.Horizon = 100000
	}
	if c.AutocommitRetries == 0 {
		c.AutocommitRetries = 3
	}
	if c.ReadFilterFPRate == 0 {
		c.ReadFilterFPRate = writeset.DefaultFilterFPRate
	}
	if c.MaxWriteSetBytes == 0 {
		c.MaxWriteSetBytes = DefaultMaxWriteSetBytes
	}
	if c.Fatal == nil {
		c.Fatal = func(err error) { panic(err) }
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.Self.ID == "" {
		return errors.New("replica: node id is required")
	}
	if c.StatementTimeout < 0 {
		return errors.New("replica: StatementTimeout must not be negative")
	}
	if c.AutocommitRetries < 0 {
		return errors.New("replica: AutocommitRetries must not be negative")
	}
	if c.ReadFilterFPRate < 0 || c.ReadFilterFPRate > 0.5 || math.IsNaN(c.ReadFilterFPRate) {
		return errors.New("replica: ReadFilterFPRate (certa node --read-filter-fp-rate) must be between 0 (exclusive) and 0.5")
	}
	if c.MaxWriteSetBytes < 0 || c.MaxWriteSetBytes > MaxWriteSetBytesLimit {
		return fmt.Errorf("replica: MaxWriteSetBytes (certa node --max-writeset-size) must be between 1 and %d bytes (%s)", MaxWriteSetBytesLimit, formatBytes(MaxWriteSetBytesLimit))
	}
	return nil
}

// Peers is how a node reaches other members over their HTTP addresses.
type Peers interface {
	// Forward asks the leader at httpAddr to append entry. Errors:
	// orderlog.ErrNotLeader and orderlog.ErrTimeout when the entry was
	// certainly not appended, anything else when that is unknown.
	Forward(ctx context.Context, httpAddr string, entry []byte) error
	// ReadIndex asks the leader at httpAddr for its term and commit index
	// (Node.LeaderReadIndex).
	ReadIndex(ctx context.Context, httpAddr string) (term, index uint64, err error)
	// Join asks the member at httpAddr to add m to the cluster.
	Join(ctx context.Context, httpAddr string, m writeset.Member) error
	// Leadership asks the member at httpAddr for its term and the leader
	// it knows in that term (Node.Leadership).
	Leadership(ctx context.Context, httpAddr string) (term uint64, leader string, err error)
	// Outcome asks the member at httpAddr how the write set at seqno went
	// there (Node.Outcome).
	Outcome(ctx context.Context, httpAddr string, seqno uint64) (applied uint64, failed bool, err error)
	// Snapshot opens the state of the member at httpAddr
	// (Node.OpenSnapshot); reading it ends with ctx.
	Snapshot(ctx context.Context, httpAddr string) (io.ReadCloser, error)
}

// Node is one certa node's core.
type Node struct {
	cfg     Config
	engine  engine.Engine
	sm      *stateMachine
	waiters *waiters
	txid    atomic.Uint64

	log     orderlog.Log // set by Start
	peers   Peers
	started chan struct{} // closed by Start
	queue   chan *writeset.WriteSet

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup

	readIndexes syncGroup     // rounds of read index confirmation (syncpoint.go, readindex.go)
	readyTerm   atomic.Uint64 // the term whose barrier made the commit index usable
	cut         *cutOff       // whether and since when no leader is known (connection.go)

	// Serializable commits from this node: how many carried reads, their
	// bytes, and how many failed only on a read filter's false positive
	// (isolation.go).
	readSets, readSetBytes, filterFalsePositives atomic.Uint64
}

// New creates a node's core over eng. Call StateMachine to open the log,
// then Start.
func New(cfg Config, eng engine.Engine) (*Node, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{cfg: cfg, engine: eng, waiters: &waiters{}, queue: make(chan *writeset.WriteSet, 8192), stop: make(chan struct{}), started: make(chan struct{}),
		cut: newCutOff(time.Now())}
	// TxIDs start at a random point so that write sets of an earlier run of
	// this node, still in the log, never wake a session of this run.
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	n.txid.Store(binary.LittleEndian.Uint64(b[:]) >> 1)
	sm, err := newStateMachine(cfg.Self.ID, eng, n.waiters, cfg.Horizon, cfg.Fatal)
	if err != nil {
		return nil, err
	}
	sm.logger, sm.stop, sm.compare = cfg.Logger, n.stop, n.compareFailure
	n.sm = sm
	return n, nil
}

// StateMachine returns what the order log must feed committed entries to.
func (n *Node) StateMachine() orderlog.StateMachine { return n.sm }

// Start begins submitting write sets through log, announcing this node's
// addresses to the cluster, watching whether it is cut off from it and
// reserving values of sequences.
func (n *Node) Start(log orderlog.Log, peers Peers) {
	n.log, n.peers = log, peers
	close(n.started)
	n.wg.Add(4)
	go n.submitLoop()
	go n.announceLoop()
	go n.watchLoop()
	go n.sequenceLoop()
}

// Close stops the node's goroutines. The log and engine are closed by their owner.
func (n *Node) Close() {
	n.stopOnce.Do(func() { close(n.stop) })
	n.wg.Wait()
}

// errNoQuorum is the error for work that needs the majority when this node
// cannot reach it.
func errNoQuorum(format string, args ...any) error {
	return &sqlerr.Error{
		Code:    sqlerr.NoQuorum,
		Message: "certa: this node is not connected to a majority of the cluster: " + fmt.Sprintf(format, args...),
		Hint:    "Retry on another node, or once the network heals. Reads with certa.consistency = 'local' still work here.",
	}
}

// Commit orders ws through the log and waits until it is certified and, if
// it passed, applied on this node. It returns the seqno ws committed at.
// Errors: 54000 (write set over the size limit: not submitted), 40001
// (lost certification), 57P03 (no majority: not committed),
// 40003 (outcome unknown), or the error of a failed apply (e.g. 23505).
// Commit takes ws over: it sets Origin, and TxID unless the caller set it
// (from newTxID), and once ws is encoded
// into a log entry it may drop its rows and keys, also after Commit
// returns. The caller must not use ws afterwards.
func (n *Node) Commit(ctx context.Context, ws *writeset.WriteSet) (uint64, error) {
	start := time.Now()
	ws.Origin = n.cfg.Self.ID
	if ws.TxID == 0 {
		ws.TxID = n.newTxID()
	}
	size := ws.Size()
	if size > n.cfg.MaxWriteSetBytes {
		return 0, errTooLarge(size, n.cfg.MaxWriteSetBytes)
	}
	if n.log.Leader() == "" {
		return 0, errNoQuorum("no leader is known, so the commit was not submitted")
	}
	ch := n.waiters.add(ws.TxID)
	defer n.waiters.remove(ws.TxID)
	wait := n.commitWait(size)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case n.queue <- ws:
	case <-timer.C:
		return 0, errNoQuorum("the submission queue stayed full for %s", wait.Round(time.Millisecond))
	}
	// Time this node spends applying does not count against the wait, up
	// to maxApplyExtension: a commit queued behind a large write set that
	// takes long to apply here must not be reported as of unknown outcome.
	busy0 := n.sm.busyTime()
	for {
		select {
		case o := <-ch:
			if o.err == nil && n.cfg.ObserveCommit != nil {
				n.cfg.ObserveCommit(time.Since(start))
			}
			return o.seqno, o.err
		case <-timer.C:
			extra := min(n.sm.busyTime()-busy0, n.maxApplyExtension())
			if left := time.Until(start.Add(wait + extra)); left > 0 && n.sm.stalledReason() == "" {
				timer.Reset(left)
				continue
			}
			return 0, sqlerr.New(sqlerr.StatementCompletionUnknown,
				"certa: commit outcome unknown: no confirmation from the cluster within %s; the transaction may or may not have committed", time.Since(start).Round(time.Millisecond))
		case <-ctx.Done():
			return 0, sqlerr.New(sqlerr.StatementCompletionUnknown,
				"certa: commit outcome unknown: the session ended while waiting; the transaction may or may not have committed")
		}
	}
}

// newTxID returns a transaction id no other write set of this node's
// process has (the counter starts at random).
func (n *Node) newTxID() uint64 { return n.txid.Add(1) }

// WaitApplied waits until this node has applied position seqno.
func (n *Node) WaitApplied(ctx context.Context, seqno uint64) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.SyncTimeout)
	defer cancel()
	if err := n.sm.applied.wait(ctx, seqno); err != nil {
		return sqlerr.New(sqlerr.QueryCanceled,
			"certa: this node had not applied seqno %d within %s (applied: %d)", seqno, n.cfg.SyncTimeout, n.sm.applied.get())
	}
	return nil
}

// WaitSync waits until this node has applied every commit that was
// acknowledged anywhere in the cluster before the call (readindex.go).
func (n *Node) WaitSync(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, n.cfg.SyncTimeout)
	defer cancel()
	leader := n.log.Leader()
	if leader == "" {
		return errNoQuorum("no leader is known, so a 'sync' read cannot be served")
	}
	fetch := n.followerReadIndex
	if leader == n.cfg.Self.ID {
		fetch = n.leaderReadIndex
	}
	index, err := n.readIndexes.get(ctx, fetch)
	var sqlErr *sqlerr.Error
	switch {
	case errors.As(err, &sqlErr):
		return err
	case err != nil:
		return errNoQuorum("could not confirm the latest commit with a majority: %v", err)
	}
	if err := n.log.WaitApplied(ctx, index); err != nil {
		return sqlerr.New(sqlerr.QueryCanceled,
			"certa: this node had not applied the log up to index %d within %s (applied seqno: %d)", index, n.cfg.SyncTimeout, n.sm.applied.get())
	}
	return nil
}

// AppendForwarded appends an entry forwarded by another node, on the leader.
// Entries are checked before they enter the log: a corrupt entry would stop
// every node, and one over the size limits is refused (orderlog.ErrTooLarge).
func (n *Node) AppendForwarded(entry []byte) error {
	if len(entry) > maxEntryBytes(n.cfg.MaxWriteSetBytes) {
		return fmt.Errorf("forwarded entry of %d bytes rejected: %w", len(entry), orderlog.ErrTooLarge)
	}
	dec, err := writeset.DecodeEntry(entry)
	if err != nil || dec.Kind != writeset.KindBatch {
		return fmt.Errorf("forwarded entry rejected: %w", writeset.ErrCorrupt)
	}
	for i := range dec.Batch {
		if size := dec.Batch[i].Size(); size > n.cfg.MaxWriteSetBytes {
			return fmt.Errorf("forwarded write set of %s rejected, over this node's limit of %s: %w",
				formatBytes(size), formatBytes(n.cfg.MaxWriteSetBytes), orderlog.ErrTooLarge)
		}
		// Changes that do not decode would fail on every node: refused
		// before they reach the log.
		if err := n.engine.CheckChanges(&dec.Batch[i]); err != nil {
			return fmt.Errorf("forwarded write set rejected: %v: %w", err, writeset.ErrCorrupt)
		}
	}
	return n.log.Append(entry, n.cfg.CommitTimeout)
}

// Join adds m to the cluster as a voter and publishes its addresses. Leader
// only (orderlog.ErrNotLeader otherwise). Joining again is harmless.
func (n *Node) Join(m writeset.Member) error {
	if m.ID == "" || m.RaftAddr == "" {
		return errors.New("join: id and raft address are required")
	}
	if err := n.log.AddVoter(m.ID, m.RaftAddr, 10*time.Second); err != nil {
		return fmt.Errorf("join %s: add voter: %w", m.ID, err)
	}
	if cur, ok := n.sm.member(m.ID); ok && cur == m {
		return nil
	}
	if err := n.log.Append(writeset.EncodeMember(m), 10*time.Second); err != nil {
		return fmt.Errorf("join %s: publish addresses: %w", m.ID, err)
	}
	return nil
}

// ErrNoMember: RemoveMember was asked for an id that is not a member.
var ErrNoMember = errors.New("no such member")

// RemoveMember removes a member from the cluster (leader only:
// orderlog.ErrNotLeader), so that a dead or unwanted node no longer counts
// towards the quorum. A removed node that still runs is cut off; to bring
// it back, wipe its data directory and start it with --join.
func (n *Node) RemoveMember(id string) error {
	servers, err := n.log.Servers()
	if err != nil {
		return err
	}
	found := false
	for _, sv := range servers {
		found = found || sv.ID == id
	}
	if !found {
		return fmt.Errorf("remove %q: %w", id, ErrNoMember)
	}
	if err := n.log.RemoveServer(id, 10*time.Second); err != nil {
		return fmt.Errorf("remove %s: %w", id, err)
	}
	n.cfg.Logger.Info("removed a member from the cluster", "member", id)
	return nil
}

// LeaderHTTPAddr returns the leader's HTTP address, if known.
func (n *Node) LeaderHTTPAddr() (string, bool) {
	leader := n.log.Leader()
	if leader == "" {
		return "", false
	}
	mb, ok := n.sm.member(leader)
	return mb.HTTPAddr, ok
}

// JoinVia asks the members at httpAddrs, in turn and again until ctx ends,
// to add this node to their cluster.
func (n *Node) JoinVia(ctx context.Context, httpAddrs []string) error {
	var last error
	var logged time.Time // failures are logged at once, then every 10 s
	for {
		for _, a := range httpAddrs {
			if last = n.peers.Join(ctx, a, n.cfg.Self); last == nil {
				return nil
			}
		}
		if time.Since(logged) >= 10*time.Second {
			n.cfg.Logger.Warn("join attempt failed; retrying", "via", httpAddrs, "err", last)
			logged = time.Now()
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("join via %v: %w (last error: %v)", httpAddrs, ctx.Err(), last)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// announceLoop makes sure the cluster knows this node's current addresses
// (after bootstrap, or after a restart with new addresses: see reannounce
// for a new Raft address).
func (n *Node) announceLoop() {
	defer n.wg.Done()
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	var lastReannounce time.Time
	for {
		select {
		case <-n.stop:
			return
		case <-t.C:
		}
		if mb, ok := n.sm.member(n.cfg.Self.ID); ok && mb == n.cfg.Self {
			return
		}
		switch leader := n.log.Leader(); {
		case leader == "":
			if time.Since(lastReannounce) >= 2*time.Second {
				n.reannounce()
				lastReannounce = time.Now()
			}
		case leader == n.cfg.Self.ID:
			if err := n.Join(n.cfg.Self); err != nil {
				n.cfg.Logger.Warn("announce addresses", "err", err)
			}
		case leader != "":
			if addr, ok := n.LeaderHTTPAddr(); ok {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				if err := n.peers.Join(ctx, addr, n.cfg.Self); err != nil {
					n.cfg.Logger.Warn("announce addresses", "err", err)
				}
				cancel()
			}
		}
	}
}
