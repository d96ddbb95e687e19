package elle

import (
	"fmt"
	"slices"
	"strings"
)

// findCycles reports the cycles of the dependency graph. Every cycle lies
// inside one strongly connected component, so each kind is searched for
// component by component, on the subgraph of the edge kinds it is made of,
// and one shortest cycle is reported per component.
func findCycles(g *graph, res *Result) {
	for _, c := range g.components(WW) {
		if cyc := g.shortestCycle(c, WW, WW); cyc != nil {
			res.add(cycleAnomaly(G0, cyc))
		}
	}
	// A component of ww and wr edges with no wr edge is a G0 cycle, already
	// reported: G1c needs at least one wr edge.
	for _, c := range g.components(WW | WR) {
		if cyc := g.shortestCycle(c, WR, WW|WR); cyc != nil {
			res.add(cycleAnomaly(G1c, cyc))
		}
	}
	// G-single: an rw edge a -> b closed by a path b ~> a of ww and wr edges.
	// Where there is none, any cycle through an rw edge needs a second rw
	// edge to close: that is G2-item, which snapshot isolation allows.
	for _, c := range g.components(WW | WR | RW) {
		if cyc := g.shortestCycle(c, RW, WW|WR); cyc != nil {
			res.add(cycleAnomaly(GSingle, cyc))
		} else if cyc := g.shortestCycle(c, RW, WW|WR|RW); cyc != nil {
			res.add(cycleAnomaly(G2Item, cyc))
		}
	}
}

func cycleAnomaly(kind string, cyc []Edge) Anomaly {
	a := Anomaly{Kind: kind, Cycle: cyc}
	var path, why strings.Builder
	for i, e := range cyc {
		a.Txns = append(a.Txns, e.From)
		fmt.Fprintf(&path, "T%d -%s-> ", e.From, e.Kind)
		if i > 0 {
			why.WriteString("; ")
		}
		why.WriteString(e.Why)
	}
	fmt.Fprintf(&path, "T%d", cyc[0].From)
	a.Explanation = path.String() + ": " + why.String()
	return a
}

// components returns the strongly connected components, by Tarjan's
// algorithm, of the subgraph of the edges of the kinds in mask. Only
// components of two or more transactions are returned: there are no
// self-edges, so the others hold no cycle.
func (g *graph) components(mask DepKind) [][]int {
	n := len(g.adj)
	t := tarjan{g: g, mask: mask, index: make([]int, n), low: make([]int, n), onStack: make([]bool, n)}
	for v := range t.index {
		t.index[v] = -1
	}
	for v := range n {
		if t.index[v] < 0 {
			t.visit(v)
		}
	}
	return t.comps
}

type tarjan struct {
	g          *graph
	mask       DepKind
	index, low []int // -1: not visited yet
	onStack    []bool
	stack      []int
	next       int
	comps      [][]int
}

func (t *tarjan) visit(v int) {
	t.index[v], t.low[v] = t.next, t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
	for _, l := range t.g.adj[v] {
		if l.kinds&t.mask == 0 {
			continue
		}
		if w := l.to; t.index[w] < 0 {
			t.visit(w)
			t.low[v] = min(t.low[v], t.low[w])
		} else if t.onStack[w] {
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] != t.index[v] {
		return
	}
	i := len(t.stack) - 1
	for t.stack[i] != v {
		i--
	}
	comp := slices.Clone(t.stack[i:])
	t.stack = t.stack[:i]
	for _, w := range comp {
		t.onStack[w] = false
	}
	if len(comp) > 1 {
		slices.Sort(comp)
		t.comps = append(t.comps, comp)
	}
}

// shortestCycle returns a shortest cycle inside comp that starts with one
// edge of kind first and returns along edges of the kinds in rest, or nil
// if there is none. The cycle starts at the source of its first edge.
//
// It runs one breadth-first search per target of a first edge: quadratic in
// the size of the component at worst, which histories of thousands of
// transactions afford.
func (g *graph) shortestCycle(comp []int, first, rest DepKind) []Edge {
	in := make(map[int]bool, len(comp))
	for _, v := range comp {
		in[v] = true
	}
	sources := map[int][]int{} // target -> sources of first edges into it
	var targets []int
	for _, a := range comp {
		for _, l := range g.adj[a] {
			if l.kinds&first != 0 && in[l.to] {
				if sources[l.to] == nil {
					targets = append(targets, l.to)
				}
				sources[l.to] = append(sources[l.to], a)
			}
		}
	}
	slices.Sort(targets)
	var best []Edge
	for _, b := range targets {
		parent := g.search(b, rest, in)
		for _, a := range sources[b] {
			path := pathTo(parent, b, a)
			if path == nil || best != nil && len(path) >= len(best) {
				continue
			}
			best = []Edge{g.edge(a, b, first)}
			for i := 1; i < len(path); i++ {
				best = append(best, g.edge(path[i-1], path[i], rest))
			}
		}
		if len(best) == 2 { // no cycle is shorter: there are no self-edges
			break
		}
	}
	return best
}

// search runs a breadth-first search from start over the edges of the kinds
// in mask between nodes of in, and returns each reached node's parent.
func (g *graph) search(start int, mask DepKind, in map[int]bool) map[int]int {
	parent := map[int]int{start: start}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, l := range g.adj[v] {
			if l.kinds&mask == 0 || !in[l.to] {
				continue
			}
			if _, seen := parent[l.to]; !seen {
				parent[l.to] = v
				queue = append(queue, l.to)
			}
		}
	}
	return parent
}

// pathTo returns the nodes of the search path from start to end, both
// included, or nil if the search did not reach end.
func pathTo(parent map[int]int, start, end int) []int {
	if _, ok := parent[end]; !ok {
		return nil
	}
	path := []int{end}
	for v := end; v != start; {
		v = parent[v]
		path = append(path, v)
	}
	slices.Reverse(path)
	return path
}
