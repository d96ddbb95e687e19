package pgwire

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/sqlerr"
)

// These tests speak the protocol message by message, for what drivers do
// not send on purpose.

func TestStartupParameters(t *testing.T) {
	ts := startServer(t, Config{ServerVersion: "16.4 (certa test)"})
	c := dialRaw(t, ts.addr)
	got := c.startup(map[string]string{"user": "alice", "application_name": "myapp", "client_encoding": "LATIN1"})
	want := map[string]string{
		"server_version":                "16.4 (certa test)",
		"server_encoding":               "UTF8",
		"client_encoding":               "UTF8",
		"DateStyle":                     "ISO, MDY",
		"IntervalStyle":                 "postgres",
		"integer_datetimes":             "on",
		"standard_conforming_strings":   "on",
		"TimeZone":                      "UTC",
		"application_name":              "myapp",
		"is_superuser":                  "off",
		"session_authorization":         "alice",
		"default_transaction_read_only": "off",
		"in_hot_standby":                "off",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// database defaults to the user name.
	c.send(&pgproto3.Query{String: "WHOAMI"})
	c.recv()
	if m, ok := c.recv().(*pgproto3.DataRow); !ok || string(m.Values[0]) != "alice" || string(m.Values[1]) != "alice" {
		t.Fatalf("got %+v", m)
	}
	c.recv()
	c.expectReady('I')

	// application_name is reported even when the client sent none.
	c2 := dialRaw(t, ts.addr)
	if got := c2.startup(testUser); got["application_name"] != "" || got["session_authorization"] != "tester" {
		t.Errorf("got %q", got)
	}
	c2.send(&pgproto3.Terminate{})
	c2.expectEOF()
}

func TestSSLAndGSSRequestsRefused(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	for _, req := range []pgproto3.FrontendMessage{&pgproto3.GSSEncRequest{}, &pgproto3.SSLRequest{}} {
		c.send(req)
		var b [1]byte
		if _, err := c.nc.Read(b[:]); err != nil || b[0] != 'N' {
			t.Fatalf("answer to %T: %q, %v", req, b[0], err)
		}
	}
	c.startup(testUser)
	c.selectOne()

	// Asking twice is not allowed (it could loop forever).
	c2 := dialRaw(t, ts.addr)
	c2.send(&pgproto3.SSLRequest{})
	c2.send(&pgproto3.SSLRequest{})
	var b [1]byte
	c2.nc.Read(b[:])
	c2.expectError("FATAL", sqlerr.ProtocolViolation)
	c2.expectEOF()
}

func TestStartupRefusals(t *testing.T) {
	ts := startServer(t, Config{Logger: discardLogger})

	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}})
	c.expectEOF()

	c = dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"database": "x"}})
	c.expectError("FATAL", "28000")
	c.expectEOF()

	c = dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "u", "replication": "database"}})
	c.expectError("FATAL", sqlerr.FeatureNotSupported)
	c.expectEOF()

	// Protocol 2.0, or anything that is not a startup packet.
	c = dialRaw(t, ts.addr)
	c.write([]byte{0, 0, 0, 9, 0, 2, 0, 0, 0})
	c.expectError("FATAL", sqlerr.ProtocolViolation)
	c.expectEOF()

	c = dialRaw(t, ts.addr)
	c.write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	c.expectError("FATAL", sqlerr.ProtocolViolation)
	c.expectEOF()

	ts.checkServing()
}

func TestProtocolNegotiation(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{
		"user": "tester", "_pq_.b": "1", "_pq_.a": "2",
	}})
	m, ok := c.recv().(*pgproto3.NegotiateProtocolVersion)
	if !ok || m.NewestMinorProtocol != 0 || strings.Join(m.UnrecognizedOptions, ",") != "_pq_.a,_pq_.b" {
		t.Fatalf("got %+v", m)
	}
	if _, ok := c.recv().(*pgproto3.AuthenticationOk); !ok {
		t.Fatal("no AuthenticationOk")
	}
	for {
		if k, ok := c.recv().(*pgproto3.BackendKeyData); ok {
			if len(k.SecretKey) != 4 {
				t.Errorf("protocol 3.0 key is 4 bytes, got %d", len(k.SecretKey))
			}
			break
		}
	}
	c.expectReady('I')
	c.selectOne()
}

func TestEmptyQuery(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	c.startup(testUser)
	c.send(&pgproto3.Query{String: " "})
	if m, ok := c.recv().(*pgproto3.EmptyQueryResponse); !ok {
		t.Fatalf("got %+v", m)
	}
	c.expectReady('I')
}

// The extended protocol: a statement described, bound with a text
// parameter, executed with a row limit; an error skips to Sync, and the
// connection stays usable.
func TestExtendedProtocolRaw(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	c.startup(testUser)

	c.send(
		&pgproto3.Parse{Name: "s", Query: "MANY 3"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{PreparedStatement: "s", ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2},
		&pgproto3.Close{ObjectType: 'S', Name: "s"},
		&pgproto3.Sync{},
	)
	c.expectMsg(&pgproto3.ParseComplete{})
	c.expectMsg(&pgproto3.ParameterDescription{})
	c.expectMsg(&pgproto3.RowDescription{})
	c.expectMsg(&pgproto3.BindComplete{})
	c.expectMsg(&pgproto3.DataRow{})
	c.expectMsg(&pgproto3.DataRow{})
	c.expectMsg(&pgproto3.PortalSuspended{})
	c.expectMsg(&pgproto3.DataRow{})
	c.expectMsg(&pgproto3.CommandComplete{})
	c.expectMsg(&pgproto3.CloseComplete{})
	c.expectReady('I')

	// An error skips everything up to Sync, even a simple Query.
	c.send(&pgproto3.Bind{PreparedStatement: "gone"}, &pgproto3.Flush{})
	c.expectError("ERROR", "26000")
	c.send(&pgproto3.Query{String: "BEGIN"}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expectReady('I')
	c.selectOne()
}

func TestUnexpectedMessages(t *testing.T) {
	ts := startServer(t, Config{Logger: discardLogger})
	c := dialRaw(t, ts.addr)
	c.startup(testUser)

	c.send(&pgproto3.CopyData{Data: []byte("1\n")})
	c.expectError("ERROR", sqlerr.ProtocolViolation)
	c.expectReady('I')

	c.send(&pgproto3.PasswordMessage{Password: "secret"})
	c.expectError("ERROR", sqlerr.ProtocolViolation)
	c.expectReady('I')

	c.send(&pgproto3.FunctionCall{Function: 1})
	c.expectError("ERROR", sqlerr.FeatureNotSupported)
	c.expectReady('I')

	// A lone Sync just asks for ReadyForQuery; a lone Flush has nothing
	// to send (the SELECT's answer must come next).
	c.send(&pgproto3.Query{String: "BEGIN"})
	c.recv()
	c.expectReady('T')
	c.send(&pgproto3.Sync{})
	c.expectReady('T')
	c.send(&pgproto3.Flush{}, &pgproto3.Query{String: "ROLLBACK"})
	if m, ok := c.recv().(*pgproto3.CommandComplete); !ok || string(m.CommandTag) != "ROLLBACK" {
		t.Fatalf("got %+v", m)
	}
	c.expectReady('I')
	c.selectOne()
}

func TestOversizedMessageClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t, Config{MaxMessageSize: 4096, Logger: discardLogger})
	other := ts.mustPgx()

	c := dialRaw(t, ts.addr)
	c.startup(testUser)
	// Far more than the socket buffers hold, so the server must drain it
	// for the client to see the error rather than a reset.
	big := &pgproto3.Query{String: "SELECT 1 -- " + strings.Repeat("x", 8<<20)}
	sent := make(chan error, 1)
	go func() {
		buf, _ := big.Encode(nil)
		_, err := c.nc.Write(buf)
		sent <- err
	}()
	e := c.expectError("FATAL", sqlerr.ProgramLimitExceeded)
	if !strings.Contains(e.Message, "4096") {
		t.Errorf("message %q does not name the limit", e.Message)
	}
	c.expectEOF()
	<-sent // done or failed: either way the writer has stopped

	// Just under the limit is fine.
	c = dialRaw(t, ts.addr)
	c.startup(testUser)
	c.send(&pgproto3.Query{String: "SELECT 1;" + strings.Repeat(" ", 4096-10)})
	c.recv()
	c.recv()
	c.recv()
	c.expectReady('I')

	var n int64
	if err := other.QueryRow(testCtx(t), "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("other connection: %d, %v", n, err)
	}
	ts.checkServing()
}

func TestGarbageClosesOnlyThatConnection(t *testing.T) {
	ts := startServer(t, Config{Logger: discardLogger})
	other := ts.mustPgx()

	for name, garbage := range map[string][]byte{
		"unknown type":   []byte("\x01\x00\x00\x00\x08abcd"),
		"binary noise":   {0xff, 0xfe, 0x00, 0x13, 0x37, 0x42, 0x99, 0x00, 0x01, 0x02},
		"short length":   {'Q', 0, 0, 0, 2},
		"unterminated Q": append([]byte{'Q', 0, 0, 0, 7}, "abc"...),
		"bad Bind":       {'B', 0, 0, 0, 6, 0xff, 0xff},
	} {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, ts.addr)
			c.startup(testUser)
			c.write(garbage)
			c.expectError("FATAL", sqlerr.ProtocolViolation)
			c.expectEOF()
		})
	}

	var n int64
	if err := other.QueryRow(testCtx(t), "SELECT 2").Scan(&n); err != nil || n != 2 {
		t.Fatalf("other connection: %d, %v", n, err)
	}
	ts.checkServing()
}

func TestTooManyConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConns: 2, Logger: discardLogger})
	a := ts.mustPgx()
	ts.mustPgx()

	_, err := ts.pgxConnect("tester")
	if pe := pgErr(t, err); pe.Code != "53300" || pe.Severity != "FATAL" {
		t.Fatalf("got %+v", pe)
	}
	// Also after SSL negotiation, as libpq does by default.
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.SSLRequest{})
	var b [1]byte
	if _, err := c.nc.Read(b[:]); err != nil || b[0] != 'N' {
		t.Fatalf("SSL answer %q %v", b[0], err)
	}
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: testUser})
	c.expectError("FATAL", "53300")
	c.expectEOF()

	// A slot frees when a client leaves.
	a.Close(context.Background())
	eventually(t, "a free connection slot", func() bool {
		conn, err := ts.pgxConnect("tester")
		if err != nil {
			return false
		}
		conn.Close(context.Background())
		return true
	})
}

func TestServerCloseClosesEverything(t *testing.T) {
	ts := startServer(t, Config{})
	ts.backend.sleeping = make(chan struct{}, 1)

	idle := dialRaw(t, ts.addr)
	idle.startup(testUser)
	inStartup := dialRaw(t, ts.addr) // connected, never says anything
	busy := ts.mustPgx()
	busyErr := make(chan error, 1)
	go func() {
		_, err := busy.Exec(context.Background(), "SLEEP")
		busyErr <- err
	}()
	<-ts.backend.sleeping
	// The server tracks inStartup once it has accepted it.
	eventually(t, "three connections", func() bool {
		ts.srv.mu.Lock()
		defer ts.srv.mu.Unlock()
		return len(ts.srv.conns) == 3
	})

	if err := ts.srv.Close(); err != nil {
		t.Fatal(err)
	}
	// Close has waited: every session is closed already.
	if opened, closed := ts.backend.counts(); opened != 2 || closed != 2 {
		t.Fatalf("sessions opened %d, closed %d", opened, closed)
	}
	idle.expectError("FATAL", sqlerr.AdminShutdown)
	idle.expectEOF()
	inStartup.expectError("FATAL", sqlerr.AdminShutdown)
	inStartup.expectEOF()
	if pe := pgErr(t, <-busyErr); pe.Code != sqlerr.AdminShutdown {
		t.Fatalf("busy query got %+v", pe)
	}
	if err := <-ts.served; !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	ts.served <- ErrServerClosed // for the cleanup's check
	if nc, err := net.Dial("tcp", ts.addr); err == nil {
		nc.Close()
		t.Fatal("listener still accepting")
	}
	// Closing again is harmless, as is serving again.
	if err := ts.srv.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := ts.srv.Serve(ln); !errors.Is(err, ErrServerClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
}

func TestServeReturnsWhenListenerClosed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Config{Logger: discardLogger}, &fakeBackend{})
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	ln.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Serve returned %v", err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestServeRejectsInvalidConfig(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(Config{MaxConns: -1}, &fakeBackend{})
	if err := srv.Serve(ln); err == nil || !strings.Contains(err.Error(), "MaxConns") {
		t.Fatalf("Serve returned %v", err)
	}
	srv.Close()
}

// The startup packet length field is checked before anything is read.
func TestStartupPacketTooLong(t *testing.T) {
	ts := startServer(t, Config{Logger: discardLogger})
	c := dialRaw(t, ts.addr)
	var hdr [8]byte
	binary.BigEndian.PutUint32(hdr[:], 1<<30)
	binary.BigEndian.PutUint32(hdr[4:], pgproto3.ProtocolVersion30)
	c.write(hdr[:])
	c.expectError("FATAL", sqlerr.ProtocolViolation)
	c.expectEOF()
}

// A session idle inside a transaction block is ended with 25P03; one idle
// outside a block is not.
func TestIdleInTransactionTimeout(t *testing.T) {
	ts := startServer(t, Config{IdleInTransactionTimeout: 200 * time.Millisecond, Logger: discardLogger})
	idle := dialRaw(t, ts.addr)
	idle.startup(testUser)
	c := dialRaw(t, ts.addr)
	c.startup(testUser)
	c.send(&pgproto3.Query{String: "BEGIN"})
	c.expectMsg(&pgproto3.CommandComplete{})
	c.expectReady('T')
	e := c.expectError("FATAL", "25P03")
	if e.Message != "terminating connection due to idle-in-transaction timeout" {
		t.Errorf("message %q", e.Message)
	}
	c.expectEOF()
	idle.selectOne() // longer idle than the timeout, but not in a transaction
}
