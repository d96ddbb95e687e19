package postgres

import (
	"context"
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
		AND c.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))`

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
	return nil
}

// Reads implements engine.Tx, at the grain of tables.
func (t *Tx) Reads(ctx context.Context) (engine.Reads, error) {
	tables, err := t.readTables(ctx)
	return engine.Reads{Tables: tables}, err
}

func (t *Tx) readTables(ctx context.Context) ([]string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.usable(); err != nil {
		return nil, err
	}
	now, err := t.scans(ctx)
	if err != nil {
		return nil, t.failed(err)
	}
	var out []string
	for oid, n := range now {
		if n <= t.scansBase[oid] {
			continue
		}
		m, err := t.c.ts.byRelOID(ctx, t.c.pg, oid)
		if err != nil {
			return nil, t.failed(pgError(err))
		}
		out = append(out, m.keyTable())
	}
	return out, nil
}
