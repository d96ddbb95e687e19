package datadir

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSecondLockFailsAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "n1")
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = Acquire(dir)
	if !errors.Is(err, ErrInUse) {
		t.Fatalf("second Acquire: %v, want ErrInUse", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second Acquire took %s", d)
	}
	for _, want := range []string{dir, "process " + strconv.Itoa(os.Getpid())} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l, err = Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l.Release()
}

// TestLockHeldByAnotherProcess locks the directory with flock(1) in a
// child process and checks that Acquire fails while it runs.
func TestLockHeldByAnotherProcess(t *testing.T) {
	flock, err := exec.LookPath("flock")
	if err != nil {
		t.Skip("flock(1) not installed")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, LockFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The child holds the lock until its stdin closes.
	cmd := exec.Command(flock, "--exclusive", filepath.Join(dir, LockFile), "sh", "-c", "echo locked; cat >/dev/null")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer in.Close()
	if _, err := out.Read(make([]byte, 7)); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrInUse) {
		t.Fatalf("Acquire while another process holds the lock: %v, want ErrInUse", err)
	}
}
