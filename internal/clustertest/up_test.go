package clustertest

import (
	"bytes"
	"math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// syncBuffer is a bytes.Buffer safe for a process writing it while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// `certa up --secure` runs a cluster as in production: peer TLS, client
// TLS required, a user with a password; the psql line it prints works,
// and a client without TLS is refused.
func TestUpSecure(t *testing.T) {
	base := 20000 + rand.IntN(200)*10
	var out syncBuffer
	up := exec.Command(testcluster.Binary(t), "up", "--secure", "--data-dir", t.TempDir(), "--port-base", itoa(base))
	up.Stdout, up.Stderr = &out, &out
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- up.Wait() }()
	defer func() {
		up.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			up.Process.Kill()
			t.Error("certa up did not stop within 30 s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("certa up output:\n%s", out.String())
		}
	}()
	psqlLine := regexp.MustCompile(`psql "(host=127\.0\.0\.1 port=\d+ [^"]*sslmode=verify-full[^"]*)"`)
	var conn string
	deadline := time.Now().Add(90 * time.Second)
	for conn == "" && time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("certa up exited: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		if m := psqlLine.FindStringSubmatch(out.String()); m != nil {
			conn = m[1]
		}
	}
	if conn == "" {
		t.Fatal("certa up printed no psql line within 90 s")
	}
	if !strings.Contains(out.String(), "peers=tls") {
		t.Error("the nodes do not say peers=tls")
	}
	ctx := ctxT(t)
	c, err := pgclient.ConnectString(ctx, conn)
	if err != nil {
		t.Fatalf("%s: %v", conn, err)
	}
	defer c.Close()
	mustExec(t, c, "CREATE TABLE s (id int PRIMARY KEY)")
	mustExec(t, c, "INSERT INTO s VALUES (1)")
	if got := values(t, c, "SELECT id, 0 FROM s"); got != "1=0" {
		t.Errorf("rows: %s", got)
	}
	plain := strings.Replace(conn, "sslmode=verify-full", "sslmode=disable", 1)
	if c, err := pgclient.ConnectString(ctx, plain); err == nil || pgclient.SQLState(err) != "28000" {
		if err == nil {
			c.Close()
		}
		t.Errorf("a client without TLS: %v, want 28000", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// `certa up` whose first node cannot start (another process holds its
// client port) says so and exits at once, stopping the others, rather
// than wait out its 90 s for a cluster that cannot come up.
func TestUpNodeCannotStart(t *testing.T) {
	var taken net.Listener
	for taken == nil || taken.Addr().(*net.TCPAddr).Port > 65000 { // certa up uses base+100, base+200
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		taken = l
	}
	base := taken.Addr().(*net.TCPAddr).Port
	start := time.Now()
	out, err := exec.Command(testcluster.Binary(t), "up", "--data-dir", t.TempDir(), "--port-base", itoa(base)).CombinedOutput()
	if err == nil {
		t.Fatalf("certa up with a port taken succeeded:\n%s", out)
	}
	// node1's port is taken; under load another node's may be taken by
	// chance and that node fail first: the message names whichever did.
	if !strings.Contains(string(out), "exited before the cluster came up") || !strings.Contains(string(out), "address already in use") {
		t.Fatalf("certa up does not say which node failed and why:\n%s", out)
	}
	t.Logf("certa up gave up after %v", time.Since(start).Round(time.Millisecond))
}
