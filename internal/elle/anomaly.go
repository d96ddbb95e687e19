package elle

import (
	"fmt"
	"slices"
	"strings"
)

// The anomaly kinds Check reports, as keys of Result.Anomalies.
const (
	// G0 (dirty write): a cycle of ww edges.
	G0 = "G0"
	// G1a (aborted read): a committed transaction read a value appended by a
	// transaction that failed.
	G1a = "G1a"
	// G1b (intermediate read): a committed transaction read a list ending in
	// a value that its writer followed with another append to the same key.
	G1b = "G1b"
	// G1c (circular information flow): a cycle of ww and wr edges with at
	// least one wr edge.
	G1c = "G1c"
	// GSingle (read skew, lost update): a cycle with exactly one rw edge.
	// Snapshot isolation forbids it.
	GSingle = "G-single"
	// G2Item (write skew): a cycle with two or more rw edges and no G-single
	// cycle among the same transactions. Snapshot isolation allows it;
	// serializability does not.
	G2Item = "G2-item"
	// IncompatibleOrder: two reads of one key where neither is a prefix of
	// the other, so the key has no single version order.
	IncompatibleOrder = "incompatible-order"
	// DuplicateElements: a read holding the same value twice.
	DuplicateElements = "duplicate-elements"
	// Internal: a transaction's read does not reflect its own earlier reads
	// and appends of the same key.
	Internal = "internal"
	// GarbageRead: a read holding a value that no transaction appended.
	GarbageRead = "garbage-read"
)

// Anomaly is one anomaly found in a history.
type Anomaly struct {
	Kind string
	// Txns are the transactions involved, by index in the history: for a
	// cycle in cycle order; otherwise the reader first, then the writers or
	// the other reader it disagrees with.
	Txns []int
	// Cycle holds the edges of the cycle, for the cycle kinds; nil otherwise.
	Cycle []Edge
	// Explanation says in one line what was observed.
	Explanation string
}

func (a Anomaly) String() string { return a.Kind + ": " + a.Explanation }

// Result is what Check found. A history without anomalies has an empty map.
type Result struct {
	Anomalies map[string][]Anomaly
}

func (r *Result) add(a Anomaly) {
	if r.Anomalies == nil {
		r.Anomalies = map[string][]Anomaly{}
	}
	r.Anomalies[a.Kind] = append(r.Anomalies[a.Kind], a)
}

// Counts returns the number of anomalies found of each kind.
func (r Result) Counts() map[string]int {
	c := make(map[string]int, len(r.Anomalies))
	for k, as := range r.Anomalies {
		c[k] = len(as)
	}
	return c
}

// Valid reports whether every anomaly found is of an allowed kind. Valid() is
// the check for serializability (of the dependencies alone: real time is not
// checked); Valid(G2Item) is the check for snapshot isolation.
func (r Result) Valid(allowed ...string) bool {
	for k, as := range r.Anomalies {
		if len(as) > 0 && !slices.Contains(allowed, k) {
			return false
		}
	}
	return true
}

// String lists the anomalies, one a line, kinds in name order; "valid" when
// there are none.
func (r Result) String() string {
	if len(r.Anomalies) == 0 {
		return "valid"
	}
	kinds := make([]string, 0, len(r.Anomalies))
	for k := range r.Anomalies {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var b strings.Builder
	for _, k := range kinds {
		fmt.Fprintf(&b, "%s: %d\n", k, len(r.Anomalies[k]))
		for _, a := range r.Anomalies[k] {
			fmt.Fprintf(&b, "  %s\n", a.Explanation)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
