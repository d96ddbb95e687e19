package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"certa/orderlog"
)

// fakeNode answers the calls a sync read makes; other Node methods are not
// called here.
type fakeNode struct {
	Node
	term      uint64
	leader    string
	notLeader bool
}

func (f *fakeNode) Leadership() (uint64, string) { return f.term, f.leader }

func (f *fakeNode) LeaderReadIndex() (uint64, uint64, error) {
	if f.notLeader {
		return 0, 0, orderlog.ErrNotLeader
	}
	return f.term, 42, nil
}

func serve(t *testing.T, n Node) string {
	t.Helper()
	h := NewHandler(slog.Default(), NewClient(nil), nil)
	h.SetNode(n)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// Calls go over one connection per peer, many at once; a node that is not
// the leader says so; an unreachable peer fails fast after a failed dial.
func TestRPC(t *testing.T) {
	node := &fakeNode{term: 7, leader: "n1"}
	addr := serve(t, node)
	c := NewClient(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	errs := make(chan error, 20)
	for range 20 {
		go func() {
			term, leader, err := c.Leadership(ctx, addr)
			if err == nil && (term != 7 || leader != "n1") {
				err = errors.New("wrong answer")
			}
			errs <- err
		}()
	}
	for range 20 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.rpc.m); n != 1 || c.rpc.m[addr].cl == nil {
		t.Fatalf("%d peers, want one open connection", n)
	}
	if term, index, err := c.ReadIndex(ctx, addr); err != nil || term != 7 || index != 42 {
		t.Fatalf("read index: %d, %d, %v", term, index, err)
	}
	node.notLeader = true
	if _, _, err := c.ReadIndex(ctx, addr); !errors.Is(err, orderlog.ErrNotLeader) {
		t.Fatalf("read index from a follower: %v", err)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	_, _, first := c.Leadership(ctx, dead)
	if first == nil {
		t.Fatal("a call to a closed port succeeded")
	}
	// Within rpcRedialDelay the failed dial's error comes back undialled.
	if _, _, err := c.Leadership(ctx, dead); err != first {
		t.Fatalf("second call to a dead peer: %v, want the first dial's error %v", err, first)
	}
}
