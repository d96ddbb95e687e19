package sqlite

import (
	"strings"

	"certa/pgparse"
)

// The little lexing certa needs on SQL text: SQLite parses statements
// itself; we only find blank text, the first keyword (for command tags) and
// a keyword outside quotes.

// skipBlank returns s without leading white space, comments and semicolons.
func skipBlank(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n\f\v;")
		switch {
		case strings.HasPrefix(s, "--"):
			i := strings.IndexByte(s, '\n')
			if i < 0 {
				return ""
			}
			s = s[i+1:]
		case strings.HasPrefix(s, "/*"):
			s = s[pgparse.BlockCommentEnd(s, 0):] // "" if it is not closed
		default:
			return s
		}
	}
}

// isBlank reports whether s holds no statement.
func isBlank(s string) bool { return skipBlank(s) == "" }

// firstKeyword returns the upper-cased first word of the statement in s.
func firstKeyword(s string) string {
	s = skipBlank(s)
	i := 0
	for i < len(s) && isWordByte(s[i]) {
		i++
	}
	return strings.ToUpper(s[:i])
}

func isWordByte(b byte) bool {
	return b == '_' || 'a' <= b|0x20 && b|0x20 <= 'z' || '0' <= b && b <= '9'
}

// hasKeyword reports whether the word kw (upper case) appears in sql outside
// string literals, quoted identifiers and comments.
func hasKeyword(sql, kw string) bool {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := strings.IndexByte(sql[i+1:], end)
			if j < 0 {
				return false
			}
			i += j + 2
		case strings.HasPrefix(sql[i:], "--"), strings.HasPrefix(sql[i:], "/*"):
			rest := skipBlank(sql[i:])
			i = len(sql) - len(rest)
		case isWordByte(c):
			j := i
			for j < len(sql) && isWordByte(sql[j]) {
				j++
			}
			if strings.EqualFold(sql[i:j], kw) {
				return true
			}
			i = j
		default:
			i++
		}
	}
	return false
}
