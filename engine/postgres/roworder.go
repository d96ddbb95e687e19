package postgres

import (
	"bytes"

	"certa/writeset"
)

// The order of captured rows. PostgreSQL fires a statement's AFTER ROW
// triggers when the statement ends, row after row and, for each row, in
// the order of the triggers' names. certa's capture trigger,
// " certa_capture", sorts before every client's (boundary.go refuses a
// name that would not), so a trigger that changes its own row, or
// another table, is recorded after the change that fired it. But a
// client's trigger of one row, AFTER or BEFORE, may change another row
// of the same statement whose own capture has not fired yet: the nested
// change is then recorded before the change it follows. Applied in the
// recorded order, such a row would be updated before it is inserted, or
// end with the older of two images.
//
// The images tell the true order of one key's changes. Each change takes
// its key from one state to another: absent, or a row image (all its
// columns, as the capture function wrote them). Replayed in the recorded
// order, the changes of a key recorded out of order do not follow on from
// one another; for such a key, in whatever order they came, the state
// before the transaction is the one that one more change leaves than
// leads to, and its state at the end the one that one more change leads
// to; when every state is left as often as reached, the key ends as it
// began. orderRows puts one change from the first state to the last in
// the place of such a key's changes.

// rowTrace is what orderRows needs of a captured row besides its
// rowChange: the write-set keys of its old and new row (hasOld: UPDATE,
// DELETE; hasNew: INSERT, UPDATE), and the old row's image.
type rowTrace struct {
	oldKey, newKey writeset.Key
	hasOld, hasNew bool
	oldImage       []byte
	// keyed is false for a schema statement and for a row of a table
	// without a key, whose changes are a multiset's (planWholeRows).
	keyed bool
}

// absentState is the state of a key without a row in orderRows' graphs;
// a row image is a JSON object, never this.
const absentState = ""

// orderRows returns rows with the changes of keys recorded out of order
// replaced by one net change each, in the place of the key's first
// recorded change, and the other rows as they were. trace[i] describes
// rows[i]. The changes of one key are taken together only between schema
// statements. Where the images do not make one chain (they always do for
// rows PostgreSQL changed), the rows stay as recorded.
func orderRows(rows []rowChange, trace []rowTrace) []rowChange {
	var out []rowChange
	start, changed := 0, false
	for i := 0; i <= len(rows); i++ {
		if i < len(rows) && rows[i].op != opSchema {
			continue
		}
		seg, ok := orderSegment(rows[start:i], trace[start:i])
		if ok {
			changed = true
		}
		out = append(out, seg...)
		if i < len(rows) {
			out = append(out, rows[i])
		}
		start = i + 1
	}
	if !changed {
		return rows
	}
	return out
}

// orderSegment is orderRows for rows without a schema statement; ok is
// false when it returns rows unchanged.
func orderSegment(rows []rowChange, trace []rowTrace) ([]rowChange, bool) {
	suspects := outOfOrder(rows, trace)
	if len(suspects) == 0 {
		return rows, false
	}
	// A change of a key's value (an UPDATE of the key) ties two keys:
	// both are taken together.
	for grown := true; grown; {
		grown = false
		for _, tr := range trace {
			if !tr.keyed || !tr.hasOld || !tr.hasNew || tr.oldKey == tr.newKey {
				continue
			}
			if suspects[tr.oldKey] != suspects[tr.newKey] {
				suspects[tr.oldKey], suspects[tr.newKey] = true, true
				grown = true
			}
		}
	}
	nets := map[writeset.Key][]rowChange{}
	for k := range suspects {
		net, ok := netChange(k, rows, trace)
		if !ok {
			return rows, false
		}
		nets[k] = net
	}
	var out []rowChange
	placed := map[writeset.Key]bool{}
	for i, r := range rows {
		tr := trace[i]
		own := tr.keyed && (tr.hasOld && suspects[tr.oldKey] || tr.hasNew && suspects[tr.newKey])
		if !own {
			out = append(out, r)
			continue
		}
		for _, k := range []writeset.Key{tr.oldKey, tr.newKey} {
			if k != "" && suspects[k] && !placed[k] {
				placed[k] = true
				out = append(out, nets[k]...)
			}
		}
	}
	return out, true
}

// outOfOrder replays the keyed rows in their recorded order and returns
// the keys whose changes do not follow on from one another: a change
// from an image the key does not have, an insert of a key that has a
// row, or an insert of a key whose first recorded change was an update
// or delete from the very image inserted (a row a nested statement
// changed or deleted before its insert was recorded). An insert of
// another image there is a client's own DELETE and INSERT (or a key
// moved onto a deleted one): in order, and left so.
func outOfOrder(rows []rowChange, trace []rowTrace) map[writeset.Key]bool {
	var suspects map[writeset.Key]bool
	suspect := func(k writeset.Key) {
		if suspects == nil {
			suspects = map[writeset.Key]bool{}
		}
		suspects[k] = true
	}
	current := make(map[writeset.Key]int, len(trace)) // row whose newRow the key has; -1: none
	firstOld := map[writeset.Key][]byte{}             // a key first met by its old row: that row
	for i, tr := range trace {
		if !tr.keyed {
			continue
		}
		if tr.hasOld {
			s, seen := current[tr.oldKey]
			if !seen {
				firstOld[tr.oldKey] = tr.oldImage
			} else if s < 0 || !bytes.Equal(rows[s].newRow, tr.oldImage) {
				suspect(tr.oldKey)
			}
			current[tr.oldKey] = -1
		}
		if tr.hasNew {
			if !tr.hasOld || tr.newKey != tr.oldKey {
				s, seen := current[tr.newKey]
				if seen && (s >= 0 || bytes.Equal(firstOld[tr.newKey], rows[i].newRow)) {
					suspect(tr.newKey)
				}
			}
			current[tr.newKey] = i
		}
	}
	return suspects
}

// netChange returns the one change (or none) that takes key k from its
// state before rows to its state after them, read from the graph of its
// changes' states; ok is false if they make no chain.
func netChange(k writeset.Key, rows []rowChange, trace []rowTrace) (net []rowChange, ok bool) {
	balance := map[string]int{} // changes leaving a state less those reaching it
	var keyJSON []byte          // the key's own, from a change of its old row
	var model rowChange
	for i, tr := range trace {
		if !tr.keyed {
			continue
		}
		from, to := "", ""
		switch {
		case tr.hasOld && tr.oldKey == k && tr.hasNew && tr.newKey == k:
			from, to = string(tr.oldImage), string(rows[i].newRow)
		case tr.hasOld && tr.oldKey == k:
			from, to = string(tr.oldImage), absentState
		case tr.hasNew && tr.newKey == k:
			from, to = absentState, string(rows[i].newRow)
		default:
			continue
		}
		if tr.hasOld && tr.oldKey == k {
			keyJSON = rows[i].oldKey
		}
		model = rows[i]
		balance[from]++
		balance[to]--
	}
	first, last := absentState, absentState
	var firsts, lasts int
	for state, b := range balance {
		switch b {
		case 0:
		case 1:
			first, firsts = state, firsts+1
		case -1:
			last, lasts = state, lasts+1
		default:
			return nil, false
		}
	}
	if firsts != lasts || firsts > 1 || first == last {
		return nil, firsts == lasts && firsts <= 1 // a cycle: it ends as it began
	}
	c := rowChange{schema: model.schema, table: model.table}
	switch {
	case first == absentState:
		c.op, c.newRow = opInsert, []byte(last)
	case keyJSON == nil:
		return nil, false
	case last == absentState:
		c.op, c.oldKey = opDelete, keyJSON
	default:
		c.op, c.oldKey, c.newRow = opUpdate, keyJSON, []byte(last)
	}
	return []rowChange{c}, true
}
