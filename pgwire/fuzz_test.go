package pgwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/internal/testcert"
)

// memConn is a net.Conn whose client side is a fixed byte stream: reads
// return the stream then EOF, writes are collected (up to a bound). It
// makes a connection's run deterministic and independent of timing.
type memConn struct {
	in        *bytes.Reader
	out       bytes.Buffer
	truncated bool
}

const memConnMaxOut = 1 << 20

var errOutputFull = errors.New("memConn: output full")

func (c *memConn) Read(p []byte) (int, error) { return c.in.Read(p) }

func (c *memConn) Write(p []byte) (int, error) {
	if c.out.Len()+len(p) > memConnMaxOut {
		c.truncated = true
		return 0, errOutputFull
	}
	return c.out.Write(p)
}

func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return memAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return memAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

type memAddr struct{}

func (memAddr) Network() string { return "mem" }
func (memAddr) String() string  { return "mem" }

// Fuzz inputs: mode's bits select a valid startup prefix (1), whether
// the server is full (2) and whether it has TLS and users, so that the
// startup prefix leads to SCRAM (4); data is the client's stream (after the
// prefix).
const (
	fuzzWithStartup = 1
	fuzzReject      = 2
	fuzzSecure      = 4
)

func fuzzStartup() []byte {
	b, err := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "fuzz"}}).Encode(nil)
	if err != nil {
		panic(err)
	}
	return b
}

// encodeMsgs encodes frontend messages as a client would send them.
func encodeMsgs(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		var err error
		if b, err = m.Encode(b); err != nil {
			panic(err)
		}
	}
	return b
}

// FuzzConnection feeds arbitrary client bytes to a connection: it must
// neither panic nor hang, must close every session it opens, and must
// answer only with well-formed backend messages.
func FuzzConnection(f *testing.F) {
	q := func(s string) pgproto3.FrontendMessage { return &pgproto3.Query{String: s} }
	f.Add(uint8(fuzzWithStartup), encodeMsgs(q("SELECT 1"), q("VALUES; FLOATS"), &pgproto3.Terminate{}))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(q("BEGIN"), q("FAIL"), q("SELECT 1"), q("ROLLBACK"), q("")))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(q("PANIC")))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(q("BADROW; MANY 3; PLAINERR"), q("SLEEP"), q("WHOAMI")))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(
		&pgproto3.Parse{Query: "SELECT 1"}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{}, &pgproto3.Flush{}, q("SELECT 1"), &pgproto3.Sync{}, q("SELECT 2"),
	))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(
		&pgproto3.Parse{Name: "p", Query: "PARAMS 2", ParameterOIDs: []uint32{20, 1700}},
		&pgproto3.Describe{ObjectType: 'S', Name: "p"},
		&pgproto3.Bind{PreparedStatement: "p", DestinationPortal: "c", ParameterFormatCodes: []int16{1, 0},
			Parameters: [][]byte{{0, 0, 0, 0, 0, 0, 0, 7}, []byte("12.5")}, ResultFormatCodes: []int16{1}},
		&pgproto3.Describe{ObjectType: 'P', Name: "c"}, &pgproto3.Execute{Portal: "c", MaxRows: 1},
		&pgproto3.Execute{Portal: "c"}, &pgproto3.Close{ObjectType: 'P', Name: "c"}, &pgproto3.Sync{},
		&pgproto3.Parse{Query: "MANY 5"}, &pgproto3.Bind{ResultFormatCodes: []int16{1}}, &pgproto3.Execute{MaxRows: 2},
		&pgproto3.Execute{MaxRows: 2}, &pgproto3.Execute{}, &pgproto3.Sync{},
		&pgproto3.Parse{Name: "p", Query: "SELECT 1"}, &pgproto3.Sync{},
	))
	f.Add(uint8(fuzzWithStartup), encodeMsgs(
		&pgproto3.CopyData{Data: []byte("x")}, &pgproto3.CopyDone{}, &pgproto3.CopyFail{Message: "no"},
		&pgproto3.FunctionCall{Function: 7}, &pgproto3.PasswordMessage{Password: "pw"}, &pgproto3.Sync{}, &pgproto3.Flush{},
	))
	f.Add(uint8(fuzzWithStartup), []byte("\x01\x00\x00\x00\x08abcd"))
	f.Add(uint8(fuzzWithStartup), []byte{'Q', 0, 0, 0, 7, 'a', 'b', 'c'})
	f.Add(uint8(fuzzWithStartup), []byte{'Q', 0x7f, 0xff, 0xff, 0xff})
	f.Add(uint8(fuzzWithStartup|fuzzReject), encodeMsgs(q("SELECT 1")))
	f.Add(uint8(0), encodeMsgs(&pgproto3.SSLRequest{}, &pgproto3.GSSEncRequest{}, &pgproto3.StartupMessage{
		ProtocolVersion: pgproto3.ProtocolVersion32, Parameters: map[string]string{"user": "u", "_pq_.x": "1", "application_name": "a"},
	}, q("SELECT 1")))
	f.Add(uint8(0), encodeMsgs(&pgproto3.SSLRequest{}, &pgproto3.SSLRequest{}))
	f.Add(uint8(0), encodeMsgs(&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}))
	f.Add(uint8(0), encodeMsgs(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "refused"}}))
	f.Add(uint8(0), []byte("GET / HTTP/1.1\r\n\r\n"))
	f.Add(uint8(0), []byte{})
	f.Add(uint8(fuzzSecure), encodeMsgs(&pgproto3.SSLRequest{}))
	f.Add(uint8(fuzzSecure), encodeMsgs(&pgproto3.SSLRequest{}, q("SELECT 1")))
	f.Add(uint8(fuzzSecure|fuzzWithStartup), encodeMsgs(
		&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")},
		&pgproto3.SASLResponse{Data: []byte("c=biws,r=abc,p=AAAA")},
	))
	f.Add(uint8(fuzzSecure|fuzzWithStartup), encodeMsgs(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("y,a=x,n=u,r=")}))

	cred, err := NewSCRAMCredential("pw")
	if err != nil {
		f.Fatal(err)
	}
	secure := Config{TLS: testcert.New(f).ServerConfig(), Credentials: Users{"fuzz": cred}.Lookup}

	f.Fuzz(func(t *testing.T, mode uint8, data []byte) {
		input := data
		if mode&fuzzWithStartup != 0 {
			input = append(fuzzStartup(), data...)
		}
		backend := &fakeBackend{noBlock: true}
		cfg := Config{}
		if mode&fuzzSecure != 0 {
			cfg = secure
		}
		cfg.Logger, cfg.MaxMessageSize = discardLogger, 4096
		s := NewServer(cfg, backend)
		nc := &memConn{in: bytes.NewReader(input)}
		done := make(chan struct{})
		if mode&fuzzReject != 0 {
			s.adm.admitted = s.cfg.MaxConns // full: the client is refused after authenticating
		}
		go func() {
			defer close(done)
			serveMem(s, nc)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("connection did not end at the end of its input")
		}
		if opened, closed := backend.counts(); opened != closed {
			t.Fatalf("%d sessions opened, %d closed", opened, closed)
		}
		if !nc.truncated {
			checkBackendStream(t, nc.out.Bytes())
		}
	})
}

// checkBackendStream checks that out is a sequence of well-formed backend
// messages, after the single-byte answers to SSL and GSS requests.
func checkBackendStream(t *testing.T, out []byte) {
	t.Helper()
	// The server never sends NoticeResponse ('N'), so leading 'N's are the
	// encryption refusals (at most one each).
	for i := 0; i < 2 && len(out) > 0 && out[0] == 'N'; i++ {
		out = out[1:]
	}
	// An 'S' alone accepted an SSLRequest; the TLS handshake then failed
	// (this stream holds no ClientHello) and nothing more was sent.
	if string(out) == "S" {
		return
	}
	for len(out) > 0 {
		// Frame here: pgproto3 reports a clean end of stream like a
		// truncated one. Then decode each message on its own.
		if len(out) < 5 {
			t.Fatalf("server sent a truncated message header %q", out)
		}
		n := int(binary.BigEndian.Uint32(out[1:5])) + 1
		if n < 5 || n > len(out) {
			t.Fatalf("server sent a message of bad length: %q", out)
		}
		msg, err := pgproto3.NewFrontend(bytes.NewReader(out[:n]), io.Discard).Receive()
		if err != nil {
			t.Fatalf("server sent a malformed message: %v\n%q", err, out[:n])
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok && (len(e.Code) != 5 || e.Severity == "") {
			t.Fatalf("ErrorResponse without SQLSTATE or severity: %+v", e)
		}
		out = out[n:]
	}
}

// TestMemConnHarness checks the fuzz harness itself: a well-behaved
// client's stream yields the expected answer through memConn.
func TestMemConnHarness(t *testing.T) {
	input := append(fuzzStartup(), encodeMsgs(&pgproto3.Query{String: "SELECT 5"}, &pgproto3.Query{String: "PANIC"})...)
	backend := &fakeBackend{}
	s := NewServer(Config{Logger: discardLogger}, backend)
	nc := &memConn{in: bytes.NewReader(input)}
	serveMem(s, nc)
	out := nc.out.Bytes()
	checkBackendStream(t, out)
	for _, want := range []string{"D\x00\x00\x00\x0b\x00\x01\x00\x00\x00\x015", "C\x00\x00\x00\x0dSELECT 1\x00", "Z\x00\x00\x00\x05I", "SFATAL\x00", "CXX000\x00"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	if o, c := backend.counts(); o != 1 || c != 1 {
		t.Errorf("sessions opened %d, closed %d", o, c)
	}
}

// serveMem serves one in-memory connection as start does a socket's.
func serveMem(s *Server, nc net.Conn) {
	s.adm.enter("mem", &s.cfg)
	s.serveConn(nc, "mem")
}
