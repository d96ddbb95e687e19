package elle

import (
	"fmt"
	"slices"
)

// versionOrders returns the version order of each key that committed reads
// reveal: a read returns every value appended so far, so the longest read is
// the longest known prefix of the key's history, and every other read must be
// a prefix of it. A key whose reads disagree is reported as
// incompatible-order and gets no order: any ww or rw edge drawn from it could
// be wrong.
func versionOrders(obs []observation, res *Result) map[string][]int {
	longest := map[string]observation{}
	for _, o := range obs {
		if o.dup {
			continue
		}
		if l, seen := longest[o.key]; !seen || len(o.values) > len(l.values) {
			longest[o.key] = o
		}
	}
	orders := make(map[string][]int, len(longest))
	for k, l := range longest {
		orders[k] = l.values
	}
	for _, o := range obs { // in history order, so reports come out stable
		l := longest[o.key]
		if _, ordered := orders[o.key]; o.dup || !ordered {
			continue // a duplicate read, or a key already reported
		}
		if !slices.Equal(o.values, l.values[:len(o.values)]) {
			res.add(Anomaly{Kind: IncompatibleOrder, Txns: []int{l.txn, o.txn},
				Explanation: fmt.Sprintf("T%d read %s = %v but T%d read %s = %v: neither is a prefix of the other",
					l.txn, o.key, l.values, o.txn, o.key, o.values)})
			delete(orders, o.key)
		}
	}
	return orders
}
