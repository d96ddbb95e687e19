package pgwire

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// dialFrom connects to addr from the loopback address local (127.0.0.x).
func dialFrom(t *testing.T, local, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}

// closedByServer reports whether the server closed nc without a word
// (within 5 s), rather than wait for its startup.
func closedByServer(nc net.Conn) bool {
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	_, err := nc.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err)
}

func isReset(err error) bool {
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

// pgxFrom connects pgx from the loopback address local.
func (ts *testServer) pgxFrom(local, user, password string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(ts.connString(user, ""))
	if err != nil {
		ts.t.Fatal(err)
	}
	cfg.Password = password
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}, Timeout: 5 * time.Second}
	cfg.DialFunc = d.DialContext
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err == nil {
		ts.t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

// Clients that connect and never authenticate hold no MaxConns slot and
// at most MaxPendingPerAddress from one address (MaxPending in all):
// clients from other addresses are served meanwhile, further connections
// wait for a slot rather than fail, and the silent ones go after
// StartupTimeout.
func TestSilentClientsDoNotLockOut(t *testing.T) {
	ts := startServer(t, Config{MaxConns: 4, MaxPending: 6, MaxPendingPerAddress: 4, StartupTimeout: 2 * time.Second, Logger: discardLogger})
	var silent []net.Conn
	for range 4 {
		silent = append(silent, dialFrom(t, "127.0.0.1", ts.addr))
	}
	for _, host := range []string{"127.0.0.2", "127.0.0.3"} {
		c, err := ts.pgxFrom(host, "tester", "")
		if err != nil {
			t.Fatalf("a client from %s while another address holds silent connections: %v", host, err)
		}
		var n int
		if err := c.QueryRow(context.Background(), "SELECT 1").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	// 4 silent from one address and 2 from another fill MaxPending; a
	// client from a third waits for a slot, which the silent ones free
	// when StartupTimeout ends them, and so does one from the first.
	silent = append(silent, dialFrom(t, "127.0.0.6", ts.addr), dialFrom(t, "127.0.0.6", ts.addr))
	done := make(chan error, 2)
	go func() { _, err := ts.pgxFrom("127.0.0.7", "tester", ""); done <- err }()
	go func() { _, err := ts.pgxFrom("127.0.0.1", "tester", ""); done <- err }()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("a client that waited for a slot: %v", err)
		}
	}
	for _, nc := range silent {
		if !closedByServer(nc) {
			t.Fatal("a silent connection outlived StartupTimeout")
		}
	}
	// Four sessions: MaxConns is reached by authenticated clients only.
	if _, err := ts.pgxFrom("127.0.0.5", "tester", ""); pgErr(t, err).Code != "53300" {
		t.Fatalf("a fifth session: %v", err)
	}
}

// Failed logins from one address delay that address's next failures,
// doubling; other addresses are not affected.
func TestFailedLoginDelays(t *testing.T) {
	var a admission
	now := time.Now()
	for i, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second} {
		if got := a.failed("10.0.0.1", now); got != want {
			t.Errorf("failure %d: delay %v, want %v", i+1, got, want)
		}
	}
	if got := a.failed("10.0.0.2", now); got != authFailDelay {
		t.Errorf("another address: %v", got)
	}
	a.succeeded("10.0.0.1")
	if got := a.failed("10.0.0.1", now); got != authFailDelay {
		t.Errorf("after a success: %v", got)
	}
	if got := a.failed("10.0.0.2", now.Add(authFailMemory+time.Second)); got != authFailDelay {
		t.Errorf("after %v: %v", authFailMemory, got)
	}
}

// Over the wire: a wrong password from an address that failed before is
// answered only after its delay, while a client from another address
// logs in.
func TestPasswordGuessingIsSlowed(t *testing.T) {
	cred, err := NewSCRAMCredential("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Config{Credentials: Users{"alice": cred}.Lookup, Logger: discardLogger})
	for range 3 { // delays 250 ms, 500 ms, 1 s
		if _, err := ts.pgxFrom("127.0.0.1", "alice", "guess"); pgErr(t, err).Code != "28P01" {
			t.Fatalf("wrong password: %v", err)
		}
	}
	start := time.Now()
	if _, err := ts.pgxFrom("127.0.0.1", "alice", "guess"); pgErr(t, err).Code != "28P01" {
		t.Fatalf("wrong password: %v", err)
	}
	if d := time.Since(start); d < 2*time.Second {
		t.Errorf("the fourth wrong password was answered after %v, before its 2 s delay", d)
	}
	if _, err := ts.pgxFrom("127.0.0.2", "alice", "s3cret"); err != nil {
		t.Errorf("a client from another address: %v", err)
	}
}
