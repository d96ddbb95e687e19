package elle

import (
	"fmt"
	"slices"
)

// DepKind is the kind of a dependency between two committed transactions.
// The values are bits so that a set of kinds fits in one DepKind.
type DepKind uint8

const (
	// WW: To appended the element right after one From appended.
	WW DepKind = 1 << iota
	// WR: To read a list whose last element From appended.
	WR
	// RW (anti-dependency): From read a list and To appended the element
	// right after its end, so From did not see To's append.
	RW
)

func (k DepKind) String() string {
	switch k {
	case WW:
		return "ww"
	case WR:
		return "wr"
	case RW:
		return "rw"
	}
	return fmt.Sprintf("kinds(%d)", uint8(k))
}

// Edge is one inferred dependency: From precedes To in every serial order
// consistent with what was observed.
type Edge struct {
	From, To int
	Kind     DepKind
	Key      string
	Why      string // what was observed, in words
}

func (e Edge) String() string { return e.Why }

// link is one entry of an adjacency list: every kind of edge from one node
// to another.
type link struct {
	to    int
	kinds DepKind
}

type edgeID struct {
	from, to int
	kind     DepKind
}

// dep is an edge as inferred, with what it was inferred from: it is put in
// words only if it is reported, since most edges never are.
type dep struct {
	edgeID
	key  string
	read []int // wr, rw: what the reader read
	// ww: the two consecutive values; wr: the value read last; rw: the last
	// value the reader got from others (if afterPrev) and the next value.
	prev, value int
	afterPrev   bool
}

func (d dep) edge() Edge {
	e := Edge{From: d.from, To: d.to, Kind: d.kind, Key: d.key}
	switch d.kind {
	case WW:
		e.Why = fmt.Sprintf("T%d appended %d to %s, then T%d appended %d", d.from, d.prev, d.key, d.to, d.value)
	case WR:
		e.Why = fmt.Sprintf("T%d read %s = %v, where T%d appended %d", d.to, d.key, d.read, d.from, d.value)
	case RW:
		after := "as the first element"
		if d.afterPrev {
			after = fmt.Sprintf("after %d", d.prev)
		}
		e.Why = fmt.Sprintf("T%d read %s = %v and T%d appended %d %s", d.from, d.key, d.read, d.to, d.value, after)
	}
	return e
}

// graph is the dependency graph over transactions, by history index.
type graph struct {
	out []map[int]DepKind // while building
	// adj is out as lists sorted by target, so that searches and reports
	// come out the same on every run.
	adj [][]link
	// deps keeps the first observation that gave each edge, to explain it.
	deps map[edgeID]dep
}

func newGraph(n int) *graph {
	return &graph{out: make([]map[int]DepKind, n), deps: map[edgeID]dep{}}
}

// add records d. A transaction never depends on itself: edges between a
// transaction's own operations say nothing about isolation.
func (g *graph) add(d dep) {
	if d.from == d.to {
		return
	}
	if g.out[d.from] == nil {
		g.out[d.from] = map[int]DepKind{}
	}
	g.out[d.from][d.to] |= d.kind
	if _, ok := g.deps[d.edgeID]; !ok {
		g.deps[d.edgeID] = d
	}
}

// freeze builds the sorted adjacency lists once all edges are in.
func (g *graph) freeze() {
	g.adj = make([][]link, len(g.out))
	for v, m := range g.out {
		for to, k := range m {
			g.adj[v] = append(g.adj[v], link{to, k})
		}
		slices.SortFunc(g.adj[v], func(a, b link) int { return a.to - b.to })
	}
}

// edge returns the edge from -> to of the first kind of mask it has, in the
// order ww, wr, rw: a cycle is labelled with its strongest edges, so that an
// rw edge is counted only where no other kind joins the same transactions.
func (g *graph) edge(from, to int, mask DepKind) Edge {
	kinds := g.out[from][to] & mask
	for _, k := range []DepKind{WW, WR, RW} {
		if kinds&k != 0 {
			return g.deps[edgeID{from, to, k}].edge()
		}
	}
	panic("elle: no such edge")
}

// buildGraph infers the ww, wr and rw edges between committed transactions
// from the version orders and the reads that are not anomalous themselves.
// observed marks the transactions one of whose appends some read saw: an
// indeterminate transaction counts as committed only then.
func buildGraph(h []Txn, ix index, obs []observation, orders map[string][]int, observed []bool) *graph {
	committed := func(t int) bool {
		return t >= 0 && (h[t].Outcome == OK || h[t].Outcome == Info && observed[t])
	}
	g := newGraph(len(h))

	keys := make([]string, 0, len(orders))
	for k := range orders {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		order := orders[k]
		for i := 1; i < len(order); i++ {
			a, b := ix.writerOf(k, order[i-1]), ix.writerOf(k, order[i])
			if committed(a) && committed(b) {
				g.add(dep{edgeID: edgeID{a, b, WW}, key: k, prev: order[i-1], value: order[i]})
			}
		}
	}

	for _, o := range obs {
		if o.bad {
			continue
		}
		ext := o.external
		n := len(ext)
		if n > 0 {
			if w := ix.writerOf(o.key, ext[n-1]); committed(w) {
				g.add(dep{edgeID: edgeID{w, o.txn, WR}, key: o.key, read: o.values, value: ext[n-1]})
			}
		}
		order, ok := orders[o.key]
		if !ok || n >= len(order) {
			continue
		}
		if w := ix.writerOf(o.key, order[n]); committed(w) {
			d := dep{edgeID: edgeID{o.txn, w, RW}, key: o.key, read: o.values, value: order[n]}
			if n > 0 {
				d.prev, d.afterPrev = ext[n-1], true
			}
			g.add(d)
		}
	}
	g.freeze()
	return g
}
