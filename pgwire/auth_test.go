package pgwire

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/sqlerr"
)

// startSCRAMServer starts a server with one user, tester, whose password
// is "secret", and returns its credential.
func startSCRAMServer(t *testing.T, cfg Config) (*testServer, SCRAMCredential) {
	t.Helper()
	cred, err := NewSCRAMCredential("secret")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Credentials = Users{"tester": cred}.Lookup
	ts := startServer(t, cfg)
	ts.login = "tester:secret"
	return ts, cred
}

func TestSCRAMPgx(t *testing.T) {
	ts, _ := startSCRAMServer(t, Config{})
	conn := ts.mustPgx()
	var user, db string
	if err := conn.QueryRow(testCtx(t), "WHOAMI").Scan(&user, &db); err != nil || user != "tester" {
		t.Fatalf("WHOAMI: %q %q %v", user, db, err)
	}
	if len(conn.PgConn().SecretKey()) != 4 || conn.PgConn().PID() == 0 {
		t.Error("no BackendKeyData after SCRAM")
	}

	// A wrong password and an unknown user get the same answer.
	for _, login := range []string{"tester:wrong", "tester", "nobody:secret"} {
		_, err := ts.pgxConnectString(ts.connString(login, ""))
		pe := pgErr(t, err)
		user, _, _ := strings.Cut(login, ":")
		if pe.Severity != "FATAL" || pe.Code != "28P01" || pe.Message != `password authentication failed for user "`+user+`"` {
			t.Errorf("%s: got %s %s %q", login, pe.Severity, pe.Code, pe.Message)
		}
	}
	ts.checkServing()
}

func TestSCRAMPsql(t *testing.T) {
	ts, _ := startSCRAMServer(t, Config{})
	out, errOut, code := psqlWith(t, ts, "user=tester sslmode=prefer", "secret", "-A", "-t", "-c", "WHOAMI")
	if code != 0 || out != "tester|testdb\n" {
		t.Fatalf("right password: exit %d, out %q, err %q", code, out, errOut)
	}
	_, errOut, code = psqlWith(t, ts, "user=tester sslmode=prefer", "wrong", "-c", "SELECT 1")
	if code == 0 || !strings.Contains(errOut, `FATAL:  password authentication failed for user "tester"`) {
		t.Fatalf("wrong password: exit %d, err %q", code, errOut)
	}
	// Without a password libpq hangs up when asked for one.
	_, errOut, code = psqlWith(t, ts, "user=tester sslmode=prefer", "", "-c", "SELECT 1")
	if code == 0 || !strings.Contains(errOut, "no password supplied") {
		t.Fatalf("no password: exit %d, err %q", code, errOut)
	}
	ts.checkServing()
}

// saslStart connects raw as user and returns the client once the server has
// asked for SCRAM-SHA-256.
func saslStart(t *testing.T, ts *testServer, user string) *rawClient {
	t.Helper()
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user}})
	m, ok := c.recv().(*pgproto3.AuthenticationSASL)
	if !ok || strings.Join(m.AuthMechanisms, ",") != "SCRAM-SHA-256" {
		t.Fatalf("got %+v, want AuthenticationSASL SCRAM-SHA-256 only", m)
	}
	return c
}

// serverFirst sends a client-first message and returns the server's reply.
func serverFirst(t *testing.T, c *rawClient, nonce string) string {
	t.Helper()
	c.send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=" + nonce)})
	m, ok := c.recv().(*pgproto3.AuthenticationSASLContinue)
	if !ok {
		t.Fatalf("got %+v, want AuthenticationSASLContinue", m)
	}
	return string(m.Data)
}

// TestSCRAMUnknownUser checks that the exchange does not tell unknown
// users apart: it runs to the end with a salt that is stable per name.
func TestSCRAMUnknownUser(t *testing.T) {
	ts, cred := startSCRAMServer(t, Config{})
	salt := func(user string) string {
		c := saslStart(t, ts, user)
		first := serverFirst(t, c, "abc")
		fields := strings.Split(first, ",")
		if len(fields) != 3 || !strings.HasPrefix(fields[0], "r=abc") || fields[2] != "i=4096" {
			t.Fatalf("server-first %q", first)
		}
		// A well-formed final message with a wrong proof.
		c.send(&pgproto3.SASLResponse{Data: []byte("c=biws," + fields[0] + ",p=" + strings.Repeat("A", 43) + "=")})
		e := c.expectError("FATAL", "28P01")
		if e.Message != `password authentication failed for user "`+user+`"` {
			t.Errorf("message %q", e.Message)
		}
		c.expectEOF()
		return fields[1]
	}
	if s := salt("tester"); s != "s="+base64.StdEncoding.EncodeToString(cred.Salt) {
		t.Errorf("tester's salt %s, credential %s", s, cred)
	}
	if a, b, other := salt("nobody"), salt("nobody"), salt("someone"); a != b || a == other {
		t.Errorf("unknown users' salts: %s, %s, %s", a, b, other)
	}
}

// TestSCRAMBadClients checks that clients that do not follow the exchange
// get 08P01 and are disconnected, and that the server goes on serving.
func TestSCRAMBadClients(t *testing.T) {
	ts, _ := startSCRAMServer(t, Config{Logger: discardLogger})
	initial := func(mech, data string) pgproto3.FrontendMessage {
		return &pgproto3.SASLInitialResponse{AuthMechanism: mech, Data: []byte(data)}
	}
	const malformed = "malformed SCRAM message"
	for _, tc := range []struct {
		msg  pgproto3.FrontendMessage
		want string
	}{
		{&pgproto3.Query{String: "SELECT 1"}, "expected SASL response, got Query"},
		{initial("SCRAM-SHA-256-PLUS", "p=tls-server-end-point,,n=,r=abc"), "client selected an invalid SASL authentication mechanism"},
		{initial("SCRAM-SHA-256", "hello"), malformed},
		{initial("SCRAM-SHA-256", "p=tls-server-end-point,,n=,r=abc"), malformed}, // channel binding
		{initial("SCRAM-SHA-256", "n,,m=x,n=,r=abc"), malformed},                  // an extension
	} {
		c := saslStart(t, ts, "tester")
		c.send(tc.msg)
		e := c.expectError("FATAL", sqlerr.ProtocolViolation)
		if e.Message != tc.want {
			t.Errorf("%+v: got %q (%s), want %q", tc.msg, e.Message, e.Detail, tc.want)
		}
		c.expectEOF()
	}

	// Bad final messages, after a good first one.
	for _, final := range []string{
		"garbage",
		"c=biws,r=wrongnonce,p=" + strings.Repeat("A", 43) + "=",
		"c=eSws,r=%s,p=" + strings.Repeat("A", 43) + "=", // "y,," although the client said "n"
		"c=biws,r=%s,p=QUFB", // proof of the wrong length
	} {
		c := saslStart(t, ts, "tester")
		nonce := strings.Split(serverFirst(t, c, "abc"), ",")[0]
		c.send(&pgproto3.SASLResponse{Data: []byte(strings.Replace(final, "r=%s", nonce, 1))})
		if e := c.expectError("FATAL", sqlerr.ProtocolViolation); e.Message != malformed {
			t.Errorf("%q: got %q (%s)", final, e.Message, e.Detail)
		}
		c.expectEOF()
	}

	// Hanging up or saying Terminate instead of answering.
	c := saslStart(t, ts, "tester")
	c.nc.Close()
	c = saslStart(t, ts, "tester")
	c.send(&pgproto3.Terminate{})
	c.expectEOF()

	ts.checkServing()
}
