package raftlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// finishRotation completes a segment rotation that raft-wal left half done
// in the WAL in dir, whose metadata store is meta. No WAL operation may run
// meanwhile.
//
// raft-wal rotates in two steps: an append writes the segment's index and
// seals the file, then a background rotation records the seal in the
// metadata together with a new tail segment, whose file it creates next.
// If recording fails (the disk is full), the metadata still names the
// sealed file as the tail, and raft-wal, on this and every later open,
// takes it up again as a tail that can take no more appends. finishRotation
// records what the rotation would have: the tail sealed at its last entry,
// and a new, empty tail after it.
// Any other state it leaves alone.
func finishRotation(dir string, segmentBytes int, meta types.MetaStore) error {
	st, err := meta.Load(dir)
	if err != nil {
		return fmt.Errorf("raftlog: load wal metadata: %w", err)
	}
	if len(st.Segments) == 0 {
		return nil
	}
	tail := &st.Segments[len(st.Segments)-1]
	if !tail.SealTime.IsZero() {
		return nil
	}
	sealed, indexStart, last, err := tailSealed(dir, *tail)
	if err != nil || !sealed {
		return err
	}
	now := time.Now()
	next := types.SegmentInfo{
		ID:         st.NextSegmentID,
		BaseIndex:  last + 1,
		MinIndex:   last + 1,
		SizeLimit:  uint32(segmentBytes),
		Codec:      wal.CodecBinaryV1,
		CreateTime: now,
	}
	// The new tail's file is created empty before it is recorded: the WAL
	// then opens it as it is, instead of creating it preallocated, which a
	// full disk refuses (and the WAL would not open).
	f, err := os.OpenFile(filepath.Join(dir, segment.FileName(next)), os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("raftlog: finish the wal's segment rotation: %w", err)
	}
	f.Close()
	tail.SealTime, tail.IndexStart, tail.MaxIndex = now, indexStart, last
	st.Segments = append(st.Segments, next)
	st.NextSegmentID++
	if err := meta.CommitState(st); err != nil {
		return fmt.Errorf("raftlog: finish the wal's segment rotation: %w", err)
	}
	return nil
}

// tailSealed reports whether the file of the unsealed tail segment info is
// sealed after all, where its index starts and its last entry.
func tailSealed(dir string, info types.SegmentInfo) (sealed bool, indexStart, last uint64, err error) {
	sw, err := segment.NewFiler(dir, fs.New()).RecoverTail(info)
	if errors.Is(err, os.ErrNotExist) {
		return false, 0, 0, nil // the WAL creates it when it opens
	}
	if err != nil {
		return false, 0, 0, fmt.Errorf("raftlog: read wal tail segment: %w", err)
	}
	defer sw.Close()
	sealed, indexStart, err = sw.Sealed()
	return sealed, indexStart, sw.LastIndex(), err
}
