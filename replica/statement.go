package replica

import (
	"regexp"
	"strings"

	"certa/pgparse"
)

// kind is what a statement is, as far as the session must know before
// handing it to the engine.
type kind int

const (
	kindEmpty kind = iota
	kindBegin
	kindCommit
	kindRollback
	kindSet
	kindShow
	kindSetConfig // SELECT set_config(...) of constants or parameters alone (pgparse.ParseSetConfig)
	kindDDL
	kindCatalog   // a query on pg_catalog or information_schema
	kindSavepoint // SAVEPOINT, RELEASE [SAVEPOINT], ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT]
	kindRefused   // transaction control certa does not do (two-phase commit)
	kindOther     // queries and DML: run by the engine
)

// statement is one statement of a query string.
type statement struct {
	sql   string
	at    int // bytes before sql in its query string
	kind  kind
	words []string // first keywords, upper-cased (at most 4)
	args  []any    // values of $1, $2, ... (extended query protocol)
}

// splitStatements splits a query string on semicolons that are outside
// quotes, comments, dollar-quoted strings, parentheses (a rule's actions)
// and BEGIN ... END or CASE ... END (a BEGIN ATOMIC function body), as
// psql splits a script, dropping empty statements unless the whole string
// is empty.
func splitStatements(sql string) []statement {
	var out []statement
	start := 0
	parens, blocks, words := 0, 0, 0
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == '(':
			parens++
			i++
		case c == ')':
			parens = max(parens-1, 0)
			i++
		case isIdent(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(sql) && isIdent(sql[j]) {
				j++
			}
			// As psql counts: BEGIN or CASE after the statement's first
			// word opens a block, END closes one.
			words++
			switch w := sql[i:j]; {
			case (strings.EqualFold(w, "BEGIN") || strings.EqualFold(w, "CASE")) && words > 1:
				blocks++
			case strings.EqualFold(w, "END") && blocks > 0:
				blocks--
			}
			i = j
		case c == ';' && (parens > 0 || blocks > 0):
			i++
		case c == '\'' || c == '"':
			i = skipQuoted(sql, i, c)
		case c == '-' && strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(sql[i:], "/*"):
			i = pgparse.BlockCommentEnd(sql, i)
		case c == '$':
			i = skipDollarQuoted(sql, i)
		case c == ';':
			if s := newStatement(sql[start:i]); s.kind != kindEmpty {
				s.at = start + len(sql[start:i]) - len(strings.TrimLeft(sql[start:i], " \t\n\r\f\v"))
				if keepsText(s.words) {
					s.sql = sql[s.at : i+1]
				}
				out = append(out, s)
			}
			i++
			start = i
			parens, blocks, words = 0, 0, 0
		default:
			i++
		}
	}
	if s := newStatement(sql[start:]); s.kind != kindEmpty {
		s.at = start + len(sql[start:]) - len(strings.TrimLeft(sql[start:], " \t\n\r\f\v"))
		out = append(out, s)
	}
	return out
}

// keepsText says whether a statement that opens with words is one whose
// text PostgreSQL keeps and shows (PREPARE in pg_prepared_statements,
// DECLARE in pg_cursors): it goes to the engine with its ';', as psql
// sends it.
func keepsText(words []string) bool {
	return len(words) > 0 && (words[0] == "PREPARE" || words[0] == "DECLARE")
}

func skipQuoted(s string, i int, q byte) int {
	// E'...' strings allow backslash escapes; plain strings double the quote.
	backslash := q == '\'' && i > 0 && (s[i-1] == 'E' || s[i-1] == 'e') && (i < 2 || !isIdent(s[i-2]))
	for i++; i < len(s); i++ {
		switch {
		case backslash && s[i] == '\\':
			i++
		case s[i] == q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1
		}
	}
	return len(s)
}

// skipDollarQuoted skips $tag$...$tag$ starting at s[i] == '$'. A '$' that
// does not open a dollar quote (e.g. a $1 parameter) is skipped alone.
func skipDollarQuoted(s string, i int) int {
	if i > 0 && isIdent(s[i-1]) {
		return i + 1
	}
	j := i + 1
	for j < len(s) && isIdent(s[j]) && !(s[j] >= '0' && s[j] <= '9' && j == i+1) {
		j++
	}
	if j >= len(s) || s[j] != '$' {
		return i + 1
	}
	tag := s[i : j+1]
	if end := strings.Index(s[j+1:], tag); end >= 0 {
		return j + 1 + end + len(tag)
	}
	return len(s)
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func newStatement(sql string) statement {
	s := statement{sql: strings.TrimSpace(sql), words: leadingWords(sql, 4)}
	if len(s.words) == 0 {
		// A statement that opens with no keyword ((SELECT 1) UNION ...,
		// (VALUES (1))) is a query like any other; only whitespace and
		// comments make an empty one.
		s.kind = kindOther
		if blank(sql) {
			s.kind = kindEmpty
		}
		return s
	}
	switch s.words[0] {
	case "BEGIN":
		s.kind = kindBegin
	case "START":
		if len(s.words) > 1 && s.words[1] == "TRANSACTION" {
			s.kind = kindBegin
		} else {
			s.kind = kindOther
		}
	case "COMMIT", "END", "ROLLBACK", "ABORT":
		s.kind = endKind(s.words)
	case "SAVEPOINT", "RELEASE":
		s.kind = kindSavepoint
	case "PREPARE":
		if len(s.words) > 1 && s.words[1] == "TRANSACTION" {
			s.kind = kindRefused
		} else {
			s.kind = kindOther
		}
	case "SET", "RESET":
		s.kind = kindSet
	case "SHOW":
		s.kind = kindShow
	case "CREATE", "ALTER", "DROP", "TRUNCATE", "COMMENT", "GRANT", "REVOKE", "REFRESH", "REASSIGN", "SECURITY", "IMPORT":
		s.kind = kindDDL
	default:
		s.kind = kindOther
		if s.words[0] == "SELECT" && strings.Contains(strings.ToLower(s.sql), "set_config") {
			if _, ok := pgparse.ParseSetConfig(s.sql); ok {
				s.kind = kindSetConfig
				return s
			}
		}
		if (s.words[0] == "SELECT" || s.words[0] == "WITH") && catalogRef.MatchString(s.sql) && pgparse.ReadsCatalog(s.sql) {
			s.kind = kindCatalog
		}
	}
	return s
}

// endKind classifies a statement starting with COMMIT, END, ROLLBACK or
// ABORT. Only the plain forms end the block: ROLLBACK TO SAVEPOINT undoes
// part of it and must never be taken for ROLLBACK (the block would end and
// a later COMMIT would answer COMMIT for work that is gone).
func endKind(words []string) kind {
	rest := words[1:]
	if len(rest) > 0 && (rest[0] == "WORK" || rest[0] == "TRANSACTION") {
		rest = rest[1:]
	}
	end := kindCommit
	if words[0] == "ROLLBACK" || words[0] == "ABORT" {
		end = kindRollback
	}
	switch {
	case len(rest) == 0:
		return end
	case rest[0] == "TO" && words[0] == "ROLLBACK":
		return kindSavepoint
	case rest[0] == "AND" && len(rest) > 1 && (rest[1] == "NO" || rest[1] == "CHAIN"):
		return end // AND NO CHAIN is the plain form; AND CHAIN: chained
	case rest[0] == "PREPARED":
		return kindRefused
	}
	// Anything else is not PostgreSQL syntax: the engine refuses it.
	return kindOther
}

// chained reports whether a COMMIT or ROLLBACK statement (kindCommit,
// kindRollback) says AND CHAIN: a new block follows at once, with the
// same modes.
func chained(words []string) bool {
	n := len(words)
	return n >= 2 && words[n-2] == "AND" && words[n-1] == "CHAIN"
}

// IsCatalogQuery reports whether a session sends sql to the engine's
// Catalog (on an engine that does not run PostgreSQL): a SELECT or WITH
// that reads PostgreSQL's system catalogs.
func IsCatalogQuery(sql string) bool { return newStatement(sql).kind == kindCatalog }

// catalogRef tells a query that may read PostgreSQL's system catalogs
// (any pg_* name: pg_dump reads pg_operator, pg_ts_dict and the like; a
// function only the catalog has; a reg* cast), cheaply;
// pgparse.ReadsCatalog decides.
var catalogRef = regexp.MustCompile(`(?i)(?:"|\b)(information_schema"?\s*\.|pg_\w+|obj_description|col_description|format_type|to_reg\w+|acldefault|current_schemas)|::\s*reg\w+`)

// leadingWords returns up to n leading keywords of sql, upper-cased,
// skipping whitespace and comments.
// blank reports whether sql holds nothing but whitespace and comments.
func blank(sql string) bool {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			i = pgparse.BlockCommentEnd(sql, i)
		default:
			return false
		}
	}
	return true
}

func leadingWords(sql string, n int) []string {
	var words []string
	i := 0
	for i < len(sql) && len(words) < n {
		c := sql[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			i = pgparse.BlockCommentEnd(sql, i)
		case isIdent(c):
			j := i
			for j < len(sql) && (isIdent(sql[j]) || sql[j] == '.') {
				j++
			}
			words = append(words, strings.ToUpper(sql[i:j]))
			i = j
		default:
			return words
		}
	}
	return words
}
