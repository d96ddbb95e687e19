package pgtext

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"certa/sqlerr"
)

// ErrJSON is returned for text that is not JSON.
var ErrJSON = errors.New("invalid input syntax for type json")

// FormatJSONB returns JSON text as PostgreSQL's jsonb gives it back: object
// keys in jsonb's order (shorter first, then by bytes) with the last of
// duplicate keys kept, numbers as numeric writes them (1e2 is 100, 1.50
// stays 1.50), strings with their escapes resolved, and ", " and ": "
// between elements.
//
// Escapes PostgreSQL refuses are refused as it refuses them (a
// *sqlerr.Error); other text that is not JSON is ErrJSON.
func FormatJSONB(s string) (string, error) {
	if err := CheckJSONEscapes(s); err != nil {
		return "", err
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", ErrJSON
	}
	if strings.Trim(s[d.InputOffset():], " \t\n\r") != "" {
		return "", ErrJSON // more than one value, or a value cut short (1f2)
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

// CheckJSONEscapes refuses the \u escapes of s's strings that PostgreSQL
// refuses when it reads JSON into values (jsonb, and json's -> and ->>):
// \u0000, which text cannot hold, and UTF-16 surrogates that do not pair
// up. Go's decoder would take them as U+FFFD, changing the value.
func CheckJSONEscapes(s string) *sqlerr.Error {
	badSurrogate := func(detail string) *sqlerr.Error {
		e := sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		e.Detail = detail
		return e
	}
	const lowAfterHigh = "Unicode low surrogate must follow a high surrogate."
	inString, high := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !inString {
			inString = c == '"'
			continue
		}
		isEscapeU := c == '\\' && i+5 < len(s) && s[i+1] == 'u'
		var r uint64
		if isEscapeU {
			var err error
			if r, err = strconv.ParseUint(s[i+2:i+6], 16, 32); err != nil {
				isEscapeU = false // not JSON: the decoder says so
			}
		}
		switch {
		case isEscapeU && r >= 0xD800 && r <= 0xDBFF:
			if high {
				return badSurrogate("Unicode high surrogate must not follow a high surrogate.")
			}
			high = true
		case isEscapeU && r >= 0xDC00 && r <= 0xDFFF:
			if !high {
				return badSurrogate(lowAfterHigh)
			}
			high = false
		case high:
			return badSurrogate(lowAfterHigh)
		case isEscapeU && r == 0:
			e := sqlerr.New(sqlerr.UntranslatableCharacter, "unsupported Unicode escape sequence")
			e.Detail = `\u0000 cannot be converted to text.`
			return e
		case c == '\\':
			i++ // the escaped character (a quote does not end the string)
			continue
		case c == '"':
			inString = false
		}
		if isEscapeU {
			i += 5
		}
	}
	return nil
}
