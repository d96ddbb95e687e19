package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcert"
	"certa/internal/testcluster"
)

// forever is a statement SQLite runs until it is interrupted.
const forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

// TestUsersTLSAndCancel runs a node with a users file written by `certa
// passwd`, TLS and --require-tls, checks who gets in, and cancels a
// statement that would run forever.
func TestUsersTLSAndCancel(t *testing.T) {
	passwd := exec.Command(testcluster.Binary(t), "passwd", "alice")
	passwd.Stdin = strings.NewReader("s3cret\n")
	line, err := passwd.Output()
	if err != nil {
		t.Fatalf("certa passwd: %v", err)
	}
	dir := t.TempDir()
	usersFile := filepath.Join(dir, "users")
	if err := os.WriteFile(usersFile, append([]byte("# made by certa passwd\n"), line...), 0o600); err != nil {
		t.Fatal(err)
	}
	certs := testcert.New(t).WriteFiles(t, dir)
	c := testcluster.Start(t, 1, append(testArgs, "--users-file", usersFile,
		"--tls-cert", certs.Cert, "--tls-key", certs.Key, "--require-tls")...)
	url := func(login, sslmode string) string {
		return fmt.Sprintf("postgres://%s@%s/certa?sslmode=%s&sslrootcert=%s&connect_timeout=10",
			login, c.Nodes[0].PGAddr, sslmode, certs.CA)
	}
	ctx := ctxT(t)

	for _, tc := range []struct{ login, sslmode, code string }{
		{"alice:wrong", "verify-full", "28P01"},
		{"bob:s3cret", "verify-full", "28P01"},
		{"alice:s3cret", "disable", "28000"},
	} {
		conn, err := pgclient.ConnectString(ctx, url(tc.login, tc.sslmode))
		if err == nil {
			conn.Close()
		}
		if got := pgclient.SQLState(err); got != tc.code {
			t.Errorf("%s with sslmode=%s: got %v, want %s", tc.login, tc.sslmode, err, tc.code)
		}
	}

	conn, err := pgclient.ConnectString(ctx, url("alice:s3cret", "verify-full"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if !conn.TLS() {
		t.Error("connection is not TLS")
	}
	mustExec(t, conn, "CREATE TABLE t (id INTEGER PRIMARY KEY)")

	// Autocommit, then inside a transaction block holding the write lock.
	cancelForever(t, conn)
	mustExec(t, conn, "BEGIN")
	mustExec(t, conn, "INSERT INTO t VALUES (1)")
	cancelForever(t, conn)
	mustFail(t, conn, "25P02", "SELECT 1")
	mustExec(t, conn, "ROLLBACK")
	mustExec(t, conn, "INSERT INTO t VALUES (2)")
	if got := values(t, conn, "SELECT id, id FROM t"); got != "2=2" {
		t.Errorf("table holds %s, want 2=2", got)
	}
}

// cancelForever runs the endless statement on conn and cancels it. A cancel
// that arrives before the statement starts does nothing, so it is repeated
// until the statement ends.
func cancelForever(t *testing.T, conn *pgclient.Conn) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := conn.Exec(context.Background(), forever)
		done <- err
	}()
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := conn.Cancel(ctxT(t)); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		select {
		case err := <-done:
			if code := pgclient.SQLState(err); code != "57014" || !strings.Contains(err.Error(), "canceling statement due to user request") {
				t.Fatalf("got %v, want 57014", err)
			}
			return
		case <-tick.C:
		case <-deadline:
			t.Fatal("statement not cancelled within 30s")
		}
	}
}
