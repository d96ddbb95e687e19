// Package pgserver starts a throwaway PostgreSQL server for differential
// tests: certa and PostgreSQL are sent the same statements and must agree.
// It uses the PostgreSQL that Debian's postgresql package installs (.ci/deps
// installs it) and runs it as that package's postgres user, since
// PostgreSQL refuses to run as root.
package pgserver

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/testcert"
)

// Server is a running PostgreSQL server on loopback.
type Server struct {
	// DSN connects as a superuser to the server's test database.
	DSN  string
	Port int
	dir  string
	bin  string
	data string
	root bool // runs as the postgres user
}

// Options are how StartWith sets up a server.
type Options struct {
	// Password, if not empty, is the superuser postgres's password, and
	// TCP connections must authenticate with Auth (as an operator's
	// server would: pg_hba.conf's "host all all 127.0.0.1/32 <Auth>").
	// Empty: trust.
	Password string
	Auth     string // scram-sha-256 (default) or md5
	// Settings are passed to postgres as -c name=value.
	Settings map[string]string
	// TLS, if not nil, turns TLS on with its server certificate, and
	// its CA verifies clients' certificates (pg_hba.conf's "cert").
	TLS *testcert.Certs
}

// Start starts a PostgreSQL server in a new directory and stops it when the
// test ends. It fails the test if PostgreSQL is not installed.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// StartWith is Start with opts.
func StartWith(t testing.TB, opts Options) *Server {
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
	userinfo := "postgres"
	if opts.Password != "" {
		userinfo += ":" + url.QueryEscape(opts.Password)
	}
	asRoot := os.Geteuid() == 0
	s := &Server{dir: dir, bin: bin, data: data, root: asRoot, Port: port,
		DSN: fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", userinfo, port)}
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
	initdb := []string{"initdb", "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"}
	if opts.Password != "" {
		pwfile := filepath.Join(dir, "pwfile")
		if err := os.WriteFile(pwfile, []byte(opts.Password+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		auth := opts.Auth
		if auth == "" {
			auth = "scram-sha-256"
		}
		initdb = append(initdb, "--pwfile="+pwfile, "--auth-host="+auth, "--auth-local=trust")
	}
	s.run(t, initdb...)
	os.Remove(filepath.Join(dir, "pwfile"))
	settings := fmt.Sprintf("-c listen_addresses=127.0.0.1 -c port=%d -c unix_socket_directories= -c fsync=off", port)
	if opts.TLS != nil {
		files := opts.TLS.WriteFiles(t, data) // readable by the server's user
		if asRoot {
			s.chown(t, files.CA, files.Cert, files.Key)
		}
		settings += fmt.Sprintf(" -c ssl=on -c ssl_cert_file=%s -c ssl_key_file=%s -c ssl_ca_file=%s", files.Cert, files.Key, files.CA)
	}
	for k, v := range opts.Settings {
		settings += fmt.Sprintf(" -c %s=%s", k, v)
	}
	s.run(t, "pg_ctl", "-D", data, "-l", filepath.Join(data, "server.log"), "-o", settings, "-w", "start")
	t.Cleanup(func() { s.run(t, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop") })
	return s
}

// run runs one of the server's programs, as the server's user.
func (s *Server) run(t testing.TB, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, args[0]), args[1:]...)
	if s.root {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(s.bin, args[0])}, args[1:]...)...)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgserver: %s: %v\n%s", args[0], err, out)
	}
}

// SetHBA replaces the server's pg_hba.conf with lines and waits until the
// server has read it again. The lines must keep letting in the superuser
// of DSN.
func (s *Server) SetHBA(t testing.TB, lines ...string) {
	t.Helper()
	loaded := func() string {
		out, err := exec.Command(filepath.Join(s.bin, "psql"), "-X", "-A", "-t", "-d", s.DSN, "-c", "SELECT pg_conf_load_time()").CombinedOutput()
		if err != nil {
			t.Fatalf("pgserver: psql: %v\n%s", err, out)
		}
		return string(out)
	}
	before := loaded()
	path := filepath.Join(s.data, "pg_hba.conf")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s.root {
		s.chown(t, path)
	}
	s.run(t, "pg_ctl", "-D", s.data, "reload")
	for deadline := time.Now().Add(30 * time.Second); loaded() == before; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("pgserver: the server did not reload pg_hba.conf within 30s")
		}
	}
}

// chown gives paths to the postgres user, as whom the server runs.
func (s *Server) chown(t testing.TB, paths ...string) {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	for _, p := range paths {
		if err := os.Chown(p, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
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
