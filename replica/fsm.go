package replica

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"certa/certify"
	"certa/engine"
	"certa/orderlog"
	"certa/sqlerr"
	"certa/writeset"
)

// stateMachine certifies and applies committed log entries, in log order, on
// every node. It implements orderlog.StateMachine: its methods run on the
// log's apply goroutine, one at a time.
type stateMachine struct {
	self    string
	engine  engine.Engine
	waiters *waiters
	fatal   func(error)
	logger  *slog.Logger
	stop    <-chan struct{} // closed when the node stops

	// Guarded by being called from the apply goroutine only.
	cert *certify.Certifier
	// seqno is the last position given to a write set. Every write set in
	// the log gets one, whether it passes certification or not.
	seqno uint64
	// engineSeqno is the engine's recorded applied seqno; write sets at or
	// below it are already in the engine (replay after restart) and are
	// only certified again, so that the certifier catches up.
	engineSeqno uint64

	applied   *progress     // last seqno processed (certified, and applied if passed)
	committed atomic.Uint64 // last seqno that passed certification
	certified atomic.Uint64 // number of write sets that passed
	conflicts atomic.Uint64 // number that failed
	// unforeseen counts certified write sets that failed at apply with a
	// serialization failure (Status.UnforeseenConflicts).
	unforeseen atomic.Uint64
	// transfers counts snapshots whose database replaced this node's
	// (state transfers).
	transfers atomic.Uint64
	// resyncs counts the times this node took another's state because a
	// write set failed here that applied there (diverge.go).
	resyncs atomic.Uint64
	// compare finds out how a write set that failed here went on the
	// other members (Node.compareFailure).
	compare func(seqno uint64, origin string) (snapshot io.ReadCloser, from string, err error)
	// tookUpTo is the seqno of the last state taken from another member.
	tookUpTo uint64
	// stalled says why applying waits ("" when it does not).
	stalled atomic.Value
	// applyStart is when the Apply under way began (Unix nanoseconds; 0:
	// none), applyBusy the total time of the Apply calls that ended.
	applyStart, applyBusy atomic.Int64
	// freeing is set while memory is being given back (freeMemoryAfterBytes).
	freeing atomic.Bool

	membersMu sync.Mutex
	members   map[string]writeset.Member
}

func newStateMachine(self string, eng engine.Engine, w *waiters, horizon uint64, fatal func(error)) (*stateMachine, error) {
	applied, err := eng.AppliedSeqno()
	if err != nil {
		return nil, fmt.Errorf("read applied seqno: %w", err)
	}
	return &stateMachine{
		self: self, engine: eng, waiters: w, fatal: fatal,
		cert: certify.New(horizon),
		// seqno counts from the log's start (or a snapshot): it is derived
		// from the log alone, whatever the engine already holds.
		seqno:       0,
		engineSeqno: applied,
		applied:     newProgress(applied),
		members:     map[string]writeset.Member{},
	}, nil
}

// busyTime is the total time this node has spent applying entries.
func (m *stateMachine) busyTime() time.Duration {
	busy := m.applyBusy.Load()
	if start := m.applyStart.Load(); start != 0 {
		busy += time.Now().UnixNano() - start
	}
	return time.Duration(busy)
}

// Apply implements orderlog.StateMachine.
func (m *stateMachine) Apply(entries []orderlog.Entry) {
	start := time.Now().UnixNano()
	m.applyStart.Store(start)
	defer func() {
		m.applyBusy.Add(time.Now().UnixNano() - start)
		m.applyStart.Store(0)
	}()
	var items []engine.ApplyItem
	var notify []outcomeFor
	var replayed []engine.ApplyItem // certified, already in the engine
	for _, e := range entries {
		dec, err := writeset.DecodeEntry(e.Data)
		if err != nil {
			// Entries are validated before they are appended; a corrupt one
			// means a bug or a damaged log. Stop rather than diverge.
			m.fatal(fmt.Errorf("log entry %d: %w", e.Index, err))
			return
		}
		if dec.Kind == writeset.KindMember {
			m.membersMu.Lock()
			m.members[dec.Member.ID] = dec.Member
			m.membersMu.Unlock()
			continue
		}
		for i := range dec.Batch {
			ws := &dec.Batch[i]
			m.seqno++
			res := m.cert.Certify(ws, m.seqno)
			if !res.OK() {
				m.conflicts.Add(1)
				if ws.Origin == m.self {
					notify = append(notify, outcomeFor{ws.TxID, outcome{m.seqno, conflictError(res)}})
				}
				continue
			}
			// Commit before the apply outcome is known: the certifier's
			// state must be a function of the log alone (see package doc).
			m.cert.Commit(ws, m.seqno)
			m.certified.Add(1)
			m.committed.Store(m.seqno)
			if m.seqno <= m.engineSeqno {
				// Already in the engine: a replay after restart, or a state
				// taken from another member, which holds this outcome.
				if ws.Origin == m.self && m.seqno <= m.tookUpTo {
					err, ferr := m.outcomeTaken(m.seqno)
					if ferr != nil {
						m.fatal(ferr)
						return
					}
					notify = append(notify, outcomeFor{ws.TxID, outcome{m.seqno, err}})
				} else if m.seqno > m.tookUpTo {
					replayed = append(replayed, engine.ApplyItem{Seqno: m.seqno, WS: ws})
				}
				continue
			}
			items = append(items, engine.ApplyItem{Seqno: m.seqno, WS: ws})
		}
	}
	if err := m.recheck(replayed); err != nil {
		m.fatal(fmt.Errorf("compare write sets that failed here before a restart: %w", err))
		return
	}
	if m.tookUpTo > 0 && len(items) > 0 && items[0].Seqno <= m.tookUpTo {
		// recheck took a state that holds these items.
		for len(items) > 0 && items[0].Seqno <= m.tookUpTo {
			if items[0].WS.Origin == m.self {
				err, ferr := m.outcomeTaken(items[0].Seqno)
				if ferr != nil {
					m.fatal(ferr)
					return
				}
				notify = append(notify, outcomeFor{items[0].WS.TxID, outcome{items[0].Seqno, err}})
			}
			items = items[1:]
		}
	}
	if m.seqno > m.engineSeqno {
		if err := m.applyItems(items); err != nil {
			m.fatal(fmt.Errorf("apply write sets up to seqno %d: %w", m.seqno, err))
			return
		}
		m.engineSeqno = m.seqno
		if err := m.settle(items); err != nil {
			m.fatal(fmt.Errorf("settle write sets up to seqno %d that failed here: %w", m.seqno, err))
			return
		}
	}
	for _, it := range items {
		if it.WS.Origin == m.self {
			notify = append(notify, outcomeFor{it.WS.TxID, outcome{it.Seqno, it.Err}})
		}
	}
	m.applied.advance(m.seqno)
	for _, n := range notify {
		m.waiters.deliver(n.txid, n.o)
	}
	size := 0
	for _, e := range entries {
		size += len(e.Data)
	}
	if size >= freeMemoryAfterBytes && m.freeing.CompareAndSwap(false, true) {
		go func() {
			defer m.freeing.Store(false)
			debug.FreeOSMemory()
		}()
	}
}

// itemFailed records a certified write set that failed at apply (settle
// then compares it with the other nodes). A failure that is the same on
// every node is the client's answer (a table dropped meanwhile, a
// statement that fails). A serialization failure is not: certification
// let the write set through, yet its rows had changed, so certification
// missed a conflict or this node's data differs from the cluster's. It is
// logged as an error and counted.
func (m *stateMachine) itemFailed(it engine.ApplyItem) {
	if sqlerr.Code(it.Err) != sqlerr.SerializationFailure {
		m.logger.Debug("certified write set failed at apply", "seqno", it.Seqno, "origin", it.WS.Origin, "err", it.Err)
		return
	}
	m.unforeseen.Add(1)
	m.logger.Error(UnforeseenConflictLog+": certification missed a conflict, or this node's data differs from the cluster's; comparing with the other nodes",
		"seqno", it.Seqno, "origin", it.WS.Origin, "snapshot", it.WS.Snapshot, "err", it.Err)
}

// UnforeseenConflictLog starts the message logged for each certified write
// set that did not match the node's rows (tests look for it).
const UnforeseenConflictLog = "certified write set did not match this node's rows"

// freeMemoryAfterBytes is the size of applied entries after which the node
// gives the memory it freed back to the system at once. A large write set
// takes several copies of it for a moment; the collector frees them, but
// with a node's collector set at 4x the live heap the memory stayed taken
// for minutes (950 MB of a node's 1 GB after a 30 MB write set).
const freeMemoryAfterBytes = 8 << 20

// applyItems applies items up to m.seqno, waiting out a full disk: a batch
// that failed for want of space left nothing behind, so it is tried again,
// unchanged, until it applies or the node stops. Meanwhile this node falls
// behind (its log keeps the entries) and its sessions' commits wait, ending
// with 40003 if it lasts; nothing diverges.
func (m *stateMachine) applyItems(items []engine.ApplyItem) error {
	wait := 100 * time.Millisecond
	for {
		err := m.engine.Apply(context.Background(), items, m.seqno)
		if !errors.Is(err, engine.ErrNoSpace) {
			if m.stalledReason() != "" {
				m.logger.Info("applying again: disk space was freed", "seqno", m.seqno)
				m.stalled.Store("")
			}
			return err
		}
		if m.stalledReason() == "" {
			m.logger.Error("cannot apply: the disk is full; retrying until space is freed", "seqno", m.seqno, "err", err)
			m.stalled.Store("disk full")
		}
		select {
		case <-m.stop:
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
		for i := range items {
			items[i].Err = nil
		}
	}
}

// stalledReason says why applying waits, or "".
func (m *stateMachine) stalledReason() string {
	s, _ := m.stalled.Load().(string)
	return s
}

type outcomeFor struct {
	txid uint64
	o    outcome
}

func conflictError(res certify.Result) error {
	switch res.Reason {
	case certify.TooOld:
		return sqlerr.New(sqlerr.SerializationFailure,
			"could not serialize access: the transaction's snapshot is too old (more than the certification horizon of commits ago)")
	case certify.Invalid:
		return sqlerr.New(sqlerr.SerializationFailure,
			"could not serialize access: the transaction's snapshot is not before its commit position")
	case certify.SchemaChanged:
		return sqlerr.New(sqlerr.SerializationFailure,
			"could not serialize access: the schema of table %q changed after the transaction started", res.Table)
	case certify.ReadChanged:
		return readConflict(res)
	default:
		return &sqlerr.Error{
			Code:    sqlerr.SerializationFailure,
			Message: fmt.Sprintf("could not serialize access due to concurrent update of a row of table %q", res.Table),
			Detail:  fmt.Sprintf("A row this transaction wrote was committed by another transaction at seqno %d, after this transaction's snapshot.", res.ConflictSeqno),
			Hint:    "Retry the transaction.",
		}
	}
}

// memberList returns the known members' addresses, sorted by id.
func (m *stateMachine) memberList() []writeset.Member {
	m.membersMu.Lock()
	defer m.membersMu.Unlock()
	out := make([]writeset.Member, 0, len(m.members))
	for _, mb := range m.members {
		out = append(out, mb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (m *stateMachine) member(id string) (writeset.Member, bool) {
	m.membersMu.Lock()
	defer m.membersMu.Unlock()
	mb, ok := m.members[id]
	return mb, ok
}

// snapshotMagic starts every state machine snapshot.
const snapshotMagic = "certa-snapshot-1\n"

// Snapshot implements orderlog.StateMachine: the seqno, the members, the
// certification window and the engine's data.
func (m *stateMachine) Snapshot() (orderlog.Snapshot, error) {
	var head bytes.Buffer
	head.WriteString(snapshotMagic)
	head.Write(binary.AppendUvarint(nil, m.seqno))
	members := m.memberList()
	head.Write(binary.AppendUvarint(nil, uint64(len(members))))
	for _, mb := range members {
		e := writeset.EncodeMember(mb)
		head.Write(binary.AppendUvarint(nil, uint64(len(e))))
		head.Write(e)
	}
	var cert bytes.Buffer
	if err := m.cert.Save(&cert); err != nil {
		return nil, fmt.Errorf("save certification window: %w", err)
	}
	head.Write(binary.AppendUvarint(nil, uint64(cert.Len())))
	head.Write(cert.Bytes())
	es, err := m.engine.Snapshot(context.Background())
	if err != nil {
		return nil, fmt.Errorf("engine snapshot: %w", err)
	}
	return &snapshot{head: head.Bytes(), engine: es}, nil
}

type snapshot struct {
	head   []byte
	engine engine.Snapshot
}

func (s *snapshot) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(s.head)
	if err != nil {
		return int64(n), err
	}
	m, err := s.engine.WriteTo(w)
	return int64(n) + m, err
}

func (s *snapshot) Release() { s.engine.Release() }

var errBadSnapshot = errors.New("not a certa snapshot")

// Restore implements orderlog.StateMachine. When the engine already holds
// this state or a later one (a node restarting on its own data), the engine
// is kept and only the log-derived state is restored; the entries after the
// snapshot are then replayed and only certified up to the engine's seqno.
func (m *stateMachine) Restore(r io.Reader) error {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := readSnapshotHead(br)
	if err != nil {
		return err
	}
	engineSeqno, err := m.engine.AppliedSeqno()
	if err != nil {
		return err
	}
	if engineSeqno < head.seqno || engineSeqno == 0 {
		if err := m.engine.Restore(context.Background(), br); err != nil {
			return fmt.Errorf("restore engine: %w", err)
		}
		engineSeqno = head.seqno
		m.transfers.Add(1)
	}
	m.cert = head.cert
	m.seqno = head.seqno
	m.engineSeqno = engineSeqno
	m.membersMu.Lock()
	m.members = head.members
	m.membersMu.Unlock()
	m.applied.advance(head.seqno)
	return nil
}

// snapshotHead is what a snapshot holds before the engine's data: the
// state derived from the log up to seqno.
type snapshotHead struct {
	seqno   uint64
	members map[string]writeset.Member
	cert    *certify.Certifier
}

// readSnapshotHead reads a snapshot up to the engine's data.
func readSnapshotHead(br *bufio.Reader) (snapshotHead, error) {
	magic := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != snapshotMagic {
		return snapshotHead{}, errBadSnapshot
	}
	seqno, err := binary.ReadUvarint(br)
	if err != nil {
		return snapshotHead{}, errBadSnapshot
	}
	n, err := binary.ReadUvarint(br)
	if err != nil {
		return snapshotHead{}, errBadSnapshot
	}
	members := map[string]writeset.Member{}
	for i := uint64(0); i < n; i++ {
		b, err := readChunk(br)
		if err != nil {
			return snapshotHead{}, err
		}
		dec, err := writeset.DecodeEntry(b)
		if err != nil || dec.Kind != writeset.KindMember {
			return snapshotHead{}, errBadSnapshot
		}
		members[dec.Member.ID] = dec.Member
	}
	certBytes, err := readChunk(br)
	if err != nil {
		return snapshotHead{}, err
	}
	cert, err := certify.Load(bytes.NewReader(certBytes))
	if err != nil {
		return snapshotHead{}, fmt.Errorf("load certification window: %w", err)
	}
	return snapshotHead{seqno: seqno, members: members, cert: cert}, nil
}

func readChunk(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil || n > 1<<34 {
		return nil, errBadSnapshot
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, errBadSnapshot
	}
	return b, nil
}
