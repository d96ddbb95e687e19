package pgwire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime/debug"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/sqlerr"
)

const (
	// writeBufferSize bounds the results buffered per connection: output is
	// written to the socket when this fills, at ReadyForQuery, and whenever
	// the connection is about to wait for input.
	writeBufferSize = 16 << 10

	// goodbyeTimeout bounds the last write to a client that is being
	// disconnected (shutdown, panic), which may not be reading.
	goodbyeTimeout = time.Second

	// lingerTimeout and lingerMaxBytes bound the draining of a client's
	// unread input after a fatal protocol error. Closing a socket with unread
	// input makes the kernel send RST, which can destroy the ErrorResponse
	// before the client reads it; draining first lets the client see why.
	lingerTimeout  = time.Second
	lingerMaxBytes = 4 << 20
)

// conn is one client connection, served by one goroutine.
type conn struct {
	s    *Server
	nc   net.Conn
	log  *slog.Logger
	ctx  context.Context // ends when the connection ends or the server closes
	be   *pgproto3.Backend
	bw   *bufio.Writer
	sess Session

	// readErr and writeErr are the socket's own errors, recorded so that a
	// failed Receive can be told apart from a malformed message (pgproto3
	// returns both as plain errors) and so that no more is written to a
	// socket that failed.
	readErr  error
	writeErr error

	// ignoreTillSync is PostgreSQL's error recovery in the extended query
	// protocol: after an error, discard messages until Sync.
	ignoreTillSync bool
	copying        *copyReader // the COPY FROM STDIN of the running statement, if any (copy.go)

	// The extended query protocol's prepared statements and portals, by
	// name ("" is the unnamed one).
	stmts   map[string]*preparedStmt
	portals map[string]*portal

	// linger asks close to drain the client's input first (see lingerTimeout).
	linger bool

	// nread counts the bytes read from the socket before TLS, so that
	// startTLS can tell whether pgproto3 read ahead (see startTLS).
	nread int64
	// tls is set once the connection runs over TLS.
	tls bool
	// startupDeadline bounds the startup phase (StartupTimeout).
	startupDeadline time.Time
	// host is the client's address, by which admission counts
	// (admission.go); admitted is set once the connection counts against
	// MaxConns.
	host     string
	admitted bool

	// cancelKey is the BackendKeyData sent to the client, registered in
	// s.cancels from then until close.
	cancelKey cancelKey
	// stmtCancel cancels the running statement's context, nil between
	// statements; a CancelRequest calls it from another goroutine. A
	// CancelRequest arriving while the connection works on messages but
	// runs no statement (a Parse before its Execute) sets cancelPending,
	// which cancels the next statement; like PostgreSQL, a cancel arriving
	// while the connection waits for a new command is dropped (waiting
	// clears it).
	stmtMu        sync.Mutex
	stmtCancel    context.CancelCauseFunc
	waiting       bool
	cancelPending bool
	// idle is set when ReadyForQuery goes out and cleared when a message
	// comes in; only the connection's goroutine uses it.
	idle bool
}

// codeIdleInTransactionTimeout is PostgreSQL's
// idle_in_transaction_session_timeout SQLSTATE.
const codeIdleInTransactionTimeout = "25P03"

// connReader is what pgproto3 reads from. It is called only when pgproto3
// has no complete message buffered, i.e. just before the connection would
// wait for the client, which is exactly when buffered output must go out
// (otherwise a client waiting for our answer and us waiting for its next
// message would deadlock).
type connReader struct{ c *conn }

func (r connReader) Read(p []byte) (int, error) {
	if err := r.c.flush(); err != nil {
		return 0, err
	}
	r.c.setWaiting(true)
	n, err := r.c.nc.Read(p)
	r.c.setWaiting(false)
	r.c.nread += int64(n)
	if err != nil {
		r.c.readErr = err
	}
	return n, err
}

// connWriter is what pgproto3 writes encoded messages to.
type connWriter struct{ c *conn }

func (w connWriter) Write(p []byte) (int, error) {
	if w.c.writeErr != nil {
		return 0, w.c.writeErr
	}
	n, err := w.c.bw.Write(p)
	if err != nil {
		w.c.writeErr = err
	}
	return n, err
}

// serveConn runs one connection from host to its end and closes it. It
// reports whether the connection was admitted (authenticated and counted
// against MaxConns).
func (s *Server) serveConn(nc net.Conn, host string) (admitted bool) {
	ctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	c := &conn{
		s:    s,
		nc:   nc,
		host: host,
		log:  s.log.With("remote", remoteAddr(nc)),
		ctx:  ctx,
		bw:   bufio.NewWriterSize(nc, writeBufferSize),
	}
	defer func() { admitted = c.admitted }()
	c.newBackend()

	defer c.close()
	// One connection's bug must not take the server down: recover, tell the
	// client (if the socket still works) and drop the connection.
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("pgwire: panic serving connection; closing it", "panic", r, "stack", string(debug.Stack()))
			c.goodbye(sqlerr.Internal, "internal error")
		}
	}()

	if !c.startup() {
		return
	}
	c.serve()
	return
}

// newBackend makes the protocol decoder and encoder for the connection's
// current socket.
func (c *conn) newBackend() {
	c.be = pgproto3.NewBackend(connReader{c}, connWriter{c})
	c.be.SetMaxBodyLen(c.s.cfg.MaxMessageSize)
}

func remoteAddr(nc net.Conn) string {
	if a := nc.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// serve is the message loop after startup: it returns when the connection
// should end.
func (c *conn) serve() {
	for {
		idleInTx := c.s.cfg.IdleInTransactionTimeout > 0 && c.sess.TxStatus() != 'I'
		var deadline time.Time
		if idleInTx {
			deadline = time.Now().Add(c.s.cfg.IdleInTransactionTimeout)
		}
		if !c.setReadDeadline(deadline) {
			c.goodbye(sqlerr.AdminShutdown, "terminating connection due to administrator command")
			return
		}
		msg, err := c.be.Receive()
		var ne net.Error
		if err != nil && idleInTx && errors.As(c.readErr, &ne) && ne.Timeout() && c.s.ctx.Err() == nil {
			c.log.Info("pgwire: idle in transaction too long; closing connection", "timeout", c.s.cfg.IdleInTransactionTimeout)
			c.goodbye(codeIdleInTransactionTimeout, "terminating connection due to idle-in-transaction timeout")
			return
		}
		if err != nil {
			c.receiveFailed(err, "frontend message")
			return
		}
		c.idle = false
		if !c.handle(msg) || c.writeErr != nil {
			return
		}
		if c.s.ctx.Err() != nil {
			c.goodbye(sqlerr.AdminShutdown, "terminating connection due to administrator command")
			return
		}
	}
}

// handle processes one frontend message; false ends the connection.
func (c *conn) handle(msg pgproto3.FrontendMessage) bool {
	if c.ignoreTillSync {
		switch msg.(type) {
		case *pgproto3.Sync:
			c.ignoreTillSync = false
			c.sync()
		case *pgproto3.Terminate:
			// PostgreSQL ignores even Terminate here, but the client means
			// it, and hanging up is what it would do next anyway.
			return false
		}
		return true
	}

	switch m := msg.(type) {
	case *pgproto3.Query:
		return c.query(m.String)
	case *pgproto3.Parse, *pgproto3.Bind, *pgproto3.Describe, *pgproto3.Execute, *pgproto3.Close:
		return c.handleExtended(msg)
	case *pgproto3.Sync:
		c.sync()
	case *pgproto3.Flush:
		c.flush()
	case *pgproto3.Terminate:
		return false
	case *pgproto3.FunctionCall:
		c.sendError("ERROR", sqlerr.New(sqlerr.FeatureNotSupported, "function call protocol is not supported"))
		c.readyForQuery()
	default:
		// Decodable but out of place (CopyData with no COPY running, a
		// password nobody asked for): the stream is still in step, so the
		// connection survives.
		c.log.Warn("pgwire: unexpected frontend message", "type", typeName(msg))
		c.sendError("ERROR", sqlerr.New(sqlerr.ProtocolViolation, "unexpected message type %s", typeName(msg)))
		c.readyForQuery()
	}
	return true
}

// query runs one simple-protocol Query message.
func (c *conn) query(sql string) bool {
	w := &resultWriter{c: c}
	ctx, done := c.statementContext()
	err := c.sess.Query(ctx, sql, w)
	done()
	if !c.endCopy() || c.writeErr != nil {
		return false
	}
	if err == nil && w.inRows {
		// Without this the client would take the unfinished result set's
		// rows for a success.
		err = misuse("Query returned with a result set not completed")
	}
	if err != nil {
		if c.s.ctx.Err() != nil && errors.Is(err, context.Canceled) {
			// Stopped by Close: serve's goodbye says why, better than
			// "context canceled".
			return true
		}
		c.sendError("ERROR", statementError(ctx, err))
	}
	c.readyForQuery()
	return true
}

// readyForQuery tells the client the connection awaits its next query,
// after the parameters that changed.
func (c *conn) readyForQuery() {
	for _, p := range c.sess.TakeReported() {
		c.send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	status := c.sess.TxStatus()
	switch status {
	case 'I', 'T', 'E':
	default:
		// libpq would not know what to make of it; 'E' keeps the client
		// from assuming anything committed.
		c.log.Error("pgwire: session returned invalid transaction status", "status", status)
		status = 'E'
	}
	c.send(&pgproto3.ReadyForQuery{TxStatus: status})
	c.idle = true
	c.flush()
}

// receiveFailed handles an error from pgproto3's Receive or
// ReceiveStartupMessage; the connection ends after it.
func (c *conn) receiveFailed(err error, what string) {
	var tooBig *pgproto3.ExceededMaxBodyLenErr
	switch {
	case c.readErr != nil || c.writeErr != nil:
		// The socket failed, the client hung up or Close woke us.
		if c.s.ctx.Err() != nil {
			c.goodbye(sqlerr.AdminShutdown, "terminating connection due to administrator command")
			return
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			c.log.Debug("pgwire: connection failed", "err", err)
		}
	case errors.As(err, &tooBig):
		c.log.Warn("pgwire: frontend message too large; closing connection", "size", tooBig.ActualBodyLen, "limit", tooBig.MaxExpectedBodyLen)
		c.sendError("FATAL", sqlerr.New(sqlerr.ProgramLimitExceeded,
			"message of %d bytes exceeds the limit of %d bytes", tooBig.ActualBodyLen, tooBig.MaxExpectedBodyLen))
		c.linger = true
	default:
		// pgproto3 could not frame or decode the message, so we cannot find
		// the next one: the stream is lost.
		c.log.Warn("pgwire: invalid "+what+"; closing connection", "err", err)
		c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "invalid %s: %v", what, err))
		c.linger = true
	}
}

// goodbye sends a FATAL error to a client being disconnected, if the socket
// is still usable, without waiting on it for long.
func (c *conn) goodbye(code, msg string) {
	if c.writeErr != nil {
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(goodbyeTimeout))
	// Encode directly rather than through c.be: after a panic its buffer may
	// hold half a message.
	buf, err := (&pgproto3.ErrorResponse{
		Severity: "FATAL", SeverityUnlocalized: "FATAL", Code: code, Message: msg,
	}).Encode(nil)
	if err == nil {
		connWriter{c}.Write(buf)
		c.flush()
	}
}

// send queues msg. It returns the socket's error, or an error if msg could
// not be encoded (over 1 GiB), in which case the connection is still fine.
func (c *conn) send(msg pgproto3.BackendMessage) error {
	c.be.Send(msg)
	// Flushing pgproto3 into our bufio writer after every message keeps its
	// buffer to one message and bounds memory by writeBufferSize however
	// many rows a result has.
	if err := c.be.Flush(); err != nil {
		if c.writeErr != nil {
			return c.writeErr
		}
		return sqlerr.Wrap(err, sqlerr.ProgramLimitExceeded, "result message too large")
	}
	return nil
}

// flush writes buffered output to the socket.
func (c *conn) flush() error {
	if c.writeErr != nil {
		return c.writeErr
	}
	if c.bw.Buffered() == 0 {
		return nil
	}
	if err := c.bw.Flush(); err != nil {
		c.writeErr = err
	}
	return c.writeErr
}

// sendError sends e as an ErrorResponse with the given severity ("ERROR"
// ends the statement, "FATAL" the connection).
func (c *conn) sendError(severity string, e *sqlerr.Error) {
	r := errorResponse(severity, e)
	if r.Code == "" {
		r.Code = sqlerr.Internal
	}
	c.send(&r)
}

// sendNotice sends a notice (sqlerr.WithNotices) with all its fields.
func (c *conn) sendNotice(e *sqlerr.Error) {
	n := pgproto3.NoticeResponse(errorResponse(e.Severity, e))
	c.send(&n)
}

// errorResponse is every field of e, with the given severity.
func errorResponse(severity string, e *sqlerr.Error) pgproto3.ErrorResponse {
	return pgproto3.ErrorResponse{
		Severity: severity, SeverityUnlocalized: severity, Code: e.Code,
		Message: e.Message, Detail: e.Detail, Hint: e.Hint,
		Position: e.Position, InternalPosition: e.InternalPosition, InternalQuery: e.InternalQuery,
		Where: e.Where, SchemaName: e.SchemaName, TableName: e.TableName, ColumnName: e.ColumnName,
		DataTypeName: e.DataTypeName, ConstraintName: e.ConstraintName,
		File: e.File, Line: e.Line, Routine: e.Routine,
	}
}

// setReadDeadline moves the read deadline and reports false if the server is
// closing. Close cancels the context before it sets every deadline to now;
// checking the context after moving the deadline means either Close's
// deadline comes later (and wins) or this check sees the cancellation, so a
// connection never sleeps through Close.
func (c *conn) setReadDeadline(t time.Time) bool {
	c.nc.SetReadDeadline(t)
	return c.s.ctx.Err() == nil
}

// close ends the session and the socket.
func (c *conn) close() {
	c.s.cancels.unregister(c)
	if c.sess != nil {
		func() {
			defer func() {
				if r := recover(); r != nil {
					c.log.Error("pgwire: panic closing session", "panic", r, "stack", string(debug.Stack()))
				}
			}()
			c.sess.Close()
		}()
	}
	c.flush()
	if c.linger && c.writeErr == nil {
		// Half-close so the client sees our error and EOF, then discard
		// what it is still sending so that closing does not reset the
		// connection under its unread error.
		if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		if c.setReadDeadline(time.Now().Add(lingerTimeout)) {
			io.CopyN(io.Discard, c.nc, lingerMaxBytes)
		}
	}
	c.nc.Close()
	c.log.Debug("pgwire: connection closed")
}
