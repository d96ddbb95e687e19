package postgres

import (
	"context"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
)

// What a transaction's backend holds as it ends, read by WriteSet:
//
//   - The tables it locked rows of, when something certa cannot see may
//     have locked them. Rows locked for update in a client's statement
//     are keys of the write set (locking.go); rows locked for share are
//     read as by a plain SELECT (snapshot isolation keeps them stable);
//     PostgreSQL's foreign-key checks lock rows that refkeys.go certifies.
//     But a client function whose body may lock rows or runs dynamic SQL,
//     called in the transaction (PostgreSQL counts the calls:
//     track_functions = all on the pool's connections), or a rule or view
//     with a locking clause that the transaction used (hiddenLockers),
//     or a client's FOR UPDATE of a view (Tx.unseenLock), locks rows
//     certa never sees. Then every table the transaction locked
//     rows of (PostgreSQL takes a RowShareLock on each, however the locking
//     read was written: pg_locks) is certified as read
//     (WriteSet.ReadTables): the transaction fails with 40001 if another
//     changed the table after its snapshot, as PostgreSQL's REPEATABLE READ
//     fails a locking read of a row changed since (at the grain of the
//     table: aborts too many, never one too few). So it is when the
//     transaction changed the schema: a function it made is not among
//     hiddenLockers yet.
//   - The values of the sequences it used (seqstate.go): those the
//     defaults and identities of the tables it inserted or updated rows of
//     draw from (tableMeta.seqs), and, when a statement named nextval or
//     setval, those its backend locked (each call locks its sequence).
//
// pg_locks visits every backend's lock slots under all lock partitions:
// read at every commit it cost 12-16% of oltp-write's throughput. So the
// round trip of the capture only counts the calls of the hidden lockers'
// functions (calledSQL, when there are any), and a second round trip
// (locksSQL) follows only when a hidden locker may have run, or sequence
// values are to be read.

// lockingClauseRE matches a locking clause in a rule's or function's text.
const lockingClauseRE = `\mfor\s+(update|share|no\s+key\s+update|key\s+share)\M`

// calledSQL tells whether the transaction called one of the functions $1
// (an oid[]): the backend's count of their calls grew past $2, the count
// as the transaction began (fnCallsSQL). Counts are the backend's since
// its statistics were last flushed, which never happens inside a
// transaction, so they include earlier transactions'.
const calledSQL = `SELECT coalesce(sum(pg_catalog.pg_stat_get_xact_function_calls(f)), 0) > $2::bigint FROM pg_catalog.unnest($1::oid[]) f`

// fnCallsSQL is the column beginSQL reads the calls of the hidden lockers'
// functions (an oid[] literal) with: calledSQL's $2.
func fnCallsSQL(functions string) string {
	if functions == "{}" {
		return ", 0"
	}
	return ", (SELECT coalesce(sum(pg_catalog.pg_stat_get_xact_function_calls(f)), 0) FROM pg_catalog.unnest(" +
		quoteLiteral(functions) + "::pg_catalog.oid[]) f)"
}

// queueCalled adds calledSQL to b if there are hidden lockers' functions
// to count; it reports whether it did.
func (t *Tx) queueCalled(ctx context.Context, b *pgconn.Batch) (bool, error) {
	if t.lockers.functions == "{}" {
		return false, nil
	}
	base := strconv.FormatInt(t.fnBase, 10)
	if t.e.schemaEpoch.Load() != t.lockers.epoch {
		base = "-1" // a function made since may have run: any call counts
	}
	name, err := t.c.ts.prepared(ctx, t.c.pg, calledSQL, nil)
	if err != nil {
		return false, pgError(err)
	}
	b.ExecPrepared(name, [][]byte{[]byte(t.lockers.functions), []byte(base)}, nil, nil)
	return true, nil
}

// locksSQL reads the tables the transaction locked rows of ('t', oid) if
// $2, one row ('v', 0) if $3 and a relation it locked has a locking rule,
// and the values of sequences $4 and, if $1, of those the backend locked
// ('s', oid, value; oid 0: lastval), with where the value lies in the
// blocks of slot $5 (sequences.go): 'f' in another slot's, 'l' late in
// one of its own, else NULL.
const locksSQL = `WITH l AS MATERIALIZED (SELECT l.relation, l.mode, c.relkind, c.relnamespace, c.relpersistence
	FROM pg_catalog.pg_locks l JOIN pg_catalog.pg_class c ON c.oid = l.relation
	WHERE ($1::bool OR $2::bool) AND l.pid = pg_catalog.pg_backend_pid() AND l.locktype = 'relation' AND l.granted)
SELECT 't', l.relation, NULL::bigint, NULL FROM l WHERE $2::bool AND l.mode = 'RowShareLock' AND l.relkind = 'r' AND l.relpersistence <> 't'
	AND l.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
UNION ALL SELECT 'v', 0, NULL, NULL WHERE $3::bool AND EXISTS (SELECT 1 FROM l JOIN pg_catalog.pg_rewrite r ON r.ev_class = l.relation
	WHERE pg_catalog.pg_get_ruledef(r.oid) ~* '` + lockingClauseRE + `')
UNION ALL SELECT 's', v.seq, v.value, CASE WHEN v.seq = 0 OR certa.sequence_place(v.seq, $5::int, v.value, true) = v.value THEN NULL
		WHEN certa.sequence_place(v.seq, $5::int, v.value, false) <> v.value THEN 'f' ELSE 'l' END FROM certa.sequence_values(
	ARRAY(SELECT pg_catalog.unnest($4::oid[]) UNION SELECT l.relation FROM l WHERE $1::bool AND l.relkind = 'S'), $1::bool) v`

// txLocks is what locksSQL found.
type txLocks struct {
	rowShared []uint32 // the tables the transaction locked rows of
	hidden    bool     // a hidden locker ran
	foreign   []uint32 // sequences it took values of in another slot's blocks
	late      []uint32 // sequences it took values of late in this node's block
}

// readLocks runs locksSQL: named, a statement named nextval or setval;
// hidden, a hidden locker ran (or may have, with rules: a locking rule
// exists); seqs, the sequences the written tables draw from. The values
// go to the session's (t.seqs).
func (t *Tx) readLocks(ctx context.Context, named, hidden, rules bool, seqs []uint32) (txLocks, error) {
	name, err := t.c.ts.prepared(ctx, t.c.pg, locksSQL, nil)
	if err != nil {
		return txLocks{}, pgError(err)
	}
	r := t.c.pg.ExecPrepared(ctx, name, [][]byte{[]byte(strconv.FormatBool(named)), []byte(strconv.FormatBool(hidden || rules)),
		[]byte(strconv.FormatBool(rules && !hidden)), []byte(oidArray(seqs)), []byte(strconv.FormatInt(t.e.slot.Load(), 10))}, nil, nil).Read()
	if r.Err != nil {
		return txLocks{}, pgError(r.Err)
	}
	out := txLocks{hidden: hidden}
	values := map[string]int64{}
	for _, row := range r.Rows {
		switch string(row[0]) {
		case "t":
			if oid, err := strconv.ParseUint(string(row[1]), 10, 32); err == nil {
				out.rowShared = append(out.rowShared, uint32(oid))
			}
		case "v":
			out.hidden = true
		case "s":
			if n, err := strconv.ParseInt(string(row[2]), 10, 64); err == nil {
				values[string(row[1])] = n
			}
			switch string(row[3]) {
			case "f":
				out.foreign = append(out.foreign, parseOID(row[1]))
			case "l":
				out.late = append(out.late, parseOID(row[1]))
			}
		}
	}
	tookSequences(t.seqs, values)
	return out, nil
}

// unseenLocks returns, for a transaction that wrote rows or locked some,
// the tables to certify as read (see the top of this file), and reads the
// sequence values: called, whether calledSQL found a hidden locker's
// function called; schema, whether the transaction changed the schema;
// rows, what it wrote.
func (t *Tx) unseenLocks(ctx context.Context, called, schema bool, rows []rowChange) ([]string, error) {
	var seqs []uint32
	for _, r := range rows {
		if r.op == opInsert || r.op == opUpdate {
			if m := t.c.ts.byName[[2]string{r.schema, r.table}]; m != nil {
				seqs = append(seqs, m.seqs...)
			}
		}
	}
	hidden := called || schema || t.unseenLock
	if !hidden && !t.lockers.rules && !t.seqNamed && len(seqs) == 0 {
		return nil, nil
	}
	locks, err := t.readLocks(ctx, t.seqNamed, hidden, t.lockers.rules, seqs)
	if err == nil {
		err = t.checkSequenceValues(ctx, locks)
	}
	if err != nil || !locks.hidden {
		return nil, err
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

// hiddenLockers are what may lock rows where certa cannot see it: the
// client's functions whose text has a locking clause (also with comments
// between its words: the text is matched with its comments taken out as
// well), runs dynamic SQL
// (EXECUTE) or PREPAREs, or that are written in a language other than SQL
// and PL/pgSQL (trusted languages clients may use; C and internal
// functions are the server's and its extensions', made by a superuser);
// and rules (views' included) with a locking clause. Read again when the
// schema epoch moved: every applied schema change may have made one.
type hiddenLockers struct {
	epoch     uint64
	functions string // an oid[] literal
	rules     bool   // there is a locking rule
	// preparers are the client's functions that may PREPARE (their text
	// says so, or their language is not SQL or PL/pgSQL), an oid[]
	// literal: the reset after a transaction that called one drops the
	// statements it prepared (conn.resetSQL).
	preparers string
}

// hiddenLockersCache keeps the hiddenLockers of the latest epoch read.
type hiddenLockersCache struct {
	mu   sync.Mutex
	read bool
	h    hiddenLockers
}

const hiddenLockersSQL = `WITH f AS (SELECT p.oid, p.prosrc, g.lanname NOT IN ('sql', 'plpgsql', 'c', 'internal') AS other
		FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language g ON g.oid = p.prolang
		WHERE p.pronamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
			AND g.lanname NOT IN ('c', 'internal'))
	SELECT (SELECT coalesce(pg_catalog.array_agg(f.oid), '{}')::text FROM f
			WHERE f.other OR f.prosrc ~* '` + lockingClauseRE + `|\m(execute|prepare)\M'
				OR pg_catalog.regexp_replace(f.prosrc, '/\*.*?\*/|--[^\n]*', ' ', 'g') ~* '` + lockingClauseRE + `'),
		EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite r JOIN pg_catalog.pg_class c ON c.oid = r.ev_class
			WHERE r.oid >= 16384 -- not initdb's: pg_get_ruledef of its 140 rules cost 30 ms a read
				AND c.relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN ('pg_catalog', 'information_schema', 'certa'))
				AND pg_catalog.pg_get_ruledef(r.oid) ~* '` + lockingClauseRE + `'),
		(SELECT coalesce(pg_catalog.array_agg(f.oid), '{}')::text FROM f WHERE f.other OR f.prosrc ~* '\mprepare\M')`

// get returns the hidden lockers at schema epoch, read on conn (outside a
// transaction) if the schema changed since they were last read.
func (c *hiddenLockersCache) get(ctx context.Context, conn *pgconn.PgConn, epoch uint64) (hiddenLockers, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.read && c.h.epoch == epoch {
		return c.h, nil
	}
	r := conn.ExecParams(ctx, hiddenLockersSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return hiddenLockers{}, pgError(r.Err)
	}
	c.read, c.h = true, hiddenLockers{epoch: epoch, functions: string(r.Rows[0][0]), rules: string(r.Rows[0][1]) == "t",
		preparers: string(r.Rows[0][2])}
	return c.h, nil
}
