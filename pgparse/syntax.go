package pgparse

import (
	"errors"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"certa/sqlerr"
)

// CheckSyntax returns PostgreSQL's syntax error of the query string sql
// (its message, and its position in characters from 1), or nil if
// PostgreSQL's parser takes it. PostgreSQL parses a whole query string
// before it runs any of its statements: one bad statement runs none.
func CheckSyntax(sql string) error {
	_, err := pg_query.Parse(sql)
	if err == nil {
		return nil
	}
	return parseError(err)
}

// syntaxError is err of pg_query as a client's error: 42601 with
// PostgreSQL's message, position and source location.
func syntaxError(err error) *sqlerr.Error {
	e := sqlerr.New(sqlerr.SyntaxError, "%s", err.Error())
	var pe *parser.Error
	if errors.As(err, &pe) {
		e.Position = int32(pe.Cursorpos)
		e.File, e.Routine = pe.Filename, pe.Funcname
		if pe.Lineno > 0 {
			e.Line = int32(pe.Lineno)
		}
	}
	return e
}
