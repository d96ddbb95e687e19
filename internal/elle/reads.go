package elle

import (
	"fmt"
	"slices"
)

// observation is one read by a committed (OK) transaction: the only reads
// whose values are known.
type observation struct {
	txn    int
	key    string
	values []int
	// external is values without the reader's own appends at the end: the
	// part other transactions wrote, which is what the reader depends on.
	external []int
	// bad marks a read reported as an anomaly on its own: it is left out of
	// the dependency graph so that one fault is reported once.
	bad bool
	// dup marks a read holding a value twice: it is no version order, so it
	// is left out of the key's order too.
	dup bool
}

// observe collects the reads of committed transactions and reports the
// anomalies that a single read shows without any graph: duplicates, garbage,
// aborted and intermediate reads, and internal inconsistency. It also
// returns which transactions had an append observed.
func observe(h []Txn, ix index, res *Result) ([]observation, []bool) {
	var obs []observation
	elements := newElementChecker(h, ix)
	for t, txn := range h {
		if txn.Outcome != OK {
			continue
		}
		own := map[string]*ownView{}
		for _, op := range txn.Ops {
			v := own[op.Key]
			if v == nil {
				v = &ownView{}
				own[op.Key] = v
			}
			switch op.Kind {
			case Append:
				v.since = append(v.since, op.Value)
			case Read:
				o := observation{txn: t, key: op.Key, values: op.Read}
				o.external = external(op.Read, t, op.Key, ix)
				f := elements.check(op.Key, op.Read)
				reportElements(o, f, res)
				o.dup = f.hasDup
				o.bad = f.any()
				o.bad = checkIntermediate(o, h, ix, res) || o.bad
				o.bad = v.check(o, res) || o.bad
				obs = append(obs, o)
			}
		}
	}
	return obs, elements.observed
}

// external strips the reader's own appends from the end of a read.
func external(read []int, reader int, key string, ix index) []int {
	n := len(read)
	for n > 0 && ix.writerOf(key, read[n-1]) == reader {
		n--
	}
	return read[:n]
}

func reportElements(o observation, f elementFaults, res *Result) {
	if !f.any() {
		return
	}
	read := fmt.Sprintf("T%d read %s = %v", o.txn, o.key, o.values)
	if f.hasDup {
		res.add(Anomaly{Kind: DuplicateElements, Txns: []int{o.txn},
			Explanation: fmt.Sprintf("%s: %d appears twice", read, f.dup)})
	}
	if f.garbage != nil {
		res.add(Anomaly{Kind: GarbageRead, Txns: []int{o.txn},
			Explanation: fmt.Sprintf("%s: no transaction appended %v", read, f.garbage)})
	}
	if f.aborted != nil {
		res.add(Anomaly{Kind: G1a, Txns: append([]int{o.txn}, f.abortedBy...),
			Explanation: fmt.Sprintf("%s: %v appended by failed %s", read, f.aborted, names(f.abortedBy))})
	}
}

// checkIntermediate looks at the last value the reader got from others: if
// its writer appended again to the key afterwards, the reader saw a state
// that never committed. A failed writer is G1a's business.
func checkIntermediate(o observation, h []Txn, ix index, res *Result) bool {
	if len(o.external) == 0 {
		return false
	}
	last := o.external[len(o.external)-1]
	w := ix.writerOf(o.key, last)
	if w < 0 || h[w].Outcome == Fail {
		return false
	}
	final := ix.final[txnKey{w, o.key}]
	if final == last {
		return false
	}
	res.add(Anomaly{Kind: G1b, Txns: []int{o.txn, w},
		Explanation: fmt.Sprintf("T%d read %s = %v, but T%d appended %d after %d to %s", o.txn, o.key, o.values, w, final, last, o.key)})
	return true
}

// ownView is what a transaction knows of one key from its own operations: its
// last read of the key, if any, and the values it appended since.
type ownView struct {
	read  []int
	known bool // read holds a read of the key
	since []int
}

// check reports a read that contradicts the transaction's own view: after an
// earlier read it must be that read plus the appends since; with no earlier
// read it must end with the transaction's appends.
func (v *ownView) check(o observation, res *Result) bool {
	bad := false
	if v.known {
		want := append(slices.Clip(v.read), v.since...)
		if !slices.Equal(o.values, want) {
			bad = true
			res.add(Anomaly{Kind: Internal, Txns: []int{o.txn},
				Explanation: fmt.Sprintf("T%d read %s = %v, but its own earlier read and appends make %v", o.txn, o.key, o.values, want)})
		}
	} else if len(v.since) > 0 && !hasSuffix(o.values, v.since) {
		bad = true
		res.add(Anomaly{Kind: Internal, Txns: []int{o.txn},
			Explanation: fmt.Sprintf("T%d read %s = %v, which does not end with its own appends %v", o.txn, o.key, o.values, v.since)})
	}
	v.read, v.known, v.since = o.values, true, nil
	return bad
}

func hasSuffix(s, suffix []int) bool {
	return len(s) >= len(suffix) && slices.Equal(s[len(s)-len(suffix):], suffix)
}

// names formats transaction indexes as "T1, T4".
func names(txns []int) string {
	s := ""
	for i, t := range txns {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("T%d", t)
	}
	return s
}
