package raftlog

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"certa/orderlog"
)

// snapshottingSM counts the entries applied and snapshots that count.
type snapshottingSM struct{ countingSM }

func (c *snapshottingSM) Snapshot() (orderlog.Snapshot, error) { return countSnapshot{}, nil }

type countSnapshot struct{}

func (countSnapshot) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write([]byte("count"))
	return int64(n), err
}
func (countSnapshot) Release() {}

// A node whose disk has no room for more entries must free it by compacting
// its log, even when it holds no more than TrailingLogs entries: in the disk
// soak a node's disk held those entries (10240 of up to 25 KB) and the
// reserve, so it refused entries, and its snapshots compacted nothing.
func TestRefusedEntryCompactsTheLogDownToAFewEntries(t *testing.T) {
	room := new(atomic.Bool)
	room.Store(true)
	l, err := open(Config{ID: "n1", Dir: t.TempDir(), RaftAddr: freeAddr(t), Bootstrap: true,
		HeartbeatTimeout: 200 * time.Millisecond, ElectionTimeout: 200 * time.Millisecond, LeaderLeaseTimeout: 100 * time.Millisecond,
		SegmentBytes: testSegment, TrailingLogs: 100000, SnapshotThreshold: 1 << 40, SnapshotInterval: time.Hour,
	}, &snapshottingSM{}, testHooks{roomFor: room.Load})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	eventually(t, 10*time.Second, "n1 leads", l.IsLeader)
	entry := bytes.Repeat([]byte("x"), 1000)
	for range 500 { // some fifteen 32 KiB segments
		if err := l.Append(entry, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	last, _ := l.wal.LastIndex()

	room.Store(false)
	if err := l.Append(entry, 5*time.Second); err == nil {
		t.Fatal("an entry was appended with no room on the disk")
	}
	// Entries per segment, plus the few kept: what a compaction to the
	// last few entries leaves at most.
	eventually(t, 10*time.Second, "the log is compacted to its last few entries", func() bool {
		first, _ := l.wal.FirstIndex()
		return first+fullDiskTrailingLogs+testSegment/1000 >= last
	})
	// The setting comes back once the snapshot call returns, just after
	// the compaction it made.
	eventually(t, 10*time.Second, "TrailingLogs is the configured 100000 again", func() bool {
		return l.raft.ReloadableConfig().TrailingLogs == 100000
	})
}
