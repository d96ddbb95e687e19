// Package pgserver starts a throwaway PostgreSQL server for differential
// tests: certa and PostgreSQL are sent the same statements and must agree.
// It uses the PostgreSQL that Debian's postgresql package installs (.ci/deps
// installs it) and runs it as that package's postgres user, since
// PostgreSQL refuses to run as root.
package pgserver

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Server is a running PostgreSQL server on loopback.
type Server struct {
	// DSN connects as a superuser to the server's test database.
	DSN string
	dir string
	bin string
}

// Start starts a PostgreSQL server in a new directory and stops it when the
// test ends. It fails the test if PostgreSQL is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "certa-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "data")
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{dir: dir, bin: bin, DSN: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)}
	asRoot := os.Geteuid() == 0
	if asRoot {
		// The postgres user must reach and own the data directory.
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("pgserver: PostgreSQL refuses to run as root and there is no postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(data, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(data, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, args[0]), args[1:]...)
		if asRoot {
			cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(bin, args[0])}, args[1:]...)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("pgserver: %s: %v\n%s", args[0], err, out)
		}
	}
	run("initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories= -c fsync=off", port)
	run("pg_ctl", "-D", data, "-l", filepath.Join(data, "server.log"), "-o", opts, "-w", "start")
	t.Cleanup(func() { run("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop") })
	return s
}

// binDir finds PostgreSQL's programs in Debian's layout (the newest version).
// Program returns the path of one of the server's programs (pgbench...).
func Program(t testing.TB, name string) string {
	t.Helper()
	dir, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi < vj
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	return "", fmt.Errorf("pgserver: no PostgreSQL server found under /usr/lib/postgresql: install Debian's postgresql package (.ci/deps does)")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
