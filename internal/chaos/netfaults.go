package chaos

import (
	"time"

	"certa/internal/netfault"
)

// The network and disk nemeses. Partitions last longer than an election
// timeout (the cycle's 2-5 s), so leaders are lost and elected.
var networkNemeses = []Nemesis{
	{"partition-halves", "partition", func(e *env) func() {
		// A random minority (n/2 nodes) cut off from the majority, both ways.
		perm := e.rng.Perm(len(e.c.Nodes))
		minority := map[int]bool{}
		for _, i := range perm[:len(perm)/2] {
			minority[i] = true
		}
		e.setLinks(func(a, b int, l netfault.Link) netfault.Link {
			return netfault.Link{Cut: minority[a] != minority[b]}
		})
		return e.healNet
	}},
	{"partition-leader", "partition", func(e *env) func() {
		leader, err := e.c.Leader()
		if err != nil {
			return func() {}
		}
		e.setLinks(func(a, b int, l netfault.Link) netfault.Link {
			return netfault.Link{Cut: a == leader || b == leader}
		})
		return e.healNet
	}},
	{"partition-oneway", "partition", func(e *env) func() {
		// The leader (or, one time in three, a random node) can send but
		// not receive, or receive but not send.
		x, err := e.c.Leader()
		if err != nil || e.rng.IntN(3) == 0 {
			x = e.rng.IntN(len(e.c.Nodes))
		}
		inbound := e.rng.IntN(2) == 0
		e.setLinks(func(a, b int, l netfault.Link) netfault.Link {
			if inbound {
				return netfault.Link{Cut: b == x}
			}
			return netfault.Link{Cut: a == x}
		})
		return e.healNet
	}},
	{"links", "link", func(e *env) func() {
		// Every link slow and lossy, each its own way: 10-200 ms of delay
		// and 0-20% of packets lost.
		e.setLinks(func(a, b int, l netfault.Link) netfault.Link {
			return netfault.Link{
				Delay: time.Duration(10+e.rng.IntN(190)) * time.Millisecond,
				Loss:  e.rng.IntN(21),
			}
		})
		return e.healNet
	}},
	{"disk-full", "disk", func(e *env) func() {
		// A random node's data directory fills up; the node must refuse
		// (never diverge) and recover once the space is freed.
		i := e.rng.IntN(len(e.c.Nodes))
		e.fault(e.disks.fill(i))
		return func() { e.disks.free(i) }
	}},
}

// setLinks changes the network.
func (e *env) setLinks(f func(a, b int, l netfault.Link) netfault.Link) {
	e.fault(e.net.Set(f))
}

func (e *env) healNet() { e.fault(e.net.Heal()) }
