package regress

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"certa/internal/localcluster"
)

// marker is the file that marks a directory as a run's output: a run
// empties only such a directory (or an empty one).
const marker = ".certa-regress"

// prepareOut empties out (only an earlier run's output) and makes its
// directories: out lets the postgres user through (0711), and
// work/results, where the tests (and the plain server's lo_export) write
// files, is writable by everyone.
func prepareOut(out string) error {
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, merr := os.Stat(filepath.Join(out, marker)); len(entries) > 0 && merr != nil {
		return fmt.Errorf("%s is not empty and holds no earlier run's output (no %s): choose another output directory", out, marker)
	}
	if err := os.RemoveAll(out); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "work", "results"), 0o777); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, marker), nil, 0o644); err != nil {
		return err
	}
	for _, d := range []string{out, filepath.Join(out, "work"), filepath.Join(out, "work", "results")} {
		mode := os.FileMode(0o711)
		if d != out {
			mode = 0o777
		}
		if err := os.Chmod(d, mode); err != nil {
			return err
		}
	}
	return nil
}

// cleanWork empties work/results before a target's run, so no target
// reads a file another wrote.
func cleanWork(env Env) error {
	dir := filepath.Join(env.BuildDir, "results")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes dirs with mode (MkdirAll's mode is filtered by the umask).
func mkdirs(mode os.FileMode, dirs ...string) error {
	for _, d := range dirs {
		if err := os.MkdirAll(d, mode); err != nil {
			return err
		}
		if err := os.Chmod(d, mode); err != nil {
			return err
		}
	}
	return nil
}

// writeDiff writes diff -u of the two outputs to path, for people to read
// and DiffCauses (the classification is Compare's), and returns it.
func writeDiff(want, got, path string) []byte {
	out, _ := exec.Command("diff", "-u", want, got).Output()
	os.WriteFile(path, out, 0o644)
	return out
}

// freePort returns a free loopback TCP port.
func freePort() (int, error) {
	addr, err := localcluster.FreeAddr()
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(addr)
	return strconv.Atoi(port)
}
