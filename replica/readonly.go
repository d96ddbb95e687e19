package replica

import (
	"certa/pgtext"
	"context"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Read-only transactions, as PostgreSQL has them. A block is read-only
// when BEGIN (START TRANSACTION) says READ ONLY, or says nothing and
// default_transaction_read_only is on (SET, SET SESSION CHARACTERISTICS
// AS TRANSACTION, the startup packet); SET TRANSACTION READ ONLY (or SET
// transaction_read_only) makes the block read-only from then on. An
// autocommit statement is read-only when the default is. In a read-only
// transaction the engine refuses writes and row locks
// (engine.Tx.SetReadOnly) and schema statements are refused here, with
// 25006 and PostgreSQL's message: nothing is written, so nothing is
// certified, and such a transaction never fails with 40001.

// readOnlyNow reports whether a statement run now runs read-only.
func (s *Session) readOnlyNow() bool {
	if s.inBlock {
		return s.modes.readOnly
	}
	return s.defaultModes.readOnly
}

// beginReadOnly sets whether the block BEGIN starts, with modes m (if
// ok), is read-only.
func (s *Session) beginReadOnly(m pgparse.TxModes, ok bool) {
	s.modes.readOnly = s.defaultModes.readOnly
	if ok && m.ReadOnly != nil {
		s.modes.readOnly = *m.ReadOnly
	}
}

// readOnlyTx makes tx, just begun, read-only if statements now run so.
func (s *Session) readOnlyTx(ctx context.Context, tx engine.Tx) error {
	if !s.readOnlyNow() {
		return nil
	}
	return tx.SetReadOnly(ctx)
}

// errReadOnly refuses what in a read-only transaction, as PostgreSQL does.
func errReadOnly(what string) error {
	return sqlerr.New(sqlerr.ReadOnlyTransaction, "cannot execute %s in a read-only transaction", what)
}

// setTxModes runs SET TRANSACTION and SET SESSION CHARACTERISTICS AS
// TRANSACTION: their isolation level (isolation.go) and read-only mode.
func (s *Session) setTxModes(ctx context.Context, m pgparse.TxModes, w result.Writer) error {
	if m.Of == "transaction" && !s.inBlock {
		warnNoBlock(ctx, "SET TRANSACTION")
	}
	if m.Isolation != "" {
		var err error
		if m.Of == "session" {
			err = s.set(ctx, newStatement("SET default_transaction_isolation = '"+m.Isolation+"'"), result.Discard)
		} else {
			err = s.setTxIsolation(m.Isolation)
		}
		if err != nil {
			return err
		}
	}
	if m.ReadOnly != nil {
		var err error
		if m.Of == "session" {
			err = s.set(ctx, newStatement("SET default_transaction_read_only = "+onOff(*m.ReadOnly)), result.Discard)
		} else {
			err = s.setTxReadOnly(ctx, *m.ReadOnly)
		}
		if err != nil {
			return err
		}
	}
	if m.Deferrable != nil {
		var err error
		if m.Of == "session" {
			err = s.set(ctx, newStatement("SET default_transaction_deferrable = "+onOff(*m.Deferrable)), result.Discard)
		} else {
			err = s.setTxDeferrable(*m.Deferrable)
		}
		if err != nil {
			return err
		}
	}
	return w.Complete("SET")
}

// setTxReadOnly makes the block read-only or read-write, as SET
// TRANSACTION does. Outside a block it changes nothing (PostgreSQL
// warns).
func (s *Session) setTxReadOnly(ctx context.Context, readOnly bool) error {
	switch {
	case !s.inBlock:
		return nil
	case readOnly:
		s.modes.readOnly = true
		if s.tx != nil {
			return s.tx.SetReadOnly(ctx)
		}
		return nil
	case !s.modes.readOnly:
		return nil
	case len(s.savepoints) > 0:
		return sqlerr.New(sqlerr.ActiveTransaction, "cannot set transaction read-write mode inside a read-only transaction")
	case s.tx != nil:
		return sqlerr.New(sqlerr.ActiveTransaction, "transaction read-write mode must be set before any query")
	}
	s.modes.readOnly = false
	return nil
}

// parseBool reads a Boolean parameter's value as PostgreSQL does (on,
// off, true, false, yes, no, 1, 0, and unique prefixes of the words).
func parseBool(name, value string) (bool, error) {
	if b, ok := pgtext.ParseBool(value); ok {
		return b, nil
	}
	return false, sqlerr.New(sqlerr.InvalidParameterValue, "parameter %q requires a Boolean value", name)
}

// onOff is PostgreSQL's text of a Boolean parameter.
func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
