// Package datadir guards a node's data directory, so that one process at a
// time uses it: a second node started on a directory in use fails at once
// with ErrInUse, naming the process that holds it, instead of waiting for
// the locks of the files inside (the Raft log's metadata store waits for
// its lock forever).
package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrInUse is returned by Lock when another process holds the directory.
var ErrInUse = errors.New("data directory in use")

// LockFile is the name of the lock file inside a data directory. It holds
// the PID of the process that locked the directory last; it is never
// removed (removing it would let two processes lock two different files).
const LockFile = "LOCK"

// Lock is a held data directory lock. The operating system releases it
// when the process ends, however it ends.
type Lock struct {
	f *os.File
}

// Acquire creates dir if needed and locks it for this process, without
// waiting: if another process (or another Acquire in this process) holds
// it, it returns an error wrapping ErrInUse that names dir and, when
// known, the PID of the holder.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := holderOf(f)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is locked by %s (%s): stop that process, or give this node a data directory of its own",
				ErrInUse, dir, holder, path)
		}
		return nil, fmt.Errorf("lock data directory %s: %w", dir, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// holderOf describes the process named in a lock file.
func holderOf(f *os.File) string {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return "another process"
	}
	return "process " + strconv.Itoa(pid)
}

// Release unlocks the directory.
func (l *Lock) Release() error {
	syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	return l.f.Close()
}
