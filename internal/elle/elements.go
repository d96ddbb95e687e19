package elle

import "slices"

// elementFaults is what the elements of one read show on their own.
type elementFaults struct {
	dup       int // a value read twice, when hasDup
	hasDup    bool
	garbage   []int // values no transaction appended
	aborted   []int // values appended by failed transactions
	abortedBy []int // their writers, once each
}

func (f elementFaults) any() bool {
	return f.hasDup || f.garbage != nil || f.aborted != nil
}

// elementChecker checks the elements of reads. The reads of one key mostly
// share long prefixes, so it remembers per key the longest read found clean
// and checks only the elements of a read past the prefix it shares with that
// one: the cost then grows with the number of distinct elements, not with the
// total length of all reads, which is quadratic in the length of a history.
type elementChecker struct {
	h     []Txn
	ix    index
	clean map[string]*cleanRead
	// observed marks the transactions one of whose appends some read saw.
	observed []bool
}

// cleanRead is a read without faulty elements, and where each element is in it.
type cleanRead struct {
	values []int
	pos    map[int]int
}

func newElementChecker(h []Txn, ix index) *elementChecker {
	return &elementChecker{h: h, ix: ix, clean: map[string]*cleanRead{}, observed: make([]bool, len(h))}
}

func (c *elementChecker) check(key string, read []int) elementFaults {
	p := c.clean[key]
	if p == nil {
		p = &cleanRead{pos: map[int]int{}}
		c.clean[key] = p
	}
	n := commonPrefix(p.values, read)
	if n == len(read) {
		return elementFaults{} // a prefix of a clean read is clean
	}
	var f elementFaults
	seen := make(map[int]bool, len(read)-n)
	for _, v := range read[n:] {
		if i, inPrefix := p.pos[v]; seen[v] || inPrefix && i < n {
			if !f.hasDup {
				f.dup, f.hasDup = v, true
			}
		}
		seen[v] = true
		w := c.ix.writerOf(key, v)
		switch {
		case w < 0:
			f.garbage = append(f.garbage, v)
		case c.h[w].Outcome == Fail:
			f.aborted = append(f.aborted, v)
			if !slices.Contains(f.abortedBy, w) {
				f.abortedBy = append(f.abortedBy, w)
			}
		}
		if w >= 0 {
			c.observed[w] = true
		}
	}
	// Remember the longest clean read: later reads mostly extend it.
	if !f.any() && len(read) > len(p.values) {
		for _, v := range p.values[n:] {
			delete(p.pos, v)
		}
		for i, v := range read[n:] {
			p.pos[v] = n + i
		}
		p.values = read
	}
	return f
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
