package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/result"
	"certa/sqlerr"
)

// textArgs encodes a statement's arguments in PostgreSQL's text format,
// with the OID of each that has an unambiguous type (0: PostgreSQL infers
// it from the statement, as for a client's untyped parameter), except a
// result.WireParam, passed as the client sent it, of its type (formats is
// one per argument if one is binary, else nil: all text).
func textArgs(args []any) (vals [][]byte, oids []uint32, formats []int16, err error) {
	vals = make([][]byte, len(args))
	oids = make([]uint32, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case result.WireParam:
			vals[i], oids[i] = v.Data, v.OID
			if v.Format != 0 {
				if formats == nil {
					formats = make([]int16, len(args))
				}
				formats[i] = v.Format
			}
		case nil:
		case int64:
			vals[i] = strconv.AppendInt(nil, v, 10)
		case float64:
			vals[i] = strconv.AppendFloat(nil, v, 'g', -1, 64)
		case string:
			vals[i] = []byte(v)
		case []byte:
			vals[i] = []byte(`\x` + hex.EncodeToString(v))
			oids[i] = 17 // bytea: its text form is only bytea's
		case bool:
			vals[i] = []byte(strconv.FormatBool(v))
		default:
			return nil, nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "certa: parameter $%d has an unsupported Go type %T", i+1, a)
		}
	}
	return vals, oids, formats, nil
}

// columns converts PostgreSQL's field descriptions to result columns.
// With own, every column has its own type (result.TypeOf) and modifier:
// its values pass through as Wire values. Else a type certa has no Type
// for is reported as the nearest it has, or text (its values are then
// certa's, converted from the text form).
func columns(fields []pgconn.FieldDescription, own bool) []result.Column {
	cols := make([]result.Column, len(fields))
	for i, f := range fields {
		t, _ := result.TypeForOID(f.DataTypeOID)
		if own {
			t = result.TypeOf(f.DataTypeOID)
		}
		cols[i] = result.Column{Name: f.Name, Type: t}
		if (own || t == result.Numeric) && f.TypeModifier > 0 {
			cols[i].Mod = f.TypeModifier
		}
	}
	return cols
}

// value converts one text-format result value of a column of type t.
func value(t result.Type, b []byte) (result.Value, error) {
	if b == nil {
		return nil, nil
	}
	switch {
	case t.IsInteger():
		return strconv.ParseInt(string(b), 10, 64)
	case t.IsFloat():
		switch string(b) {
		case "Infinity":
			return strconv.ParseFloat("+Inf", 64)
		case "-Infinity":
			return strconv.ParseFloat("-Inf", 64)
		}
		return strconv.ParseFloat(string(b), 64)
	case t == result.Bool:
		return string(b) == "t", nil
	case t == result.Bytea:
		s, ok := strings.CutPrefix(string(b), `\x`)
		if !ok {
			return nil, fmt.Errorf("bytea value not in hex form")
		}
		return hex.DecodeString(s)
	}
	return string(b), nil
}

// pgError converts an error from PostgreSQL to the error a client gets:
// the server's own SQLSTATE and message, or 08006 for a lost connection.
// notLocal reports whether err is the event triggers' refusal of a
// client's schema statement that changes a replicated object
// (codeNotLocal).
func notLocal(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeNotLocal
}

// inSession reports whether err is certa's trigger's refusal of a
// statement that must run in the client's session (codeInSession).
func inSession(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == codeInSession
}

func pgError(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		code := pe.Code
		if code == codeNotLocal || code == codeInSession {
			code = sqlerr.FeatureNotSupported // certa's own, for Tx.ExecLocal (notLocal) and CheckDDL
		}
		e := noticeError(pe)
		e.Code, e.Severity, e.Err = code, "", err
		return e
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	// The statement's context ended before PostgreSQL answered (pgconn
	// may give up on the connection rather than wait for the cancel).
	switch {
	case errors.Is(err, context.Canceled):
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to user request")
	case errors.Is(err, context.DeadlineExceeded):
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	return sqlerr.Wrap(err, "08006", "certa: lost the connection to the node's PostgreSQL: %v", err)
}
