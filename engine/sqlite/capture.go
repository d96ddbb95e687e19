package sqlite

import (
	"bytes"
	"context"
	"fmt"

	"certa/sqlerr"
	"certa/writeset"
)

// WriteSet returns what the transaction changed, captured by its SQLite
// session as a changeset, or nil if it changed nothing.
func (tx *Tx) WriteSet() (*writeset.WriteSet, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return nil, err
	}
	if tx.img != nil {
		return tx.imagedWriteSet()
	}
	if tx.parked && (tx.spill == nil && tx.schema == nil || tx.fkWrites) {
		// Parked to be re-run: re-run it, to capture what it writes now.
		// (Parent rows of a Tx with foreign keys are looked up in its own
		// state, fkeys.go.)
		if err := tx.unpark(context.Background()); err != nil {
			return nil, tx.classify(err)
		}
	}
	if !tx.parked && tx.sess != nil {
		// The session's changeset compares the rows with what they were:
		// after its SQLite transaction ended, it would leave out writes the
		// client was told succeeded.
		if err := tx.conn.requireTx(); err != nil {
			tx.fail(errNoTransaction)
			return nil, err
		}
	}
	var changes []byte
	switch {
	case tx.parked && tx.schema == nil:
		changes = tx.spill // no need to take the lock again
	case tx.sess != nil && tx.schema == nil:
		var buf bytes.Buffer
		if err := tx.sess.WriteChangeset(&buf); err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
		}
		changes = buf.Bytes()
		if cap(changes) > len(changes)+len(changes)/8 {
			// The buffer grew by doubling: a large write set would keep
			// up to twice its size live until it has committed.
			changes = bytes.Clone(changes)
		}
	}
	if tx.schema == nil && len(changes) == 0 && len(tx.locked) == 0 && len(tx.keyRows) == 0 && len(tx.updatedKeys) == 0 {
		return nil, nil
	}
	if tx.tempChanged {
		return nil, errTempMix() // what it did to them would be rolled back
	}
	ws := &writeset.WriteSet{Snapshot: tx.snapshot.Load(), Changes: changes}
	if tx.schema != nil {
		if err := tx.schemaWriteSet(ws); err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
		}
	}
	if err := changesetKeys(ws, tx.rowidTable()); err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
	}
	if err := tx.indexKeys(ws); err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
	}
	if tx.fkWrites {
		if err := tx.foreignKeyRows(ws); err != nil {
			return nil, tx.classify(err)
		}
	}
	// Rows read FOR UPDATE certify as if written (forupdate.go).
	ws.Keys = append(ws.Keys, tx.locked...)
	ws.Tables = append(ws.Tables, tx.lockedIn...)
	ws.Keys = append(ws.Keys, tx.keyRows...)
	ws.Tables = append(ws.Tables, tx.keyRowsIn...)
	// Rows UPDATEs left as they were certify too (touched.go).
	for _, k := range tx.updatedKeys {
		ws.Keys = append(ws.Keys, k)
		ws.Tables = append(ws.Tables, k.Table())
	}
	ws.Normalize()
	return ws, nil
}

// imagedWriteSet is WriteSet in image mode: no lock, no re-run.
func (tx *Tx) imagedWriteSet() (*writeset.WriteSet, error) {
	keys, tables := tx.img.keys()
	if len(keys) == 0 {
		return nil, nil
	}
	ws := &writeset.WriteSet{Snapshot: tx.snapshot.Load(), Changes: tx.img.changeset()}
	if err := changesetKeys(ws, nil); err != nil { // images are of tables with a primary key
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
	}
	if err := tx.indexKeys(ws); err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
	}
	// Rows an UPDATE left as they were certify too.
	ws.Keys = append(ws.Keys, keys...)
	ws.Tables = append(ws.Tables, tables...)
	ws.Normalize()
	return ws, nil
}

// rowidTable returns what tells changesetKeys the tables without a primary
// key, or nil if the Tx wrote none. tx.mu is held.
func (tx *Tx) rowidTable() func(table string) (bool, error) {
	if !tx.rowidWrites && !tx.fkActions {
		return nil
	}
	c := tx.conn
	return func(table string) (bool, error) {
		if err := c.refreshSchema(); err != nil {
			return false, err
		}
		ti, err := c.table(table)
		return err == nil && ti.rowid != "", err
	}
}

// changesetKeys sets ws.Keys and ws.Tables from ws.Changes: one key per
// changed row, from the table name and the primary-key values (the old ones
// for a delete or update, the new ones for an insert; SQLite records a
// primary-key change as a delete and an insert). rowidTable, if not nil,
// tells the tables without a primary key, whose inserts have no key
// (rowid.go).
func changesetKeys(ws *writeset.WriteSet, rowidTable func(table string) (bool, error)) error {
	var pk []any
	var lastTable string
	var rowid bool
	return forEachRowChange(ws, func(ch *rowChange) error {
		if rowidTable != nil && ch.table != lastTable {
			var err error
			if rowid, err = rowidTable(ch.table); err != nil {
				return err
			}
			lastTable = ch.table
		}
		if n := len(ws.Tables); n == 0 || ws.Tables[n-1] != ch.table {
			ws.Tables = append(ws.Tables, ch.table) // a changeset groups a table's rows (Normalize dedups)
		}
		if rowid && ch.op == opInsert {
			return nil
		}
		vals := ch.old
		if ch.op == opInsert {
			vals = ch.new
		}
		pk = pk[:0]
		for i, isPK := range ch.pk {
			if !isPK {
				continue
			}
			kv, err := keyValue(vals[i])
			if err != nil {
				return fmt.Errorf("table %s: %w", ch.table, err)
			}
			pk = append(pk, kv)
		}
		ws.Keys = append(ws.Keys, writeset.EncodeKey(ch.table, pk...))
		return nil
	})
}

// keyValue converts a primary-key value to the Go types writeset.EncodeKey
// takes.
func keyValue(v rowValue) (any, error) {
	switch v.kind {
	case kindInt:
		return v.i, nil
	case kindFloat:
		return v.f, nil
	case kindText:
		return string(v.bytes), nil
	case kindBlob:
		return bytes.Clone(v.bytes), nil
	case kindNull:
		return nil, nil
	default:
		return nil, fmt.Errorf("primary-key value of kind %d", v.kind)
	}
}
