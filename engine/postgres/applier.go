package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// appliedSeqno returns the largest seqno in certa.applied (0: none).
func appliedSeqno(ctx context.Context, conn *pgconn.PgConn) (uint64, error) {
	r := conn.ExecParams(ctx, "SELECT coalesce(max(seqno), 0) FROM certa.applied", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return 0, r.Err
	}
	return strconv.ParseUint(string(r.Rows[0][0]), 10, 64)
}

// failedSeqnos returns the seqnos in [from, to] in certa.failed.
func failedSeqnos(ctx context.Context, conn *pgconn.PgConn, from, to uint64) (map[uint64]bool, error) {
	r := conn.ExecParams(ctx, "SELECT seqno FROM certa.failed WHERE seqno BETWEEN $1 AND $2",
		[][]byte{[]byte(strconv.FormatUint(from, 10)), []byte(strconv.FormatUint(to, 10))}, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	failed := map[uint64]bool{}
	for _, row := range r.Rows {
		n, err := strconv.ParseUint(string(row[0]), 10, 64)
		if err != nil {
			return nil, err
		}
		failed[n] = true
	}
	return failed, nil
}

// applyItems applies certified write sets in order in one transaction on
// conn and records upTo in it, as engine.Engine's Apply does: each item
// applies whole or not at all (a savepoint each); one that fails
// deterministically gets its Err and the others still apply. Row changes
// run with session_replication_role = replica (no trigger, no foreign-key
// action runs again); a DDL statement runs as itself (the event trigger
// that gives a new table its capture trigger fires always). It returns an
// error only when the batch could not be applied at all (nothing of it
// stayed).
//
// conn is logged in as applierRole; seqnos are recorded with token
// (certa.commit_at, certa.record_failed).
//
// afterDDL, if not nil, runs after each DDL item that succeeded, in its
// savepoint: its error fails the batch. makeWay, if not nil, lets a
// schema statement drop other sessions' temporary objects that stand in
// its way (tempdeps.go), and logs what it drops.
func applyItems(ctx context.Context, conn *pgconn.PgConn, ts *tables, items []engine.ApplyItem, upTo uint64, token string, afterDDL func(context.Context, *pgconn.PgConn) error, makeWay *tempWay) (err error) {
	if applyPipelined(ctx, conn, ts, items, upTo, token) {
		return nil
	}
	return applyOneByOne(ctx, conn, ts, items, upTo, token, afterDDL, makeWay)
}

// recordSQL records a seqno as applied ($1, with the token $2).
const recordSQL = "SELECT certa.commit_at($1, $2)"

// seqnoArgs returns the arguments of recordSQL and certa.record_failed.
func seqnoArgs(seqno uint64, token string) [][]byte {
	return [][]byte{[]byte(strconv.FormatUint(seqno, 10)), []byte(token)}
}

// applyPipelined applies items as applyItems does, when none changes the
// schema and all apply: every statement of the batch goes to the server
// in one round trip (pipelined), their results are checked, and a second
// round trip commits. Each round trip of the applier delays every commit
// behind it, and one by one a write set of four rows took ten of them.
// It reports false when it applied nothing: an item changes the schema,
// or something failed (then applyOneByOne finds out which item, or that
// the batch cannot be applied at all).
func applyPipelined(ctx context.Context, conn *pgconn.PgConn, ts *tables, items []engine.ApplyItem, upTo uint64, token string) bool {
	var plan []rowStatement
	for _, it := range items {
		if changesSchema(it.WS) {
			return false
		}
		rows, err := decodeRows(it.WS.Changes)
		if err != nil {
			return false
		}
		p, err := planRows(ctx, conn, ts, rows)
		if err != nil {
			return false
		}
		plan = append(plan, p...)
	}
	b := &pgconn.Batch{}
	b.ExecParams("BEGIN", nil, nil, nil, nil)
	b.ExecParams("SET LOCAL session_replication_role = replica", nil, nil, nil, nil)
	for _, st := range plan {
		name, err := ts.prepared(ctx, conn, st.sql, nil)
		if err != nil {
			return false
		}
		b.ExecPrepared(name, st.args, nil, nil)
	}
	b.ExecParams(recordSQL, seqnoArgs(upTo, token), nil, nil, nil)
	res, err := conn.ExecBatch(ctx, b).ReadAll()
	ok := err == nil && len(res) == len(plan)+3
	for i := 0; ok && i < len(plan); i++ {
		ok = affected(res[i+2], plan[i].rows) == nil
	}
	if ok {
		res, err := conn.Exec(ctx, "COMMIT").ReadAll()
		if err == nil && len(res) == 1 && res[0].CommandTag.String() == "COMMIT" {
			return true
		}
	}
	conn.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
	return false
}

// applyOneByOne applies items as applyItems does, a statement at a time,
// each item in a savepoint of its own.
func applyOneByOne(ctx context.Context, conn *pgconn.PgConn, ts *tables, items []engine.ApplyItem, upTo uint64, token string, afterDDL func(context.Context, *pgconn.PgConn) error, makeWay *tempWay) (err error) {
	if _, err := conn.Exec(ctx, "BEGIN; SET LOCAL session_replication_role = replica").ReadAll(); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	defer func() {
		if err != nil {
			conn.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
		}
	}()
	for i := range items {
		it := &items[i]
		if _, err := conn.Exec(ctx, "SAVEPOINT certa_item").ReadAll(); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		ierr := applyItem(ctx, conn, ts, it, token, makeWay)
		if ierr == nil && changesSchema(it.WS) && afterDDL != nil {
			if err := afterDDL(ctx, conn); err != nil {
				return fmt.Errorf("apply: after the schema change at seqno %d: %w", it.Seqno, err)
			}
		}
		if ierr == nil {
			if _, err := conn.Exec(ctx, "RELEASE certa_item").ReadAll(); err != nil {
				return fmt.Errorf("apply: %w", err)
			}
			continue
		}
		e := itemError(ierr)
		if e == nil {
			return fmt.Errorf("apply write set at seqno %d: %w", it.Seqno, ierr)
		}
		if _, err := conn.Exec(ctx, "ROLLBACK TO certa_item").ReadAll(); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		it.Err = e
	}
	for _, it := range items {
		if it.Err == nil {
			continue
		}
		r := conn.ExecParams(ctx, "SELECT certa.record_failed($1, $2)", seqnoArgs(it.Seqno, token), nil, nil, nil).Read()
		if r.Err != nil {
			return fmt.Errorf("apply: record failed seqno %d: %w", it.Seqno, r.Err)
		}
	}
	r := conn.ExecParams(ctx, recordSQL, seqnoArgs(upTo, token), nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("apply: record seqno %d: %w", upTo, r.Err)
	}
	if _, err := conn.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	return nil
}

// applyItem applies one write set: its DDL statement, or its rows.
func applyItem(ctx context.Context, conn *pgconn.PgConn, ts *tables, it *engine.ApplyItem, token string, makeWay *tempWay) error {
	if it.WS.IsDDL() {
		ts.reset()
		sc, err := decodeSchemaChange(it.WS.DDL)
		if err != nil {
			return err
		}
		return runSchemaChange(ctx, conn, token, sc, true, makeWay)
	}
	rows, err := decodeRows(it.WS.Changes)
	if err != nil {
		return err
	}
	return applyRows(ctx, conn, ts, rows, token, makeWay)
}

// changesSchema reports whether ws changes the schema: a DDL write set, or
// a transaction with schema statements.
func changesSchema(ws *writeset.WriteSet) bool {
	return ws.IsDDL() || ws.Schema != writeset.SchemaNone
}

// itemError returns the error an item that failed deterministically
// reports (it fails the same way on every node), or nil for a failure of
// this node alone (the connection, the server, the disk), which must stop
// the batch.
func itemError(err error) *sqlerr.Error {
	if errors.Is(err, errRowMismatch) {
		return sqlerr.Wrap(err, sqlerr.SerializationFailure, "could not serialize access: %v", err)
	}
	if errors.Is(err, errBadRows) || errors.Is(err, errBadSchemaChange) {
		return sqlerr.Wrap(err, sqlerr.DataCorrupted, "write set does not decode: %v", err)
	}
	var se *sqlerr.Error
	if errors.Is(err, errNodeDependent) && errors.As(err, &se) {
		return se
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code[:2] {
	case "08", "40", "53", "57", "58", "XX": // connection, concurrency, resources, shutdown, system
		return nil
	}
	return &sqlerr.Error{Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint, Err: err}
}
