package pgwire

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"certa/sqlerr"
)

// startSleep runs SLEEP on conn in a goroutine and returns once the
// session is in it; the channel gets the statement's error.
func startSleep(t *testing.T, ts *testServer, conn *pgx.Conn) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), "SLEEP")
		done <- err
	}()
	select {
	case <-ts.backend.sleeping:
	case <-testCtx(t).Done():
		t.Fatal("SLEEP did not start")
	}
	return done
}

// wantCanceled checks that a statement ended with 57014 from a cancel.
func wantCanceled(t *testing.T, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		pe := pgErr(t, err)
		if pe.Severity != "ERROR" || pe.Code != sqlerr.QueryCanceled || pe.Message != "canceling statement due to user request" {
			t.Fatalf("got %s %s %q", pe.Severity, pe.Code, pe.Message)
		}
	case <-testCtx(t).Done():
		t.Fatal("statement not cancelled")
	}
}

func TestCancelPgx(t *testing.T) {
	ts := startServer(t, Config{})
	ts.backend.sleeping = make(chan struct{}, 1)
	conn := ts.mustPgx()
	ctx := testCtx(t)

	done := startSleep(t, ts, conn)
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	wantCanceled(t, done)

	// The connection goes on, also in a transaction block, which the
	// cancelled statement fails, as in PostgreSQL.
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	done = startSleep(t, ts, conn)
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	wantCanceled(t, done)
	if s := conn.PgConn().TxStatus(); s != 'E' {
		t.Errorf("status %q after cancel in a block, want 'E'", s)
	}
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}

	// A cancel while idle is ignored: it does not cancel the next statement.
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn.QueryRow(ctx, "SELECT 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after idle cancel: %d, %v", n, err)
	}
}

// sendCancel sends a CancelRequest on a new connection and waits until the
// server has handled it (it then closes the connection).
func sendCancel(t *testing.T, ts *testServer, pid uint32, secret []byte) {
	t.Helper()
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.CancelRequest{ProcessID: pid, SecretKey: secret})
	c.expectEOF()
}

// A cancel that arrives in the middle of an extended-protocol batch (Parse
// handled, Execute not read yet) is not dropped as one arriving while idle
// is: it cancels the batch's statement. PgJDBC sends one cancel per
// statement, which can reach the server before the Execute does.
func TestCancelMidBatchReachesExecute(t *testing.T) {
	ts := startServer(t, Config{})
	c := dialRaw(t, ts.addr)
	c.startup(testUser)

	c.send(&pgproto3.Parse{Query: "SLEEP"}, &pgproto3.Flush{})
	c.expectMsg(&pgproto3.ParseComplete{})
	sendCancel(t, ts, c.key.ProcessID, c.key.SecretKey)
	c.send(&pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	c.expectMsg(&pgproto3.BindComplete{})
	c.expectError("ERROR", sqlerr.QueryCanceled)
	c.expectReady('I')

	// Once the batch has ended the connection is idle again, and a
	// cancel then is dropped: the next statement runs.
	sendCancel(t, ts, c.key.ProcessID, c.key.SecretKey)
	c.selectOne()
}

func TestCancelWrongKey(t *testing.T) {
	ts := startServer(t, Config{})
	ts.backend.sleeping = make(chan struct{}, 1)
	conn := ts.mustPgx()
	other := ts.mustPgx()
	pid, secret := conn.PgConn().PID(), conn.PgConn().SecretKey()
	if pid == other.PgConn().PID() {
		t.Fatal("two connections have the same process ID")
	}

	done := startSleep(t, ts, conn)
	wrong := append([]byte(nil), secret...)
	wrong[0]++
	sendCancel(t, ts, pid, wrong)
	sendCancel(t, ts, pid, append(secret, 0)) // protocol 3.2's longer key
	sendCancel(t, ts, other.PgConn().PID(), secret)
	sendCancel(t, ts, pid^1, secret)
	// Each cancel was handled before its connection closed.
	select {
	case err := <-done:
		t.Fatalf("a wrong key cancelled the statement: %v", err)
	default:
	}
	sendCancel(t, ts, pid, secret)
	wantCanceled(t, done)
}

func TestCancelKeysUnregistered(t *testing.T) {
	ts := startServer(t, Config{})
	for range 3 {
		conn := ts.mustPgx()
		conn.Close(testCtx(t))
	}
	eventually(t, "cancel keys of closed connections removed", func() bool {
		ts.srv.cancels.mu.Lock()
		defer ts.srv.cancels.mu.Unlock()
		return len(ts.srv.cancels.conns) == 0
	})
}

// TestCancelOverTLS checks cancels for a session that runs over TLS on a
// server that requires TLS: sent over TLS (as pgx and libpq 17 send them
// then) and in the clear (as older libpq does).
func TestCancelOverTLS(t *testing.T) {
	ts, files := startTLSServer(t, Config{RequireTLS: true})
	ts.backend.sleeping = make(chan struct{}, 1)
	ts.loginParams = "sslmode=verify-full&sslrootcert=" + files.CA
	conn := ts.mustPgx()

	done := startSleep(t, ts, conn)
	if err := conn.PgConn().CancelRequest(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	wantCanceled(t, done)

	done = startSleep(t, ts, conn)
	sendCancel(t, ts, conn.PgConn().PID(), conn.PgConn().SecretKey())
	wantCanceled(t, done)
}
