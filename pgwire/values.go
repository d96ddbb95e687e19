package pgwire

import (
	"certa/pgbinary"
	"certa/pgtext"
	"certa/result"
)

// This file converts values between the wire (text or binary format, by
// type OID) and the Go values of result.Value.

// decodeParam turns a Bind parameter of type oid in format (0 text, 1
// binary) into a Go value for the session. raw nil is NULL.
func decodeParam(oid uint32, format int16, raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	typ, known := result.TypeForOID(oid)
	if format == 0 {
		if !known {
			typ = result.TypeOf(oid) // text[] is read into its one form
		}
		return pgtext.ParseValue(typ, string(raw))
	}
	if !known {
		// Its binary form is only its type's: passed through as it is.
		return result.WireParam{OID: oid, Format: 1, Data: append([]byte(nil), raw...)}, nil
	}
	return pgbinary.Decode(typ, oid, raw)
}

// appendValue appends v as a value of type typ in format (0 text, 1
// binary).
func appendValue(dst []byte, typ result.Type, format int16, v result.Value) ([]byte, error) {
	if format == 0 {
		return pgtext.AppendValue(dst, v)
	}
	return pgbinary.Append(dst, typ, v)
}
