package raftlog

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// snapshotStore is raft's file snapshot store, without its leak: when
// writing a snapshot fails (a full disk), raft leaves the snapshot's
// temporary directory behind, partial data and all, so the disk stays full
// after the space that caused the failure is freed, and every later listing
// warns about each one. snapshotStore removes those directories.
type snapshotStore struct {
	*raft.FileSnapshotStore
	dir    string        // holds one directory per snapshot
	newest atomic.Uint64 // the newest snapshot's size in bytes
	opened atomic.Uint64 // the index of the snapshot opened last
}

// tmpSuffix marks a snapshot directory still being written (raft's name).
const tmpSuffix = ".tmp"

// openSnapshots opens the snapshot store in dir/snapshots, removing what
// a node stopped while writing a snapshot left there.
func openSnapshots(dir string, logger hclog.Logger) (*snapshotStore, error) {
	if err := os.MkdirAll(filepath.Join(dir, "snapshots"), 0o700); err != nil { // raft's would be 0755
		return nil, fmt.Errorf("raftlog: snapshot store: %w", err)
	}
	files, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, logger)
	if err != nil {
		return nil, fmt.Errorf("raftlog: snapshot store: %w", err)
	}
	s := &snapshotStore{FileSnapshotStore: files, dir: filepath.Join(dir, "snapshots")}
	tmps, _ := filepath.Glob(filepath.Join(s.dir, "*"+tmpSuffix))
	for _, tmp := range tmps {
		os.RemoveAll(tmp)
	}
	if metas, err := files.List(); err == nil && len(metas) > 0 {
		s.newest.Store(uint64(metas[0].Size))
	}
	return s, nil
}

// room is the disk space the next snapshot needs: the engine's copy of
// the database and the snapshot written from it, each about the size of
// the newest snapshot.
func (s *snapshotStore) room() uint64 { return 2 * s.newest.Load() }

// Create implements raft.SnapshotStore.
func (s *snapshotStore) Create(version raft.SnapshotVersion, index, term uint64,
	conf raft.Configuration, confIndex uint64, trans raft.Transport) (raft.SnapshotSink, error) {
	sink, err := s.FileSnapshotStore.Create(version, index, term, conf, confIndex, trans)
	if err != nil {
		// The failed write names the file, in the new snapshot's directory.
		var pe *fs.PathError
		if errors.As(err, &pe) {
			if tmp := filepath.Dir(pe.Path); strings.HasSuffix(tmp, tmpSuffix) && filepath.Dir(tmp) == s.dir {
				os.RemoveAll(tmp)
			}
		}
		return nil, err
	}
	return &snapshotSink{SnapshotSink: sink, store: s, tmp: filepath.Join(s.dir, sink.ID()+tmpSuffix)}, nil
}

// Open implements raft.SnapshotStore. Raft opens a snapshot just before
// restoring the state machine from it (at startup, and when it installs
// one from the leader), so opened says what a restore brought the state
// machine up to (fsm.Restore).
func (s *snapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	meta, rc, err := s.FileSnapshotStore.Open(id)
	if err == nil {
		s.opened.Store(meta.Index)
	}
	return meta, rc, err
}

// snapshotSink removes its temporary directory when it fails to finish,
// and records its size in the store when it does.
type snapshotSink struct {
	raft.SnapshotSink
	store   *snapshotStore
	tmp     string
	written uint64
}

func (s *snapshotSink) Write(p []byte) (int, error) {
	n, err := s.SnapshotSink.Write(p)
	s.written += uint64(n)
	return n, err
}

func (s *snapshotSink) Close() error {
	err := s.removeOnError(s.SnapshotSink.Close())
	if err == nil {
		s.store.newest.Store(s.written)
	}
	return err
}

func (s *snapshotSink) Cancel() error { return s.removeOnError(s.SnapshotSink.Cancel()) }

func (s *snapshotSink) removeOnError(err error) error {
	if err != nil {
		os.RemoveAll(s.tmp) // gone already if the snapshot was moved into place
	}
	return err
}
