package replica

import (
	"context"
	"strings"

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
