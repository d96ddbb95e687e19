package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"certa/engine"
	"certa/sqlerr"
)

// fullDisk is an engine whose Apply fails for want of space a number of
// times, then succeeds. Only Apply is used by applyItems.
type fullDisk struct {
	engine.Engine
	fails, calls int
	errsSeen     []error // the items' Err as each call received them
}

func (f *fullDisk) Apply(ctx context.Context, items []engine.ApplyItem, upTo uint64) error {
	f.calls++
	f.errsSeen = append(f.errsSeen, items[0].Err)
	if f.calls <= f.fails {
		items[0].Err = sqlerr.New(sqlerr.UniqueViolation, "set by a failed attempt")
		return fmt.Errorf("sqlite engine: apply up to %d: %w", upTo, engine.ErrNoSpace)
	}
	return nil
}

func stateMachineOn(eng engine.Engine) *stateMachine {
	return &stateMachine{engine: eng, logger: slog.New(slog.NewTextHandler(io.Discard, nil)), stop: make(chan struct{}), seqno: 1}
}

// A full disk stalls applying instead of stopping the node: the same batch,
// its items' errors cleared, is applied again until it goes through.
func TestApplyWaitsOutAFullDisk(t *testing.T) {
	eng := &fullDisk{fails: 2}
	m := stateMachineOn(eng)
	if err := m.applyItems([]engine.ApplyItem{{Seqno: 1}}); err != nil {
		t.Fatalf("applyItems: %v", err)
	}
	if eng.calls != 3 {
		t.Fatalf("Apply called %d times, want 3", eng.calls)
	}
	for i, err := range eng.errsSeen {
		if err != nil {
			t.Errorf("attempt %d got an item error left from the one before: %v", i+1, err)
		}
	}
	if r := m.stalledReason(); r != "" {
		t.Errorf("still stalled after applying: %q", r)
	}
}

// Other apply errors still stop the node, and stopping the node ends the
// wait for space.
func TestApplyStopsOnOtherErrorsAndOnShutdown(t *testing.T) {
	broken := errors.New("disk I/O error")
	m := stateMachineOn(&failing{err: broken})
	if err := m.applyItems([]engine.ApplyItem{{Seqno: 1}}); !errors.Is(err, broken) {
		t.Fatalf("got %v, want the engine's error", err)
	}

	m = stateMachineOn(&fullDisk{fails: 1 << 30})
	stop := make(chan struct{})
	close(stop)
	m.stop = stop
	if err := m.applyItems([]engine.ApplyItem{{Seqno: 1}}); !errors.Is(err, engine.ErrNoSpace) {
		t.Fatalf("got %v after shutdown, want ErrNoSpace", err)
	}
	if r := m.stalledReason(); r != "disk full" {
		t.Errorf("stalled reason %q, want %q", r, "disk full")
	}
}

type failing struct {
	engine.Engine
	err error
}

func (f *failing) Apply(context.Context, []engine.ApplyItem, uint64) error { return f.err }
