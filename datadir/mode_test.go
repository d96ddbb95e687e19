package datadir

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// openUmask clears the process umask for the test, so that modes are
// what the code asks for, not what the umask leaves of them.
func openUmask(t *testing.T) {
	old := syscall.Umask(0)
	t.Cleanup(func() { syscall.Umask(old) })
}

func modeOf(t *testing.T, path string) fs.FileMode {
	t.Helper()
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return info.Mode().Perm()
}

// Prepare creates the data directory, and the missing directories above
// it, with exactly the mode asked, whatever the umask; Acquire's lock file
// is the owner's only.
func TestPrepareCreates(t *testing.T) {
	openUmask(t)
	for _, perm := range []fs.FileMode{Mode, PassMode} {
		top := filepath.Join(t.TempDir(), "above")
		dir := filepath.Join(top, "n1")
		changes, err := Prepare(dir, perm)
		if err != nil {
			t.Fatal(err)
		}
		if len(changes) != 0 {
			t.Errorf("Prepare of a new directory tightened %v", changes)
		}
		for _, d := range []string{top, dir} {
			if got := modeOf(t, d); got != perm {
				t.Errorf("%s: mode %v, want %v", d, got, perm)
			}
		}
		l, err := Acquire(dir)
		if err != nil {
			t.Fatal(err)
		}
		if got := modeOf(t, filepath.Join(dir, LockFile)); got != 0o600 {
			t.Errorf("lock file: mode %v, want 0600", got)
		}
		l.Release()
	}
	// Acquire alone (no Prepare) creates the directory 0700.
	dir := filepath.Join(t.TempDir(), "n2")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	if got := modeOf(t, dir); got != Mode {
		t.Errorf("directory made by Acquire: mode %v, want 0700", got)
	}
}

// Prepare tightens a data directory written with looser modes (an older
// certa's: 0755 directories, 0644 files): the directory to the mode asked,
// the files and directories directly in it to none for group and others
// (owner bits unchanged); it never
// loosens a mode, and leaves symbolic links and what is below a
// subdirectory alone.
func TestPrepareTightens(t *testing.T) {
	openUmask(t)
	dir := t.TempDir()
	mk := func(path string, mode fs.FileMode, isDir bool) {
		t.Helper()
		var err error
		if isDir {
			err = os.Mkdir(path, mode)
		} else {
			err = os.WriteFile(path, []byte("x"), mode)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	mk(filepath.Join(dir, "data.db"), 0o644, false)
	mk(filepath.Join(dir, "LOCK"), 0o600, false)
	mk(filepath.Join(dir, "exec"), 0o754, false)
	mk(filepath.Join(dir, "raft"), 0o755, true)
	mk(filepath.Join(dir, "raft", "wal"), 0o755, true)
	mk(filepath.Join(dir, "raft", "meta.db"), 0o644, false)
	mk(filepath.Join(dir, "pg"), 0o750, true)
	outside := filepath.Join(t.TempDir(), "outside")
	mk(outside, 0o644, false)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}

	changes, err := Prepare(dir, PassMode)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]fs.FileMode{
		"":             0o711,
		"data.db":      0o600,
		"LOCK":         0o600,
		"exec":         0o700,
		"raft":         0o700,
		"raft/wal":     0o755, // unreachable for others through raft
		"raft/meta.db": 0o644,
		"pg":           0o700,
	}
	for name, mode := range want {
		if got := modeOf(t, filepath.Join(dir, name)); got != mode {
			t.Errorf("%q: mode %v, want %v", name, got, mode)
		}
	}
	if got := modeOf(t, outside); got != 0o644 {
		t.Errorf("file behind a symbolic link: mode %v, want 0644 (left alone)", got)
	}
	var tightened []string
	for _, c := range changes {
		rel, _ := filepath.Rel(dir, c.Path)
		tightened = append(tightened, rel)
		if c.Now != modeOf(t, c.Path) {
			t.Errorf("%s: reported %v, is %v", rel, c.Now, modeOf(t, c.Path))
		}
	}
	slices.Sort(tightened)
	if wantT := []string{".", "data.db", "exec", "pg", "raft"}; !slices.Equal(tightened, wantT) {
		t.Errorf("tightened %v, want %v", tightened, wantT)
	}

	// Mode tightens further; PassMode again does not loosen.
	if _, err := Prepare(dir, Mode); err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, dir); got != Mode {
		t.Errorf("after Prepare(Mode): mode %v, want 0700", got)
	}
	changes, err = Prepare(dir, PassMode)
	if err != nil {
		t.Fatal(err)
	}
	if got := modeOf(t, dir); got != Mode || len(changes) != 0 {
		t.Errorf("Prepare(PassMode) of a 0700 directory: mode %v, changes %v; want it left 0700", got, changes)
	}
}

// A data directory path that is a file is an error, not a directory made.
func TestPrepareNotADirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(path, Mode); err == nil {
		t.Fatal("Prepare of a file: no error")
	}
	if _, err := Prepare(filepath.Join(path, "n1"), Mode); err == nil {
		t.Fatal("Prepare below a file: no error")
	}
}
