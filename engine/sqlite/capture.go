package sqlite

import (
	"bytes"
	"fmt"

	"zombiezen.com/go/sqlite"

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
	var changes []byte
	switch {
	case tx.parked:
		changes = tx.spill // no need to take the lock again
	case tx.sess != nil:
		var buf bytes.Buffer
		if err := tx.sess.WriteChangeset(&buf); err != nil {
			return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
		}
		changes = buf.Bytes()
	}
	if len(changes) == 0 {
		return nil, nil
	}
	ws := &writeset.WriteSet{Snapshot: tx.snapshot.Load(), Changes: changes}
	if err := changesetKeys(ws); err != nil {
		return nil, sqlerr.Wrap(err, sqlerr.Internal, "capture write set: %v", err)
	}
	ws.Normalize()
	return ws, nil
}

// changesetKeys sets ws.Keys and ws.Tables from ws.Changes: one key per
// changed row, from the table name and the primary-key values (the old ones
// for a delete or update, the new ones for an insert; SQLite records a
// primary-key change as a delete and an insert).
func changesetKeys(ws *writeset.WriteSet) (err error) {
	it, err := sqlite.NewChangesetIterator(bytes.NewReader(ws.Changes))
	if err != nil {
		return err
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	var pk []any
	for {
		more, err := it.Next()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
		op, err := it.Operation()
		if err != nil {
			return err
		}
		cols, err := it.PrimaryKey()
		if err != nil {
			return err
		}
		pk = pk[:0]
		for i, isPK := range cols {
			if !isPK {
				continue
			}
			var v sqlite.Value
			if op.Type == sqlite.OpInsert {
				v, err = it.New(i)
			} else {
				v, err = it.Old(i)
			}
			if err != nil {
				return err
			}
			kv, err := keyValue(v)
			if err != nil {
				return fmt.Errorf("table %s: %w", op.TableName, err)
			}
			pk = append(pk, kv)
		}
		ws.Keys = append(ws.Keys, writeset.EncodeKey(op.TableName, pk...))
		ws.Tables = append(ws.Tables, op.TableName)
	}
}

// keyValue converts a primary-key value to the Go types writeset.EncodeKey
// takes.
func keyValue(v sqlite.Value) (any, error) {
	switch v.Type() {
	case sqlite.TypeInteger:
		return v.Int64(), nil
	case sqlite.TypeFloat:
		return v.Float(), nil
	case sqlite.TypeText:
		return v.Text(), nil
	case sqlite.TypeBlob:
		return bytes.Clone(v.Blob()), nil
	case sqlite.TypeNull:
		return nil, nil
	default:
		return nil, fmt.Errorf("unexpected primary-key value type %v", v.Type())
	}
}
