package peertls

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// cluster makes a CA with node certificates for 127.0.0.1 in a new
// directory and returns their configs by node id.
func cluster(t *testing.T, ids ...string) map[string]*Config {
	t.Helper()
	dir := t.TempDir()
	if err := MakeCA(dir, time.Hour); err != nil {
		t.Fatal(err)
	}
	out := map[string]*Config{}
	for _, id := range ids {
		if err := MakeNodeCert(dir, id, []string{"127.0.0.1", "localhost"}, time.Hour); err != nil {
			t.Fatal(err)
		}
		c, err := Load(NodeFiles(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != id {
			t.Fatalf("loaded id %q, want %q", c.ID, id)
		}
		out[id] = c
	}
	return out
}

// handshake connects client to a listener with server and returns the
// id the server saw, or the error of either side.
func handshake(t *testing.T, server, client *tls.Config, host string) (string, error) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", server)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 1)
	srvErr := make(chan error, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			srvErr <- err
			return
		}
		defer conn.Close()
		tc := conn.(*tls.Conn)
		tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err != nil {
			srvErr <- err
			return
		}
		cs := tc.ConnectionState()
		id, _ := PeerID(&cs)
		seen <- id
		io.WriteString(tc, "ok")
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", net.JoinHostPort(host, port), client)
	if err == nil {
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.ReadAll(conn) // TLS 1.3: a refused client certificate shows here
		conn.Close()
	}
	select {
	case id := <-seen:
		return id, err
	case e := <-srvErr:
		return "", e
	case <-time.After(5 * time.Second):
		t.Fatal("no handshake within 5s")
		return "", nil
	}
}

func TestMutualTLS(t *testing.T) {
	ours := cluster(t, "node1", "node2")
	theirs := cluster(t, "node1")
	if id, err := handshake(t, ours["node1"].Server(), ours["node2"].Client(), "127.0.0.1"); err != nil || id != "node2" {
		t.Errorf("peers of one CA: id %q, err %v", id, err)
	}
	if id, err := handshake(t, ours["node1"].Server(), ours["node2"].Client(), "localhost"); err != nil || id != "node2" {
		t.Errorf("by DNS name: id %q, err %v", id, err)
	}
	if _, err := handshake(t, ours["node1"].Server(), theirs["node1"].Client(), "127.0.0.1"); err == nil {
		t.Error("a certificate of another CA was accepted")
	}
	noCert := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13}
	if _, err := handshake(t, ours["node1"].Server(), noCert, "127.0.0.1"); err == nil {
		t.Error("a client without a certificate was accepted")
	}
	if id, err := handshake(t, ours["node1"].ServerPeerOptional(), noCert, "127.0.0.1"); err != nil || id != "" {
		t.Errorf("optional: a client without a certificate: id %q, err %v", id, err)
	}
	if _, err := handshake(t, ours["node1"].ServerPeerOptional(), theirs["node1"].Client(), "127.0.0.1"); err == nil {
		t.Error("optional: a certificate of another CA was accepted")
	}
	if _, err := handshake(t, theirs["node1"].Server(), ours["node2"].Client(), "127.0.0.1"); err == nil {
		t.Error("a server of another CA was trusted")
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	if err := MakeCA(dir, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := MakeCA(dir, time.Hour); err == nil || !strings.Contains(err.Error(), "already holds a CA") {
		t.Errorf("second CA over the first: %v", err)
	}
	if err := MakeCA(other, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := MakeNodeCert(dir, "n1", []string{"127.0.0.1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	f := NodeFiles(dir, "n1")
	f.CA = NodeFiles(other, "x").CA
	if _, err := Load(f); err == nil {
		t.Error("a certificate loaded with a CA that did not sign it")
	}
	if _, err := Load(Files{Cert: f.Cert}); err == nil {
		t.Error("loaded without key and CA")
	}
}
