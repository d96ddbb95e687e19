package replica

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"certa/certify"
	"certa/writeset"

	"certa/engine"
	"certa/pgparse"
	"certa/sqlerr"
)

// Isolation levels. Every transaction runs on a snapshot and has its
// writes certified (snapshot isolation: PostgreSQL's REPEATABLE READ,
// which READ COMMITTED and READ UNCOMMITTED get too, being stronger). A
// SERIALIZABLE one (BEGIN ISOLATION LEVEL SERIALIZABLE, SET TRANSACTION,
// default_transaction_isolation) also has its reads certified: its write
// set carries the tables it read (engine.Tx.ReadTables), and it fails
// with 40001 if another transaction wrote one of them after its snapshot
// (certify's ReadChanged). Update transactions then serialize in log
// order; a serializable transaction that wrote nothing read a snapshot,
// which is a prefix of that order, and needs no check.

// serializableNow reports whether a statement run now runs serializable.
func (s *Session) serializableNow() bool {
	if s.inBlock {
		return s.txSerializable
	}
	return s.defaultSerializable
}

// beginIsolation sets the isolation of the block BEGIN st starts.
func (s *Session) beginIsolation(m pgparse.TxModes, ok bool) {
	s.txSerializable = s.defaultSerializable
	if ok && m.Isolation != "" {
		s.txSerializable = m.Isolation == "serializable"
	}
}

// trackReads makes tx, just begun, record its reads if it is
// serializable.
func (s *Session) trackReads(ctx context.Context, tx engine.Tx) error {
	if !s.serializableNow() {
		return nil
	}
	return tx.TrackReads(ctx)
}

// setTxIsolation sets the block's isolation level, as SET TRANSACTION
// ISOLATION LEVEL does: only before its first query. Outside a block it
// changes nothing (PostgreSQL warns).
func (s *Session) setTxIsolation(level string) error {
	if !s.inBlock {
		return nil
	}
	if serializable := level == "serializable"; serializable != s.txSerializable {
		if s.tx != nil {
			return sqlerr.New(sqlerr.ActiveTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		s.txSerializable = serializable
	}
	return nil
}

// isolationLevels are the levels PostgreSQL knows, as it writes them.
var isolationLevels = []string{"serializable", "repeatable read", "read committed", "read uncommitted"}

// isolationLevel reads a level as PostgreSQL does.
func isolationLevel(name, value string) (string, error) {
	v := strings.ToLower(strings.Join(strings.Fields(value), " "))
	for _, l := range isolationLevels {
		if v == l {
			return l, nil
		}
	}
	e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", name, value)
	e.Hint = "Available values: serializable, repeatable read, read committed, read uncommitted."
	return "", e
}

// isolationSetting is the parameter a serializable session's statements
// read where they read transaction_isolation (withIsolationShown): the
// PostgreSQL engine's own answers repeatable read, the level its
// transactions run at on the server (certification makes them
// serializable). engineCtx gives it to the engine.
const isolationSetting = "certa.transaction_isolation"

// withIsolationShown returns sql reading isolationSetting where it calls
// current_setting('transaction_isolation'), when the session runs
// serializable; sql itself otherwise.
func (s *Session) withIsolationShown(sql string) string {
	if !s.serializableNow() {
		return sql
	}
	out, _ := pgparse.RewriteSettingReads(sql, "transaction_isolation", isolationSetting)
	return out
}

// engineSettings returns the PostgreSQL settings the engine applies to the
// session's work: those it SET, and isolationSetting when it runs
// serializable.
func (s *Session) engineSettings() map[string]string {
	if !s.serializableNow() {
		return s.pg
	}
	m := make(map[string]string, len(s.pg)+1)
	for k, v := range s.pg {
		m[k] = v
	}
	m[isolationSetting] = "serializable"
	return m
}

// isolationShown is what SHOW transaction_isolation answers: the level in
// force (snapshot isolation is PostgreSQL's REPEATABLE READ).
func (s *Session) isolationShown() string {
	if s.serializableNow() {
		return "serializable"
	}
	return "repeatable read"
}

// readConflictError is the error of a write set whose serializable reads
// failed certification (certify.ReadChanged). It keeps the key to blame,
// so that the origin, which knows the exact keys a read filter was built
// from, can tell a false positive of the filter (explainReadConflict).
type readConflictError struct {
	err *sqlerr.Error
	res certify.Result
}

func (e *readConflictError) Error() string { return e.err.Error() }
func (e *readConflictError) Unwrap() error { return e.err }

func readConflict(res certify.Result) error {
	e := &sqlerr.Error{
		Code:    sqlerr.SerializationFailure,
		Message: "could not serialize access due to read/write dependencies among transactions",
		Hint:    "The transaction might succeed if retried.",
	}
	column, byIndex := writeset.IndexColumn(res.Table)
	switch {
	case byIndex:
		e.Detail = fmt.Sprintf("Another transaction, at seqno %d, after this transaction's snapshot, put a row of table %q into the range of its column %q that this transaction read (SERIALIZABLE).", res.ConflictSeqno, writeset.BaseTable(res.Table), column)
	case res.Key != "":
		e.Detail = fmt.Sprintf("A row of table %q that this transaction read (SERIALIZABLE) was written by another transaction at seqno %d, after this transaction's snapshot.", res.Table, res.ConflictSeqno)
	case res.Table == "":
		e.Detail = fmt.Sprintf("A schema change at seqno %d, after this transaction's snapshot, may have changed rows this transaction read (SERIALIZABLE).", res.ConflictSeqno)
	default:
		e.Detail = fmt.Sprintf("Table %q, which this transaction read (SERIALIZABLE) or locked rows of, was written by another transaction at seqno %d, after this transaction's snapshot.", res.Table, res.ConflictSeqno)
	}
	return &readConflictError{err: e, res: res}
}

// explainReadConflict returns err, the outcome of committing a write set
// whose keys read travelled as a filter built from filtered: when the
// filter alone failed it, on a key the transaction did not read, the abort
// is counted as the filter's false positive and its DETAIL says so.
func (n *Node) explainReadConflict(err error, filtered []writeset.Key) error {
	var rc *readConflictError
	if filtered == nil || !errors.As(err, &rc) || !rc.res.ViaFilter || !writeset.IsFilterFalsePositive(filtered, rc.res.Key) {
		return err
	}
	n.filterFalsePositives.Add(1)
	e := *rc.err
	e.Detail = fmt.Sprintf("A row of table %q was written by another transaction at seqno %d, after this transaction's snapshot; this transaction did not read it, but its %d rows read travelled as a Bloom filter that matched the row (a false positive, about %g%% of such rows).",
		writeset.BaseTable(rc.res.Table), rc.res.ConflictSeqno, len(filtered), 100*n.cfg.ReadFilterFPRate)
	return &e
}
