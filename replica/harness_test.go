package replica

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"certa/engine"
	"certa/engine/sqlite"
	"certa/orderlog/memlog"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// A node's core under test: fed by memlog, over a recording fake engine or
// a real SQLite one; no sockets, no Raft.

// applyRecorder is a plain recorder of the Apply calls a node's core
// makes. With Engine nil it is a fake engine for tests about ordering
// only: it applies nothing and fails nothing, and its applied seqno is
// what the test sets, as an engine would have recorded it before a
// restart. With Engine set, every call is passed on to it.
type applyRecorder struct {
	engine.Engine
	applied uint64 // AppliedSeqno's answer when Engine is nil
	calls   []applyCall
}

type applyCall struct {
	items []engine.ApplyItem // as Apply left them (Err set by Engine)
	upTo  uint64
}

func (r *applyRecorder) AppliedSeqno() (uint64, error) {
	if r.Engine != nil {
		return r.Engine.AppliedSeqno()
	}
	return r.applied, nil
}

func (r *applyRecorder) FailedSeqnos(from, to uint64) (map[uint64]bool, error) {
	if r.Engine != nil {
		return r.Engine.FailedSeqnos(from, to)
	}
	return map[uint64]bool{}, nil
}

func (r *applyRecorder) Apply(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	var err error
	if r.Engine != nil {
		err = r.Engine.Apply(ctx, items, upTo)
	}
	r.calls = append(r.calls, applyCall{append([]engine.ApplyItem(nil), items...), upTo})
	return err
}

// formatCalls shows Apply calls as "[1 2] up to 3", an item whose write
// set is not the one at its seqno (TxID and seqno differ) as "2(tx 5)",
// one that failed at apply as "2!23505" (its SQLSTATE).
func formatCalls(calls []applyCall) []string {
	var out []string
	for _, c := range calls {
		var items []string
		for _, it := range c.items {
			s := strconv.FormatUint(it.Seqno, 10)
			if it.WS.TxID != it.Seqno {
				s += fmt.Sprintf("(tx %d)", it.WS.TxID)
			}
			if it.Err != nil {
				s += "!" + sqlerr.Code(it.Err)
			}
			items = append(items, s)
		}
		out = append(out, fmt.Sprintf("[%s] up to %d", strings.Join(items, " "), c.upTo))
	}
	return out
}

// coreRun is what a node's core did with a log.
type coreRun struct {
	decisions []string // one per write set in log order: "seqno decision"
	calls     []applyCall
	cert      []byte // the certifier's saved window
	node      *Node
}

// appliedSeqnos returns the seqnos of every item applied, in order.
func (r coreRun) appliedSeqnos() []uint64 {
	var s []uint64
	for _, c := range r.calls {
		for _, it := range c.items {
			s = append(s, it.Seqno)
		}
	}
	return s
}

// openCore opens a node core over eng, fed by a memlog over store, waiting
// for the outcomes of txids 1 to n. The log is replayed before it returns.
func openCore(t *testing.T, eng engine.Engine, horizon uint64, store *memlog.Store, maxApply, n int) (*Node, *memlog.Log, []chan outcome) {
	t.Helper()
	return openCoreWith(t, eng, horizon, store, maxApply, n, nil)
}

// openCoreWith is openCore, calling setup (if not nil) on the node before
// the log is opened.
func openCoreWith(t *testing.T, eng engine.Engine, horizon uint64, store *memlog.Store, maxApply, n int, setup func(*Node)) (*Node, *memlog.Log, []chan outcome) {
	t.Helper()
	node, err := New(Config{
		Self:    writeset.Member{ID: "n1"},
		Horizon: horizon,
		Fatal:   func(err error) { t.Errorf("node stopped: %v", err) },
		Logger:  slog.New(slog.DiscardHandler),
	}, eng)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(node)
	}
	waits := make([]chan outcome, n)
	for i := range waits {
		waits[i] = node.waiters.add(uint64(i + 1))
	}
	l, err := memlog.Open(memlog.Config{ID: "n1", Store: store, MaxApplyEntries: maxApply}, node.StateMachine())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return node, l, waits
}

// runCore feeds a log to a new node core over the recording engine, whose
// applied seqno is engineSeqno, and returns what it did. With a nil
// store, the log's Apply calls are appended one after the other; else the
// store is replayed, maxApply entries to an Apply call.
func runCore(t *testing.T, horizon uint64, l specLog, engineSeqno uint64, store *memlog.Store, maxApply int) coreRun {
	t.Helper()
	eng := &applyRecorder{applied: engineSeqno}
	var calls [][][]byte // to append once open; a store given is replayed
	if store == nil {
		store, calls = memlog.NewStore(), l.calls
	}
	node, log, waits := openCore(t, eng, horizon, store, maxApply, len(l.writeSets))
	for _, call := range calls {
		if err := log.AppendAll(call...); err != nil {
			t.Fatal(err)
		}
	}
	return coreRun{calls: eng.calls, node: node, decisions: decisions(waits), cert: saveCert(t, node)}
}

func saveCert(t *testing.T, n *Node) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := n.sm.cert.Save(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func openSQLite(t *testing.T, path string) *sqlite.Engine {
	t.Helper()
	eng, err := sqlite.Open(sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	return eng
}

// capture runs stmts in a local transaction of eng and returns its write
// set, from n1 with the given TxID, as a COMMIT on n1 would submit it.
func capture(t *testing.T, eng engine.Engine, txid uint64, stmts ...string) *writeset.WriteSet {
	t.Helper()
	ws, err := captureWriteSet(eng, stmts...)
	if err != nil {
		t.Fatal(err)
	}
	ws.Origin, ws.TxID = "n1", txid
	return ws
}

// captureWriteSet is capture for any goroutine: the write set has no
// origin or TxID yet.
func captureWriteSet(eng engine.Engine, stmts ...string) (*writeset.WriteSet, error) {
	tx, err := eng.Begin(context.Background())
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if err := tx.Exec(context.Background(), s, &result.Buffer{}); err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	ws, err := tx.WriteSet()
	if err == nil && ws == nil {
		err = fmt.Errorf("%q changed nothing", stmts)
	}
	return ws, err
}

// ddlWriteSet returns the write set of a schema change from n1.
func ddlWriteSet(t *testing.T, eng engine.Engine, txid uint64, stmt string) *writeset.WriteSet {
	t.Helper()
	ddl, err := eng.CheckDDL(context.Background(), stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return &writeset.WriteSet{Origin: "n1", TxID: txid, DDL: ddl.Statement, Tables: ddl.Tables}
}

// appendWriteSets appends one entry per write set, all in one Apply call,
// and returns the entries.
func appendWriteSets(t *testing.T, l *memlog.Log, wss ...*writeset.WriteSet) [][]byte {
	t.Helper()
	var entries [][]byte
	for _, ws := range wss {
		entries = append(entries, writeset.EncodeBatch([]*writeset.WriteSet{ws}))
	}
	if err := l.AppendAll(entries...); err != nil {
		t.Fatal(err)
	}
	return entries
}
