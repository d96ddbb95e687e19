package postgres

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/sqlerr"
)

// Notices. PostgreSQL sends NOTICE, WARNING and INFO messages while a
// statement runs (RAISE NOTICE, "table ... does not exist, skipping").
// Those of a client's statement reach the client as PostgreSQL sent them;
// those of certa's own statements on the same backend (its resets, its
// checks) do not: a connection passes notices on only while it runs a
// client's statement (conn.forwardNotices).

// noticeSink is where a pooled connection's notices go: send, while a
// client's statement runs on it, else nowhere. pgconn calls handle on
// the goroutine that reads the statement's result, which is the one that
// set send.
type noticeSink struct {
	send func(*sqlerr.Error)
}

func (n *noticeSink) handle(_ *pgconn.PgConn, pn *pgconn.Notice) {
	if n.send != nil {
		n.send(noticeError((*pgconn.PgError)(pn)))
	}
}

// forwardNotices passes c's notices on to the client whose statement ctx
// runs (sqlerr.WithNotices) until the function it returns is called.
func (c *conn) forwardNotices(ctx context.Context) (stop func()) {
	return c.forwardNoticesTo(sqlerr.NoticesFrom(ctx))
}

// forwardNoticesTo passes c's notices on to send (nil: nowhere) until
// the function it returns is called.
func (c *conn) forwardNoticesTo(send func(*sqlerr.Error)) (stop func()) {
	if c.notices == nil {
		return func() {}
	}
	c.notices.send = send
	return func() { c.notices.send = nil }
}

// noticeError is a notice (or an error) of PostgreSQL's with all its
// fields.
func noticeError(pe *pgconn.PgError) *sqlerr.Error {
	return &sqlerr.Error{
		Severity: pe.Severity, Code: pe.Code, Message: pe.Message, Detail: pe.Detail, Hint: pe.Hint,
		Position: pe.Position, InternalPosition: pe.InternalPosition, InternalQuery: pe.InternalQuery,
		Where: withoutCertaContext(pe.Where), SchemaName: pe.SchemaName, TableName: pe.TableName, ColumnName: pe.ColumnName,
		DataTypeName: pe.DataTypeName, ConstraintName: pe.ConstraintName,
		File: pe.File, Line: pe.Line, Routine: pe.Routine,
	}
}

// withoutCertaContext drops from an error's CONTEXT its innermost
// entries that are certa's own functions (a refusal raised in
// certa.refuse_fault, called by certa.equip_tables, called by the event
// trigger): they say nothing to the client, whose own frames (its
// function, its statement), which follow, stay.
func withoutCertaContext(where string) string {
	// A role statement's own messages come from certa.role_statement's
	// EXECUTE of it, the outermost frames: "SQL statement "<the
	// client's statement>"" and the function's line.
	if at := strings.Index(where, "PL/pgSQL function certa.role_statement("); at >= 0 {
		cut := strings.LastIndex(where[:at], `SQL statement "`)
		if cut < 0 {
			cut = at
		}
		where = strings.TrimSuffix(where[:cut], "\n")
	}
	lines := strings.Split(where, "\n")
	i := 0
	for i < len(lines) {
		switch l := lines[i]; {
		case strings.HasPrefix(l, "PL/pgSQL function certa."), strings.HasPrefix(l, `SQL function "`) && strings.Contains(l, "certa."):
			i++
		case strings.HasPrefix(l, `SQL statement "SELECT certa.`):
			// Its text may run over several lines, to the closing quote.
			for i < len(lines) && !strings.HasSuffix(lines[i], `"`) {
				i++
			}
			i++
		default:
			return strings.Join(lines[i:], "\n")
		}
	}
	return ""
}
