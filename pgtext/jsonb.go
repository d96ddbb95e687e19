package pgtext

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"unicode/utf8"
)

// ErrJSON is returned for text that is not JSON.
var ErrJSON = errors.New("invalid input syntax for type json")

// FormatJSONB returns JSON text as PostgreSQL's jsonb gives it back: object
// keys in jsonb's order (shorter first, then by bytes) with the last of
// duplicate keys kept, numbers as numeric writes them (1e2 is 100, 1.50
// stays 1.50), strings with their escapes resolved, and ", " and ": "
// between elements.
func FormatJSONB(s string) (string, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", ErrJSON
	}
	if _, err := d.Token(); err == nil {
		return "", ErrJSON // more than one value
	}
	var b strings.Builder
	if err := writeJSONB(&b, v); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeJSONB(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		fmt.Fprint(b, v)
	case json.Number:
		n, err := jsonbNumber(string(v))
		if err != nil {
			return err
		}
		b.WriteString(n)
	case string:
		writeJSONBString(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeJSONB(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any: // the decoder kept the last of duplicate keys
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if len(keys[i]) != len(keys[j]) {
				return len(keys[i]) < len(keys[j])
			}
			return keys[i] < keys[j]
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writeJSONBString(b, k)
			b.WriteString(": ")
			if err := writeJSONB(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

// writeJSONBString writes a string as PostgreSQL escapes it: quotes,
// backslashes and control characters; the rest as UTF-8.
func writeJSONBString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// jsonbNumber writes a JSON number as numeric does: its value with as many
// decimals as it was written with, less its exponent.
func jsonbNumber(s string) (string, error) {
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		if _, err := fmt.Sscan(s[i+1:], &exp); err != nil {
			return "", ErrJSON
		}
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := intPart + frac
	m, ok := new(big.Int).SetString(digits, 10)
	if !ok || !utf8.ValidString(s) {
		return "", ErrJSON
	}
	shift := exp - len(frac) // value = m × 10^shift
	if shift >= 0 {
		m.Mul(m, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(shift)), nil))
		shift = 0
	}
	text := m.String()
	scale := -shift
	if scale > 0 {
		if len(text) <= scale {
			text = strings.Repeat("0", scale-len(text)+1) + text
		}
		text = text[:len(text)-scale] + "." + text[len(text)-scale:]
	}
	if neg && m.Sign() != 0 {
		text = "-" + text
	}
	return text, nil
}
