package sqlite

import (
	"fmt"
	"testing"
)

func TestHistoryChanged(t *testing.T) {
	reads := func(ts ...string) map[string]struct{} {
		m := map[string]struct{}{}
		for _, t := range ts {
			m[t] = struct{}{}
		}
		return m
	}
	var h history
	h.reset(10)
	h.add([]change{{seqno: 11, tables: []string{"a"}}, {seqno: 12, tables: []string{"b", "c"}}})
	h.add([]change{{seqno: 15, all: true}})
	tests := []struct {
		snapshot uint64
		reads    map[string]struct{}
		want     bool
	}{
		{10, reads(), false},         // read nothing
		{9, reads("x"), true},        // before the history starts
		{10, reads("x"), true},       // the DDL at 15 touched everything
		{15, reads("a", "b"), false}, // nothing after 15
		{11, reads("a"), true},       // a DDL after 11
		{10, reads(), false},
	}
	for _, tt := range tests {
		if got := h.changed(tt.snapshot, tt.reads); got != tt.want {
			t.Errorf("changed(%d, %v) = %v, want %v", tt.snapshot, tt.reads, got, tt.want)
		}
	}
	h.reset(20)
	h.add([]change{{seqno: 21, tables: []string{"a"}}, {seqno: 23, tables: []string{"b"}}})
	for _, tt := range []struct {
		snapshot uint64
		reads    map[string]struct{}
		want     bool
	}{
		{20, reads("c"), false}, {20, reads("a"), true}, {21, reads("a"), false},
		{21, reads("b"), true}, {22, reads("b"), true}, {23, reads("a", "b"), false},
	} {
		if got := h.changed(tt.snapshot, tt.reads); got != tt.want {
			t.Errorf("changed(%d, %v) = %v, want %v", tt.snapshot, tt.reads, got, tt.want)
		}
	}
}

func TestHistoryBounded(t *testing.T) {
	var h history
	h.reset(0)
	for i := uint64(1); i <= 3*maxHistory; i++ {
		h.add([]change{{seqno: i, tables: []string{fmt.Sprint("t", i)}}})
	}
	if len(h.entries) > maxHistory {
		t.Fatalf("%d entries kept", len(h.entries))
	}
	if !h.changed(1, map[string]struct{}{"unrelated": {}}) {
		t.Fatal("a snapshot older than the history counted as unchanged")
	}
	last := uint64(3 * maxHistory)
	if h.changed(last-10, map[string]struct{}{"unrelated": {}}) {
		t.Fatal("a recent snapshot counted as changed")
	}
}
