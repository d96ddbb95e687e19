package pgtext

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"certa/result"
	"certa/sqlerr"
)

// Values in their text forms, by certa's types: what a parameter or a COPY
// field in text form means, and how a result value is printed.

// ParseValue reads s, the text form of a value of type typ, into the Go
// value certa carries for typ (result.Value): integers, floats and
// booleans parsed, dates and times written in PostgreSQL's output form,
// bytea's hex form decoded, json checked and jsonb written as PostgreSQL
// writes it back; other types keep their text.
func ParseValue(typ result.Type, s string) (any, error) {
	switch {
	case typ.IsInteger():
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bigint: %q", s)
		}
		return v, nil
	case typ.IsFloat():
		v, err := ParseFloat(s)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type double precision: %q", s)
		}
		return v, nil
	case typ == result.Bool:
		if v, ok := ParseBool(s); ok {
			return v, nil
		}
		return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", s)
	case typ == result.Date || typ == result.Time || typ == result.Timestamp || typ == result.Timestamptz:
		// Stored in PostgreSQL's output form, so that it reads back as
		// drivers expect whatever form they sent.
		t, err := ParseTime(typ, s)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", TimeTypeName(typ), s)
		}
		return FormatTime(typ, t), nil
	case typ == result.Bytea:
		return ParseBytea(s)
	case typ == result.JSON:
		if !json.Valid([]byte(s)) {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		}
	case typ == result.JSONB:
		form, err := FormatJSONB(s)
		if se := (*sqlerr.Error)(nil); errors.As(err, &se) {
			return nil, se
		} else if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		}
		return form, nil
	case typ == TextArray || typ == VarcharArray:
		return FormatTextArray(s)
	}
	return s, nil
}

// ParseBytea reads bytea's text input: the hex form (\x…) or the escape
// form (\\ a backslash, \ooo an octal byte, any other byte itself).
func ParseBytea(s string) ([]byte, error) {
	if strings.HasPrefix(s, `\x`) {
		b, err := hex.DecodeString(s[2:])
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid hexadecimal data in bytea value")
		}
		return b, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			b = append(b, '\\')
			i++
		case i+3 < len(s) && isOctal(s[i+1]) && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			b = append(b, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
		default:
			return nil, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return b, nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// errUnsupportedValue is returned by AppendValue for a Go type outside
// result.Value's set.
type errUnsupportedValue struct{ v any }

func (e errUnsupportedValue) Error() string {
	return fmt.Sprintf("unsupported value type %T", e.v)
}

// AppendValue appends v (a result.Value) in PostgreSQL's text output format (nil appends
// nothing; the caller sends NULL).
func AppendValue(dst []byte, v result.Value) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return dst, nil
	case int64:
		return strconv.AppendInt(dst, v, 10), nil
	case float64:
		return AppendFloat8(dst, v), nil
	case string:
		return append(dst, v...), nil
	case []byte:
		// bytea_output = hex
		dst = append(dst, '\\', 'x')
		return hex.AppendEncode(dst, v), nil
	case bool:
		if v {
			return append(dst, 't'), nil
		}
		return append(dst, 'f'), nil
	default:
		return dst, errUnsupportedValue{v}
	}
}

// AppendFloat8 formats f as PostgreSQL's float8out does (12 and later, with
// the default extra_float_digits = 1): the shortest decimal that reads back
// as f, in fixed notation when the decimal exponent is in [-4, 15), else as
// d.ddde±XX. (strconv's shortest 'g' switches to exponents already at
// 1e+06, where PostgreSQL prints 1000000, so the choice is made here.)
func AppendFloat8(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	exp := decimalExponent(f)
	if exp >= -4 && exp < 15 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'e', -1, 64)
}

// decimalExponent returns the exponent of f's shortest decimal form in
// scientific notation (d.ddd × 10^exp), f being finite and non-zero.
func decimalExponent(f float64) int {
	var b [32]byte
	s := strconv.AppendFloat(b[:0], f, 'e', -1, 64)
	i := len(s) - 1
	for s[i] != 'e' {
		i--
	}
	exp, _ := strconv.Atoi(string(s[i+1:]))
	return exp
}
