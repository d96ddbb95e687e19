package sqlite

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/pgparse"
	"certa/sqlerr"
)

// Errors a local transaction reports; all are 40001 so that clients retry.
var (
	errAborted = &sqlerr.Error{Code: sqlerr.SerializationFailure, Err: engine.ErrAbortedForApply,
		Message: "could not serialize access: transaction aborted so that a replicated commit could be applied; retry the transaction"}
	errLockWait = &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access: another local transaction held the write lock too long; retry the transaction"}
	errReadChanged = &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access: data this transaction read was changed by a concurrent commit; retry the transaction"}
	errWriteConflict = &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access due to a concurrent update of a row this transaction writes; retry the transaction"}
	errRestored = &sqlerr.Error{Code: sqlerr.SerializationFailure,
		Message: "could not serialize access: the database was replaced by a state transfer; retry the transaction"}
	errClosed = &sqlerr.Error{Code: sqlerr.AdminShutdown,
		Message: "terminating connection: the database engine is closed"}
	errTxDone = &sqlerr.Error{Code: sqlerr.NoActiveTransaction,
		Message: "the transaction has already ended"}
)

// errOneStatement is returned when a statement has a non-blank tail.
func errOneStatement() *sqlerr.Error {
	return sqlerr.New(sqlerr.SyntaxError, "one statement expected")
}

// notNullMessage says SQLite's "NOT NULL constraint failed: t.c" in
// PostgreSQL's words.
func notNullMessage(msg string) string {
	table, col, ok := strings.Cut(strings.TrimPrefix(msg, "NOT NULL constraint failed: "), ".")
	if !ok || strings.ContainsAny(col, " .") {
		return msg
	}
	return fmt.Sprintf("null value in column %q of relation %q violates not-null constraint", col, table)
}

// mapErr turns an error from SQLite (or from ctx) into a *sqlerr.Error with
// the SQLSTATE a PostgreSQL client expects. Errors that already carry one
// pass through.
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return se
	}
	switch {
	case errors.Is(err, context.Canceled):
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to user request")
	case errors.Is(err, context.DeadlineExceeded):
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	code := sqlite.ErrCode(err)
	msg := sqliteMessage(err)
	switch code {
	case sqlite.ResultConstraintUnique, sqlite.ResultConstraintPrimaryKey, sqlite.ResultConstraintRowID:
		return sqlerr.Wrap(err, sqlerr.UniqueViolation, "%s", msg)
	case sqlite.ResultConstraintNotNull:
		return sqlerr.Wrap(err, sqlerr.NotNullViolation, "%s", notNullMessage(msg))
	case sqlite.ResultConstraintCheck:
		name := strings.TrimPrefix(msg, "CHECK constraint failed: ")
		if code := typeCheckCode(name); code != "" {
			return sqlerr.Wrap(err, code, "%s", name)
		}
		if isMatchFullCheck(name) {
			e := sqlerr.Wrap(err, sqlerr.ForeignKeyViolation, "%s", name)
			e.Detail = matchFullDetail
			return e
		}
		return sqlerr.Wrap(err, sqlerr.CheckViolation, "%s", msg)
	case sqlite.ResultConstraintForeignKey:
		return sqlerr.Wrap(err, sqlerr.ForeignKeyViolation, "%s", msg)
	}
	switch code.ToPrimary() {
	case sqlite.ResultInterrupt:
		return sqlerr.Wrap(err, sqlerr.QueryCanceled, "canceling statement due to user request")
	case sqlite.ResultFull:
		return sqlerr.Wrap(err, sqlerr.DiskFull, "could not write: disk full")
	case sqlite.ResultTooBig:
		return sqlerr.Wrap(err, sqlerr.ProgramLimitExceeded, "%s", msg)
	case sqlite.ResultBusy, sqlite.ResultLocked:
		// Our write lock keeps SQLite writers apart, so this is not
		// expected; if it happens, retrying is what helps.
		return sqlerr.Wrap(err, sqlerr.SerializationFailure, "could not serialize access: %s; retry the transaction", msg)
	case sqlite.ResultError:
		switch {
		case strings.Contains(msg, "syntax error"), strings.Contains(msg, "incomplete input"),
			strings.Contains(msg, "unrecognized token"):
			return sqlerr.Wrap(err, sqlerr.SyntaxError, "%s", msg)
		case strings.HasPrefix(msg, "Cannot add a column with non-constant default"):
			return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "ALTER TABLE ADD COLUMN with a default that is not a constant (now(), a function, an expression) is not supported by the embedded engine (SQLite): add the column, UPDATE its rows, then ALTER COLUMN ... SET DEFAULT")
		case strings.HasPrefix(msg, "no such table: "):
			return sqlerr.Wrap(err, sqlerr.UndefinedTable, "relation %q does not exist", missingName(msg))
		case msg == "HAVING clause on a non-aggregate query":
			// HAVING without GROUP BY where the targets read columns
			// outside aggregates (SELECT *: pgparse makes the others one
			// group, as PostgreSQL does).
			return sqlerr.Wrap(err, sqlerr.GroupingError, "a query with HAVING and no GROUP BY can read columns only in aggregate functions")
		case strings.Contains(msg, " BY term out of range"):
			return sqlerr.Wrap(err, sqlerr.InvalidColumnReference, "%s", msg) // a position past a *'s columns (pgparse checks the others)
		case strings.HasPrefix(msg, "ambiguous column name: "):
			return sqlerr.Wrap(err, sqlerr.AmbiguousColumn, "column reference %q is ambiguous", strings.TrimPrefix(msg, "ambiguous column name: "))
		case strings.HasPrefix(msg, "no such column: "):
			return sqlerr.Wrap(err, sqlerr.UndefinedColumn, "column %q does not exist", missingName(msg))
		case strings.HasPrefix(msg, "no such index"), strings.HasPrefix(msg, "no such view"):
			return sqlerr.Wrap(err, sqlerr.UndefinedObject, "%s", msg)
		case strings.Contains(msg, "already exists"):
			if m := relationExists.FindStringSubmatch(msg); m != nil {
				return sqlerr.Wrap(err, sqlerr.DuplicateTable, "relation %q already exists", m[1]) // PostgreSQL's words
			}
			return sqlerr.Wrap(err, sqlerr.DuplicateTable, "%s", msg)
		case strings.HasPrefix(msg, "all VALUES must have the same number of terms"):
			return sqlerr.Wrap(err, sqlerr.SyntaxError, "VALUES lists must all be the same length")
		case strings.HasPrefix(msg, "table ") && strings.Contains(msg, " values for "):
			// A subquery's alias names more columns than it has: SQLite
			// says "table certa_s has 1 values for 2 columns" of the
			// common table expression pgparse names after the alias.
			var name string
			var have, named int
			if n, _ := fmt.Sscanf(msg, "table %s has %d values for %d columns", &name, &have, &named); n == 3 && have < named {
				return sqlerr.Wrap(err, sqlerr.InvalidColumnReference, "table %q has %d columns available but %d columns specified", strings.TrimPrefix(name, "certa_"), have, named)
			}
			return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "an alias naming fewer columns than its subquery has is not supported by the embedded engine (SQLite); the PostgreSQL engine (--engine postgres) supports it")
		case strings.Contains(msg, "values were supplied"), strings.Contains(msg, " values for "):
			// PostgreSQL names which side is longer; SQLite's message
			// says it with the numbers.
			var a, b int
			if n, _ := fmt.Sscanf(msg[strings.Index(msg, " has ")+1:], "has %d columns but %d values", &a, &b); n == 2 && b < a {
				return sqlerr.Wrap(err, sqlerr.SyntaxError, "INSERT has more target columns than expressions")
			}
			if n, _ := fmt.Sscanf(msg, "%d values for %d columns", &b, &a); n == 2 && b < a {
				return sqlerr.Wrap(err, sqlerr.SyntaxError, "INSERT has more target columns than expressions")
			}
			return sqlerr.Wrap(err, sqlerr.SyntaxError, "INSERT has more expressions than target columns")
		case strings.HasPrefix(msg, "ON CONFLICT clause does not match any PRIMARY KEY or UNIQUE constraint"):
			return sqlerr.Wrap(err, sqlerr.InvalidColumnReference, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
		case strings.HasPrefix(msg, "cannot VACUUM"):
			return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "VACUUM is not supported: certa maintains each node's database file itself")
		case msg == "not authorized": // load_extension
			return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "loading SQLite extensions is not supported")
		}
	}
	return sqlerr.Wrap(err, sqlerr.Internal, "%s", msg)
}

// missingColumn turns SQLite's "no such column" of text, a statement
// printed for SQLite, into PostgreSQL's error, at the reference: a
// qualifier that names no table of the statement, or a table by its name
// where the statement gave it an alias, is 42P01, as PostgreSQL's parser
// says. Any other error, or a reference the printing made, stays.
func missingColumn(text string, err error) error {
	msg := sqliteMessage(err)
	if !strings.HasPrefix(msg, "no such column: ") {
		return err
	}
	name := missingName(msg)
	qualifier, column, qualified := strings.Cut(name, ".")
	if !qualified {
		qualifier, column = "", name
	}
	if strings.Contains(column, ".") || strings.HasPrefix(qualifier, "certa_") {
		return err
	}
	m, ok := pgparse.FindMissingColumn(text, qualifier, column)
	if !ok {
		return err
	}
	var e *sqlerr.Error
	switch {
	case m.Problem == "whole row":
		e = sqlerr.New(sqlerr.FeatureNotSupported, "a whole-row reference (the table %s as a value) is not supported by the embedded engine (SQLite); the PostgreSQL engine (--engine postgres) supports it", column)
	case m.Problem == "missing FROM":
		e = sqlerr.New(sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", qualifier)
	case m.Problem == "aliased":
		e = sqlerr.New(sqlerr.UndefinedTable, "invalid reference to FROM-clause entry for table %q", qualifier)
		e.Hint = fmt.Sprintf("Perhaps you meant to reference the table alias %q.", m.Alias)
	case qualified:
		e = sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", qualifier, column)
	default:
		e = sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", column)
	}
	e.Position = int32(m.Position)
	return e
}

// notEmbedded turns SQLite's syntax error for text into what it is. If
// PostgreSQL's parser refuses text too, its error is the client's (with
// PostgreSQL's message and position). Else text is PostgreSQL that SQLite
// does not take: a command the embedded engine does not have (CREATE
// ROLE, NOTIFY, DO...), or, printed for SQLite (printed), a form of a
// query SQLite has not (a whole-row comparison, count(t.*), a data
// change inside WITH): 0A000 either way, not a mistake of the client's.
func notEmbedded(text string, printed bool, err error) error {
	msg := sqliteMessage(err)
	if sqlite.ErrCode(err).ToPrimary() != sqlite.ResultError || !strings.Contains(msg, "syntax error") {
		return err
	}
	cmd, perr := pgparse.ParseCommand(text)
	switch {
	case perr != nil:
		return perr
	case printed:
		e := sqlerr.New(sqlerr.FeatureNotSupported, "this statement uses a form the embedded SQLite engine does not support (SQLite: %s)", msg)
		e.Hint = "The PostgreSQL engine (--engine postgres) runs it."
		return e
	}
	return errNotEmbedded(cmd.Words)
}

// errNotEmbedded refuses a command the embedded engine does not have.
func errNotEmbedded(words string) *sqlerr.Error {
	e := sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded SQLite engine", words)
	e.Hint = "The PostgreSQL engine (--engine postgres) runs it."
	return e
}

// refuseExplain refuses EXPLAIN, which SQLite would answer with its own
// plan (its program's instructions), nothing like PostgreSQL's.
func refuseExplain(sql string) error {
	if cmd, err := pgparse.ParseCommand(sql); err == nil && cmd.Kind == "ExplainStmt" {
		return errNotEmbedded("EXPLAIN")
	}
	return nil
}

// missingName is the name in SQLite's "no such table: x" or "no such
// column: "x" - should this be a string literal...?".
func missingName(msg string) string {
	_, name, _ := strings.Cut(msg, ": ")
	name, _, _ = strings.Cut(name, " - ")
	if strings.HasPrefix(name, "main.") {
		name = name[len("main."):]
	}
	if len(name) >= 2 && name[0] == '"' && name[len(name)-1] == '"' {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	}
	return name
}

// sqliteMessage extracts SQLite's own message ("no such table: t") from a
// zombiezen error ("sqlite: prepare: 1:15: SQL logic error: no such table: t").
func sqliteMessage(err error) string {
	s := err.Error()
	code := sqlite.ErrCode(err)
	for _, c := range []sqlite.ResultCode{code, code.ToPrimary()} {
		if m := c.Message(); m != "" {
			if i := strings.Index(s, m+": "); i >= 0 {
				return s[i+len(m)+2:]
			}
		}
	}
	for strings.HasPrefix(s, "sqlite: ") {
		s = strings.TrimPrefix(s, "sqlite: ")
		if i := strings.Index(s, ": "); i >= 0 && !strings.Contains(s[:i], " ") {
			s = s[i+2:] // the operation ("step: ")
		}
	}
	return s
}

// isTransient reports whether err says nothing about the statement itself
// (the engine or the machine failed), so a batch hitting it cannot be said to
// have failed deterministically.
func isTransient(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var se *sqlerr.Error
	if errors.As(err, &se) && se.Err == nil {
		return false // one of our own refusals
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultInterrupt, sqlite.ResultIOErr, sqlite.ResultFull, sqlite.ResultNoMem,
		sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultCorrupt, sqlite.ResultCantOpen,
		sqlite.ResultNotADB, sqlite.ResultReadOnly, sqlite.ResultProtocol, sqlite.ResultMisuse:
		return true
	}
	return false
}

// relationExists is SQLite's message for a table, view or index whose
// name is taken, with the name.
var relationExists = regexp.MustCompile(`^(?:table|view|index) "?([^"]*)"? already exists$`)
