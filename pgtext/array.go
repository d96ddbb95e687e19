package pgtext

import (
	"strings"

	"certa/result"
	"certa/sqlerr"
)

// The array types whose values are kept as their text: text[] and
// varchar[] (FormatTextArray writes them as PostgreSQL does).
var (
	TextArray    = result.TypeOf(1009)
	VarcharArray = result.TypeOf(1015)
)

// FormatTextArray returns s, a one-dimensional array of text in
// PostgreSQL's input form ('{ a , "b" }'), as PostgreSQL writes it back
// ('{a,b}'). An array of more dimensions is refused (0A000).
func FormatTextArray(s string) (string, error) {
	elems, err := ParseArray(s)
	if err != nil {
		if t := strings.TrimSpace(s); strings.HasPrefix(t, "{") && strings.HasPrefix(strings.TrimSpace(t[1:]), "{") {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "arrays of more than one dimension are not supported by the embedded engine")
		}
		return "", err
	}
	return FormatArray(elems), nil
}

// ParseArray reads a one-dimensional array in PostgreSQL's text form
// ('{a,"b c",NULL}'): its elements, with nil for NULL.
func ParseArray(s string) ([]*string, error) {
	bad := sqlerr.New(sqlerr.InvalidTextRepresentation, "malformed array literal: %q", s)
	t := strings.TrimSpace(s)
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return nil, bad
	}
	t = t[1 : len(t)-1]
	out := []*string{}
	if strings.TrimSpace(t) == "" {
		return out, nil
	}
	for i := 0; ; {
		for i < len(t) && t[i] == ' ' {
			i++
		}
		var elem strings.Builder
		quoted := i < len(t) && t[i] == '"'
		if quoted {
			for i++; i < len(t) && t[i] != '"'; i++ {
				if t[i] == '\\' && i+1 < len(t) {
					i++
				}
				elem.WriteByte(t[i])
			}
			if i >= len(t) {
				return nil, bad
			}
			i++
		} else {
			for ; i < len(t) && t[i] != ','; i++ {
				switch t[i] {
				case '{', '}', '"':
					return nil, bad
				case '\\':
					if i+1 < len(t) {
						i++
					}
				}
				elem.WriteByte(t[i])
			}
		}
		v := elem.String()
		if !quoted {
			v = strings.TrimSpace(v)
		}
		if !quoted && strings.EqualFold(v, "NULL") {
			out = append(out, nil)
		} else {
			out = append(out, &v)
		}
		for i < len(t) && t[i] == ' ' {
			i++
		}
		if i >= len(t) {
			return out, nil
		}
		if t[i] != ',' {
			return nil, bad
		}
		i++
	}
}

// FormatArray writes a one-dimensional array in PostgreSQL's text form:
// elements quoted where PostgreSQL quotes them, nil as NULL.
func FormatArray(elems []*string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		switch {
		case e == nil:
			b.WriteString("NULL")
		case *e == "" || strings.EqualFold(*e, "NULL") || strings.ContainsAny(*e, "{},\"\\ \t\n\r\v\f"):
			b.WriteByte('"')
			b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(*e))
			b.WriteByte('"')
		default:
			b.WriteString(*e)
		}
	}
	b.WriteByte('}')
	return b.String()
}
