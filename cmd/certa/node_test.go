package main

import (
	"strings"
	"testing"
	"time"

	"certa/peertls"
	"certa/replica"
)

func TestByteSizeFlag(t *testing.T) {
	for in, want := range map[string]int{"1000": 1000, "64KiB": 64 << 10, "32MiB": 32 << 20, "60 MiB": 60 << 20, "1GiB": 1 << 30} {
		var b byteSize
		if err := b.Set(in); err != nil || int(b) != want {
			t.Errorf("%q: %d, %v; want %d", in, b, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1", "1.5MiB", "32MB", "x", "3GiB"} {
		var b byteSize
		if err := b.Set(in); err == nil {
			t.Errorf("%q accepted as %d", in, b)
		}
	}
	// The default write-set limit gets a 1 GiB memory limit.
	if got := memoryLimit(replica.DefaultMaxWriteSetBytes); got != 1<<30 {
		t.Errorf("memory limit for the default write-set limit: %d, want 1 GiB", got)
	}
}

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 400}, {1 << 20, 400}, {16 << 20, 400}, {32 << 20, 200}, {64 << 20, 100}, {1 << 30, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

func TestPeerSecurityFailsClosed(t *testing.T) {
	dir := t.TempDir()
	if err := peertls.MakeCA(dir, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := peertls.MakeNodeCert(dir, "n1", []string{"10.0.0.1"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	files := peertls.NodeFiles(dir, "n1")
	withTLS := func(f nodeFlags) nodeFlags {
		f.peerCert, f.peerKey, f.peerCA = files.Cert, files.Key, files.CA
		return f
	}
	loop := nodeFlags{id: "n1", raftAddr: "127.0.0.1:7433", httpAddr: "localhost:8433"}
	open := nodeFlags{id: "n1", raftAddr: "10.0.0.1:7433", httpAddr: "127.0.0.1:8433"}
	all := nodeFlags{id: "n1", raftAddr: ":7433", httpAddr: "127.0.0.1:8433"}
	insecure := open
	insecure.insecurePeers = true
	otherID := withTLS(open)
	otherID.id = "n2"
	for _, c := range []struct {
		name   string
		f      nodeFlags
		secure bool
		err    string
	}{
		{"loopback without TLS", loop, false, ""},
		{"other host without TLS", open, false, "reachable from other machines"},
		{"all interfaces without TLS", all, false, "reachable from other machines"},
		{"--insecure-peers", insecure, false, ""},
		{"peer TLS", withTLS(open), true, ""},
		{"peer TLS and --insecure-peers", withTLS(insecure), false, "exclude each other"},
		{"another node's certificate", otherID, false, `node "n1"'s, not "n2"'s`},
	} {
		cfg, err := peerSecurity(c.f)
		switch {
		case c.err == "" && err != nil, c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v, want %q", c.name, err, c.err)
		case err == nil && (cfg != nil) != c.secure:
			t.Errorf("%s: peer TLS %v, want %v", c.name, cfg != nil, c.secure)
		}
	}
}
