package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Sequences across nodes: values are interleaved by node, as Galera's
// auto_increment_increment/offset do. Each node holds a slot, 0 to
// seqStride-1, reserved once through the log (certa.node_slots, a write
// set like any other: two nodes reserving at once conflict), and every
// sequence of the database steps by seqStride times its own increment,
// each node starting at its own slot: node k hands out start+k,
// start+k+stride, ... and no two nodes ever hand out the same value.
// The stride is set when a schema change makes a sequence, on every node
// alike (a sequence whose increment is a multiple of the stride is taken
// as set), and where each node restarts its sequences is its own, local
// state: a node with no slot yet hands out nothing (its sequences are at
// their end, and a statement that needs a value waits for the slot). The
// slot reservation uses the engine contract's sequence calls, for the
// sequence slotSequence.

// seqStride bounds the nodes a cluster may ever have had (slots are never
// reused: a new node's sequences could otherwise meet values a removed
// one handed out).
const seqStride = 128

// slotWait bounds how long a local transaction waits at Begin for this
// node's slot (sequenceWait of the session is the same).
const slotWait = 5 * time.Second

// slotSequence is the name under which the engine asks for its slot
// (SequencesWanted); a block of it is one slot.
const slotSequence = "certa.node_slots"

// slotKey is the key every slot reservation writes, so that two at once
// conflict in certification.
var slotKey = writeset.EncodeKey(slotSequence, "next")

// loadSlot reads this node's slot from certa.node_slots (-1: none).
func (e *Engine) loadSlot(ctx context.Context, conn *pgconn.PgConn) error {
	slot, err := readSlot(ctx, conn, e.cfg.NodeID)
	if err != nil {
		return err
	}
	e.slot.Store(slot)
	return nil
}

// readSlot returns node's slot in certa.node_slots (-1: none).
func readSlot(ctx context.Context, conn *pgconn.PgConn, node string) (int64, error) {
	r := conn.ExecParams(ctx, "SELECT slot FROM certa.node_slots WHERE node = $1", [][]byte{[]byte(node)}, nil, nil, nil).Read()
	if r.Err != nil {
		return -1, r.Err
	}
	slot := int64(-1)
	if len(r.Rows) == 1 {
		slot, _ = strconv.ParseInt(string(r.Rows[0][0]), 10, 64)
	}
	return slot, nil
}

// askSlot asks for a slot (SequencesWanted), unless a request is pending.
func (e *Engine) askSlot() {
	select {
	case e.wanted <- slotSequence:
	default:
	}
}

// SequencesWanted names slotSequence while this node has no slot.
func (e *Engine) SequencesWanted() <-chan string { return e.wanted }

// ReserveSequence returns the write set that gives this node the next free
// slot, read at the latest applied state; nil if it has one (or for any
// other name).
func (e *Engine) ReserveSequence(ctx context.Context, name string) (*writeset.WriteSet, engine.SequenceBlock, error) {
	if name != slotSequence {
		return nil, engine.SequenceBlock{}, nil
	}
	e.slotReserving.Store(true)
	var ws *writeset.WriteSet
	var block engine.SequenceBlock
	err := e.readOnly(ctx, nil, "ROLLBACK", func(c *conn) error {
		res, err := c.pg.Exec(ctx, "SELECT coalesce(max(seqno), 0) FROM certa.applied").ReadAll()
		if err != nil {
			return pgError(err)
		}
		snap, _ := strconv.ParseUint(string(res[0].Rows[0][0]), 10, 64)
		r := c.pg.ExecParams(ctx, "SELECT coalesce(max(slot) + 1, 0), bool_or(node = $1) FROM certa.node_slots",
			[][]byte{[]byte(e.cfg.NodeID)}, nil, nil, nil).Read()
		if r.Err != nil {
			return pgError(r.Err)
		}
		if string(r.Rows[0][1]) == "t" {
			return nil // it has one
		}
		next, _ := strconv.ParseInt(string(r.Rows[0][0]), 10, 64)
		if next >= seqStride {
			return sqlerr.New(sqlerr.SequenceLimitExceeded, "certa: the cluster has had %d nodes, the most its sequences interleave", seqStride)
		}
		row, err := json.Marshal(map[string]any{"node": e.cfg.NodeID, "slot": next})
		if err != nil {
			return err
		}
		ws = &writeset.WriteSet{
			Snapshot: snap,
			Keys:     []writeset.Key{slotKey},
			Tables:   []string{slotSequence},
			Changes:  appendRows(nil, []rowChange{{op: opInsert, schema: "certa", table: "node_slots", newRow: row}}),
		}
		block = engine.SequenceBlock{Name: slotSequence, First: next, Count: 1}
		return nil
	})
	return ws, block, err
}

// GrantSequence takes this node's slot once its reservation committed,
// and restarts every sequence at it; a block of Count 0 (the reservation
// failed, or was not needed) reads the slot again and asks anew, after a
// pause, if there is none.
func (e *Engine) GrantSequence(b engine.SequenceBlock) {
	if b.Name != slotSequence {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed.Load() {
		return
	}
	if e.slot.Load() >= 0 {
		return // granted already
	}
	slot := b.First
	if b.Count == 0 {
		var err error
		if slot, err = readSlot(ctx, e.applier, e.cfg.NodeID); err != nil || slot < 0 {
			time.AfterFunc(time.Second, e.askSlot)
			return
		}
	}
	// The slot is this node's only once its sequences are no longer
	// parked: a statement that finds one parked meanwhile waits for the
	// slot (noSequenceValues) rather than fail.
	if err := restartSequences(ctx, e.applier, slot, nil, restartParked); err != nil {
		time.AfterFunc(time.Second, e.askSlot)
		return
	}
	e.slot.Store(slot)
	e.slotReady()
}

// slotReady wakes the statements waiting for this node's slot.
func (e *Engine) slotReady() {
	e.slotMu.Lock()
	close(e.slotCh)
	e.slotCh = make(chan struct{})
	e.slotMu.Unlock()
}

// WaitSequenceValues waits until this node has its slot.
func (e *Engine) WaitSequenceValues(ctx context.Context, name string) error {
	for e.slot.Load() < 0 {
		e.slotMu.Lock()
		ch := e.slotCh
		e.slotMu.Unlock()
		if e.slot.Load() >= 0 {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// restartMode says which sequences restartSequences sets, and how.
type restartMode int

const (
	restartAll    restartMode = iota // every sequence, from its last value
	restartUnset                     // only those whose increment is not a stride yet
	restartParked                    // every sequence; one at its end was parked there (the node had no slot)
)

// sequenceState is a sequence as pg_sequences shows it.
type sequenceState struct {
	name             string // schema-qualified, quoted
	start, increment int64
	last             *int64 // nil: never used
	max              int64
}

// listSequences reads the replicated sequences (a session's temporary
// ones hand out their values as in PostgreSQL).
func listSequences(ctx context.Context, conn *pgconn.PgConn) ([]sequenceState, error) {
	r := conn.ExecParams(ctx, `SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename), start_value, increment_by, last_value, max_value
		FROM pg_sequences WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'certa')
		AND schemaname NOT LIKE 'pg\_temp\_%' ORDER BY 1`, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	seqs := make([]sequenceState, len(r.Rows))
	for i, row := range r.Rows {
		s := &seqs[i]
		s.name = string(row[0])
		s.start, _ = strconv.ParseInt(string(row[1]), 10, 64)
		s.increment, _ = strconv.ParseInt(string(row[2]), 10, 64)
		s.max, _ = strconv.ParseInt(string(row[4]), 10, 64)
		if row[3] != nil {
			last, _ := strconv.ParseInt(string(row[3]), 10, 64)
			s.last = &last
		}
	}
	return seqs, nil
}

// restartSequences makes every sequence step by the stride and restarts
// it at this node's next value of slot: the first start + increment*slot
// + k*step after the last value it (or, after a restore, the node it was
// copied from: also in floor) handed out. floor maps sequence names to
// values the sequence must pass too. slot < 0 parks every sequence at its
// end: it hands out nothing. Sequences that count down are left alone.
func restartSequences(ctx context.Context, conn *pgconn.PgConn, slot int64, floor map[string]int64, mode restartMode) error {
	seqs, err := listSequences(ctx, conn)
	if err != nil {
		return err
	}
	for _, s := range seqs {
		if s.increment <= 0 {
			continue
		}
		inc := s.increment
		if inc%seqStride == 0 {
			if mode == restartUnset {
				continue
			}
			inc /= seqStride // set already
		}
		step := inc * seqStride
		var sql string
		if slot < 0 {
			sql = fmt.Sprintf("ALTER SEQUENCE %s INCREMENT BY %d; SELECT setval('%s', %d, true)", s.name, step, s.name, s.max)
		} else {
			next := s.start + inc*slot
			passed := int64(-1 << 63)
			if s.last != nil && !(mode == restartParked && *s.last == s.max) {
				passed = *s.last
			}
			if f, ok := floor[s.name]; ok && f > passed {
				passed = f
			}
			if next <= passed {
				next += ((passed-next)/step + 1) * step
			}
			if next > s.max {
				sql = fmt.Sprintf("ALTER SEQUENCE %s INCREMENT BY %d; SELECT setval('%s', %d, true)", s.name, step, s.name, s.max)
			} else {
				sql = fmt.Sprintf("ALTER SEQUENCE %s INCREMENT BY %d RESTART WITH %d", s.name, step, next)
			}
		}
		if _, err := conn.Exec(ctx, sql).ReadAll(); err != nil {
			return fmt.Errorf("interleave sequence %s: %w", s.name, err)
		}
	}
	return nil
}

// localError converts what a local statement's failure means in the
// cluster: a lock wait that timed out is a conflict with a concurrent
// writer (40001, retried by the session), and PostgreSQL's "reached
// maximum value of sequence" of a node without a slot is
// engine.ErrNoSequenceValues.
func (e *Engine) localError(err error) error {
	if sqlerr.Code(err) == sqlerr.LockNotAvailable && strings.Contains(err.Error(), "lock timeout") {
		return sqlerr.Wrap(err, sqlerr.SerializationFailure,
			"could not serialize access: a concurrent transaction of this node holds a row this statement needs (it waited lock_timeout)")
	}
	return e.noSequenceValues(err)
}

// noSequenceValues converts PostgreSQL's "reached maximum value of
// sequence" of a node without a slot into engine.ErrNoSequenceValues: the
// statement may run again once the slot is granted.
func (e *Engine) noSequenceValues(err error) error {
	if sqlerr.Code(err) != sqlerr.SequenceLimitExceeded || e.slot.Load() >= 0 {
		return err
	}
	return sqlerr.Wrap(&engine.NoSequenceValuesError{Sequence: slotSequence}, sqlerr.SerializationFailure,
		"certa: this node cannot hand out sequence values until it has joined the cluster's sequence interleaving; retry")
}
