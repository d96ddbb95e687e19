package pgwire

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Defaults for the Config fields left zero.
const (
	// DefaultServerVersion is what clients see as server_version. Drivers parse
	// the leading "major.minor" to decide which features to use, so it names
	// the PostgreSQL release whose behaviour certa imitates; the suffix is free
	// text, as in distribution builds ("16.2 (Debian 16.2-1)"). The embedded
	// engine imitates PostgreSQL 15, against which its differential tests
	// run and whose pg_dump refuses newer servers (its catalog, version()
	// and SHOW server_version say the same).
	DefaultServerVersion = "15.0 (certa)"
	// DefaultMaxMessageSize bounds one frontend message (a query string, for
	// now) and so the memory one connection can make the server allocate.
	DefaultMaxMessageSize = 64 << 20
	// DefaultMaxConns is the number of concurrent client connections.
	DefaultMaxConns = 1000
	// DefaultStartupTimeout is PostgreSQL's authentication_timeout.
	DefaultStartupTimeout = 10 * time.Second
	// DefaultMaxPendingPerAddress is the default of
	// Config.MaxPendingPerAddress: room for a client's connection pool to
	// open at once.
	DefaultMaxPendingPerAddress = 32
)

// maxMessageSizeLimit is PostgreSQL's own ceiling for a message body
// (PG_LARGE_MESSAGE_LIMIT, MaxAllocSize-1); no client sends more.
const maxMessageSizeLimit = 0x3fffffff - 1

// minMessageSize keeps the limit above the size of any message a client sends
// during normal operation (startup packets are limited separately to 10 000
// bytes by pgproto3).
const minMessageSize = 1024

// Config configures a Server. The zero value is valid: every zero field takes
// its default.
type Config struct {
	// ServerVersion is reported as the server_version parameter. It must begin
	// with a PostgreSQL version number ("16", "16.0", "16.0 (certa)") because
	// libpq and drivers parse it. Default DefaultServerVersion.
	ServerVersion string

	// MaxMessageSize is the largest frontend message body accepted, in bytes.
	// A client sending a larger one gets ErrorResponse 54000
	// (program_limit_exceeded) and its connection is closed; others are not
	// affected. Default DefaultMaxMessageSize; at least 1 KiB.
	MaxMessageSize int

	// MaxConns is the largest number of client connections served at once.
	// Further clients get ErrorResponse 53300 (too_many_connections) once they
	// have sent their startup message, then are disconnected. Default
	// DefaultMaxConns.
	MaxConns int

	// StartupTimeout bounds the time a client may take from connecting to
	// being authenticated, so that silent connections do not hold a slot
	// for long. Default DefaultStartupTimeout.
	StartupTimeout time.Duration

	// MaxPending bounds the connections not yet authenticated, in all and
	// from one client address (MaxPendingPerAddress); a connection beyond
	// either is closed at once. Only authenticated connections count
	// against MaxConns (admission.go). Defaults: a quarter of MaxConns but
	// at least 128, and DefaultMaxPendingPerAddress.
	MaxPending           int
	MaxPendingPerAddress int

	// IdleInTransactionTimeout ends a session that stays idle inside a
	// transaction block longer than this (FATAL 25P03), as PostgreSQL's
	// idle_in_transaction_session_timeout: an open transaction holds a
	// connection and, when it has written, SQLite's write lock. 0: never.
	IdleInTransactionTimeout time.Duration

	// Credentials returns the stored SCRAM-SHA-256 credential of a user, or
	// false if there is no such user; Users.Lookup fits. With Credentials
	// set, every client must prove its password with SCRAM-SHA-256; a wrong
	// password or an unknown user gets 28P01 (invalid_password), the same
	// for both. It is called from connection goroutines concurrently. nil
	// (the default) means trust: any user name is accepted as is.
	Credentials func(user string) (SCRAMCredential, bool)

	// TLS, if set, makes the server accept TLS: a client's SSLRequest is
	// answered 'S' and the handshake runs on the same socket. It must
	// provide a certificate. Unless it names its own, the ALPN protocol
	// "postgresql" is offered, as PostgreSQL 17 does. nil (the default)
	// answers SSLRequest 'N' and clients carry on in the clear.
	TLS *tls.Config

	// RequireTLS refuses clients that start a session without TLS, with
	// 28000. Cancel requests are accepted either way, as PostgreSQL does:
	// libpq before version 17 sends them in the clear. Requires TLS.
	RequireTLS bool

	// Logger receives connection-level events: protocol violations, recovered
	// panics (Warn/Error) and connection lifecycle (Debug). Default
	// slog.Default().
	Logger *slog.Logger
}

// withDefaults returns c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.ServerVersion == "" {
		c.ServerVersion = DefaultServerVersion
	}
	if c.MaxMessageSize == 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.MaxConns == 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.StartupTimeout == 0 {
		c.StartupTimeout = DefaultStartupTimeout
	}
	if c.MaxPending == 0 {
		c.MaxPending = max(128, c.MaxConns/4)
	}
	if c.MaxPendingPerAddress == 0 {
		c.MaxPendingPerAddress = DefaultMaxPendingPerAddress
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports whether c (with defaults applied to its zero fields) is
// usable.
func (c Config) Validate() error {
	c = c.withDefaults()
	var errs []error
	if !startsWithVersion(c.ServerVersion) {
		errs = append(errs, fmt.Errorf("pgwire: ServerVersion %q does not start with a version number like \"16.0\"", c.ServerVersion))
	}
	if c.MaxMessageSize < minMessageSize || c.MaxMessageSize > maxMessageSizeLimit {
		errs = append(errs, fmt.Errorf("pgwire: MaxMessageSize %d is outside [%d, %d]", c.MaxMessageSize, minMessageSize, maxMessageSizeLimit))
	}
	if c.MaxConns < 1 {
		errs = append(errs, fmt.Errorf("pgwire: MaxConns %d is less than 1", c.MaxConns))
	}
	if c.MaxPending < 1 || c.MaxPendingPerAddress < 1 {
		errs = append(errs, fmt.Errorf("pgwire: MaxPending %d and MaxPendingPerAddress %d must be at least 1", c.MaxPending, c.MaxPendingPerAddress))
	}
	if c.IdleInTransactionTimeout < 0 {
		errs = append(errs, fmt.Errorf("pgwire: IdleInTransactionTimeout %v is negative", c.IdleInTransactionTimeout))
	}
	if c.StartupTimeout < 0 {
		errs = append(errs, fmt.Errorf("pgwire: StartupTimeout %v is negative", c.StartupTimeout))
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		errs = append(errs, errors.New("pgwire: TLS has no certificate"))
	}
	if c.RequireTLS && c.TLS == nil {
		errs = append(errs, errors.New("pgwire: RequireTLS is set but TLS is not configured"))
	}
	return errors.Join(errs...)
}

// startsWithVersion reports whether v begins with "N" or "N.N" followed by
// the end or a non-digit, which is what libpq's sscanf("%d.%d.%d") accepts.
func startsWithVersion(v string) bool {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 || i > 4 {
		return false
	}
	if i < len(v) && v[i] == '.' {
		j := i + 1
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
	}
	return true
}
