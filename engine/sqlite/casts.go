package sqlite

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// Casts. SQLite's CAST(x AS name) takes any name and decides by substrings
// of it: CAST('2024-01-01 10:00:00+02' AS timestamptz) is 2024 and
// CAST('12abc' AS integer) is 12, where PostgreSQL gives a timestamp and
// an error. So before a statement reaches SQLite, each cast of it (CAST
// or ::) is written as pg_cast(expr, 'kind'[, modifiers]), which does what
// PostgreSQL's cast to that type does, or the statement is refused: 0A000
// for a PostgreSQL type certa cannot cast to, 42704 for a name that is no
// PostgreSQL type (pgparse.CastKind). Queries and data changes get this
// from pgparse's SQLite printer; schema statements, which it does not
// print yet, from rewriteCasts.

// castFunction is the SQL function casts become.
const castFunction = "pg_cast"

// castTarget is what a CAST's type names: a kind of pgparse.CastKind,
// with the type's modifiers.
type castTarget struct {
	kind string
	mods []int64
	// from is what the printer knew of the argument's type where SQLite's
	// value does not say it (pgparse.castSource, or registerCastKind
	// for a column's): "bool", "float", "float8" or "".
	from string
}

// rewriteCasts returns sql with every CAST rewritten to pg_cast, or the
// refusal of a cast certa cannot do. Text PostgreSQL's scanner cannot read
// is returned unchanged (SQLite then says what it makes of it).
func rewriteCasts(sql string) (string, error) {
	if !hasKeyword(sql, "CAST") {
		return sql, nil
	}
	casts, ok := pgparse.FindCasts(sql)
	if !ok || len(casts) == 0 {
		return sql, nil
	}
	var b strings.Builder
	last := 0
	for _, c := range casts {
		kind, mods, err := pgparse.CastKind(c.Type)
		if err != nil {
			return "", err
		}
		target := castTarget{kind: kind, mods: mods}
		expr, err := rewriteCasts(sql[c.Expr.Start:c.Expr.End])
		if err != nil {
			return "", err
		}
		b.WriteString(sql[last:c.Start])
		fmt.Fprintf(&b, "%s(%s, '%s'", castFunction, expr, target.kind)
		for _, m := range target.mods {
			fmt.Fprintf(&b, ", %d", m)
		}
		b.WriteString(")")
		last = c.End
	}
	b.WriteString(sql[last:])
	return b.String(), nil
}

// registerCast makes pg_cast on c. A failure is kept on c (funcErr) and the
// cast returns NULL, as nextval does (see registerNextval): the statement
// that ran it fails with it.
func registerCast(c *conn) error {
	return c.c.CreateFunction(castFunction, &sqlite.FunctionImpl{
		NArgs:         -1,
		Deterministic: true,
		AllowIndirect: true, // defaults and CHECK constraints of PostgreSQL DDL
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if len(args) < 2 {
				return sqlite.Value{}, nil
			}
			target := castTarget{kind: args[1].Text()}
			target.kind, target.from, _ = strings.Cut(target.kind, ":") // pgparse.castSource
			for _, a := range args[2:] {
				target.mods = append(target.mods, a.Int64())
			}
			v, err := castValue(args[0], target)
			if err != nil {
				if se, ok := err.(*sqlerr.Error); ok {
					in := constantInput{}
					if args[0].Type() == sqlite.TypeText {
						in = constantInput{set: true, kind: target.kind, value: args[0].Text()}
					}
					c.failInput(se, in)
				}
				return sqlite.Value{}, nil
			}
			return v, nil
		},
	})
}

// float8Input reads s as float8's input function does, with its errors.
func float8Input(s string) (float64, *sqlerr.Error) {
	f, err := pgtext.ParseFloat(s)
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	// Past the range, or so small it became 0 (strtod's ERANGE, which
	// PostgreSQL's input refuses).
	if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && ne.Err == strconv.ErrRange ||
		err == nil && f == 0 && strings.ContainsAny(mantissa, "123456789") {
		return 0, sqlerr.New(sqlerr.NumericValueOutOfRange, "%q is out of range for type double precision", s)
	} else if err != nil {
		return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type double precision: %q", s)
	}
	return f, nil
}

// castValue is PostgreSQL's cast of v to target. SQLite's values carry no
// PostgreSQL type: a REAL is taken as numeric (the type of PostgreSQL's
// literals with a fraction), so casts to integer round halves away from
// zero, as numeric's do.
func castValue(v sqlite.Value, target castTarget) (sqlite.Value, error) {
	if v.Type() == sqlite.TypeNull {
		return v, nil
	}
	switch target.kind {
	case "int2", "int4", "int8":
		bits := map[string]int{"int2": 16, "int4": 32, "int8": 64}[target.kind]
		if target.from == "float" && v.Type() == sqlite.TypeFloat {
			v = sqlite.FloatValue(math.RoundToEven(v.Float())) // PostgreSQL's rint
		}
		return castInt(v, bits)
	case "numeric":
		return castNumeric(v, target.mods)
	case "float8":
		switch v.Type() {
		case sqlite.TypeInteger, sqlite.TypeFloat:
			return sqlite.FloatValue(v.Float()), nil
		case sqlite.TypeText:
			f, err := float8Input(v.Text())
			switch {
			case err != nil:
				return v, err
			case math.IsNaN(f):
				return v, errNaN
			}
			return sqlite.FloatValue(f), nil
		}
	case "text", "varchar":
		s := castText(v)
		switch {
		case target.from == "bool" && v.Type() == sqlite.TypeInteger:
			s = strconv.FormatBool(v.Int64() != 0)
		case target.from == "float8" && (v.Type() == sqlite.TypeFloat || v.Type() == sqlite.TypeInteger):
			s = string(pgtext.AppendFloat8(nil, v.Float()))
		}
		if n := target.mods; len(n) == 1 && utf8.RuneCountInString(s) > int(n[0]) {
			s = string([]rune(s)[:n[0]]) // an explicit cast truncates
		}
		return sqlite.TextValue(s), nil
	case "bool":
		switch v.Type() {
		case sqlite.TypeInteger:
			return boolValue(v.Int64() != 0), nil
		case sqlite.TypeText:
			if b, ok := pgtext.ParseBool(v.Text()); ok {
				return boolValue(b), nil
			}
			return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", v.Text())
		}
		return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to boolean", sqliteTypeName(v))
	case "date", "timestamp", "timestamptz", "time":
		typ := map[string]result.Type{"date": result.Date, "timestamp": result.Timestamp, "timestamptz": result.Timestamptz, "time": result.Time}[target.kind]
		if v.Type() != sqlite.TypeText {
			return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", sqliteTypeName(v), pgtext.TimeTypeName(typ))
		}
		t, err := pgtext.ParseTime(typ, v.Text())
		if err != nil {
			return v, err
		}
		return sqlite.TextValue(pgtext.FormatTime(typ, t)), nil
	case "uuid":
		if v.Type() != sqlite.TypeText {
			return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to uuid", sqliteTypeName(v))
		}
		if u, ok := parseUUID(v.Text()); ok {
			return sqlite.TextValue(u), nil
		}
		return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", v.Text())
	case "json":
		if s := castText(v); json.Valid([]byte(s)) {
			return sqlite.TextValue(s), nil
		}
		return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
	case "bytea":
		switch v.Type() {
		case sqlite.TypeBlob:
			return v, nil
		case sqlite.TypeText:
			b, err := pgtext.ParseBytea(v.Text())
			if err != nil {
				return v, err
			}
			return sqlite.BlobValue(b), nil
		}
	case "jsonb":
		s, err := pgtext.FormatJSONB(castText(v))
		if se := (*sqlerr.Error)(nil); errors.As(err, &se) {
			return v, se
		} else if err != nil {
			return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		}
		return sqlite.TextValue(s), nil
	}
	return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type %s to %s", sqliteTypeName(v), target.kind)
}

func castInt(v sqlite.Value, bits int) (sqlite.Value, error) {
	var n int64
	switch v.Type() {
	case sqlite.TypeInteger:
		n = v.Int64()
	case sqlite.TypeFloat:
		f := roundHalfAway(v.Float(), 0)
		if math.IsNaN(f) || f < -(1<<63) || f >= 1<<63 {
			return v, pgtext.IntOutOfRange(bits)
		}
		n = int64(f)
	case sqlite.TypeText:
		var err error
		n, err = pgtext.ParseInt(v.Text(), 64)
		if se, ok := err.(*sqlerr.Error); ok && se.Code == sqlerr.InvalidTextRepresentation {
			return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", pgtext.IntTypeName(bits), v.Text())
		}
		if err != nil || bits < 64 && (n < -(1<<(bits-1)) || n >= 1<<(bits-1)) {
			// As the type's input function says it.
			return v, sqlerr.New(sqlerr.NumericValueOutOfRange, "value %q is out of range for type %s", v.Text(), pgtext.IntTypeName(bits))
		}
	default:
		return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type bytea to %s", pgtext.IntTypeName(bits))
	}
	if bits < 64 && (n < -(1<<(bits-1)) || n >= 1<<(bits-1)) {
		return v, pgtext.IntOutOfRange(bits)
	}
	return sqlite.IntegerValue(n), nil
}

// castNumeric casts to numeric[(p[,s])]: rounded to s decimals (halves
// away from zero), 22003 when it does not fit.
func castNumeric(v sqlite.Value, mods []int64) (sqlite.Value, error) {
	switch v.Type() {
	case sqlite.TypeText:
		s := strings.TrimSpace(v.Text())
		switch lower := strings.ToLower(s); strings.TrimLeft(lower, "+-") {
		case "nan":
			if lower == "nan" {
				return v, errNaN
			}
		case "inf", "infinity":
			return v, errNumericInfinity
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || strings.ContainsAny(s, "xXpP_iInN") {
			// Go reads 0x1p3, Inf and NaN, which numeric's input does
			// not (or reads as what the engine cannot keep, above).
			return v, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", v.Text())
		}
		if len(mods) > 0 && decimalNumber.MatchString(s) {
			// Rounded on the digits written, not on their double.
			scale := 0
			if len(mods) > 1 {
				scale = int(mods[1])
			}
			r, _ := new(big.Rat).SetString(s)
			f = roundRat(r, scale)
			s = strconv.FormatFloat(f, 'g', -1, 64)
		}
		if stored, kept := storedNumber(s); !kept {
			return v, errNumberChanged(s, stored, "")
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 && !strings.ContainsAny(s, ".eE") {
			v = sqlite.IntegerValue(int64(f))
		} else {
			v = sqlite.FloatValue(f)
		}
	case sqlite.TypeBlob:
		return v, sqlerr.New(sqlerr.CannotCoerce, "cannot cast type bytea to numeric")
	}
	if len(mods) == 0 {
		return v, nil
	}
	p, s := mods[0], int64(0)
	if len(mods) > 1 {
		s = mods[1]
	}
	f := v.Float()
	if v.Type() == sqlite.TypeFloat {
		f = roundHalfAway(f, int(s))
		v = sqlite.FloatValue(f)
	}
	if math.IsNaN(f) || math.Abs(f) >= math.Pow(10, float64(p-s)) {
		return v, &sqlerr.Error{Code: sqlerr.NumericValueOutOfRange, Message: "numeric field overflow",
			Detail: fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", p, s, p-s)}
	}
	return v, nil
}

// errNaN refuses NaN, which SQLite stores as NULL.
var errNaN = sqlerr.New(sqlerr.FeatureNotSupported, "NaN is not supported by the embedded engine (SQLite stores it as NULL)")

// errNumericInfinity refuses numeric's Infinity, which the embedded
// engine's numeric (a double, at most 2^53) cannot keep.
var errNumericInfinity = sqlerr.New(sqlerr.FeatureNotSupported, "numeric Infinity is not supported by the embedded engine: use double precision, or the PostgreSQL engine (--engine postgres)")

// roundHalfAway rounds f to s decimals, halves away from zero, as
// PostgreSQL rounds numeric: on f's shortest decimal form (3.145, not the
// double nearest to it, which is a little less).
func roundHalfAway(f float64, s int) float64 {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return f
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	if !ok {
		return f
	}
	return roundRat(r, s)
}

// roundRat rounds r to s decimals, halves away from zero; r is changed.
func roundRat(r *big.Rat, s int) float64 {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s)), nil)
	r.Mul(r, new(big.Rat).SetInt(scale))
	// |r| + 1/2, truncated, with r's sign.
	num, den := new(big.Int).Abs(r.Num()), r.Denom()
	q := new(big.Int).Quo(new(big.Int).Add(new(big.Int).Mul(num, big.NewInt(2)), den), new(big.Int).Mul(den, big.NewInt(2)))
	if r.Sign() < 0 {
		q.Neg(q)
	}
	out, _ := new(big.Rat).SetFrac(q, scale).Float64()
	return out
}

// castText is PostgreSQL's text of v: integers in decimal, numbers with a
// fraction without exponent (as numeric prints them), bytea as \x hex.
func castText(v sqlite.Value) string {
	switch v.Type() {
	case sqlite.TypeInteger:
		return strconv.FormatInt(v.Int64(), 10)
	case sqlite.TypeFloat:
		return strconv.FormatFloat(v.Float(), 'f', -1, 64)
	case sqlite.TypeBlob:
		return `\x` + hex.EncodeToString(v.Blob())
	}
	return v.Text()
}

// boolValue is how certa stores booleans: 1 and 0.
func boolValue(b bool) sqlite.Value {
	if b {
		return sqlite.IntegerValue(1)
	}
	return sqlite.IntegerValue(0)
}

// sqliteTypeName names v's storage class as PostgreSQL would name its type.
func sqliteTypeName(v sqlite.Value) string {
	switch v.Type() {
	case sqlite.TypeInteger:
		return "integer"
	case sqlite.TypeFloat:
		return "numeric"
	case sqlite.TypeBlob:
		return "bytea"
	}
	return "text"
}

// parseUUID reads PostgreSQL's uuid input (32 hex digits, a hyphen allowed
// after any group of four, optionally in braces; no spaces) and returns its
// output form.
func parseUUID(s string) (string, bool) {
	t, braces := strings.CutPrefix(s, "{")
	if braces {
		var ok bool
		if t, ok = strings.CutSuffix(t, "}"); !ok {
			return "", false
		}
	}
	b := make([]byte, 0, 16)
	for len(b) < 16 {
		if len(t) < 2 {
			return "", false
		}
		v, err := hex.DecodeString(t[:2])
		if err != nil {
			return "", false
		}
		b, t = append(b, v[0]), t[2:]
		if len(b)%2 == 0 && len(b) < 16 && strings.HasPrefix(t, "-") {
			t = t[1:] // a hyphen may follow each group of four digits
		}
	}
	if t != "" {
		return "", false
	}
	h := hex.EncodeToString(b)
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], true
}

// castResults are the type of a cast's result, and the name PostgreSQL
// gives a result column that is nothing but the cast, by kind.
var castResults = map[string]struct {
	typ  result.Type
	name string
}{
	"int2": {result.Int2, "int2"}, "int4": {result.Int4, "int4"}, "int8": {result.Int8, "int8"},
	"numeric": {result.Numeric, "numeric"}, "float8": {result.Float8, "float8"},
	"text": {result.Text, "text"}, "varchar": {result.Text, "varchar"}, "bool": {result.Bool, "bool"},
	"date": {result.Date, "date"}, "timestamp": {result.Timestamp, "timestamp"},
	"timestamptz": {result.Timestamptz, "timestamptz"}, "time": {result.Time, "time"},
	"uuid": {result.UUID, "uuid"}, "json": {result.JSON, "json"}, "jsonb": {result.JSONB, "jsonb"},
	"bytea": {result.Bytea, "bytea"},
}

// castTail is the end of a rewritten cast: its kind and modifiers.
var castTail = regexp.MustCompile(`, '([a-z0-9]+)'(?:, (\d+))?(?:, (\d+))?\)$`)

// castColumn describes a result column that SQLite names name, when that
// is a rewritten cast and nothing else (SQLite names an unaliased column
// by its expression): PostgreSQL names it after the type, and its values
// are of that type. ok is false for any other column.
func castColumn(name string) (col result.Column, ok bool) {
	if !strings.HasPrefix(name, castFunction+"(") || !closesFirstParen(name) {
		return col, false
	}
	m := castTail.FindStringSubmatch(name)
	if m == nil {
		return col, false
	}
	r, ok := castResults[m[1]]
	if !ok {
		return col, false
	}
	var mods []int64
	for _, m := range m[2:] {
		if n, err := strconv.ParseInt(m, 10, 32); err == nil {
			mods = append(mods, n)
		}
	}
	return result.Column{Name: r.name, Type: r.typ, Mod: castMod(r.typ, mods)}, true
}

// castMod is the type modifier PostgreSQL reports for a cast's result:
// numeric(p[,s]) only.
func castMod(typ result.Type, mods []int64) int32 {
	if typ != result.Numeric || len(mods) == 0 {
		return 0
	}
	p, s := mods[0], int64(0)
	if len(mods) > 1 {
		s = mods[1]
	}
	return int32(p<<16|s) + 4
}

// closesFirstParen reports whether the last byte of s closes its first
// parenthesis (quoted text skipped): s is one call.
func closesFirstParen(s string) bool {
	depth, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '\'' || ch == '"':
			quote = ch
		case ch == '(':
			depth++
		case ch == ')':
			depth--
			if depth == 0 {
				return i == len(s)-1
			}
		}
	}
	return false
}
