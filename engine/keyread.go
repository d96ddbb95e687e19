package engine

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"certa/pgparse"
	"certa/writeset"
)

// KeyColumn is one column of a table's write-set key, in the order the
// key lists them, as the engine stores its values: KeyInt columns hold
// integers (int64 in keys), KeyText ones strings compared byte for byte;
// KeyOther ones anything else, whose values this file does not convert.
type KeyColumn struct {
	Name string
	Kind KeyKind
}

// KeyKind is how a key column's values are stored (KeyColumn).
type KeyKind int

const (
	KeyOther KeyKind = iota
	KeyInt
	KeyText
)

// maxKeyReads bounds the keys one statement's conditions may stand for.
const maxKeyReads = 1000

// KeyReads returns the keys or key ranges of table (named as write-set
// keys name it, keyed by cols) that a statement with KeyRead kr, run with
// args, read: the rows its conditions select on leading key columns (a
// product of equal values, then a range of integers or a text prefix
// that LIKE selects), or for an INSERT
// ... ON CONFLICT on the key, its rows' keys; a plain INSERT reads none.
// ok is false when the conditions do not bound the rows by the key (no
// condition on the leading column, a value not of its column's kind):
// the statement then read the whole table. Ranges that select no row are
// left out. same compares column names as the engine does (SQLite
// ignores case, PostgreSQL's parser has folded what it should). The
// caller checks that the statement touched no other table.
func KeyReads(kr *pgparse.KeyRead, table string, cols []KeyColumn, args []any, same func(a, b string) bool) (keys []writeset.Key, ranges []writeset.KeyRange, ok bool) {
	switch {
	case kr.Upsert:
		return upsertKeys(kr, table, cols, args, same)
	case kr.Insert:
		return nil, nil, true
	case len(cols) == 0:
		return nil, nil, false
	}
	prefixes := [][]any{nil}
	for _, col := range cols {
		if vals := EqualValues(col, kr.Conds, args, same); vals != nil {
			if len(prefixes)*len(vals) > maxKeyReads {
				return nil, nil, false
			}
			var next [][]any
			for _, p := range prefixes {
				for _, v := range vals {
					next = append(next, append(slices.Clip(p), v))
				}
			}
			prefixes = next
			continue
		}
		lo, hi, bounded := IntBounds(col, kr.Conds, args, same)
		if !bounded {
			if text, ok := LikePrefix(col, kr.Conds, args, same); ok {
				for _, p := range prefixes {
					ranges = append(ranges, writeset.KeyPrefixRange(table, p, text))
				}
				return nil, ranges, true
			}
		}
		if !bounded && len(prefixes[0]) == 0 {
			return nil, nil, false // no condition on the leading key column
		}
		for _, p := range prefixes {
			r := writeset.KeyRangeOf(table, p, p)
			if bounded {
				if lo > hi {
					continue // selects no row
				}
				if lo > math.MinInt64 {
					r.Lo = writeset.EncodeKey(table, append(slices.Clip(p), lo)...)
				}
				if hi < math.MaxInt64 {
					r.Hi = writeset.EncodeKey(table, append(slices.Clip(p), hi)...)
				}
			}
			ranges = append(ranges, r)
		}
		return nil, ranges, true
	}
	for _, p := range prefixes {
		keys = append(keys, writeset.EncodeKey(table, p...))
	}
	return keys, nil, true
}

// upsertKeys is KeyReads of an INSERT ... ON CONFLICT: the keys of its
// rows, each given whole by constants or parameters, when its conflict
// target is the key.
func upsertKeys(kr *pgparse.KeyRead, table string, cols []KeyColumn, args []any, same func(a, b string) bool) ([]writeset.Key, []writeset.KeyRange, bool) {
	if len(cols) == 0 || len(kr.ConflictColumns) != len(cols) || len(kr.Rows) > maxKeyReads || kr.Columns == nil {
		return nil, nil, false
	}
	for _, c := range kr.ConflictColumns {
		if !slices.ContainsFunc(cols, func(k KeyColumn) bool { return same(k.Name, c) }) {
			return nil, nil, false // another unique key: its rows are not found by key
		}
	}
	var keys []writeset.Key
	for _, row := range kr.Rows {
		vals := make([]any, 0, len(cols))
		for _, col := range cols {
			at := slices.IndexFunc(kr.Columns, func(c string) bool { return same(c, col.Name) })
			if at < 0 || at >= len(row) || row[at].Unknown {
				return nil, nil, false // a default, or an expression
			}
			v, ok := keyOperand(col, row[at], args)
			if !ok {
				return nil, nil, false
			}
			vals = append(vals, v)
		}
		keys = append(keys, writeset.EncodeKey(table, vals...))
	}
	return keys, nil, true
}

// EqualValues returns the values the first usable = or IN condition on
// col allows, as keys hold them; nil if there is none.
func EqualValues(col KeyColumn, conds []pgparse.KeyCond, args []any, same func(a, b string) bool) []any {
	for _, kc := range conds {
		if !same(kc.Column, col.Name) || kc.Op != "=" && kc.Op != "in" {
			continue
		}
		vals := make([]any, 0, len(kc.Values))
		for _, o := range kc.Values {
			v, ok := keyOperand(col, o, args)
			if !ok {
				vals = nil
				break
			}
			vals = append(vals, v)
		}
		if vals != nil {
			return vals
		}
	}
	return nil
}

// IntBounds returns the range the <, <=, >, >= and BETWEEN conditions on
// the integer column col allow (both ends included); bounded is false if
// there is none.
func IntBounds(col KeyColumn, conds []pgparse.KeyCond, args []any, same func(a, b string) bool) (lo, hi int64, bounded bool) {
	lo, hi = math.MinInt64, math.MaxInt64
	if col.Kind != KeyInt {
		return lo, hi, false
	}
	for _, kc := range conds {
		if !same(kc.Column, col.Name) {
			continue
		}
		vals := make([]int64, len(kc.Values))
		usable := true
		for i, o := range kc.Values {
			v, ok := keyOperand(col, o, args)
			vals[i], _ = v.(int64)
			if usable = ok; !usable {
				break
			}
		}
		if !usable {
			continue
		}
		switch kc.Op {
		case ">":
			if vals[0] == math.MaxInt64 {
				return 1, 0, true // no row
			}
			lo = max(lo, vals[0]+1)
		case ">=":
			lo = max(lo, vals[0])
		case "<":
			if vals[0] == math.MinInt64 {
				return 1, 0, true
			}
			hi = min(hi, vals[0]-1)
		case "<=":
			hi = min(hi, vals[0])
		case "between":
			lo, hi = max(lo, vals[0]), min(hi, vals[1])
		default:
			continue
		}
		bounded = true
	}
	return lo, hi, bounded
}

// LikePrefix returns the text every value of the text column col that
// a LIKE condition on it selects starts with: the pattern up to its
// first wildcard (% or _), with \ escaping the character after it, as
// PostgreSQL's LIKE reads a pattern without ESCAPE. ok is false if there
// is no such condition or its prefix is empty. LIKE compares characters
// exactly whatever the column's (deterministic) collation, and so do
// the keys.
func LikePrefix(col KeyColumn, conds []pgparse.KeyCond, args []any, same func(a, b string) bool) (prefix string, ok bool) {
	if col.Kind != KeyText {
		return "", false
	}
	for _, kc := range conds {
		if kc.Op != "like" || !same(kc.Column, col.Name) {
			continue
		}
		v, usable := keyOperand(col, kc.Values[0], args)
		pattern, _ := v.(string)
		if !usable {
			continue
		}
		var b strings.Builder
	scan:
		for i := 0; i < len(pattern); i++ {
			switch pattern[i] {
			case '%', '_':
				break scan
			case '\\':
				i++
				if i == len(pattern) {
					break scan // PostgreSQL refuses the pattern
				}
			}
			b.WriteByte(pattern[i])
		}
		if b.Len() > len(prefix) {
			prefix = b.String() // the longest: every condition holds
		}
	}
	return prefix, prefix != ""
}

// keyOperand returns o's value as a key of col holds it: an integer for a
// KeyInt column, a string for a KeyText one. A string in an integer's
// canonical form is that integer for a KeyInt column (an untyped
// parameter, as node-postgres sends them, or '5': PostgreSQL reads them
// as the column's type, SQLite applies the column's affinity). Anything
// else is not usable.
func keyOperand(col KeyColumn, o pgparse.Operand, args []any) (any, bool) {
	var v any
	switch {
	case o.Unknown:
		return nil, false
	case o.Param > 0 && o.Param <= len(args):
		v = args[o.Param-1]
	case o.Param > 0:
		return nil, false
	case o.IsInt:
		v = o.Int
	default:
		v = o.Text
	}
	switch v := v.(type) {
	case int64:
		return v, col.Kind == KeyInt
	case string:
		if col.Kind == KeyInt {
			i, err := strconv.ParseInt(v, 10, 64)
			return i, err == nil && strconv.FormatInt(i, 10) == v
		}
		return v, col.Kind == KeyText
	}
	return nil, false
}
