package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// testTimeout bounds every wait in these tests, so a bug fails a test
// instead of hanging the run.
const testTimeout = 20 * time.Second

// testServer is a Server on a real TCP listener with a fakeBackend.
type testServer struct {
	t       *testing.T
	srv     *Server
	backend *fakeBackend
	addr    string
	served  chan error // Serve's result

	// login is how mustPgx and checkServing connect: the user, and
	// ":password" after it on servers with users; extra connection
	// parameters follow in loginParams.
	login       string
	loginParams string
}

func startServer(t *testing.T, cfg Config) *testServer {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{
		t:           t,
		backend:     &fakeBackend{},
		addr:        ln.Addr().String(),
		served:      make(chan error, 1),
		login:       "tester",
		loginParams: "application_name=pgxtest",
	}
	ts.srv = NewServer(cfg, ts.backend)
	go func() { ts.served <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := ts.srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		select {
		case err := <-ts.served:
			if !errors.Is(err, ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(testTimeout):
			t.Errorf("Serve did not return after Close")
		}
		// Close waited for every connection: every session is closed.
		if opened, closed := ts.backend.counts(); opened != closed {
			t.Errorf("%d sessions opened, %d closed", opened, closed)
		}
	})
	return ts
}

// testLogWriter sends server logs to the test log. Close waits for every
// connection goroutine, so nothing logs after the test ends.
type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// connString is a URL for user (which may be "user:password") with
// sslmode=disable unless extra names another.
func (ts *testServer) connString(user string, extra string) string {
	s := fmt.Sprintf("postgres://%s@%s/testdb?connect_timeout=10", user, ts.addr)
	if !strings.Contains(extra, "sslmode=") {
		s += "&sslmode=disable"
	}
	if extra != "" {
		s += "&" + extra
	}
	return s
}

// pgxConnect connects pgx as user using the simple query protocol.
func (ts *testServer) pgxConnect(user string) (*pgx.Conn, error) {
	return ts.pgxConnectString(ts.connString(user, "application_name=pgxtest"))
}

// pgxConnectString connects pgx with connString using the simple query
// protocol; the connection is closed when the test ends.
func (ts *testServer) pgxConnectString(connString string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		ts.t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		ts.t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

// mustPgx connects pgx as ts.login.
func (ts *testServer) mustPgx() *pgx.Conn {
	ts.t.Helper()
	conn, err := ts.pgxConnectString(ts.connString(ts.login, ts.loginParams))
	if err != nil {
		ts.t.Fatalf("connect: %v", err)
	}
	return conn
}

// checkServing fails the test unless a fresh client can run a query.
func (ts *testServer) checkServing() {
	ts.t.Helper()
	conn, err := ts.pgxConnectString(ts.connString(ts.login, ts.loginParams))
	if err != nil {
		ts.t.Fatalf("server no longer serving: %v", err)
	}
	defer conn.Close(context.Background())
	var n int64
	if err := conn.QueryRow(testCtx(ts.t), "SELECT 7").Scan(&n); err != nil || n != 7 {
		ts.t.Fatalf("SELECT 7 = %d, %v", n, err)
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// pgErr returns err's *pgconn.PgError or fails the test.
func pgErr(t *testing.T, err error) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *pgconn.PgError", err, err)
	}
	return pe
}

// eventually polls cond until it holds or the test timeout passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rawClient speaks the protocol message by message through pgproto3's
// Frontend, for what real drivers never send.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
	// key is the BackendKeyData startup received.
	key pgproto3.BackendKeyData
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(testTimeout))
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *rawClient) write(b []byte) {
	c.t.Helper()
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *rawClient) recv() pgproto3.BackendMessage {
	c.t.Helper()
	m, err := c.fe.Receive()
	if err != nil {
		c.t.Fatalf("receive: %v", err)
	}
	return m
}

// startup sends a startup message and returns the ParameterStatus values,
// reading up to ReadyForQuery.
func (c *rawClient) startup(params map[string]string) map[string]string {
	c.t.Helper()
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	got := map[string]string{}
	for {
		switch m := c.recv().(type) {
		case *pgproto3.AuthenticationOk:
		case *pgproto3.BackendKeyData:
			c.key = *m
			c.key.SecretKey = append([]byte(nil), m.SecretKey...)
		case *pgproto3.ParameterStatus:
			got[m.Name] = m.Value
		case *pgproto3.ReadyForQuery:
			if m.TxStatus != 'I' {
				c.t.Fatalf("ReadyForQuery %q after startup", m.TxStatus)
			}
			return got
		default:
			c.t.Fatalf("unexpected %T during startup: %+v", m, m)
		}
	}
}

// expectError reads an ErrorResponse and checks its severity and code.
func (c *rawClient) expectError(severity, code string) *pgproto3.ErrorResponse {
	c.t.Helper()
	m := c.recv()
	e, ok := m.(*pgproto3.ErrorResponse)
	if !ok {
		c.t.Fatalf("got %T %+v, want ErrorResponse %s", m, m, code)
	}
	if e.Severity != severity || e.SeverityUnlocalized != severity || e.Code != code {
		c.t.Fatalf("got %s %s %q, want %s %s", e.Severity, e.Code, e.Message, severity, code)
	}
	cp := *e
	return &cp
}

// expectMsg reads a message and checks it has want's type; it returns it.
func (c *rawClient) expectMsg(want pgproto3.BackendMessage) pgproto3.BackendMessage {
	c.t.Helper()
	m := c.recv()
	if fmt.Sprintf("%T", m) != fmt.Sprintf("%T", want) {
		c.t.Fatalf("got %T %+v, want %T", m, m, want)
	}
	return m
}

func (c *rawClient) expectReady(status byte) {
	c.t.Helper()
	m := c.recv()
	r, ok := m.(*pgproto3.ReadyForQuery)
	if !ok || r.TxStatus != status {
		c.t.Fatalf("got %T %+v, want ReadyForQuery %q", m, m, status)
	}
}

// expectEOF checks that the server closed the connection (and sent
// nothing more).
func (c *rawClient) expectEOF() {
	c.t.Helper()
	var b [1]byte
	n, err := c.nc.Read(b[:])
	if n != 0 || !errors.Is(err, io.EOF) {
		c.t.Fatalf("read %d bytes, %v; want EOF", n, err)
	}
}

// selectOne runs SELECT 1 and checks the whole answer.
func (c *rawClient) selectOne() {
	c.t.Helper()
	c.send(&pgproto3.Query{String: "SELECT 1"})
	if m, ok := c.recv().(*pgproto3.RowDescription); !ok || len(m.Fields) != 1 {
		c.t.Fatalf("want RowDescription, got %+v", m)
	}
	if m, ok := c.recv().(*pgproto3.DataRow); !ok || string(m.Values[0]) != "1" {
		c.t.Fatalf("want DataRow 1, got %+v", m)
	}
	if m, ok := c.recv().(*pgproto3.CommandComplete); !ok || string(m.CommandTag) != "SELECT 1" {
		c.t.Fatalf("want CommandComplete, got %+v", m)
	}
	c.expectReady('I')
}

var testUser = map[string]string{"user": "tester", "database": "testdb"}

// discardLogger is for tests that provoke logged errors on purpose.
var discardLogger = slog.New(slog.DiscardHandler)
