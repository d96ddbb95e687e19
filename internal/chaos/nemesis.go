package chaos

import (
	"context"
	"io"
	"math/rand/v2"
	"time"

	"certa/internal/localcluster"
	"certa/internal/netfault"
)

// Nemesis injects one kind of fault. inject starts a fault and returns
// the function that heals it; nil inject means no faults at all.
type Nemesis struct {
	Name  string
	Class string // kill, pause, partition, link, disk: the --long form runs one mixed scenario per class
	// inject starts one fault and returns its healing.
	inject func(e *env) (heal func())
}

// env is what a nemesis acts on.
type env struct {
	c     *localcluster.Cluster
	net   *netfault.Net
	disks *disks // nil but in the disk class
	rng   *rand.Rand
	err   error     // the first fault the harness failed to inject or heal
	log   io.Writer // progress (Config.Log)
}

// fault records err, the harness's failure to inject or heal a fault: the
// scenario then stops and reports it.
func (e *env) fault(err error) {
	if e.err == nil {
		e.err = err
	}
}

// Nemeses are the fault scenarios of the short form, in the order they run.
var Nemeses = append(append([]Nemesis{{"none", "", nil}}, processNemeses...), networkNemeses...)

// processNemeses kill and pause node processes.
var processNemeses = []Nemesis{
	{"kill-random", "kill", func(e *env) func() {
		i := e.rng.IntN(len(e.c.Nodes))
		e.c.Kill(i)
		return func() { e.c.Restart(i) }
	}},
	{"kill-leader", "kill", func(e *env) func() {
		i, err := e.c.Leader()
		if err != nil {
			return func() {}
		}
		e.c.Kill(i)
		return func() { e.c.Restart(i) }
	}},
	{"kill-all", "kill", func(e *env) func() {
		// All nodes within one second, in random order.
		for _, i := range e.rng.Perm(len(e.c.Nodes)) {
			e.c.Kill(i)
			time.Sleep(time.Duration(e.rng.IntN(int(time.Second) / len(e.c.Nodes))))
		}
		return func() {
			for i := range e.c.Nodes {
				e.c.Restart(i)
			}
		}
	}},
	{"pause-leader", "pause", func(e *env) func() {
		i, err := e.c.Leader()
		if err != nil {
			return func() {}
		}
		e.c.Pause(i)
		return func() { e.c.Resume(i) }
	}},
	{"pause-follower", "pause", func(e *env) func() {
		leader, _ := e.c.Leader()
		i := (leader + 1 + e.rng.IntN(len(e.c.Nodes)-1)) % len(e.c.Nodes)
		e.c.Pause(i)
		return func() { e.c.Resume(i) }
	}},
}

// Classes returns one scenario per fault class, each injecting a random
// fault of its class every cycle: the scenarios of the --long form.
func Classes() []Nemesis {
	var classes []Nemesis
	members := map[string][]Nemesis{}
	for _, n := range Nemeses {
		if n.Class == "" {
			continue
		}
		if members[n.Class] == nil {
			classes = append(classes, Nemesis{Name: n.Class, Class: n.Class})
		}
		members[n.Class] = append(members[n.Class], n)
	}
	for k := range classes {
		ms := members[classes[k].Name]
		classes[k].inject = func(e *env) func() { return ms[e.rng.IntN(len(ms))].inject(e) }
	}
	return classes
}

// run injects faults until ctx ends, each after a quiet 2-4 s and lasting
// 2-5 s (longer than an election timeout), and returns how many it
// injected. The cluster is healed when it returns. It stops early when
// the harness fails to inject or heal a fault (e.err).
func (nem Nemesis) run(ctx context.Context, e *env) int {
	n := 0
	for ctx.Err() == nil && e.err == nil {
		sleep(ctx, time.Duration(2+e.rng.IntN(3))*time.Second)
		if ctx.Err() != nil || nem.inject == nil {
			continue
		}
		heal := nem.inject(e)
		n++
		sleep(ctx, time.Duration(2+e.rng.IntN(4))*time.Second)
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
