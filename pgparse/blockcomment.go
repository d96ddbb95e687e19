package pgparse

import "strings"

// BlockCommentEnd returns the index just past the block comment that
// starts at s[i] ("/*"), or len(s) if it is not closed. Block comments
// nest, as PostgreSQL's lexer (and psql's) reads them: "/* a /* b */ c */"
// is one comment, and so is a statement inside one that has its own.
func BlockCommentEnd(s string, i int) int {
	depth := 0
	for i < len(s) {
		switch {
		case strings.HasPrefix(s[i:], "/*"):
			depth++
			i += 2
		case strings.HasPrefix(s[i:], "*/"):
			depth--
			i += 2
			if depth == 0 {
				return i
			}
		default:
			i++
		}
	}
	return len(s)
}
