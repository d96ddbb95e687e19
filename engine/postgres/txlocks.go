package postgres

import (
	"context"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
)

// What a transaction's backend holds as it ends, read in one look at
// pg_locks (txLocksSQL) in the round trip of WriteSet:
//
//   - The tables it locked rows of, when something certa cannot see may
//     have locked them. Rows locked for update in a client's statement
//     are keys of the write set (locking.go); rows locked for share are
//     read as by a plain SELECT (snapshot isolation keeps them stable);
//     PostgreSQL's foreign-key checks lock rows that refkeys.go certifies.
//     But a client function whose body may lock rows or runs dynamic SQL
//     (lockingFunctions), called in the transaction (PostgreSQL counts the
//     calls: track_functions = all on the pool's connections), or a rule
//     or view with a locking clause that the transaction used, locks rows
//     certa never sees. Then every table the transaction locked rows of
//     (PostgreSQL takes a RowShareLock on each, however the locking read
//     was written) is certified as read (WriteSet.ReadTables): the
//     transaction fails with 40001 if another changed the table after its
//     snapshot, as PostgreSQL's REPEATABLE READ fails a locking read of a
//     row changed since (at the grain of the table: aborts too many,
//     never one too few). So it is when the transaction changed the
//     schema: a function it made is not among lockingFunctions yet.
//   - The sequences it used, with their values (seqstate.go).
//
// A transaction that may have done neither (it wrote nothing, locked no
// rows where certa sees them and named no sequence function) skips
// pg_locks, which costs a pass over the server's lock table.

// lockingClauseRE matches a locking clause in a rule's or function's text.
const lockingClauseRE = `\mfor\s+(update|share|no\s+key\s+update|key\s+share)\M`

// txLocksSQL reads the locks: the tables the transaction locked rows of
// ('t', oid), one row ('h', 0, ”) if a hidden locker ran, and the
// sequence values ('s', oid, value; oid 0: lastval). $1 (true) skips the
// gate: the transaction locked rows or named a sequence function. $2 are
// the lockingFunctions. Prepared: planning it took ten times longer than
// running it.
const txLocksSQL = `WITH l AS MATERIALIZED (SELECT l.relation, l.mode, c.relkind, c.relnamespace, c.relpersistence
	FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation
	WHERE ($1::bool OR EXISTS (SELECT 1 FROM certa.capture WHERE xid = pg_catalog.pg_current_xact_id()))
		AND l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND l.granted)
SELECT 't', l.relation, '' FROM l WHERE l.mode = 'RowShareLock' AND l.relkind = 'r' AND l.relpersistence <> 't'
	AND l.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
UNION ALL SELECT 'h', 0, '' WHERE EXISTS (SELECT 1 FROM l JOIN pg_catalog.pg_rewrite r ON r.ev_class = l.relation
		WHERE pg_catalog.pg_get_ruledef(r.oid) ~* '` + lockingClauseRE + `')
	OR EXISTS (SELECT 1 FROM pg_catalog.unnest($2::oid[]) f WHERE pg_catalog.pg_stat_get_xact_function_calls(f) IS NOT NULL)
UNION ALL SELECT 's', v.seq, v.value::text FROM certa.sequence_values(ARRAY(SELECT l.relation FROM l WHERE l.relkind = 'S')) v
	WHERE EXISTS (SELECT 1 FROM l)`

// queueTxLocks adds txLocksSQL to b, gated unless open.
func (t *Tx) queueTxLocks(ctx context.Context, b *pgconn.Batch, open bool) error {
	fns, err := t.e.lockingFns.get(ctx, t.c.pg, t.e.schemaEpoch.Load())
	if err != nil {
		return err
	}
	t.c.schemaSeen()
	name, err := t.c.ts.prepared(ctx, t.c.pg, txLocksSQL, nil)
	if err != nil {
		return pgError(err)
	}
	b.ExecPrepared(name, [][]byte{[]byte(strconv.FormatBool(open)), []byte(fns)}, nil, nil)
	return nil
}

// txLocks is what txLocksSQL found.
type txLocks struct {
	rowShared []uint32 // the tables the transaction locked rows of
	hidden    bool     // a hidden locker ran
}

// readTxLocks reads txLocksSQL's result, and records the sequence values
// in the session's (seqs, nil: none).
func readTxLocks(r *pgconn.Result, seqs *engine.SequenceValues) txLocks {
	var out txLocks
	for _, row := range r.Rows {
		switch string(row[0]) {
		case "t":
			if oid, err := strconv.ParseUint(string(row[1]), 10, 32); err == nil {
				out.rowShared = append(out.rowShared, uint32(oid))
			}
		case "h":
			out.hidden = true
		case "s":
			tookSequence(seqs, string(row[1]), string(row[2]))
		}
	}
	return out
}

// lockedUnseen returns the tables of locks to certify as read (see the
// top of this file); schema is whether the transaction changed the schema.
func (t *Tx) lockedUnseen(ctx context.Context, locks txLocks, schema bool) ([]string, error) {
	if !locks.hidden && !schema {
		return nil, nil
	}
	var out []string
	for _, oid := range locks.rowShared {
		m, err := t.c.ts.byRelOID(ctx, t.c.pg, oid)
		if err != nil {
			return nil, pgError(err)
		}
		if !m.temp {
			out = append(out, m.keyTable())
		}
	}
	return out, nil
}

// lockingFunctions are the client's functions that may lock rows where
// certa cannot see it: their text has a locking clause, runs dynamic SQL
// (EXECUTE) or PREPAREs, or they are written in a language other than
// SQL and PL/pgSQL (trusted languages clients may use; C and internal
// functions are the server's and its extensions', made by a superuser).
// Kept per schema epoch: every applied schema change may have made one.
type lockingFunctions struct {
	mu      sync.Mutex
	epoch   uint64
	read    bool
	literal string // an oid[] literal
}

const lockingFunctionsSQL = `SELECT coalesce(pg_catalog.array_agg(p.oid), '{}')::text FROM pg_catalog.pg_proc p
	JOIN pg_catalog.pg_language g ON g.oid = p.prolang
	WHERE p.pronamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
		AND (g.lanname NOT IN ('sql', 'plpgsql', 'c', 'internal') OR p.prosrc ~* '` + lockingClauseRE + `|\m(execute|prepare)\M')`

// get returns the oid[] literal of the functions, read on conn if the
// schema changed since they were last read.
func (f *lockingFunctions) get(ctx context.Context, conn *pgconn.PgConn, epoch uint64) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.read && f.epoch == epoch {
		return f.literal, nil
	}
	r := conn.ExecParams(ctx, lockingFunctionsSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return "", pgError(r.Err)
	}
	f.read, f.epoch, f.literal = true, epoch, string(r.Rows[0][0])
	return f.literal, nil
}
