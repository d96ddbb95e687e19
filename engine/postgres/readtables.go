package postgres

import (
	"context"
	"slices"
	"strconv"

	"certa/engine"
)

// The tables a serializable transaction read (engine.Tx.Reads) come
// from PostgreSQL's own count of the scans each relation had in the
// backend (pg_stat_get_xact_numscans, of the table and of its indexes):
// every read counts there, by the client's statement, a view, a function,
// a trigger or a foreign-key check, so none can hide. The counts are the
// backend's since its statistics were last flushed (not the
// transaction's alone), so TrackReads takes them as the transaction
// begins and Reads keeps the tables whose count grew, and those it
// changed rows of.

// scansSQL reads, for every table outside PostgreSQL's and certa's
// schemas, its scans and those of its indexes plus its rows changed, for
// the tables where that is not zero.
const scansSQL = `SELECT c.oid, n FROM pg_catalog.pg_class c
	CROSS JOIN LATERAL (SELECT pg_catalog.pg_stat_get_xact_numscans(c.oid)
		+ pg_catalog.pg_stat_get_xact_tuples_inserted(c.oid) + pg_catalog.pg_stat_get_xact_tuples_updated(c.oid)
		+ pg_catalog.pg_stat_get_xact_tuples_deleted(c.oid)
		+ coalesce((SELECT sum(pg_catalog.pg_stat_get_xact_numscans(i.indexrelid)) FROM pg_catalog.pg_index i WHERE i.indrelid = c.oid), 0) AS n) s
	WHERE c.relkind IN ('r', 'p', 'm') AND n > 0
		AND c.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
	UNION ALL SELECT 0, CASE WHEN pg_catalog.current_setting('track_functions') = 'all'
		THEN (SELECT coalesce(sum(calls), 0) FROM pg_catalog.pg_stat_xact_user_functions WHERE schemaname <> 'certa') ELSE -1 END`

// functionCalls is the oid under which scans reports the calls of the
// client's functions the backend counted (-1: it does not count them).
const functionCalls = 0

// scans reads scansSQL on the transaction's backend.
func (t *Tx) scans(ctx context.Context) (map[uint32]int64, error) {
	r := t.c.pg.ExecParams(ctx, scansSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, pgError(r.Err)
	}
	out := make(map[uint32]int64, len(r.Rows))
	for _, row := range r.Rows {
		oid, err := strconv.ParseUint(string(row[0]), 10, 32)
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(string(row[1]), 10, 64)
		if err != nil {
			return nil, err
		}
		out[uint32(oid)] = n
	}
	return out, nil
}

// TrackReads implements engine.Tx.
func (t *Tx) TrackReads(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return err
	}
	base, err := t.scans(ctx)
	if err != nil {
		return t.failed(err)
	}
	t.scansBase = base
	t.reads = &readLog{}
	return nil
}

// Reads implements engine.Tx: the tables whose counts grew, by key
// where the statements explain their reads (readkeys.go), else whole.
func (t *Tx) Reads(ctx context.Context) (engine.Reads, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return engine.Reads{}, err
	}
	if t.scansBase == nil {
		return engine.Reads{}, nil
	}
	now, err := t.scans(ctx)
	if err != nil {
		return engine.Reads{}, t.failed(err)
	}
	var read []uint32
	for oid, n := range now {
		if oid != functionCalls && n > t.scansBase[oid] {
			read = append(read, oid)
		}
	}
	slices.Sort(read)
	l := t.reads
	if calls := now[functionCalls]; calls < 0 || calls != t.scansBase[functionCalls] {
		l = &readLog{opaque: true} // client code ran: it may have read anything
	}
	out, err := t.refine(ctx, l, read)
	if err != nil {
		return engine.Reads{}, t.failed(err)
	}
	return out, nil
}
