package sqlite

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// PostgreSQL's string functions SQLite lacks, by the names pgparse's
// printer calls them (pg_repeat...). Each works on characters, as
// PostgreSQL's do in a UTF-8 database, returns NULL for a NULL argument
// (they are all strict), and fails where PostgreSQL's do.

// maxStringBytes is PostgreSQL's bound on a value (1 GB).
const maxStringBytes = 1<<30 - 1

var errStringTooLong = sqlerr.New(sqlerr.ProgramLimitExceeded, "requested length too large")

// stringFunctions are the functions, each taking its arguments as text
// and integers (readArgs).
var stringFunctions = map[string]struct {
	args string // one letter per argument: t text, i integer; a trailing ? for an optional one
	fn   func(s []string, n []int64) (sqlite.Value, *sqlerr.Error)
}{
	"pg_repeat": {"ti", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) {
		if n[0] <= 0 {
			return sqlite.TextValue(""), nil
		}
		if int64(len(s[0]))*n[0] > maxStringBytes {
			return sqlite.Value{}, errStringTooLong
		}
		return sqlite.TextValue(strings.Repeat(s[0], int(n[0]))), nil
	}},
	"pg_lpad": {"tit?", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) { return pad(s, n[0], true) }},
	"pg_rpad": {"tit?", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) { return pad(s, n[0], false) }},
	"pg_left": {"ti", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) {
		return sqlite.TextValue(leftRight(s[0], n[0], true)), nil
	}},
	"pg_right": {"ti", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) {
		return sqlite.TextValue(leftRight(s[0], n[0], false)), nil
	}},
	"pg_reverse": {"t", func(s []string, _ []int64) (sqlite.Value, *sqlerr.Error) { return sqlite.TextValue(reverse(s[0])), nil }},
	"pg_initcap": {"t", func(s []string, _ []int64) (sqlite.Value, *sqlerr.Error) { return sqlite.TextValue(initcap(s[0])), nil }},
	"pg_split_part": {"tti", func(s []string, n []int64) (sqlite.Value, *sqlerr.Error) {
		return splitPart(s[0], s[1], n[0])
	}},
	"pg_starts_with": {"tt", func(s []string, _ []int64) (sqlite.Value, *sqlerr.Error) {
		return boolValue(strings.HasPrefix(s[0], s[1])), nil
	}},
	"pg_ascii": {"t", func(s []string, _ []int64) (sqlite.Value, *sqlerr.Error) {
		r, _ := utf8.DecodeRuneInString(s[0])
		if s[0] == "" {
			r = 0
		}
		return sqlite.IntegerValue(int64(r)), nil
	}},
	"pg_chr": {"i", func(_ []string, n []int64) (sqlite.Value, *sqlerr.Error) { return chr(n[0]) }},
}

// registerStringFunctions makes stringFunctions on c; fail keeps an error
// on c (registerPGOperators).
func registerStringFunctions(c *conn, fail func(*sqlerr.Error) (sqlite.Value, error)) error {
	for name, f := range stringFunctions {
		spec := strings.ReplaceAll(f.args, "?", "")
		nargs := -1
		if !strings.Contains(f.args, "?") {
			nargs = len(spec)
		}
		fn := f.fn
		impl := &sqlite.FunctionImpl{NArgs: nargs, Deterministic: true, AllowIndirect: true,
			Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
				var texts []string
				var ints []int64
				for i, a := range args {
					if a.Type() == sqlite.TypeNull {
						return sqlite.Value{}, nil
					}
					if i < len(spec) && spec[i] == 'i' {
						n, _, isInt, err := numberOf(a)
						if err != nil || !isInt {
							return fail(sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type integer: %q", castText(a)))
						}
						ints = append(ints, n)
						continue
					}
					texts = append(texts, castText(a))
				}
				v, err := fn(texts, ints)
				if err != nil {
					return fail(err)
				}
				return v, nil
			}}
		if err := c.c.CreateFunction(name, impl); err != nil {
			return err
		}
	}
	return nil
}

// pad is lpad (left) or rpad of s[0] to n characters with s[1] (a space
// if there is none): a longer string is cut to n, and an empty fill pads
// nothing.
func pad(s []string, n int64, left bool) (sqlite.Value, *sqlerr.Error) {
	fill := " "
	if len(s) > 1 {
		fill = s[1]
	}
	if n <= 0 {
		return sqlite.TextValue(""), nil
	}
	if n*utf8.UTFMax > maxStringBytes {
		return sqlite.Value{}, errStringTooLong
	}
	str := []rune(s[0])
	if int64(len(str)) >= n || fill == "" {
		return sqlite.TextValue(string(str[:min(int64(len(str)), n)])), nil
	}
	fr := []rune(fill)
	padding := make([]rune, n-int64(len(str)))
	for i := range padding {
		padding[i] = fr[i%len(fr)]
	}
	if left {
		return sqlite.TextValue(string(padding) + string(str)), nil
	}
	return sqlite.TextValue(string(str) + string(padding)), nil
}

// leftRight is left(s, n) or right(s, n): the first (last) n characters,
// or for a negative n all but the last (first) -n.
func leftRight(s string, n int64, left bool) string {
	r := []rune(s)
	k := int64(len(r))
	if n < 0 {
		n = max(k+n, 0)
	}
	n = min(n, k)
	if left {
		return string(r[:n])
	}
	return string(r[k-n:])
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// initcap upper-cases the first letter of each word and lower-cases the
// rest; a word is a run of letters and digits.
func initcap(s string) string {
	var b strings.Builder
	inWord := false
	for _, r := range s {
		if inWord {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(unicode.ToUpper(r))
		}
		inWord = unicode.IsLetter(r) || unicode.IsDigit(r)
	}
	return b.String()
}

// splitPart is split_part(s, delim, n): field n of s split at delim,
// counted from the end for a negative n; "" past the last.
func splitPart(s, delim string, n int64) (sqlite.Value, *sqlerr.Error) {
	if n == 0 {
		return sqlite.Value{}, sqlerr.New(sqlerr.InvalidParameterValue, "field position must not be zero")
	}
	var fields []string
	switch {
	case s == "":
		return sqlite.TextValue(""), nil
	case delim == "":
		fields = []string{s}
	default:
		fields = strings.Split(s, delim)
	}
	if n < 0 {
		n += int64(len(fields)) + 1
	}
	if n < 1 || n > int64(len(fields)) {
		return sqlite.TextValue(""), nil
	}
	return sqlite.TextValue(fields[n-1]), nil
}

// chr is the character of code point n.
func chr(n int64) (sqlite.Value, *sqlerr.Error) {
	switch {
	case n < 0:
		return sqlite.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "character number must be positive")
	case n == 0:
		return sqlite.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "null character not permitted")
	case n > unicode.MaxRune:
		return sqlite.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested character too large for encoding: %d", n)
	case n >= 0xD800 && n <= 0xDFFF:
		return sqlite.Value{}, sqlerr.New(sqlerr.ProgramLimitExceeded, "requested character not valid for encoding: %d", n)
	}
	return sqlite.TextValue(string(rune(n))), nil
}
