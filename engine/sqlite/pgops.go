package sqlite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/pgtext"
	"certa/sqlerr"
)

// The functions pgparse's SQLite printer writes where SQLite's own
// operator or function means something else than PostgreSQL's: LIKE
// (SQLite's ignores case and has no default escape), regular expressions,
// GREATEST and LEAST (SQLite's max and min return NULL for any NULL),
// substring (SQLite counts positions before 1 differently), trim (of
// bytea: SQLite's reads it as text), random (an
// integer in SQLite) and = ANY over an array parameter. A failure is kept
// on c (funcErr) and the function returns NULL, as pg_cast does: the
// statement fails with the failure.

func registerPGOperators(c *conn) error {
	regexps := map[string]*regexp.Regexp{} // by flags and pattern; c is used by one goroutine at a time
	fail := func(err *sqlerr.Error) (sqlite.Value, error) {
		if c.funcErr == nil {
			c.funcErr = err
		}
		return sqlite.Value{}, nil
	}
	funcs := map[string]*sqlite.FunctionImpl{
		"current_user": {NArgs: 0, Scalar: func(sqlite.Context, []sqlite.Value) (sqlite.Value, error) {
			return sqlite.TextValue(c.user), nil
		}},
		"pg_try_advisory_xact_lock": {NArgs: -1, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			v, err := tryAdvisoryXactLock(c, args)
			if err != nil {
				return fail(err)
			}
			return v, nil
		}},
		"pg_like": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return likeValue(args, false, fail)
		}},
		"pg_ilike": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return likeValue(args, true, fail)
		}},
		"pg_regex": {NArgs: 3, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if args[0].Type() == sqlite.TypeNull || args[1].Type() == sqlite.TypeNull {
				return sqlite.Value{}, nil
			}
			key := args[2].Text() + "/" + args[1].Text()
			re := regexps[key]
			if re == nil {
				pattern := args[1].Text()
				if args[2].Text() == "i" {
					pattern = "(?i)" + pattern
				}
				var err error
				if re, err = regexp.Compile(pattern); err != nil {
					return fail(sqlerr.New("2201B", "invalid regular expression: %v", err))
				}
				if len(regexps) > 256 {
					clear(regexps)
				}
				regexps[key] = re
			}
			return boolValue(re.MatchString(castText(args[0]))), nil
		}},
		"pg_upsert_key": {NArgs: -1, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			// The conflict key of a row an INSERT ... ON CONFLICT DO
			// UPDATE proposes (pgparse's upsertKeyCheck): a second row
			// with one would update the first's.
			var key strings.Builder
			for _, a := range args {
				if a.Type() == sqlite.TypeNull {
					return args[len(args)-1], nil // conflicts with no row
				}
				fmt.Fprintf(&key, "%d:%q,", a.Type(), castText(a))
			}
			if c.upsertKeys[key.String()] {
				e := sqlerr.New(sqlerr.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time")
				e.Hint = "Ensure that no rows proposed for insertion within the same command have duplicate constrained values."
				return fail(e)
			}
			if c.upsertKeys == nil {
				c.upsertKeys = map[string]bool{}
			}
			c.upsertKeys[key.String()] = true
			return args[len(args)-1], nil
		}},
		"pg_greatest": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return extreme(args, 1), nil
		}},
		"pg_least": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return extreme(args, -1), nil
		}},
		"pg_substr": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return substrValue(args, fail)
		}},
		"pg_btrim": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return trimValue(args, true, true), nil
		}},
		"pg_ltrim": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return trimValue(args, true, false), nil
		}},
		"pg_rtrim": {NArgs: -1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			return trimValue(args, false, true), nil
		}},
		"pg_json_get": {NArgs: 3, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			// PostgreSQL's -> and ->> resolve a json's escapes, and refuse
			// those it refuses in jsonb (a jsonb's passed that at input).
			if args[0].Type() == sqlite.TypeText {
				if err := pgtext.CheckJSONEscapes(args[0].Text()); err != nil {
					return fail(err)
				}
			}
			return jsonGet(args[0], args[1], args[2].Int() == 1), nil
		}},
		"pg_rint": {NArgs: 1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if args[0].Type() == sqlite.TypeNull {
				return sqlite.Value{}, nil
			}
			return sqlite.FloatValue(math.RoundToEven(args[0].Float())), nil
		}},
		"pg_random": {NArgs: 0, Scalar: func(sqlite.Context, []sqlite.Value) (sqlite.Value, error) {
			return sqlite.FloatValue(rand.Float64()), nil
		}},
		"pg_array_json": {NArgs: 1, Deterministic: true, Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if args[0].Type() == sqlite.TypeNull {
				return sqlite.TextValue("[]"), nil
			}
			elems, err := pgtext.ParseArray(args[0].Text())
			if err != nil {
				return fail(err.(*sqlerr.Error))
			}
			b, _ := json.Marshal(elems)
			return sqlite.TextValue(string(b)), nil
		}},
	}
	for name, op := range arithmeticOperators {
		funcs[name] = arithmeticFunc(op, fail)
	}
	for name, impl := range funcs {
		impl.AllowIndirect = true // the printer's functions, also in views' queries
		if err := c.c.CreateFunction(name, impl); err != nil {
			return err
		}
	}
	return registerStringFunctions(c, fail)
}

// trimValue is btrim (left and right), ltrim or rtrim of args: a
// string and the characters to take off its ends (spaces if none), or a
// bytea and the bytes to take off, as PostgreSQL's: SQLite's trim reads
// a blob as text, and one with a zero byte as ending there.
func trimValue(args []sqlite.Value, left, right bool) sqlite.Value {
	if len(args) == 0 || len(args) > 2 {
		return sqlite.Value{}
	}
	for _, a := range args {
		if a.Type() == sqlite.TypeNull {
			return sqlite.Value{}
		}
	}
	if args[0].Type() == sqlite.TypeBlob {
		b, cut := args[0].Blob(), []byte(" ")
		if len(args) == 2 {
			cut = args[1].Blob()
		}
		for left && len(b) > 0 && bytes.IndexByte(cut, b[0]) >= 0 {
			b = b[1:]
		}
		for right && len(b) > 0 && bytes.IndexByte(cut, b[len(b)-1]) >= 0 {
			b = b[:len(b)-1]
		}
		return sqlite.BlobValue(b)
	}
	s, cut := args[0].Text(), " "
	if len(args) == 2 {
		cut = args[1].Text()
	}
	if left {
		s = strings.TrimLeft(s, cut)
	}
	if right {
		s = strings.TrimRight(s, cut)
	}
	return sqlite.TextValue(s)
}

// jsonGet is doc -> key (doc ->> key if text): the member of an object
// named key (text), or the element of an array at index key (an integer;
// negative counts from the end), as written in doc: the stored form of a
// jsonb is PostgreSQL's, so its members are too, and a json's are as the
// client wrote them, as PostgreSQL's json operators return them. ->> of
// a string is its text, of null NULL. NULL where there is no such member.
func jsonGet(doc, key sqlite.Value, text bool) sqlite.Value {
	if doc.Type() == sqlite.TypeNull || key.Type() == sqlite.TypeNull {
		return sqlite.Value{}
	}
	var raw json.RawMessage
	src := []byte(doc.Text())
	if key.Type() == sqlite.TypeInteger {
		var elems []json.RawMessage
		if json.Unmarshal(src, &elems) != nil {
			return sqlite.Value{}
		}
		i := key.Int64()
		if i < 0 {
			i += int64(len(elems))
		}
		if i < 0 || i >= int64(len(elems)) {
			return sqlite.Value{}
		}
		raw = elems[i]
	} else {
		var members map[string]json.RawMessage
		if json.Unmarshal(src, &members) != nil {
			return sqlite.Value{}
		}
		var ok bool
		if raw, ok = members[key.Text()]; !ok {
			return sqlite.Value{}
		}
	}
	if !text {
		return sqlite.TextValue(string(raw))
	}
	switch {
	case string(raw) == "null":
		return sqlite.Value{}
	case len(raw) > 0 && raw[0] == '"':
		var s string
		json.Unmarshal(raw, &s)
		return sqlite.TextValue(s)
	}
	return sqlite.TextValue(string(raw))
}

// likeValue is s LIKE pattern [ESCAPE e] (args), case-insensitive for
// ILIKE. PostgreSQL's escape character is \ unless ESCAPE names another
// (or none, with ”).
func likeValue(args []sqlite.Value, fold bool, fail func(*sqlerr.Error) (sqlite.Value, error)) (sqlite.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return fail(sqlerr.New(sqlerr.UndefinedFunction, "function pg_like takes 2 or 3 arguments"))
	}
	for _, a := range args {
		if a.Type() == sqlite.TypeNull {
			return sqlite.Value{}, nil
		}
	}
	s, pattern, escape := likeText(args[0]), likeText(args[1]), '\\'
	if len(args) == 3 {
		e := args[2].Text()
		switch utf8.RuneCountInString(e) {
		case 0:
			escape = -1
		case 1:
			escape, _ = utf8.DecodeRuneInString(e)
		default:
			return fail(&sqlerr.Error{Code: "22025", Message: "invalid escape string", Hint: "Escape string must be empty or one character."})
		}
	}
	if fold {
		s, pattern = strings.ToLower(s), strings.ToLower(pattern)
	}
	ok, err := like([]rune(s), []rune(pattern), escape)
	if err != nil {
		return fail(err)
	}
	return boolValue(ok), nil
}

// likeText is v as LIKE reads it: a bytea's bytes themselves (castText
// writes them in hex, whose digits the pattern's would never match).
func likeText(v sqlite.Value) string {
	if v.Type() == sqlite.TypeBlob {
		return string(v.Blob())
	}
	return castText(v)
}

// like matches s against a LIKE pattern: % any run of characters, _ any
// one, escape the next character taken as itself.
func like(s, p []rune, escape rune) (bool, *sqlerr.Error) {
	si, pi := 0, 0
	star, starS := -1, 0 // the last % seen, and where s stood then
	for si < len(s) {
		if pi < len(p) {
			switch c := p[pi]; {
			case c == escape:
				if pi+1 >= len(p) {
					return false, sqlerr.New("22025", "LIKE pattern must not end with escape character")
				}
				if p[pi+1] == s[si] {
					pi, si = pi+2, si+1
					continue
				}
			case c == '%':
				star, starS = pi, si
				pi++
				continue
			case c == '_' || c == s[si]:
				pi, si = pi+1, si+1
				continue
			}
		}
		if star < 0 {
			return false, nil
		}
		pi, starS = star+1, starS+1
		si = starS
	}
	for pi < len(p) && p[pi] == '%' {
		pi++
	}
	if pi < len(p) && p[pi] == escape && pi+1 >= len(p) {
		return false, sqlerr.New("22025", "LIKE pattern must not end with escape character")
	}
	return pi == len(p), nil
}

// extreme returns the largest (sign 1) or smallest (-1) of args that is
// not NULL, in SQLite's order of values; NULL if all are.
func extreme(args []sqlite.Value, sign int) sqlite.Value {
	var best sqlite.Value
	for _, a := range args {
		if a.Type() == sqlite.TypeNull {
			continue
		}
		if best.Type() == sqlite.TypeNull || compareValues(a, best)*sign > 0 {
			best = a
		}
	}
	return best
}

// compareValues orders two non-NULL values as SQLite does: numbers before
// text before blobs.
func compareValues(a, b sqlite.Value) int {
	rank := func(v sqlite.Value) int {
		switch v.Type() {
		case sqlite.TypeInteger, sqlite.TypeFloat:
			return 0
		case sqlite.TypeText:
			return 1
		}
		return 2
	}
	if ra, rb := rank(a), rank(b); ra != rb {
		return ra - rb
	}
	switch {
	case rank(a) > 0:
		return strings.Compare(a.Text(), b.Text())
	case a.Type() == sqlite.TypeInteger && b.Type() == sqlite.TypeInteger:
		return cmpInt(a.Int64(), b.Int64())
	case a.Float() < b.Float():
		return -1
	case a.Float() > b.Float():
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// substrValue is PostgreSQL's substring(s FROM start [FOR count]): the
// characters at positions start .. start+count-1 that exist.
func substrValue(args []sqlite.Value, fail func(*sqlerr.Error) (sqlite.Value, error)) (sqlite.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return fail(sqlerr.New(sqlerr.UndefinedFunction, "function substring takes 2 or 3 arguments"))
	}
	for _, a := range args {
		if a.Type() == sqlite.TypeNull {
			return sqlite.Value{}, nil
		}
	}
	r := []rune(castText(args[0]))
	start := args[1].Int64()
	end := int64(len(r)) + 1
	if len(args) == 3 {
		n := args[2].Int64()
		if n < 0 {
			return fail(sqlerr.New("22011", "negative substring length not allowed"))
		}
		start = max(start, -(1 << 62)) // start+n cannot overflow
		if n < end-start {
			end = start + n
		}
	}
	start = max(start, 1)
	if start >= end {
		return sqlite.TextValue(""), nil
	}
	return sqlite.TextValue(string(r[start-1 : end-1])), nil
}

// numberOf reads v as a number: an integer (isInt) or a double. Text is
// read as the number it spells (a string constant PostgreSQL would take
// as one).
func numberOf(v sqlite.Value) (i int64, f float64, isInt bool, err *sqlerr.Error) {
	switch v.Type() {
	case sqlite.TypeInteger:
		return v.Int64(), float64(v.Int64()), true, nil
	case sqlite.TypeFloat:
		return 0, v.Float(), false, nil
	}
	s := strings.TrimSpace(v.Text())
	if n, perr := strconv.ParseInt(s, 10, 64); perr == nil {
		return n, float64(n), true, nil
	}
	if f, perr := strconv.ParseFloat(s, 64); perr == nil {
		return 0, f, false, nil
	}
	return 0, 0, false, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type numeric: %q", v.Text())
}
