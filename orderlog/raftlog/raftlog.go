// Package raftlog implements orderlog.Log with hashicorp/raft, raft-wal as the
// fsync'd log and stable store, file snapshots and TCP transport. It is the
// only package of ours that imports Raft.
//
// A node bootstraps a cluster only when asked to (Config.Bootstrap), never
// over earlier state; a node that joins with no state stays out of
// elections until it has caught up (catchup.go).
package raftlog

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"certa/orderlog"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// Errors of Open about the state found in Config.Dir.
var (
	// ErrHasState: Bootstrap was asked for, but the directory holds Raft
	// state from an earlier run.
	ErrHasState = errors.New("raftlog: the directory holds Raft state from an earlier run")
	// ErrNoState: RequireState was set, but the directory holds no Raft state.
	ErrNoState = errors.New("raftlog: the directory holds no Raft state")
)

// Config configures the Raft log of one node.
type Config struct {
	ID       string // node id, unique in the cluster
	Dir      string // directory for the log, stable store and snapshots
	RaftAddr string // host:port to listen on and to advertise to peers
	// Bootstrap makes this node a new cluster of one. Dir must hold no
	// Raft state (ErrHasState otherwise): a node that has been a member
	// of a cluster never forms one of its own.
	Bootstrap bool
	// RequireState refuses a Dir without Raft state from an earlier run
	// (ErrNoState). Without it and without Bootstrap, a node with no state
	// starts empty and waits to be added to a cluster by its leader.
	RequireState bool

	// HeartbeatTimeout and ElectionTimeout bound how fast a lost leader is
	// noticed; default 1s each. LeaderLeaseTimeout (default 500ms) bounds how
	// long a leader cut off from the majority believes it still leads.
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// CommitTimeout is the longest a follower waits to learn that an entry
	// committed when no new entries flow (default 5ms: low commit latency on
	// followers at the cost of idle traffic).
	CommitTimeout time.Duration
	// MaxAppendEntries bounds entries per append RPC and per disk write (default 512).
	MaxAppendEntries int
	// SnapshotThreshold is how many new entries trigger a snapshot (default
	// 8192; 32768 spared a 400 MB TPC-C database most of its copies, but
	// then a leader whose own snapshot failed on a full disk kept entries
	// that a far-behind follower with a divergent tail was walked back
	// through one per retry, and the disk-full chaos scenario did not
	// converge); SnapshotInterval how often that is checked (default 10s;
	// Raft waits between it and twice it).
	// TrailingLogs is how many entries are kept after a snapshot (default
	// 10240), so a follower that fell behind less than that catches up from
	// the log instead of receiving the whole snapshot.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// SegmentBytes is the size of one log file (default 64 MiB). Compaction
	// frees whole files only, and entries of the newest file stay readable,
	// so a lagging follower is sent a snapshot only once the entries it
	// needs are in a freed file.
	SegmentBytes int
	// ServerTLS and ClientTLS, when set, make the Raft transport mutual
	// TLS: the listener's and the dialler's configs (package peertls).
	// Nil: plain TCP.
	ServerTLS, ClientTLS *tls.Config
	Logger               *slog.Logger
}

func (c *Config) setDefaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.HeartbeatTimeout, time.Second)
	def(&c.ElectionTimeout, time.Second)
	def(&c.LeaderLeaseTimeout, 500*time.Millisecond)
	def(&c.CommitTimeout, 5*time.Millisecond)
	if c.MaxAppendEntries == 0 {
		c.MaxAppendEntries = 512
	}
	if c.SnapshotThreshold == 0 {
		c.SnapshotThreshold = 8192
	}
	def(&c.SnapshotInterval, 10*time.Second)
	if c.SegmentBytes == 0 {
		c.SegmentBytes = wal.DefaultSegmentSize
	}
	if c.TrailingLogs == 0 {
		c.TrailingLogs = 10240
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Validate reports the first invalid setting.
func (c *Config) Validate() error {
	if c.ID == "" {
		return errors.New("raftlog: ID is required")
	}
	if c.Dir == "" {
		return errors.New("raftlog: Dir is required")
	}
	if c.SegmentBytes < 0 {
		return errors.New("raftlog: SegmentBytes must not be negative")
	}
	if _, _, err := net.SplitHostPort(c.RaftAddr); err != nil {
		return fmt.Errorf("raftlog: RaftAddr %q: %w", c.RaftAddr, err)
	}
	if (c.ServerTLS == nil) != (c.ClientTLS == nil) {
		return errors.New("raftlog: ServerTLS and ClientTLS go together")
	}
	if c.Bootstrap && c.RequireState {
		return errors.New("raftlog: Bootstrap and RequireState exclude each other")
	}
	return nil
}

// logCacheSize is how many of the newest entries are kept in memory;
// only entries of up to maxCachedEntryBytes are.
const (
	logCacheSize        = 1024
	maxCachedEntryBytes = 256 << 10
)

// smallEntryCache is Raft's log cache, which keeps the newest entries in
// memory so that the leader replicates them without reading them back,
// except that of entries over maxCachedEntryBytes it keeps only the newest.
// Raft's cache kept every large write set in memory on every node until
// 1024 more entries had been appended (measured: 300 MB of a follower's
// heap after four large transactions). Keeping none made the leader read
// the newest large entry back from disk for every append request after it
// (Raft reads the previous entry for its term): 3 GB read and decoded for
// one 9 MB write set.
type smallEntryCache struct {
	*raft.LogCache
	store raft.LogStore // what the cache stores to

	mu    sync.Mutex
	large *raft.Log // the newest large entry stored, if any

	// committed is Raft's commit index, once Raft runs (see DeleteRange).
	committed atomic.Pointer[func() uint64]
	logger    *slog.Logger
}

func (c *smallEntryCache) StoreLogs(logs []*raft.Log) error {
	var large *raft.Log
	for _, l := range logs {
		if len(l.Data) > maxCachedEntryBytes {
			large = l
		}
	}
	if large == nil {
		return c.LogCache.StoreLogs(logs)
	}
	// Raft's cache misses on these entries and reads them from the store:
	// its slot for their index holds an older entry, or nothing.
	if err := c.store.StoreLogs(logs); err != nil {
		return err
	}
	c.mu.Lock()
	c.large = large
	c.mu.Unlock()
	return nil
}

func (c *smallEntryCache) StoreLog(l *raft.Log) error { return c.StoreLogs([]*raft.Log{l}) }

func (c *smallEntryCache) GetLog(index uint64, l *raft.Log) error {
	c.mu.Lock()
	large := c.large
	c.mu.Unlock()
	if large != nil && large.Index == index {
		*l = *large
		return nil
	}
	return c.LogCache.GetLog(index, l)
}

// errTruncatingCommitted refuses to remove committed entries.
var errTruncatingCommitted = errors.New(TruncatingCommittedLog)

// TruncatingCommittedLog starts the error logged when Raft would remove
// committed entries from the end of the log (tests look for it).
const TruncatingCommittedLog = "raftlog: refusing to remove committed entries from the end of the log"

// DeleteRange removes entries. Raft removes entries from the end of a
// follower's log that conflict with the leader's; those were never
// committed. Removing one at or below the commit index would mean this
// node has applied an entry the cluster did not commit (its data now
// differs from the cluster's): that is refused, and the node stops
// following the leader instead of going on diverged.
func (c *smallEntryCache) DeleteRange(min, max uint64) error {
	if committed := c.committed.Load(); committed != nil {
		if first, err := c.LogCache.FirstIndex(); err == nil && min > first && min <= (*committed)() {
			err := fmt.Errorf("%w: entries %d to %d, commit index %d; this node applied entries the cluster did not commit, so its data may differ from the cluster's: "+
				"stop it, move its data directory away, and start it again with --join to rejoin with a copy of the cluster's data", errTruncatingCommitted, min, max, (*committed)())
			c.logger.Error(err.Error())
			return err
		}
	}
	c.mu.Lock()
	c.large = nil
	c.mu.Unlock()
	return c.LogCache.DeleteRange(min, max)
}

// Log is an orderlog.Log backed by hashicorp/raft.
type Log struct {
	raft      *raft.Raft
	wal       *store
	transport *gatedTransport // the TCP transport and the filter of what comes in (incoming.go)
	snaps     *snapshotStore
	logs      raft.LogStore // the store Raft reads, behind its cache
	applied   *appliedIndex // what the state machine has applied (readindex.go)
	nudge     chan struct{} // see nudgeFollowers
	inFlight  atomic.Int64  // appends and barriers not yet finished
	done      chan struct{} // closed by Close
	resumed   bool          // Dir held Raft state when opened
}

var _ orderlog.Log = (*Log)(nil)

// Open starts the node's Raft instance feeding sm. With Bootstrap it makes
// a one-node cluster of itself in an empty Dir; see Config for what it
// requires of Dir (ErrHasState, ErrNoState).
func Open(cfg Config, sm orderlog.StateMachine) (*Log, error) {
	return open(cfg, sm, testHooks{})
}

// testHooks let tests inject failures: wrapStore wraps the log store,
// roomFor replaces its check for free space, failOp fails its changes.
type testHooks struct {
	wrapStore func(raft.LogStore) raft.LogStore
	roomFor   func() bool
	failOp    func() error
}

// open is Open, with test hooks.
func open(cfg Config, sm orderlog.StateMachine, hooks testHooks) (*Log, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	hlog := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: os.Stderr})

	walDir := filepath.Join(cfg.Dir, "wal")
	// The log holds every replicated row and statement: its directories
	// and files are the owner's only (raft-wal and the snapshot store
	// create theirs 0644 and 0755; the node's umask masks those).
	if err := os.MkdirAll(walDir, 0o700); err != nil {
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	w, err := openStore(walDir, cfg.SegmentBytes, hlog)
	if err != nil {
		return nil, err
	}
	snaps, err := openSnapshots(cfg.Dir, hlog)
	if err != nil {
		w.Close()
		return nil, err
	}
	existing, err := raft.HasExistingState(w, w, snaps)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	switch {
	case existing && cfg.Bootstrap:
		w.Close()
		return nil, fmt.Errorf("%w (%s): bootstrap is only for a new cluster", ErrHasState, cfg.Dir)
	case !existing && cfg.RequireState:
		w.Close()
		return nil, fmt.Errorf("%w (%s)", ErrNoState, cfg.Dir)
	}
	// A node that starts with no state to join a cluster stays out of
	// elections until it has caught up (catchup.go).
	marker := filepath.Join(cfg.Dir, catchingUpFile)
	_, err = os.Stat(marker)
	gated := err == nil
	if !existing && !cfg.Bootstrap && !gated {
		if err := writeSynced(marker); err != nil {
			w.Close()
			return nil, fmt.Errorf("raftlog: %w", err)
		}
		gated = true
	}
	w.reserve = snaps.room // a node must always be able to snapshot, to compact its log
	if hooks.roomFor != nil {
		w.roomFor = hooks.roomFor
	}
	w.failOp = hooks.failOp
	compact := make(chan struct{}, 1)
	w.full = func() { // see compactLoop
		select {
		case compact <- struct{}{}:
		default:
		}
	}
	addr, err := net.ResolveTCPAddr("tcp", cfg.RaftAddr)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	// Pipelined replication is off (MaxRPCsInFlight 1): in hashicorp/raft
	// a follower that refuses one append on a healthy connection (its disk
	// is full) can deadlock the leader's pipeline to it, and that follower
	// then gets heartbeats but never another entry (hashicorp/raft#612).
	trans, err := newTransport(cfg.RaftAddr, addr, hlog, cfg.ServerTLS, cfg.ClientTLS)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("raftlog: listen on %s: %w", cfg.RaftAddr, err)
	}

	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hlog
	rc.HeartbeatTimeout = cfg.HeartbeatTimeout
	rc.ElectionTimeout = cfg.ElectionTimeout
	rc.LeaderLeaseTimeout = cfg.LeaderLeaseTimeout
	rc.CommitTimeout = cfg.CommitTimeout
	rc.MaxAppendEntries = cfg.MaxAppendEntries
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	rc.SnapshotInterval = cfg.SnapshotInterval
	rc.TrailingLogs = cfg.TrailingLogs

	if cfg.Bootstrap {
		conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: trans.LocalAddr()}}}
		if err := raft.BootstrapCluster(rc, w, w, snaps, trans, conf); err != nil {
			trans.Close()
			w.Close()
			return nil, fmt.Errorf("raftlog: bootstrap: %w", err)
		}
	}
	// The cache keeps the newest entries in memory, so the leader replicates
	// them without reading them back from the WAL.
	var logStore raft.LogStore = w
	if hooks.wrapStore != nil {
		logStore = hooks.wrapStore(w)
	}
	cache, err := raft.NewLogCache(logCacheSize, logStore)
	if err != nil {
		trans.Close()
		w.Close()
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	logs := &smallEntryCache{LogCache: cache, store: logStore, logger: cfg.Logger}
	applied := newAppliedIndex()
	rt := newGatedTransport(trans, w, gated, marker, cfg.Logger)
	r, err := raft.NewRaft(rc, &fsm{sm: sm, applied: applied, snaps: snaps}, logs, w, snaps, rt)
	if err != nil {
		rt.Close()
		w.Close()
		return nil, fmt.Errorf("raftlog: %w", err)
	}
	commitIndex := r.CommitIndex
	logs.committed.Store(&commitIndex)
	l := &Log{raft: r, wal: w, transport: rt, snaps: snaps, logs: logs, applied: applied, nudge: make(chan struct{}, 1), done: make(chan struct{}), resumed: existing}
	go l.nudgeLoop()
	go l.compactLoop(compact)
	return l, nil
}

// compactLoop takes a snapshot, which compacts the log, whenever the log
// store refuses entries for want of room, at most once a second: waiting
// for the periodic check could leave a node whose log filled its disk
// refusing entries for a whole interval.
func (l *Log) compactLoop(compact <-chan struct{}) {
	for {
		select {
		case <-l.done:
			return
		case <-compact:
			l.snapshotKeepingFew()
			select {
			case <-l.done:
				return
			case <-time.After(time.Second):
			}
		}
	}
}

// fullDiskTrailingLogs is how many entries a snapshot taken for want of
// room keeps. Any number well below a segment's worth frees the same files.
const fullDiskTrailingLogs = 64

// snapshotKeepingFew takes a snapshot that keeps only fullDiskTrailingLogs
// entries behind it. With the usual TrailingLogs it could compact nothing:
// in the disk soak a node's disk held the trailing entries (10240 of up to
// 25 KB each) and the reserve, so it refused entries and its snapshots, all
// at that index, freed nothing. A follower that lags further than the few
// entries kept is then sent a snapshot.
func (l *Log) snapshotKeepingFew() {
	usual := l.raft.ReloadableConfig()
	few := usual
	few.TrailingLogs = fullDiskTrailingLogs
	if err := l.raft.ReloadConfig(few); err == nil {
		defer l.raft.ReloadConfig(usual)
	}
	l.raft.Snapshot().Error() // nothing new to snapshot is fine
}

// writeSynced creates an empty file at path and makes it durable.
func writeSynced(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	return dir.Sync()
}

// Resumed reports whether Dir held Raft state when the log was opened.
func (l *Log) Resumed() bool { return l.resumed }

// HasState reports whether dir holds the files of an earlier run (it may
// still hold no Raft state, if that run never heard from a cluster: Open
// then says ErrNoState or starts empty).
func HasState(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "wal", "wal-meta.db"))
	return err == nil
}

// Append implements orderlog.Log.
func (l *Log) Append(data []byte, timeout time.Duration) error {
	if len(data) > orderlog.MaxEntryBytes {
		return fmt.Errorf("%w: %d bytes, the limit is %d", orderlog.ErrTooLarge, len(data), orderlog.MaxEntryBytes)
	}
	l.inFlight.Add(1)
	err := classify(l.raft.Apply(data, timeout).Error())
	l.finished(err)
	return err
}

// finished ends an append or barrier; the last one to finish nudges.
func (l *Log) finished(err error) {
	if l.inFlight.Add(-1) == 0 && err == nil {
		l.nudgeFollowers()
	}
}

// nudgeFollowers makes the leader tell the followers its commit index soon.
// hashicorp/raft sends the commit index only with the next append request,
// which without further writes goes out after CommitTimeout to twice that:
// a commit made through a follower, or a sync read there, would wait that
// long before the follower applies it. Appending a barrier sends one at
// once. Only the last of overlapping appends nudges (the others' commit
// index travels with the later appends), and at most one barrier is in
// flight.
func (l *Log) nudgeFollowers() {
	select {
	case l.nudge <- struct{}{}:
	default:
	}
}

func (l *Log) nudgeLoop() {
	for {
		select {
		case <-l.done:
			return
		case <-l.nudge:
			if l.raft.State() == raft.Leader {
				l.raft.Barrier(time.Second).Error()
			}
		}
	}
}

// Barrier implements orderlog.Log.
func (l *Log) Barrier(timeout time.Duration) error {
	if l.raft.State() != raft.Leader {
		return orderlog.ErrNotLeader
	}
	l.inFlight.Add(1)
	handedOn := l.raft.AppliedIndex() // entries the state machine will have applied
	err := classify(l.raft.Barrier(timeout).Error())
	l.finished(err)
	if err == nil {
		l.applied.raise(handedOn)
	}
	return err
}

func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, raft.ErrNotLeader):
		return orderlog.ErrNotLeader
	case errors.Is(err, raft.ErrEnqueueTimeout):
		return orderlog.ErrTimeout
	default:
		return fmt.Errorf("%w: %v", orderlog.ErrUnknownOutcome, err)
	}
}

// Leader implements orderlog.Log.
func (l *Log) Leader() string {
	_, id := l.raft.LeaderWithID()
	return string(id)
}

// IsLeader implements orderlog.Log.
func (l *Log) IsLeader() bool { return l.raft.State() == raft.Leader }

// State implements orderlog.Log.
func (l *Log) State() string {
	switch l.raft.State() {
	case raft.Leader:
		return "leader"
	case raft.Follower:
		return "follower"
	case raft.Candidate:
		return "candidate"
	default:
		return "shutdown"
	}
}

// RemoveServer implements orderlog.Log.
func (l *Log) RemoveServer(id string, timeout time.Duration) error {
	return classify(l.raft.RemoveServer(raft.ServerID(id), 0, timeout).Error())
}

// AddVoter implements orderlog.Log.
func (l *Log) AddVoter(id, addr string, timeout time.Duration) error {
	return classify(l.raft.AddVoter(raft.ServerID(id), raft.ServerAddress(addr), 0, timeout).Error())
}

// Servers implements orderlog.Log.
func (l *Log) Servers() ([]orderlog.Server, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	var out []orderlog.Server
	for _, s := range f.Configuration().Servers {
		out = append(out, orderlog.Server{ID: string(s.ID), Address: string(s.Address), Voter: s.Suffrage == raft.Voter})
	}
	return out, nil
}

// Stats implements orderlog.Log.
func (l *Log) Stats() orderlog.Stats {
	stats := l.raft.Stats()
	term, _ := strconv.ParseUint(stats["term"], 10, 64)
	snap, _ := strconv.ParseUint(stats["last_snapshot_index"], 10, 64)
	return orderlog.Stats{
		SnapshotIndex: snap,
		LastIndex:     l.raft.LastIndex(),
		CommitIndex:   l.raft.CommitIndex(),
		AppliedIndex:  l.raft.AppliedIndex(),
		Term:          term,
		LastContact:   l.raft.LastContact(),
		CatchingUp:    l.catchingUp(),
	}
}

// OpenSnapshot implements orderlog.Log. It opens the snapshot through the
// file store itself: snapshotStore.Open records what a restore brought the
// state machine up to, which serving another node must not change.
func (l *Log) OpenSnapshot() (io.ReadCloser, error) {
	if err := l.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil, fmt.Errorf("raftlog: snapshot: %w", err)
	}
	metas, err := l.snaps.List()
	if err != nil {
		return nil, fmt.Errorf("raftlog: list snapshots: %w", err)
	}
	if len(metas) == 0 {
		return nil, errors.New("raftlog: no snapshot to open")
	}
	_, rc, err := l.snaps.FileSnapshotStore.Open(metas[0].ID)
	if err != nil {
		return nil, fmt.Errorf("raftlog: open snapshot: %w", err)
	}
	return rc, nil
}

// catchingUp reports whether the node is kept out of elections (catchup.go).
func (l *Log) catchingUp() bool {
	return !l.transport.open.Load()
}

// Close implements orderlog.Log.
func (l *Log) Close() error {
	close(l.done)
	l.wal.stopRetries()
	err := l.raft.Shutdown().Error()
	l.transport.Close()
	if cerr := l.wal.Close(); err == nil {
		err = cerr
	}
	return err
}

// fsm adapts an orderlog.StateMachine to raft.BatchingFSM.
type fsm struct {
	sm      orderlog.StateMachine
	applied *appliedIndex
	snaps   *snapshotStore
}

func (f *fsm) ApplyBatch(logs []*raft.Log) []interface{} {
	entries := make([]orderlog.Entry, 0, len(logs))
	for _, l := range logs {
		if l.Type == raft.LogCommand {
			entries = append(entries, orderlog.Entry{Index: l.Index, Data: l.Data})
		}
	}
	if len(entries) > 0 {
		f.sm.Apply(entries)
	}
	if len(logs) > 0 {
		f.applied.raise(logs[len(logs)-1].Index)
	}
	return make([]interface{}, len(logs))
}

func (f *fsm) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	s, err := f.sm.Snapshot()
	if err != nil {
		return nil, err
	}
	return fsmSnapshot{s}, nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	if err := f.sm.Restore(rc); err != nil {
		return err
	}
	// The state machine now holds everything up to the snapshot's index.
	f.applied.raise(f.snaps.opened.Load())
	return nil
}

type fsmSnapshot struct{ s orderlog.Snapshot }

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.s.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("raftlog: write snapshot: %w", err)
	}
	return sink.Close()
}

func (s fsmSnapshot) Release() { s.s.Release() }
