package chaos

import (
	"context"
	"math/rand/v2"
	"time"

	"certa/internal/localcluster"
)

// Nemesis injects one kind of fault, over and over, until ctx ends, and
// leaves the cluster healed (every node running and resumed) when it
// returns.
type Nemesis struct {
	Name string
	run  func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int
}

// Nemeses are the fault scenarios, in the order they run.
var Nemeses = []Nemesis{
	{"none", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int { <-ctx.Done(); return 0 }},
	{"kill-random", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int {
		return cycle(ctx, rng, func() func() {
			i := rng.IntN(len(c.Nodes))
			c.Kill(i)
			return func() { c.Restart(i) }
		})
	}},
	{"kill-leader", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int {
		return cycle(ctx, rng, func() func() {
			i, err := c.Leader()
			if err != nil {
				return func() {}
			}
			c.Kill(i)
			return func() { c.Restart(i) }
		})
	}},
	{"kill-all", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int {
		return cycle(ctx, rng, func() func() {
			// All nodes within one second, in random order.
			for _, i := range rng.Perm(len(c.Nodes)) {
				c.Kill(i)
				sleep(ctx, time.Duration(rng.IntN(int(time.Second)/len(c.Nodes))))
			}
			return func() {
				for i := range c.Nodes {
					c.Restart(i)
				}
			}
		})
	}},
	{"pause-leader", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int {
		return cycle(ctx, rng, func() func() {
			i, err := c.Leader()
			if err != nil {
				return func() {}
			}
			c.Pause(i)
			return func() { c.Resume(i) }
		})
	}},
	{"pause-follower", func(ctx context.Context, c *localcluster.Cluster, rng *rand.Rand) int {
		return cycle(ctx, rng, func() func() {
			leader, _ := c.Leader()
			i := (leader + 1 + rng.IntN(len(c.Nodes)-1)) % len(c.Nodes)
			c.Pause(i)
			return func() { c.Resume(i) }
		})
	}},
}

// cycle repeats: a quiet period, a fault (inject returns its healing),
// the fault lasting longer than an election timeout, healing. It returns
// how many faults it injected.
func cycle(ctx context.Context, rng *rand.Rand, inject func() (heal func())) int {
	n := 0
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(2+rng.IntN(3))*time.Second)
		if ctx.Err() != nil {
			return n
		}
		heal := inject()
		n++
		sleep(ctx, time.Duration(2+rng.IntN(4))*time.Second)
		heal()
	}
	return n
}

// sleep waits for d or until ctx ends. (The nemesis's schedule is made of
// waits: they are the faults' durations, not synchronisation.)
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
