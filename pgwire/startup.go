package pgwire

import (
	"crypto/rand"
	"encoding/binary"
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
// startup message, (trust) authentication, the session and the initial
// parameters. It reports whether the connection is ready for queries.
func (c *conn) startup(reject bool) bool {
	if !c.setReadDeadline(time.Now().Add(c.s.cfg.StartupTimeout)) {
		return false
	}
	var sslDone, gssDone bool
	for {
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			c.receiveFailed(err, "startup packet")
			return false
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			// Refuse encryption; libpq with sslmode=prefer (its default)
			// carries on in the clear. Each request may come only once,
			// as in PostgreSQL, so a client cannot loop us.
			if sslDone {
				c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "duplicate SSL negotiation request"))
				return false
			}
			sslDone = true
			// TLS support must make sure nothing beyond the SSLRequest was
			// buffered before the handshake (CVE-2021-23214).
			c.writeRaw('N')
		case *pgproto3.GSSEncRequest:
			if gssDone {
				c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "duplicate GSSAPI negotiation request"))
				return false
			}
			gssDone = true
			c.writeRaw('N')
		case *pgproto3.CancelRequest:
			// Query cancellation is not supported yet; PostgreSQL too just
			// closes a cancel connection without a reply.
			return false
		case *pgproto3.StartupMessage:
			return c.startSession(m, reject)
		default:
			c.sendError("FATAL", sqlerr.New(sqlerr.ProtocolViolation, "unexpected startup message %s", typeName(msg)))
			return false
		}
	}
}

// startSession answers a StartupMessage.
func (c *conn) startSession(m *pgproto3.StartupMessage, reject bool) bool {
	if reject {
		c.log.Warn("pgwire: too many connections; refusing client", "max_conns", c.s.cfg.MaxConns)
		c.sendError("FATAL", sqlerr.New(codeTooManyConnections, "sorry, too many clients already"))
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

	// Trust authentication: every user is accepted as who it says it is.
	c.send(&pgproto3.AuthenticationOk{})

	sess, err := c.s.backend.NewSession(c.ctx, user, database)
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
	pid, secret := newCancelKey()
	c.send(&pgproto3.BackendKeyData{ProcessID: pid, SecretKey: secret})

	// Startup done: the connection may now sit idle for as long as it likes.
	if !c.setReadDeadline(time.Time{}) {
		c.goodbye(sqlerr.AdminShutdown, "terminating connection due to administrator command")
		return false
	}
	c.log.Debug("pgwire: session started", "user", user, "database", database, "application_name", params["application_name"])
	c.send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	return c.flush() == nil
}

// newCancelKey returns a BackendKeyData process ID and 4-byte secret (the
// protocol 3.0 size). Cancellation is not implemented; the key is random so
// that a future implementation cannot be fooled by keys issued now.
func newCancelKey() (uint32, []byte) {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand panics instead)
	// A positive, non-zero int32, since clients store it as a process ID.
	pid := binary.BigEndian.Uint32(b[:4])&0x7fffffff | 1
	return pid, b[4:]
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
