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

// txModes are a transaction's characteristics as the client asked for
// them (BEGIN, SET TRANSACTION, the default_transaction_* settings), and
// as SHOW and current_setting answer. Every level runs at least as
// snapshot isolation, as PostgreSQL runs READ UNCOMMITTED as READ
// COMMITTED and still shows the level asked for.
type txModes struct {
	isolation  string // as PostgreSQL writes it; "": read committed
	readOnly   bool
	deferrable bool
}

// shownModes are the parameters SHOW answers with txModes.
var shownModes = []string{"transaction_isolation", "transaction_read_only", "transaction_deferrable"}

// defaultModeSettings are the settings txModes.setDefault reads.
var defaultModeSettings = []string{"default_transaction_isolation", "default_transaction_read_only", "default_transaction_deferrable"}

// setDefault sets the mode of the default_transaction_* setting name to
// value, in PostgreSQL's form ("": the default).
func (m *txModes) setDefault(name, value string) {
	switch name {
	case "default_transaction_isolation":
		m.isolation = value
	case "default_transaction_read_only":
		m.readOnly = value == "on"
	case "default_transaction_deferrable":
		m.deferrable = value == "on"
	}
}

func (m txModes) serializable() bool { return m.isolation == "serializable" }

// level is the isolation level as SHOW transaction_isolation says it.
func (m txModes) level() string {
	if m.isolation == "" {
		return "read committed"
	}
	return m.isolation
}

// modesNow are the modes a statement run now runs with.
func (s *Session) modesNow() txModes {
	if s.inBlock {
		return s.modes
	}
	return s.defaultModes
}

// serializableNow reports whether a statement run now runs serializable.
func (s *Session) serializableNow() bool { return s.modesNow().serializable() }

// beginModes sets the modes of the block BEGIN starts, with modes m (if
// ok) over the session's defaults.
func (s *Session) beginModes(m pgparse.TxModes, ok bool) {
	s.modes = s.defaultModes
	if !ok {
		return
	}
	if m.Isolation != "" {
		s.modes.isolation = m.Isolation
	}
	if m.ReadOnly != nil {
		s.modes.readOnly = *m.ReadOnly
	}
	if m.Deferrable != nil {
		s.modes.deferrable = *m.Deferrable
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
	if level != s.modes.level() {
		if s.tx != nil {
			return sqlerr.New(sqlerr.ActiveTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
		}
		s.modes.isolation = level
	}
	return nil
}

// setTxDeferrable sets whether the block is DEFERRABLE, as SET
// TRANSACTION does: only before its first query. Outside a block it
// changes nothing (PostgreSQL warns).
func (s *Session) setTxDeferrable(deferrable bool) error {
	if !s.inBlock || deferrable == s.modes.deferrable {
		return nil
	}
	if len(s.savepoints) > 0 {
		return sqlerr.New(sqlerr.ActiveTransaction, "SET TRANSACTION [NOT] DEFERRABLE cannot be called within a subtransaction")
	}
	if s.tx != nil {
		return sqlerr.New(sqlerr.ActiveTransaction, "SET TRANSACTION [NOT] DEFERRABLE must be called before any query")
	}
	s.modes.deferrable = deferrable
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

// withModesShown returns sql with its calls of current_setting of the
// transaction's characteristics answering with the session's modes
// (txModes): the PostgreSQL engine's backend runs every transaction at
// REPEATABLE READ, and its reads READ ONLY. sql itself when it reads none.
func (s *Session) withModesShown(sql string) string {
	if !s.node.engine.RunsPostgreSQL() {
		return sql
	}
	m := s.modesNow()
	out, _ := pgparse.RewriteSettingReads(sql, "certa.current_setting", map[string]string{
		"transaction_isolation": m.level(), "transaction_read_only": onOff(s.readOnlyNow()),
		"transaction_deferrable": onOff(m.deferrable)})
	return out
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
