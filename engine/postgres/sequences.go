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

// Sequences across nodes: each node hands out values from blocks of its
// own, so that no two nodes ever hand out the same value, while the
// sequence itself stays as the client made it (its increment, bounds and
// cache are PostgreSQL's, in the catalogs and in pg_dump). Each node holds
// a slot, 0 to seqSlots-1, reserved once through the log (certa.node_slots,
// a write set like any other: two nodes reserving at once conflict). A
// sequence's values, from its start in the direction of its increment,
// fall in blocks of equal size (a seqSlots-th of its range, at most
// maxSeqBlock values, which keeps a bigint column's values within what a
// JSON number holds exactly), and block b is slot b mod seqSlots's. So a
// node with slot 0 hands out 1, 2, 3 ... as a lone PostgreSQL would, and
// another node starts at its first block (an integer column's hold about
// 16.7 million values: one block per slot).
//
// PostgreSQL has no hook in nextval: a node's sequence would run past the
// end of its block into another slot's. So the engine moves each sequence
// to its node's next block where it lies outside them, or in the last
// lateShare-th of one (certa.place_sequences_at): the sequences a schema
// change made or changed (a new sequence, ALTER SEQUENCE), when the node gets its slot,
// after a restore, and at the end of a transaction that took its values
// (checkSequenceValues). A transaction whose values lie in another slot's
// block (it ran past the end, in one go; or a setval moved it there) does
// not commit: it fails with engine.ErrNoSequenceValues (40001), which the
// session runs again. Values taken where certa does not look (by a
// trigger or function, of a sequence no written table draws from, not
// named in a statement) are not checked: such a sequence moves only when
// the node gets its slot or restores, and may run past its block between
// moves. A node with no
// slot yet hands out nothing (its sequences are at their end, and a
// statement that needs a value waits for the slot). The slot reservation
// uses the engine contract's sequence calls, for the sequence
// slotSequence.

// seqSlots bounds the nodes a cluster may ever have had (slots are never
// reused: a new node's sequences could otherwise meet values a removed
// one handed out).
const seqSlots = 128

// maxSeqBlock bounds a block: a bigint sequence's slots have many.
const maxSeqBlock = 1 << 32

// lateShare: a sequence in the last lateShare-th of its node's block
// (of at least lateShare values), where the node has a next block, moves
// there at the end of a transaction that took its values, before it runs
// past the end (where a value of another node's, already in a unique
// column, would fail the statement: 23505).
const lateShare = 16

// placeLock is the advisory lock (its two keys) that makes moves of
// sequences one at a time, wherever they run: two that read the same
// position could otherwise move a sequence back over values a client
// took in between.
const placeLock = "1667592820, 1936028017"

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
		// Slot 0 is the founder's; the others take the next after
		// the largest, from 1.
		r := c.pg.ExecParams(ctx, `SELECT CASE WHEN $2 AND NOT bool_or(slot = 0) IS TRUE THEN 0 ELSE greatest(coalesce(max(slot) + 1, 1), 1) END,
			bool_or(node = $1) FROM certa.node_slots`,
			[][]byte{[]byte(e.cfg.NodeID), []byte(strconv.FormatBool(e.cfg.Founder))}, nil, nil, nil).Read()
		if r.Err != nil {
			return pgError(r.Err)
		}
		if string(r.Rows[0][1]) == "t" {
			return nil // it has one
		}
		next, _ := strconv.ParseInt(string(r.Rows[0][0]), 10, 64)
		if next >= seqSlots {
			return sqlerr.New(sqlerr.SequenceLimitExceeded, "certa: the cluster has had %d nodes, the most that can share its sequences' values", seqSlots)
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
	if err := placeSequences(ctx, e.applier, slot, true, nil, nil); err != nil {
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

// sequenceState is a sequence as pg_sequences shows it.
type sequenceState struct {
	name string // schema-qualified, quoted
	last *int64 // nil: never used
}

// listSequences reads the replicated sequences (a session's temporary
// ones hand out their values as in PostgreSQL).
func listSequences(ctx context.Context, conn *pgconn.PgConn) ([]sequenceState, error) {
	r := conn.ExecParams(ctx, `SELECT quote_ident(schemaname) || '.' || quote_ident(sequencename), last_value
		FROM pg_sequences WHERE schemaname NOT IN ('pg_catalog', 'information_schema', 'certa')
		AND schemaname NOT LIKE 'pg\_temp\_%' ORDER BY 1`, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	seqs := make([]sequenceState, len(r.Rows))
	for i, row := range r.Rows {
		seqs[i].name = string(row[0])
		if row[1] != nil {
			last, _ := strconv.ParseInt(string(row[1]), 10, 64)
			seqs[i].last = &last
		}
	}
	return seqs, nil
}

// placeSequences moves the sequences (those of oids only; nil: every
// one) that lie outside slot's blocks to the first value of slot's next
// block (certa.place_sequences_at): from where they are, or, fresh (the
// slot was just reserved: none of its values was ever handed out), from
// their start. After a restore, floor (sequence names to values they must
// pass; non-nil) holds the values this node handed out before, and the
// values of its blocks that the restored columns drawing from each
// sequence hold count too (certa.sequence_floors): a node rebuilt from
// another's snapshot must not hand out again what it handed out before.
// slot < 0 parks every sequence at its end: it hands out nothing.
func placeSequences(ctx context.Context, conn *pgconn.PgConn, slot int64, fresh bool, floor map[string]int64, only []uint32) error {
	sql := "SELECT certa.place_sequences_at($1, $2, $3, $4)"
	floors := []byte("{}")
	if floor != nil {
		sql = "SELECT certa.place_sequences_at($1, $2, certa.sequence_floors($1, $3), $4)"
		var err error
		if floors, err = json.Marshal(floor); err != nil {
			return err
		}
	}
	var oids []byte // NULL: every one
	if only != nil {
		oids = []byte(oidArray(only))
	}
	r := conn.ExecParams(ctx, sql, [][]byte{[]byte(strconv.FormatInt(slot, 10)), []byte(strconv.FormatBool(fresh)), floors, oids},
		nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("place sequences in this node's blocks: %w", r.Err)
	}
	return nil
}

// placeAsClient is placeSequences (the sequences the transaction made or
// changed, from where they are) in a transaction that runs as the client
// role, which may not read every sequence: through certa.place_sequences,
// which needs the engine's token.
func placeAsClient(ctx context.Context, conn *pgconn.PgConn, token string, slot int64) error {
	r := conn.ExecParams(ctx, "SELECT certa.place_sequences($1, $2)",
		[][]byte{[]byte(token), []byte(strconv.FormatInt(slot, 10))}, nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("place sequences in this node's blocks: %w", r.Err)
	}
	return nil
}

// checkSequenceValues moves the sequences whose values the transaction
// took late in this node's block, or in another slot's (foreign), to this
// node's next block, and refuses the transaction if any was foreign, so
// that it runs again with values of its own. A transaction that called
// setval is not refused: the client put the sequence there.
func (t *Tx) checkSequenceValues(ctx context.Context, locks txLocks) error {
	if len(locks.late)+len(locks.foreign) == 0 {
		return nil
	}
	e := t.e
	e.applyMu.Lock()
	err := placeSequences(ctx, e.applier, e.slot.Load(), false, nil, append(locks.late, locks.foreign...))
	e.applyMu.Unlock()
	if err != nil {
		return err
	}
	if t.setvalNamed || len(locks.foreign) == 0 {
		return nil
	}
	return sqlerr.Wrap(&engine.NoSequenceValuesError{Sequence: slotSequence}, sqlerr.SerializationFailure,
		"certa: this transaction took values of a sequence past the end of this node's block of it; the sequence now hands out this node's next block: retry")
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
		"certa: this node cannot hand out sequence values until it has a slot for its blocks of sequence values; retry")
}

// narrowSequencesSQL finds the sequences the open transaction made or
// changed (a row its xid or a subtransaction's wrote: age 0 or less)
// whose blocks would hold fewer than lateShare values.
var narrowSequencesSQL = fmt.Sprintf(`SELECT c.oid::regclass::text, floor((s.seqmax::numeric - s.seqmin) / abs(s.seqincrement) / %[1]d)
	FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
	WHERE age(s.xmin) <= 0 AND c.relpersistence <> 't'
		AND floor((s.seqmax::numeric - s.seqmin) / abs(s.seqincrement) / %[1]d) < %[2]d
	ORDER BY 1 LIMIT 1`, seqSlots, lateShare)

// refuseNarrowSequences refuses a schema change that leaves a sequence
// with too few values for its blocks: a block of one value is used up as
// it is taken, and a CYCLE sequence then handed out that value again and
// again.
func refuseNarrowSequences(ctx context.Context, c *pgconn.PgConn) error {
	r := c.ExecParams(ctx, narrowSequencesSQL, nil, nil, nil, nil).Read()
	if r.Err != nil || len(r.Rows) == 0 {
		return r.Err
	}
	return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
		Message: fmt.Sprintf("sequence %s has too few values for certa to share among the nodes", r.Rows[0][0]),
		Detail: fmt.Sprintf("certa gives each node blocks of a %dth of a sequence's values; this one's would hold %s, and a block needs at least %d.",
			seqSlots, r.Rows[0][1], lateShare),
		Hint: "Widen its range (MINVALUE, MAXVALUE) or make its INCREMENT smaller."}
}
