package pgwire

import (
	"crypto/tls"
	"time"

	"certa/sqlerr"
)

// sslRequestLen is the size of an SSLRequest or GSSEncRequest packet.
const sslRequestLen = 8

// alpnProtocol is the ALPN name PostgreSQL 17 registers, which libpq 17
// offers; naming it lets the handshake refuse a client that meant to speak
// another protocol.
const alpnProtocol = "postgresql"

// serverTLSConfig returns the configuration used for handshakes: cfg with
// the PostgreSQL ALPN name unless the caller chose its own.
func serverTLSConfig(cfg *tls.Config) *tls.Config {
	if cfg == nil {
		return nil
	}
	cfg = cfg.Clone()
	if len(cfg.NextProtos) == 0 {
		cfg.NextProtos = []string{alpnProtocol}
	}
	return cfg
}

// startTLS answers an SSLRequest with 'S' and runs the TLS handshake on the
// socket; afterwards the connection reads and writes through TLS. consumed
// is the number of bytes of the startup packets read so far, all of them
// encryption requests. It reports whether the handshake succeeded; if not,
// the connection must end.
func (c *conn) startTLS(consumed int64) bool {
	// Whatever the client sent after its SSLRequest and we already read
	// was sent in the clear but would be taken as coming through TLS, so
	// a man in the middle could inject it (CVE-2021-23214). pgproto3 reads
	// ahead, so compare what came off the socket with what was used.
	if c.nread != consumed {
		c.sendError("FATAL", &sqlerr.Error{
			Code:    sqlerr.ProtocolViolation,
			Message: "received unencrypted data after SSL request",
			Detail:  "This could be either a client-software bug or evidence of an attempted man-in-the-middle attack.",
		})
		c.linger = true
		return false
	}
	c.writeRaw('S')
	if c.flush() != nil {
		return false
	}
	tc := tls.Server(c.nc, c.s.tlsConfig)
	// The read deadline of the startup phase bounds the handshake's reads;
	// its writes get the same bound, in case the client never reads.
	c.nc.SetWriteDeadline(c.startupDeadline)
	if err := tc.Handshake(); err != nil {
		c.log.Info("pgwire: TLS handshake failed", "err", err)
		return false
	}
	c.nc.SetWriteDeadline(time.Time{})
	st := tc.ConnectionState()
	c.log.Debug("pgwire: TLS established", "version", tls.VersionName(st.Version), "cipher", tls.CipherSuiteName(st.CipherSuite))
	c.nc = tc
	c.bw.Reset(tc)
	// A fresh decoder: the old one's read-ahead buffer is empty (checked
	// above) and must not be reused across the switch anyway.
	c.newBackend()
	c.tls = true
	return true
}
