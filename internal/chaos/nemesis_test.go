package chaos

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// When the harness cannot inject or heal a fault (nft failed, say), the
// nemesis heals what it started and stops, instead of going on with a
// network it no longer controls.
func TestNemesisStopsWhenTheHarnessFails(t *testing.T) {
	healed := 0
	nem := Nemesis{Name: "broken", inject: func(e *env) func() {
		e.fault(errors.New("nft: no such table"))
		return func() { healed++ }
	}}
	e := &env{rng: rand.New(rand.NewPCG(1, 2))}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n := nem.run(ctx, e); n != 1 || healed != 1 {
		t.Fatalf("injected %d and healed %d faults, want 1 and 1", n, healed)
	}
	if ctx.Err() != nil {
		t.Fatal("the nemesis ran on until its deadline")
	}
	if e.err == nil {
		t.Fatal("the harness's failure was not kept for the report")
	}
}
