package raftlog

import (
	"errors"
	"testing"
)

// TestBootstrapOnlyOnce checks what Open requires of a directory: Bootstrap
// only an empty one, RequireState only one with state.
func TestBootstrapOnlyOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{ID: "n1", Dir: dir, RaftAddr: freeAddr(t), RequireState: true}
	if _, err := Open(cfg, &countingSM{}); !errors.Is(err, ErrNoState) {
		t.Fatalf("RequireState on an empty directory: %v, want ErrNoState", err)
	}
	cfg.RequireState, cfg.Bootstrap = false, true
	l, err := Open(cfg, &countingSM{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Resumed() {
		t.Error("a bootstrapped log says it resumed")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(cfg, &countingSM{}); !errors.Is(err, ErrHasState) {
		t.Fatalf("Bootstrap on a directory with state: %v, want ErrHasState", err)
	}
	cfg.Bootstrap, cfg.RequireState = false, true
	l, err = Open(cfg, &countingSM{})
	if err != nil {
		t.Fatalf("RequireState on a directory with state: %v", err)
	}
	defer l.Close()
	if !l.Resumed() {
		t.Error("a reopened log does not say it resumed")
	}
}
