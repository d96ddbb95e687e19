// Package pgwire is certa's PostgreSQL wire-protocol front end: it accepts
// client connections, speaks the protocol (pgproto3 codec) and hands every
// query to a Session. It knows nothing of replication.
//
// What it speaks, for now: protocol 3.0 (3.2 clients are negotiated down);
// trust authentication by default, or SCRAM-SHA-256 against configured
// users (Config.Credentials, Users, ReadUsers), without channel binding;
// TLS when Config.TLS is set (an SSLRequest is answered 'S', and the
// handshake runs on the same socket; otherwise 'N', so libpq's default
// sslmode=prefer connects in the clear); no GSS encryption; the simple
// query protocol with text-format results, and the extended query protocol
// (named and unnamed statements and portals, row limits, parameters and
// results in text or binary format; see values.go for the types).
//
// Cancel requests work as in PostgreSQL: every session gets a random key
// (BackendKeyData), and a CancelRequest carrying it, on a connection of its
// own, cancels the context of the statement running on that session, which
// the client sees as 57014. A wrong key does nothing, and no cancel request
// gets an answer.
//
// File layout: server.go (listeners, connection limits, Close), conn.go
// (one connection's message loop), startup.go (startup packets and
// session start), tls.go, auth.go (SCRAM exchange), scram.go (credentials
// and the users file), cancel.go, writer.go (results to messages), extended.go (the extended
// query protocol), values.go and numeric.go (values by type and format).
//
// Every connection runs in its own goroutine and is isolated from the
// others: a malformed or oversized message, a panic in a session or a
// client going away ends that connection only.
package pgwire

import (
	"context"

	"certa/result"
)

// Backend opens sessions for accepted connections.
type Backend interface {
	// NewSession is called once a client's startup message is accepted,
	// with the run-time parameters it sets (name, value; its parameters
	// and its options' -c name=value, in the order they apply), which the
	// session takes as PostgreSQL does at connection.
	// An error (a *sqlerr.Error) is sent to the client and the connection closed.
	NewSession(ctx context.Context, user, database string, settings [][2]string) (Session, error)
}

// RawParams may be implemented by a Session: true if its engine runs
// PostgreSQL itself, which then reads Bind's parameters as the client sent
// them (result.WireParam, in their formats and of their types) rather than
// as pgwire decodes them.
type RawParams interface {
	RawParams() bool
}

// Session runs one client connection's statements. Its methods are called
// from the connection's goroutine only.
type Session interface {
	// Query runs every statement in sql (simple query protocol), reporting each
	// statement's result to w in order. It returns the error that stopped it
	// (sent to the client as ErrorResponse after the results so far), or nil.
	// ctx ends when the connection closes or the client cancels the query
	// (a context error passed through is then reported as 57014).
	Query(ctx context.Context, sql string, w result.Writer) error

	// Describe returns the types of one statement's parameters ($1 first)
	// and result columns (nil: no result set; result.Unknown: known only
	// once it runs) without running it. It fails as running it would for
	// a syntax error, an unknown table or column, or more than one statement.
	Describe(ctx context.Context, sql string) (params []result.Type, cols []result.Column, err error)

	// Execute runs one statement with parameter values ($1 is args[0];
	// nil, int64, float64, string, []byte or bool), reporting its result to
	// w as Query does.
	Execute(ctx context.Context, sql string, args []any, w result.Writer) error

	// TakeReported returns the parameters (name, value) whose values
	// changed since the last call, which the client is told about with
	// ParameterStatus.
	TakeReported() [][2]string

	// TxStatus returns the status for ReadyForQuery: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte

	// Close ends the session, rolling back any open transaction.
	Close()
}
