package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
	"certa/peertls"
	"certa/writeset"
)

// TestPeerTLSKeepsOutsidersOut runs a cluster whose nodes speak mutual TLS
// and whose clients log in with SCRAM, and tries, without a certificate of the cluster's CA and with one of
// another CA, everything a stranger who reaches the HTTP and Raft ports
// could: join, append a valid and a garbage write set, the rpc endpoint,
// checksums and profiles, a 250 MB body, Raft requests. Every attempt is
// refused, and the cluster's contents, members and leadership stay as
// they were. Between the nodes nothing travels in the clear.
func TestPeerTLSKeepsOutsidersOut(t *testing.T) {
	const password = "outsiders-s3cret"
	c := testcluster.StartPeerTLS(t, 3, append([]string{"--users-file", usersFile(t, "certa", password)}, testArgs...)...)
	ctx := ctxT(t)
	// SCRAM for clients, as in production.
	connect := func(i int) *pgclient.Conn {
		t.Helper()
		conn, err := pgclient.ConnectString(ctx, fmt.Sprintf("postgres://certa:%s@%s/certa?sslmode=disable", password, c.Nodes[i].PGAddr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	follower := connect(1) // n1 bootstrapped the cluster and leads it
	mustExec(t, follower, "CREATE TABLE t (id int PRIMARY KEY, v text)")
	mustExec(t, follower, "INSERT INTO t VALUES (1, 'one'), (2, 'two')") // forwarded to the leader over HTTPS
	c.WaitConverged(30 * time.Second)
	leader, err := c.Leader()
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Status(leader)
	if err != nil {
		t.Fatal(err)
	}

	// Another CA, with a certificate for the same node id and host.
	foreignDir := t.TempDir()
	if err := peertls.MakeCA(foreignDir, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := peertls.MakeNodeCert(foreignDir, "n1", []string{"127.0.0.1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	foreign, err := peertls.Load(peertls.NodeFiles(foreignDir, "n1"))
	if err != nil {
		t.Fatal(err)
	}
	foreignTLS := foreign.Client()
	foreignTLS.InsecureSkipVerify = true // so that it is the node that refuses
	noCert := &tls.Config{InsecureSkipVerify: true}
	client := func(cfg *tls.Config) *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	}
	ghost, _ := json.Marshal(writeset.Member{ID: "ghost", PGAddr: "10.255.0.1:5432", RaftAddr: "10.255.0.1:7000", HTTPAddr: "10.255.0.1:8000"})
	drop := writeset.EncodeBatch([]*writeset.WriteSet{{Origin: "n1", TxID: 99, DDL: "DROP TABLE t"}})
	requests := []struct {
		method, path string
		body         []byte
	}{
		{"POST", "/join", ghost},
		{"POST", "/internal/append", drop},
		{"POST", "/internal/append", []byte("garbage")},
		{"GET", "/checksum", nil},
		{"GET", "/debug/pprof/heap", nil},
		{"GET", "/debug/pprof/profile?seconds=1", nil},
	}
	for i, n := range c.Nodes {
		for _, r := range requests {
			url := "https://" + n.HTTPAddr + r.path
			req, _ := http.NewRequestWithContext(ctx, r.method, url, bytes.NewReader(r.body))
			resp, err := client(noCert).Do(req)
			if err != nil {
				t.Errorf("%s %s without a certificate: %v", r.method, url, err)
				continue
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s %s without a certificate: %s, want 403", r.method, url, resp.Status)
			}
			req, _ = http.NewRequestWithContext(ctx, r.method, url, bytes.NewReader(r.body))
			if resp, err := client(foreignTLS).Do(req); err == nil {
				resp.Body.Close()
				t.Errorf("%s %s with another CA's certificate: %s, want a refused handshake", r.method, url, resp.Status)
			}
			req, _ = http.NewRequestWithContext(ctx, r.method, "http://"+n.HTTPAddr+r.path, bytes.NewReader(r.body))
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("%s %s in the clear: %s, want 400", r.method, r.path, resp.Status)
				}
			}
		}
		// The rpc endpoint: CONNECT, as a node's client does it.
		conn, err := tls.Dial("tcp", n.HTTPAddr, noCert)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(conn, "CONNECT /internal/rpc HTTP/1.0\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "CONNECT"})
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("node %d: CONNECT /internal/rpc without a certificate: %v %v", i, resp, err)
		}
		conn.Close()
		// /status and /metrics are for operators: open.
		for _, path := range []string{"/status", "/metrics"} {
			resp, err := client(noCert).Get("https://" + n.HTTPAddr + path)
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %v %v", path, resp, err)
			} else {
				resp.Body.Close()
			}
		}
		// The Raft port: in the clear, and with another CA's certificate.
		raw, err := net.DialTimeout("tcp", n.RaftAddr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		raw.SetDeadline(time.Now().Add(10 * time.Second))
		raw.Write([]byte{1, 0x80})                                                      // rpcRequestVote and an empty msgpack map
		if b, err := io.ReadAll(raw); len(b) > 0 && !bytes.HasPrefix(b, []byte{0x15}) { // a TLS alert at most
			t.Errorf("node %d: Raft port answered a request in the clear: %q %v", i, b, err)
		}
		raw.Close()
		tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", n.RaftAddr, foreignTLS)
		if err == nil {
			tc.SetDeadline(time.Now().Add(10 * time.Second))
			tc.Write([]byte{1, 0x80})
			if b, err := io.ReadAll(tc); err == nil || len(b) > 0 {
				t.Errorf("node %d: Raft port answered another CA's certificate: %q %v", i, b, err)
			}
			tc.Close()
		}
	}

	// A member's certificate joins only as that member: not as a ghost,
	// nor with another member's id (which would move its address).
	member, err := peertls.Load(c.CertFiles(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []writeset.Member{
		{ID: "ghost", PGAddr: "10.255.0.1:5432", RaftAddr: "10.255.0.1:7000", HTTPAddr: "10.255.0.1:8000"},
		{ID: "n3", PGAddr: c.Nodes[2].PGAddr, RaftAddr: "10.255.0.1:7000", HTTPAddr: c.Nodes[2].HTTPAddr},
	} {
		body, _ := json.Marshal(m)
		for _, n := range c.Nodes {
			resp, err := client(member.Client()).Post("https://"+n.HTTPAddr+"/join", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("n2's certificate joining as %s via %s: %s, want 403", m.ID, n.ID, resp.Status)
			}
		}
	}

	// A 250 MB body without a certificate is refused before it is read:
	// the node's memory does not grow by it.
	pid := c.Nodes[leader].PID()
	rss0 := rssMB(t, pid)
	req, _ := http.NewRequestWithContext(ctx, "POST", "https://"+c.Nodes[leader].HTTPAddr+"/internal/append", io.LimitReader(zeros{}, 250<<20))
	req.ContentLength = 250 << 20
	if resp, err := client(noCert).Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("250 MB append: %s", resp.Status)
		}
	}
	if rss := rssMB(t, pid); rss > rss0+50 {
		t.Errorf("a refused 250 MB body took the leader from %d to %d MB", rss0, rss)
	}

	// A member's write set whose changes do not decode is refused before
	// it reaches the log (it would fail on every node).
	bad := writeset.EncodeBatch([]*writeset.WriteSet{{Origin: "n2", TxID: 7, Keys: []writeset.Key{"k"}, Tables: []string{"t"}, Changes: []byte("garbage")}})
	for _, n := range c.Nodes {
		resp, err := client(member.Client()).Post("https://"+n.HTTPAddr+"/internal/append", "application/octet-stream", bytes.NewReader(bad))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("a write set with garbage changes via %s: %s, want 400", n.ID, resp.Status)
		}
	}

	// Even a member may not flood a node: forwarded entries in flight are
	// bounded in bytes, garbage or oversized ones are refused (400, 413)
	// before they reach the log, and the node stays up.
	flood := make(chan error, 6)
	for range 6 {
		go func() {
			body := bytes.Repeat([]byte{0xff}, 40<<20)
			resp, err := client(member.Client()).Post("https://"+c.Nodes[leader].HTTPAddr+"/internal/append", "application/octet-stream", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusRequestEntityTooLarge {
					err = fmt.Errorf("%s", resp.Status)
				}
			}
			flood <- err
		}()
	}
	for range 6 {
		if err := <-flood; err != nil {
			t.Errorf("a 40 MB garbage entry from a member: %v, want 400 or 413", err)
		}
	}
	if rss := rssMB(t, pid); rss > rss0+400 {
		t.Errorf("six 40 MB entries at once took the leader from %d to %d MB", rss0, rss)
	}
	t.Logf("leader RSS %d MB before the floods, %d MB after", rss0, rssMB(t, pid))

	// A node with another CA's certificate cannot join.
	dir := t.TempDir()
	jctx, cancel := context.WithTimeout(ctx, 15*time.Second) // it retries until its join times out
	defer cancel()
	join := exec.CommandContext(jctx, testcluster.Binary(t), "node", "--id", "n1", "--data-dir", filepath.Join(dir, "evil"),
		"--pg-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--raft-addr", freeAddr(t), "--join", c.Nodes[0].HTTPAddr,
		"--peer-cert", peertls.NodeFiles(foreignDir, "n1").Cert, "--peer-key", peertls.NodeFiles(foreignDir, "n1").Key,
		"--peer-ca", peertls.NodeFiles(foreignDir, "n1").CA)
	if out, err := join.CombinedOutput(); err == nil || !bytes.Contains(out, []byte("certificate")) {
		t.Errorf("a node with another CA's certificate: %v\n%s", err, out)
	}

	after, err := c.Status(leader)
	if err != nil {
		t.Fatal(err)
	}
	if after.Role != "leader" || after.Term != before.Term || len(after.Members) != 3 {
		t.Errorf("leadership or members changed: before %+v, after %+v", before, after)
	}
	for i := range c.Nodes {
		conn := connect(i)
		mustExec(t, conn, "SET certa.consistency = 'sync'")
		if got := values(t, conn, "SELECT id, v FROM t ORDER BY id"); got != "1=one,2=two" {
			t.Errorf("node %d: rows %q", i, got)
		}
	}
	c.WaitConverged(30 * time.Second)
}

// zeros reads as endless zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// rssMB is a process's resident memory in MB.
func rssMB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.Atoi(f[1])
			return kb / 1024
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
