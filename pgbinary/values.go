// Package pgbinary reads and writes values in PostgreSQL's binary forms,
// by certa's types (result.Type): parameters and results in binary format,
// and COPY's binary format.
package pgbinary

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// pgEpoch is PostgreSQL's epoch for binary dates and timestamps.
var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// Decode reads raw, the binary form of a value of type typ (whose OID is
// oid), into the Go value certa carries for typ (result.Value).
func Decode(typ result.Type, oid uint32, raw []byte) (any, error) {
	switch typ {
	case result.Int8:
		if len(raw) == 8 {
			return int64(binary.BigEndian.Uint64(raw)), nil
		}
	case result.Int4:
		if len(raw) == 4 {
			return int64(int32(binary.BigEndian.Uint32(raw))), nil
		}
	case result.Int2:
		if len(raw) == 2 {
			return int64(int16(binary.BigEndian.Uint16(raw))), nil
		}
	case result.Float8:
		if len(raw) == 8 {
			return math.Float64frombits(binary.BigEndian.Uint64(raw)), nil
		}
	case result.Float4:
		if len(raw) == 4 {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(raw))), nil
		}
	case result.Bool:
		if len(raw) == 1 {
			return raw[0] != 0, nil
		}
	case result.Bytea:
		return append([]byte(nil), raw...), nil
	case result.Text:
		return string(raw), nil
	case result.JSON, result.JSONB:
		// Binary json is its text; jsonb's has a version byte first.
		// Read as the text form is (checked, jsonb written back as
		// PostgreSQL writes it).
		if typ == result.JSONB {
			if len(raw) < 1 || raw[0] != 1 {
				break
			}
			raw = raw[1:]
		}
		return pgtext.ParseValue(typ, string(raw))
	case result.UUID:
		if len(raw) == 16 {
			return formatUUID(raw), nil
		}
	case result.Date:
		if len(raw) == 4 {
			days := int32(binary.BigEndian.Uint32(raw))
			return pgtext.FormatTime(typ, pgEpoch.AddDate(0, 0, int(days))), nil
		}
	case result.Timestamp, result.Timestamptz, result.Time:
		if len(raw) == 8 {
			return pgtext.FormatTime(typ, pgEpoch.Add(time.Duration(int64(binary.BigEndian.Uint64(raw)))*time.Microsecond)), nil
		}
	case result.Numeric:
		return decodeNumeric(raw)
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "binary format for parameters of type OID %d is not supported; send it in text format", oid)
	}
	return nil, badBinary(oid, raw)
}

func badBinary(oid uint32, raw []byte) error {
	return sqlerr.New(sqlerr.InvalidBinaryRepresentation, "incorrect binary data format for type OID %d (%d bytes)", oid, len(raw))
}

func formatUUID(b []byte) string {
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// Append appends v as a value of type typ in its binary form. v's Go
// type may differ from typ's (SQLite columns are dynamically typed): it is
// converted. Types without a binary form of certa's are sent as text,
// which is their binary form (text, json, unknown).
func Append(dst []byte, typ result.Type, v result.Value) ([]byte, error) {
	switch typ {
	case result.Int8:
		n, err := toInt64(v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(dst, uint64(n)), nil
	case result.Int4:
		n, err := toInt64(v)
		if err == nil && (n < math.MinInt32 || n > math.MaxInt32) {
			err = outOfRange(n, "integer")
		}
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(n))), nil
	case result.Int2:
		n, err := toInt64(v)
		if err == nil && (n < math.MinInt16 || n > math.MaxInt16) {
			err = outOfRange(n, "smallint")
		}
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint16(dst, uint16(int16(n))), nil
	case result.Float8:
		f, err := toFloat64(v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f)), nil
	case result.Float4:
		f, err := toFloat64(v)
		if err != nil {
			return dst, err
		}
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(f))), nil
	case result.Bool:
		b, err := toBool(v)
		if err != nil {
			return dst, err
		}
		if b {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case result.Bytea:
		if b, ok := v.([]byte); ok {
			return append(dst, b...), nil
		}
		return pgtext.AppendValue(dst, v)
	case result.JSONB:
		return pgtext.AppendValue(append(dst, 1), v)
	case result.UUID:
		s, _ := pgtext.AppendValue(nil, v)
		b, err := hex.DecodeString(strings.ReplaceAll(strings.Trim(string(s), "{}"), "-", ""))
		if err != nil || len(b) != 16 {
			return dst, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", s)
		}
		return append(dst, b...), nil
	case result.Date, result.Timestamp, result.Timestamptz, result.Time:
		s, _ := pgtext.AppendValue(nil, v)
		t, err := pgtext.ParseTime(typ, string(s))
		if err != nil {
			return dst, err
		}
		if typ == result.Date {
			days := int32(math.Floor(t.Sub(pgEpoch).Hours() / 24))
			return binary.BigEndian.AppendUint32(dst, uint32(days)), nil
		}
		if typ == result.Time {
			day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, t.Location())
			return binary.BigEndian.AppendUint64(dst, uint64(t.Sub(day).Microseconds())), nil
		}
		return binary.BigEndian.AppendUint64(dst, uint64(t.Sub(pgEpoch).Microseconds())), nil
	case result.Numeric:
		s, _ := pgtext.AppendValue(nil, v)
		return appendNumeric(dst, string(s))
	}
	return pgtext.AppendValue(dst, v) // text, json, unknown: binary is the text
}

func outOfRange(n int64, typ string) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value %d is out of range for type %s", n, typ)
}

func toInt64(v result.Value) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<63 {
			return int64(v), nil
		}
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "value %v is not a valid bigint", v)
}

func toFloat64(v result.Value) (float64, error) {
	switch v := v.(type) {
	case float64:
		return v, nil
	case int64:
		return float64(v), nil
	case string:
		if f, err := pgtext.ParseFloat(v); err == nil {
			return f, nil
		}
	}
	return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "value %v is not a valid double precision", v)
}

func toBool(v result.Value) (bool, error) {
	switch v := v.(type) {
	case bool:
		return v, nil
	case int64:
		return v != 0, nil
	case float64:
		return v != 0, nil
	case string:
		b, err := pgtext.ParseValue(result.Bool, v)
		if err == nil {
			return b.(bool), nil
		}
	}
	return false, sqlerr.New(sqlerr.InvalidTextRepresentation, "value %v is not a valid boolean", v)
}
