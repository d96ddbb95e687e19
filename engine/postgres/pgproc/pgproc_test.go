package pgproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFindBinDirRefusesWhatIsMissingOrOld(t *testing.T) {
	empty := t.TempDir()
	if _, _, err := FindBinDir(empty); !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "--postgres-bin") {
		t.Fatalf("empty directory: %v", err)
	}
	old := t.TempDir()
	for _, prog := range []string{"postgres", "initdb"} {
		script := "#!/bin/sh\necho 'postgres (PostgreSQL) 13.11'\n"
		if err := os.WriteFile(filepath.Join(old, prog), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := FindBinDir(old)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "PostgreSQL 13") || !strings.Contains(err.Error(), "15 or later") {
		t.Fatalf("PostgreSQL 13: %v", err)
	}
}

func TestParseMajor(t *testing.T) {
	for in, want := range map[string]int{
		"postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)\n": 15,
		"postgres (PostgreSQL) 17.2\n":                           17,
		"postgres (PostgreSQL) 10beta1":                          10,
		"something else":                                         0,
	} {
		if got, _ := parseMajor(in); got != want {
			t.Errorf("parseMajor(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{}, {DataDir: "rel/dir"}, {DataDir: "/x", StartTimeout: -1}, {DataDir: "/x", Settings: map[string]string{"a=b": "c"}}} {
		if c.Validate() == nil {
			t.Errorf("%+v: valid", c)
		}
	}
	if err := (Config{DataDir: "/x"}).Validate(); err != nil {
		t.Error(err)
	}
}

// reachableDir is a new directory the postgres user can pass through when
// the test runs as root (t.TempDir's directories let only root in).
func reachableDir(t *testing.T) string {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// t.TempDir's directory and its parent, the test's own: never
		// one above (a shared /tmp must keep its mode).
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// psql runs one statement on s with PostgreSQL's own client.
func psql(t *testing.T, s *Server, sql string) (string, error) {
	t.Helper()
	out, err := exec.Command(filepath.Join(s.bin, "psql"), "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", s.SocketDir(), "-p", "5432", "-U", SuperUser, "-d", "postgres", "-c", sql).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A real server: made by initdb on first start, on a socket only, with the
// settings certa needs; restarted after it is killed; stopped; started
// again on the same directory with its data.
func TestServerLifecycle(t *testing.T) {
	if _, _, err := FindBinDir(""); err != nil {
		t.Fatalf("this test needs PostgreSQL (.ci/deps installs it): %v", err)
	}
	dir := filepath.Join(reachableDir(t), "pg")
	s, err := Start(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if s.Major() < MinVersion {
		t.Fatalf("major %d", s.Major())
	}
	for sql, want := range map[string]string{
		"SHOW listen_addresses":          "",
		"SHOW max_prepared_transactions": "0",
		"SHOW unix_socket_permissions":   "0700",
	} {
		if got, err := psql(t, s, sql); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", sql, got, err, want)
		}
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v", st.Mode(), err)
	}
	if out, err := psql(t, s, "CREATE TABLE kept (id int PRIMARY KEY); INSERT INTO kept VALUES (1)"); err != nil {
		t.Fatalf("%v: %s", err, out)
	}

	// Killed, it comes back.
	pid := s.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a restart", func() bool { return s.Restarts() == 1 && s.PID() != 0 && s.PID() != pid })
	if got, err := psql(t, s, "SELECT count(*) FROM kept"); err != nil || got != "1" {
		t.Fatalf("after restart: %q %v", got, err)
	}

	// Stopped, it is gone; started again, it has its data.
	pid = s.PID()
	s.Stop()
	if s.PID() != 0 || syscall.Kill(pid, 0) == nil {
		t.Fatalf("postgres %d still runs after Stop", pid)
	}
	s2, err := Start(Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Stop()
	if got, err := psql(t, s2, "SELECT count(*) FROM kept"); err != nil || got != "1" {
		t.Fatalf("after a new start: %q %v", got, err)
	}
	if s2.Restarts() != 0 {
		t.Fatalf("restarts %d", s2.Restarts())
	}

	// Started while the server of an earlier run still runs on the
	// directory (a node killed and restarted at once: its old server is
	// still shutting down), it waits for that one to exit.
	third := make(chan error, 1)
	go func() {
		s3, err := Start(Config{DataDir: dir})
		if err == nil {
			s3.Stop()
		}
		third <- err
	}()
	s2.Stop()
	if err := <-third; err != nil {
		t.Fatalf("start after an earlier server: %v", err)
	}
}

// pg_dump and pg_restore older than the server, or missing, are refused
// with what to install.
func TestFindClientBinDir(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := FindClientBinDir(dir, 15); !errors.Is(err, ErrNoClientPrograms) || !strings.Contains(err.Error(), "--postgres-bin") {
		t.Fatalf("empty directory: %v", err)
	}
	for _, prog := range []string{"pg_dump", "pg_restore"} {
		script := "#!/bin/sh\necho '" + prog + " (PostgreSQL) 15.4'\n"
		if err := os.WriteFile(filepath.Join(dir, prog), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, major, err := FindClientBinDir(dir, 15); err != nil || got != dir || major != 15 {
		t.Fatalf("PostgreSQL 15 for a 15 server: %q %d %v", got, major, err)
	}
	_, _, err := FindClientBinDir(dir, 16)
	if !errors.Is(err, ErrNoClientPrograms) || !strings.Contains(err.Error(), "16 or later") || !strings.Contains(err.Error(), "PostgreSQL 15") {
		t.Fatalf("PostgreSQL 15 for a 16 server: %v", err)
	}
}
