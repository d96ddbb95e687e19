package sqlite

import (
	"strings"
	"sync"
)

// maxHistory bounds the change history. A transaction whose snapshot is
// older than the history reaches is treated as if its reads had changed.
const maxHistory = 4096

// history remembers which tables recent applies changed, so that a local
// transaction whose read snapshot went stale before its first write
// (SQLITE_BUSY_SNAPSHOT) can tell whether moving its snapshot forward is
// safe: it is when nothing it has read changed in between.
type history struct {
	mu      sync.Mutex
	since   uint64 // every change with a seqno above since is in entries
	entries []change
}

// change is what one applied write set changed.
type change struct {
	seqno  uint64
	all    bool     // a schema change touching every table
	tables []string // lower-cased
}

// reset forgets everything: from now on, only changes after seqno are known.
func (h *history) reset(seqno uint64) {
	h.mu.Lock()
	h.since, h.entries = seqno, nil
	h.mu.Unlock()
}

// add records changes, in seqno order, all after the last recorded one.
func (h *history) add(cs []change) {
	if len(cs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.entries = append(h.entries, cs...)
	if n := len(h.entries); n > maxHistory {
		drop := n - maxHistory/2
		h.since = h.entries[drop-1].seqno
		h.entries = append([]change(nil), h.entries[drop:]...)
	}
}

// changed reports whether any table in reads (lower-cased) may have been
// changed by an apply after seqno snapshot.
func (h *history) changed(snapshot uint64, reads map[string]struct{}) bool {
	if len(reads) == 0 {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if snapshot < h.since {
		return true // the history does not reach back far enough
	}
	for i := len(h.entries) - 1; i >= 0 && h.entries[i].seqno > snapshot; i-- {
		c := h.entries[i]
		if c.all {
			return true
		}
		for _, t := range c.tables {
			if _, ok := reads[t]; ok {
				return true
			}
		}
	}
	return false
}

// lowerAll returns the names lower-cased (SQLite table names are
// case-insensitive).
func lowerAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(n)
	}
	return out
}
