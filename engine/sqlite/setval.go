package sqlite

import (
	"math"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// setval, currval and lastval (nextval is in sequence.go).
//
// setval(sequence, value [, is_called]), as pg_dump ends every restore
// of a sequence. The sequence's row in _certa_sequences says where the
// next reservation starts (sequence.go); setval moves it there, in the
// statement's transaction, whose write set replicates it like any row.
// Nodes may hold blocks reserved before, whose values may lie below the
// new one: setval also counts the row's created up by one, and each node,
// applying it, drops the blocks of the sequence's former created
// (sequences.load) and reserves again from the new value. (created is the
// seqno of the statement that made the sequence: one more stays below the
// seqno of any later statement that could make it again.)
//
// A statement that names setval is a write of _certa_sequences
// (prepareCached), so that it runs in a transaction holding the lock, with
// a session that records the row. Unlike PostgreSQL's, the change is
// transactional: it is gone if the transaction rolls back.

// sequencesTable is the table that holds the sequences.
const sequencesTable = "_certa_sequences"

// registerSetval makes setval on c set e's sequences. Failures are kept
// on c (funcErr), as for nextval.
func registerSetval(c *conn) error {
	fail := func(err *sqlerr.Error) (sqlite.Value, error) {
		if c.funcErr == nil {
			c.funcErr = err
		}
		return sqlite.Value{}, nil
	}
	return c.c.CreateFunction("setval", &sqlite.FunctionImpl{
		NArgs: -1,
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if len(args) != 2 && len(args) != 3 {
				return fail(sqlerr.New(sqlerr.UndefinedFunction, "function setval with %d arguments does not exist", len(args)))
			}
			for _, a := range args {
				if a.Type() == sqlite.TypeNull {
					return sqlite.Value{}, nil // strict, as in PostgreSQL
				}
			}
			if args[1].Type() != sqlite.TypeInteger {
				return fail(sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bigint: %q", args[1].Text()))
			}
			name, v := sequenceName(args[0].Text()), args[1].Int64()
			called := len(args) < 3 || args[2].Int64() != 0
			var max int64
			found := false
			restore := c.internal()
			defer restore()
			err := c.execResult("SELECT maxval FROM "+sequencesTable+" WHERE name = ?", func(s *sqlite.Stmt) {
				max, found = s.ColumnInt64(0), true
			}, name)
			switch {
			case err != nil:
				return fail(mapErr(err).(*sqlerr.Error))
			case !found:
				return fail(sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name))
			case v > max:
				return fail(sqlerr.New(sqlerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence %q (..%d)", v, name, max))
			}
			next := v
			if called && v < math.MaxInt64 {
				next = v + 1 // past max when v is max: the sequence is then used up
			}
			if err := c.exec("UPDATE "+sequencesTable+" SET reserved = ?, created = created + 1 WHERE name = ?", next, name); err != nil {
				return fail(mapErr(err).(*sqlerr.Error))
			}
			return sqlite.IntegerValue(v), nil
		},
	})
}

// took records, for currval and lastval, that the session using c took v
// from sequence name.
func (c *conn) took(name string, v int64) {
	if c.lastValues != nil {
		c.lastValues.Took(name, v)
	}
}

// registerCurrval makes currval(sequence) and lastval() on c return what
// the session using it took last (conn.lastValues), as PostgreSQL's do:
// 55000 before it took any.
func (e *Engine) registerCurrval(c *conn) error {
	fail := func(err *sqlerr.Error) (sqlite.Value, error) {
		if c.funcErr == nil {
			c.funcErr = err
		}
		return sqlite.Value{}, nil
	}
	// AllowIndirect: a column default may call them (DEFAULT
	// currval('parent_id_seq')), as it may nextval.
	err := c.c.CreateFunction("currval", &sqlite.FunctionImpl{
		NArgs:         1,
		AllowIndirect: true,
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if args[0].Type() == sqlite.TypeNull {
				return sqlite.Value{}, nil
			}
			name := sequenceName(args[0].Text())
			if !e.seqs.knows(name) && !c.newSeqs[name] {
				return fail(sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name))
			}
			if c.lastValues != nil {
				if v, ok := c.lastValues.ByName[name]; ok {
					return sqlite.IntegerValue(v), nil
				}
			}
			return fail(sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "currval of sequence %q is not yet defined in this session", name))
		},
	})
	if err != nil {
		return err
	}
	return c.c.CreateFunction("lastval", &sqlite.FunctionImpl{
		NArgs:         0,
		AllowIndirect: true,
		Scalar: func(_ sqlite.Context, _ []sqlite.Value) (sqlite.Value, error) {
			if c.lastValues == nil || !c.lastValues.Any {
				return fail(sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session"))
			}
			return sqlite.IntegerValue(c.lastValues.Last), nil
		},
	})
}
