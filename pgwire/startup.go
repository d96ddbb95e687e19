package pgwire

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/sqlerr"
)

// SQLSTATEs used only here (not in sqlerr because no other layer raises them).
const (
	codeTooManyConnections       = "53300"
	codeInvalidAuthorizationSpec = "28000"
)

// startup runs the connection's startup phase: encryption negotiation, the
// startup message, authentication, the session and the initial parameters.
// It reports whether the connection is ready for queries.
func (c *conn) startup() bool {
	c.startupDeadline = time.Now().Add(c.s.cfg.StartupTimeout)
	if !c.setReadDeadline(c.startupDeadline) {
		return false
	}
	var sslDone, gssDone bool
	var consumed int64 // bytes of the encryption requests read so far
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			c.receiveFailed(err, "startup packet")
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			// Each request may come only once, as in PostgreSQL, so a
			// client cannot loop us.
			if sslDone {
				c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "duplicate SSL negotiation request"))
				return false
			}
			sslDone = true
			consumed += sslRequestLen
			if c.s.tlsConfig != nil {
				if !c.startTLS(consumed) {
					return false
				}
				continue
			}
			// No TLS configured: libpq with sslmode=prefer (its default)
			// carries on in the clear.
			c.writeRaw('N')
		case *pgproto3.GSSEncRequest:
			if gssDone {
				c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "duplicate GSSAPI negotiation request"))
				return false
			}
			gssDone = true
			consumed += sslRequestLen
			c.writeRaw('N')
		case *pgproto3.CancelRequest:
			// Answered by closing the connection, whatever the outcome, as
			// PostgreSQL does: the client learns nothing from it.
			if c.s.cancels.cancel(m.ProcessID, m.SecretKey) {
				c.log.Debug("pgwire: cancel request", "pid", m.ProcessID)
			} else {
				c.log.Debug("pgwire: cancel request with an unknown key", "pid", m.ProcessID)
			}
			return false
		case *pgproto3.StartupMessage:
			return c.startSession(m)
		default:
			c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "unexpected startup message %s", typeName(msg)))
			return false
		}
	}
}

// startSession answers a StartupMessage.
func (c *conn) startSession(m *pgproto3.StartupMessage) bool {
	if c.s.cfg.RequireTLS && !c.tls {
		c.sendError("FATAL", &sqlerr.Error{
			Code:    codeInvalidAuthorizationSpec,
			Message: "connection without TLS refused: this server requires TLS",
			Hint:    "Connect with sslmode=require or stronger.",
		})
		return false
	}
	params := m.Parameters
	user := params["user"]
	if user == "" {
		c.sendError("FATAL", sqlerr.New(codeInvalidAuthorizationSpec, "no PostgreSQL user name specified in startup packet"))
		return false
	}
	database := params["database"]
	if database == "" {
		database = user
	}
	if r, ok := params["replication"]; ok && !isFalse(r) {
		c.sendError("FATAL", sqlerr.New(sqlerr.FeatureNotSupported, "replication connections are not supported"))
		return false
	}

	// Protocol 3.2 and "_pq_." protocol extensions are answered as
	// PostgreSQL does: NegotiateProtocolVersion names what we speak (3.0)
	// and the options we ignore, and the client downgrades.
	var unknownOpts []string
	for k := range params {
		if strings.HasPrefix(k, "_pq_.") {
			unknownOpts = append(unknownOpts, k)
		}
	}
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 || len(unknownOpts) > 0 {
		slices.Sort(unknownOpts)
		c.send(&pgproto3.NegotiateProtocolVersion{NewestMinorProtocol: 0, UnrecognizedOptions: unknownOpts})
	}

	if !c.authenticate(user) {
		return false
	}
	if !c.s.admit(c.host) {
		c.log.Warn("pgwire: too many connections; refusing client", "max_conns", c.s.cfg.MaxConns)
		c.sendError("FATAL", sqlerr.New(codeTooManyConnections, "sorry, too many clients already"))
		return false
	}
	c.admitted = true
	c.send(&pgproto3.AuthenticationOk{})

	settings, err := startupSettings(params)
	if err != nil {
		c.sendError("FATAL", sqlerr.As(err))
		return false
	}
	sess, err := c.s.backend.NewSession(c.ctx, user, database, settings)
	if err == nil && sess == nil {
		err = sqlerr.New(sqlerr.Internal, "backend returned no session")
	}
	if err != nil {
		c.log.Debug("pgwire: session refused", "user", user, "database", database, "err", err)
		c.sendError("FATAL", sqlerr.As(err))
		return false
	}
	c.sess = sess

	// The parameters PostgreSQL reports at startup (GUC_REPORT). Drivers
	// rely on several: pgx refuses simple-protocol queries unless
	// standard_conforming_strings is on, libpq's target_session_attrs reads
	// in_hot_standby and default_transaction_read_only instead of querying.
	// certa formats values one way only, so these are fixed; a client
	// asking for another client_encoding or DateStyle is told what it gets.
	for _, p := range [][2]string{
		{"server_version", c.s.cfg.ServerVersion},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"IntervalStyle", "postgres"},
		{"integer_datetimes", "on"},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
		{"application_name", params["application_name"]},
		{"is_superuser", "off"},
		{"session_authorization", user},
		{"default_transaction_read_only", "off"},
		{"in_hot_standby", "off"},
	} {
		c.send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	for _, p := range sess.TakeReported() { // what the startup settings changed
		c.send(&pgproto3.ParameterStatus{Name: p[0], Value: p[1]})
	}
	key := c.s.cancels.register(c)
	c.send(&pgproto3.BackendKeyData{ProcessID: key.pid, SecretKey: key.secret[:]})

	// Startup done: the connection may now sit idle for as long as it likes.
	if !c.setReadDeadline(time.Time{}) {
		c.goodbye(sqlerr.AdminShutdown, "terminating connection due to administrator command")
		return false
	}
	c.log.Debug("pgwire: session started", "user", user, "database", database, "application_name", params["application_name"])
	c.send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	c.idle = true
	return c.flush() == nil
}

// isFalse reports whether a startup boolean parameter is off, in any of
// PostgreSQL's spellings.
func isFalse(v string) bool {
	switch strings.ToLower(v) {
	case "false", "off", "no", "0", "f", "n":
		return true
	}
	return false
}

// writeRaw writes a single byte outside any message: the answer to an
// SSLRequest or GSSEncRequest.
func (c *conn) writeRaw(b byte) {
	connWriter{c}.Write([]byte{b})
}

// typeName names a protocol message for errors and logs.
func typeName(msg any) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
}
