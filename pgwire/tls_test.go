package pgwire

import (
	"bytes"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/internal/testcert"
	"certa/sqlerr"
)

// startTLSServer starts a server with TLS (added to cfg) and returns the
// paths of its CA certificate, certificate and key.
func startTLSServer(t *testing.T, cfg Config) (*testServer, testcert.Files) {
	t.Helper()
	certs := testcert.New(t)
	cfg.TLS = certs.ServerConfig()
	return startServer(t, cfg), certs.WriteFiles(t, t.TempDir())
}

// isTLS reports whether a pgx connection runs over TLS.
func isTLS(t *testing.T, ts *testServer, connString string) bool {
	t.Helper()
	conn, err := ts.pgxConnectString(connString)
	if err != nil {
		t.Fatalf("%s: %v", connString, err)
	}
	var n int64
	if err := conn.QueryRow(testCtx(t), "SELECT 3").Scan(&n); err != nil || n != 3 {
		t.Fatalf("SELECT 3: %d, %v", n, err)
	}
	_, ok := conn.PgConn().Conn().(*tls.Conn)
	return ok
}

func TestTLSPgx(t *testing.T) {
	ts, files := startTLSServer(t, Config{})
	for _, tc := range []struct {
		params  string
		wantTLS bool
	}{
		{"sslmode=require", true},
		{"sslmode=verify-full&sslrootcert=" + files.CA, true},
		{"sslmode=prefer", true},
		{"sslmode=disable", false},
	} {
		if got := isTLS(t, ts, ts.connString("tester", tc.params)); got != tc.wantTLS {
			t.Errorf("%s: TLS %v, want %v", tc.params, got, tc.wantTLS)
		}
	}

	// A client that trusts another CA refuses the server.
	other := testcert.New(t).WriteFiles(t, t.TempDir())
	_, err := ts.pgxConnectString(ts.connString("tester", "sslmode=verify-full&sslrootcert="+other.CA))
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("verify-full with another CA: %v", err)
	}
	ts.checkServing()
}

func TestTLSPsql(t *testing.T) {
	ts, files := startTLSServer(t, Config{})
	for _, params := range []string{"sslmode=require", "sslmode=verify-full sslrootcert=" + files.CA} {
		out, errOut, code := psqlWith(t, ts, "user=tester "+params, "", "-A", "-t", "-c", `\conninfo`, "-c", "SELECT 1")
		if code != 0 || !strings.Contains(out, "SSL connection (protocol: TLSv1.3") || !strings.HasSuffix(out, "\n1\n") {
			t.Errorf("%s: exit %d, out %q, err %q", params, code, out, errOut)
		}
	}
}

// TestTLSWithSCRAM runs SCRAM over TLS, where clients send the "y" flag:
// they could bind the channel but the server did not offer it.
func TestTLSWithSCRAM(t *testing.T) {
	certs := testcert.New(t)
	files := certs.WriteFiles(t, t.TempDir())
	ts, _ := startSCRAMServer(t, Config{TLS: certs.ServerConfig(), RequireTLS: true})
	if !isTLS(t, ts, ts.connString("tester:secret", "sslmode=verify-full&sslrootcert="+files.CA)) {
		t.Error("pgx: not TLS")
	}
	_, err := ts.pgxConnectString(ts.connString("tester:wrong", "sslmode=require"))
	if pe := pgErr(t, err); pe.Code != "28P01" {
		t.Errorf("wrong password over TLS: %v", pe)
	}
	out, errOut, code := psqlWith(t, ts, "user=tester sslmode=verify-full sslrootcert="+files.CA, "secret", "-A", "-t", "-c", "WHOAMI")
	if code != 0 || out != "tester|testdb\n" {
		t.Errorf("psql: exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestRequireTLS(t *testing.T) {
	ts, _ := startTLSServer(t, Config{RequireTLS: true})
	_, err := ts.pgxConnectString(ts.connString("tester", "sslmode=disable"))
	if pe := pgErr(t, err); pe.Severity != "FATAL" || pe.Code != "28000" || !strings.Contains(pe.Message, "requires TLS") {
		t.Errorf("clear text: %s %s %q", pe.Severity, pe.Code, pe.Message)
	}
	_, errOut, code := psqlWith(t, ts, "user=tester sslmode=disable", "", "-c", "SELECT 1")
	if code == 0 || !strings.Contains(errOut, "FATAL:  connection without TLS refused") {
		t.Errorf("psql in clear text: exit %d, err %q", code, errOut)
	}
	if !isTLS(t, ts, ts.connString("tester", "sslmode=prefer")) {
		t.Error("sslmode=prefer did not use TLS")
	}
}

// TestTLSDataAfterSSLRequest checks the fix for CVE-2021-23214: bytes that
// arrived with the SSLRequest, before the handshake, are refused rather
// than read as if they had come through TLS. memConn hands the server the
// whole stream at once, so the bytes are surely read ahead.
func TestTLSDataAfterSSLRequest(t *testing.T) {
	s := NewServer(Config{Logger: discardLogger, TLS: testcert.New(t).ServerConfig()}, &fakeBackend{})
	in := append(encodeMsgs(&pgproto3.SSLRequest{}), fuzzStartup()...)
	nc := &memConn{in: bytes.NewReader(in)}
	serveMem(s, nc)
	out := nc.out.Bytes()
	msg, err := pgproto3.NewFrontend(bytes.NewReader(out), nil).Receive()
	e, ok := msg.(*pgproto3.ErrorResponse)
	if err != nil || !ok || e.Code != sqlerr.ProtocolViolation || e.Message != "received unencrypted data after SSL request" {
		t.Fatalf("got %q (%v); want only an 08P01 ErrorResponse, not 'S'", out, err)
	}
}

func TestTLSHandshakeFailure(t *testing.T) {
	ts, _ := startTLSServer(t, Config{})
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.SSLRequest{})
	var b [1]byte
	if _, err := c.nc.Read(b[:]); err != nil || b[0] != 'S' {
		t.Fatalf("answer to SSLRequest: %q, %v", b[0], err)
	}
	// A startup message where the ClientHello should be.
	c.write(fuzzStartup())
	// The server gives up (Go's TLS stack may first send an alert).
	buf := make([]byte, 1024)
	for {
		if _, err := c.nc.Read(buf); err != nil {
			if isTimeout(err) {
				t.Fatal("server did not close the connection")
			}
			break
		}
	}
	ts.checkServing()
}

func isTimeout(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne) && ne.Timeout()
}

func TestTLSConfigValidate(t *testing.T) {
	if err := (Config{TLS: &tls.Config{}}).Validate(); err == nil || !strings.Contains(err.Error(), "no certificate") {
		t.Errorf("TLS without certificate: %v", err)
	}
	if err := (Config{RequireTLS: true}).Validate(); err == nil || !strings.Contains(err.Error(), "RequireTLS") {
		t.Errorf("RequireTLS without TLS: %v", err)
	}
	if err := (Config{TLS: testcert.New(t).ServerConfig(), RequireTLS: true}).Validate(); err != nil {
		t.Errorf("TLS with a certificate: %v", err)
	}
}
