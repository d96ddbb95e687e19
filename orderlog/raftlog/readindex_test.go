package raftlog

import (
	"context"
	"errors"
	"testing"
	"time"
)

// WaitApplied returns once the state machine has applied up to the index,
// also when the last entries are Raft's own (a barrier, which never reaches
// the state machine), and waits for an index not yet applied.
func TestWaitApplied(t *testing.T) {
	sm := &countingSM{}
	l, err := open(Config{ID: "n1", Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: true,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond,
	}, sm, testHooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eventually(t, 10*time.Second, "n1 leads", l.IsLeader)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for range 3 {
		if err := l.Append([]byte("x"), 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.WaitApplied(ctx, l.CommitIndex()); err != nil || sm.n.Load() != 3 {
		t.Fatalf("after 3 appends: %v, %d applied", err, sm.n.Load())
	}
	if err := l.Barrier(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.applied.get(); got >= l.CommitIndex() {
		t.Fatalf("the state machine saw index %d, the barrier at %d: the test proves nothing", got, l.CommitIndex())
	}
	if err := l.WaitApplied(ctx, l.CommitIndex()); err != nil {
		t.Fatalf("after a barrier: %v", err)
	}

	short, cancelShort := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancelShort()
	// (Far ahead: the leader appends barriers of its own after appends.)
	if err := l.WaitApplied(short, l.CommitIndex()+1000); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an index not yet written: %v", err)
	}
	done := make(chan error)
	go func() { done <- l.WaitApplied(ctx, l.CommitIndex()+1) }()
	if err := l.Append([]byte("x"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiting for the next entry: %v", err)
	}
}
