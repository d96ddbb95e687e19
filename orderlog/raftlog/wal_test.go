package raftlog

import (
	"testing"

	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// Raft truncates the log's tail when a follower's uncommitted entries
// conflict with a new leader's. raft-wal before v0.4.2 marked the tail
// segment sealed without writing its index, and the reopened log could
// not be read ("sealed segment has no index block"): a node killed after
// such a truncation could never start again. Found by `certa chaos`
// (kill-random).
func TestLogReopensAfterTailTruncation(t *testing.T) {
	dir := t.TempDir()
	w, err := wal.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 10; i++ {
		logs = append(logs, &raft.Log{Index: i, Term: 1, Data: []byte("entry")})
	}
	if err := w.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := w.DeleteRange(8, 10); err != nil { // clearing log suffix
		t.Fatal(err)
	}
	if err := w.StoreLogs([]*raft.Log{{Index: 8, Term: 2, Data: []byte("new leader")}}); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w, err = wal.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for i := uint64(1); i <= 8; i++ {
		var l raft.Log
		if err := w.GetLog(i, &l); err != nil {
			t.Fatalf("entry %d after reopening: %v", i, err)
		}
	}
	if last, _ := w.LastIndex(); last != 8 {
		t.Fatalf("last index %d, want 8", last)
	}
}
