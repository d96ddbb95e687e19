// Package datadir guards a node's data directory, so that one process at a
// time uses it: a second node started on a directory in use fails at once
// with ErrInUse, naming the process that holds it, instead of waiting for
// the locks of the files inside (the Raft log's metadata store waits for
// its lock forever). It also keeps the directory its owner's only
// (Prepare): it holds every replicated row and statement.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
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
	if err := os.MkdirAll(dir, Mode); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	path := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
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

// Mode is the mode of a node's data directory: only its owner may enter.
const Mode fs.FileMode = 0o700

// PassMode is the mode of a node's data directory when another user must
// pass through it to a directory of its own inside (a node running as root
// runs its PostgreSQL server as the postgres user, whose data directory is
// <data-dir>/pg): others may pass, not list it or open what it holds.
const PassMode fs.FileMode = 0o711

// Change is a mode that Prepare tightened.
type Change struct {
	Path     string
	Was, Now fs.FileMode
}

// Prepare creates dir with mode perm (Mode or PassMode), and any missing
// directory above it with the same mode, whatever the process umask. A dir
// that exists is tightened: it keeps no group or other permission beyond
// perm's, and the files and directories directly in it keep none at all
// (0644 becomes 0600, 0755 becomes 0700), as an older certa, or a hand,
// may have left them; owner bits stay as they are. Below a tightened
// directory nothing needs a change (nobody else can reach it); entries of
// another owner (PostgreSQL's directory, when its server runs as another
// user) and symbolic links are left alone. It returns what it tightened.
func Prepare(dir string, perm fs.FileMode) ([]Change, error) {
	if err := mkdirAll(dir, perm); err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	var changes []Change
	tighten := func(path string, info fs.FileInfo, perm fs.FileMode) error {
		if was := info.Mode().Perm(); was&^perm != 0 {
			if err := os.Chmod(path, was&perm); err != nil {
				return fmt.Errorf("data directory: %w", err)
			}
			changes = append(changes, Change{Path: path, Was: was, Now: was & perm})
		}
		return nil
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("data directory: %w", err)
	}
	if err := tighten(dir, info, perm); err != nil {
		return changes, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return changes, fmt.Errorf("data directory: %w", err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		info, err := os.Lstat(path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return changes, fmt.Errorf("data directory: %w", err)
		}
		if st, ok := info.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		if info.IsDir() || info.Mode().IsRegular() {
			if err := tighten(path, info, 0o700); err != nil {
				return changes, err
			}
		}
	}
	return changes, nil
}

// mkdirAll is os.MkdirAll, but every directory it creates gets exactly
// perm (os.MkdirAll's mode is masked by the umask).
func mkdirAll(dir string, perm fs.FileMode) error {
	if info, err := os.Stat(dir); err == nil {
		if !info.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAll(parent, perm); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, perm); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made meanwhile: Prepare tightens it
		}
		return err
	}
	return os.Chmod(dir, perm)
}
