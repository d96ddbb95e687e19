// Package pgproc runs the PostgreSQL server under a node that uses the
// postgres engine: it finds PostgreSQL's programs, creates the database
// cluster with initdb on first start, starts postgres as a child process
// that listens only on a Unix socket inside its data directory, restarts it
// if it dies, and stops it with the node.
//
// PostgreSQL refuses to run as root. A node running as root runs the server
// as an ordinary user (Config.User, Debian's postgres by default), who owns
// the server's data directory. The socket's directory is that data
// directory (mode 0700), so only that user and root can connect: no TCP
// port, nothing a stranger can reach.
package pgproc

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MinVersion is the oldest PostgreSQL major version certa runs on, the
// oldest it is tested with.
const MinVersion = 15

// Config says which PostgreSQL to run and where.
type Config struct {
	// BinDir holds postgres and initdb. Empty: the directory of postgres on
	// PATH, else the newest of Debian's /usr/lib/postgresql/N/bin.
	BinDir string
	// DataDir is the server's data directory, created by initdb when it
	// holds no database cluster yet. Required. Its parent must exist.
	DataDir string
	// User is the operating-system user the server runs as when this
	// process runs as root (PostgreSQL refuses root). Default "postgres".
	User string
	// Settings are passed to postgres as -c name=value, over the defaults
	// of Settings (see DefaultSettings).
	Settings map[string]string
	// StartTimeout bounds how long Start waits for the server to accept
	// connections (crash recovery included). Default 60 s.
	StartTimeout time.Duration
	// Logger receives the server's start, exits and restarts. Default
	// slog.Default().
	Logger *slog.Logger
}

// DefaultSettings are the server settings certa needs: no TCP listener,
// a socket in the data directory only its user may open, no prepared
// transactions of clients (certa refuses PREPARE TRANSACTION: one would
// hold locks the applier cannot take away), and a backend per client
// session plus certa's own.
func DefaultSettings(dataDir string) map[string]string {
	return map[string]string{
		"listen_addresses":          "",
		"unix_socket_directories":   dataDir,
		"unix_socket_permissions":   "0700",
		"max_prepared_transactions": "0",
		"max_connections":           "300",
	}
}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.User == "" {
		c.User = "postgres"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 60 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	switch {
	case c.DataDir == "":
		return errors.New("pgproc: no data directory")
	case !filepath.IsAbs(c.DataDir):
		return fmt.Errorf("pgproc: data directory %q is not an absolute path", c.DataDir)
	case c.StartTimeout < 0:
		return errors.New("pgproc: negative start timeout")
	}
	for name := range c.Settings {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			return fmt.Errorf("pgproc: bad setting name %q", name)
		}
	}
	return nil
}

// ErrNotInstalled is wrapped by Start's error when no usable PostgreSQL is
// found.
var ErrNotInstalled = errors.New("no PostgreSQL server found")

// ErrNoClientPrograms is wrapped by FindClientBinDir's error when no usable
// pg_dump and pg_restore are found.
var ErrNoClientPrograms = errors.New("no usable pg_dump and pg_restore found")

// FindBinDir returns the directory of PostgreSQL's server programs: dir if
// it is not empty, else postgres's directory on PATH, else the newest of
// Debian's /usr/lib/postgresql/N/bin. It checks that postgres and initdb
// are there and that the version is at least MinVersion.
func FindBinDir(dir string) (binDir string, major int, err error) {
	binDir, major, tooOld := findPrograms(dir, "postgres", "initdb", MinVersion)
	if binDir != "" {
		return binDir, major, nil
	}
	where := searched(dir)
	if len(tooOld) > 0 {
		return "", 0, fmt.Errorf("%w %s of version %d or later: found only %s; install PostgreSQL %d or later (Debian: apt-get install postgresql)",
			ErrNotInstalled, where, MinVersion, strings.Join(tooOld, ", "), MinVersion)
	}
	return "", 0, fmt.Errorf("%w %s (postgres and initdb): install it (Debian: apt-get install postgresql) or name its bin directory with --postgres-bin",
		ErrNotInstalled, where)
}

// FindClientBinDir returns the directory of pg_dump and pg_restore, for a
// node whose server the operator runs (state transfer dumps and restores
// its database with them): dir if it is not empty, else pg_dump's
// directory on PATH, else the newest of Debian's /usr/lib/postgresql/N/bin.
// Their version must be at least minMajor (the server's: pg_dump refuses a
// newer server) and MinVersion.
func FindClientBinDir(dir string, minMajor int) (binDir string, major int, err error) {
	minMajor = max(minMajor, MinVersion)
	binDir, major, tooOld := findPrograms(dir, "pg_dump", "pg_restore", minMajor)
	if binDir != "" {
		return binDir, major, nil
	}
	where := searched(dir)
	if len(tooOld) > 0 {
		return "", 0, fmt.Errorf("%w %s of version %d or later (the server's; state transfer runs them): found only %s; install PostgreSQL %d's client programs (Debian: apt-get install postgresql-client-%d) or name their bin directory with --postgres-bin",
			ErrNoClientPrograms, where, minMajor, strings.Join(tooOld, ", "), minMajor, minMajor)
	}
	return "", 0, fmt.Errorf("%w %s (state transfer runs them): install PostgreSQL %d's client programs (Debian: apt-get install postgresql-client-%d) or name their bin directory with --postgres-bin",
		ErrNoClientPrograms, where, minMajor, minMajor)
}

// findPrograms returns the first directory holding both programs of
// version minMajor or later: dir if it is not empty, else first's
// directory on PATH, then Debian's /usr/lib/postgresql/N/bin, newest
// first. It also returns the directories passed over as too old.
func findPrograms(dir, first, second string, minMajor int) (binDir string, major int, tooOld []string) {
	var candidates []string
	if dir != "" {
		candidates = []string{dir}
	} else {
		if p, err := exec.LookPath(first); err == nil {
			if real, err := filepath.EvalSymlinks(p); err == nil {
				p = real // a link on PATH to the directory of all the programs
			}
			candidates = append(candidates, filepath.Dir(p))
		}
		debian, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(debian, func(i, j int) bool { return debianMajor(debian[i]) > debianMajor(debian[j]) })
		candidates = append(candidates, debian...)
	}
	for _, d := range candidates {
		if !isFile(filepath.Join(d, first)) || !isFile(filepath.Join(d, second)) {
			continue
		}
		out, err := exec.Command(filepath.Join(d, first), "--version").Output()
		if err != nil {
			continue
		}
		major, ok := parseMajor(string(out))
		if !ok {
			continue
		}
		if major < minMajor {
			tooOld = append(tooOld, fmt.Sprintf("%s (PostgreSQL %d)", d, major))
			continue
		}
		return d, major, nil
	}
	return "", 0, tooOld
}

// searched says where findPrograms looked.
func searched(dir string) string {
	if dir != "" {
		return "in " + dir
	}
	return "on PATH or under /usr/lib/postgresql"
}

var versionRE = regexp.MustCompile(`\(PostgreSQL\) (\d+)`)

// parseMajor reads the major version from postgres --version.
func parseMajor(s string) (int, bool) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

func debianMajor(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// account is the user the server runs as: nil when this process is not
// root (the server then runs as this process's user).
type account struct {
	name     string
	uid, gid uint32
}

func lookupAccount(name string) (*account, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgproc: PostgreSQL refuses to run as root, and user %q to run it as does not exist (%v): create it or choose another with --postgres-user", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil, fmt.Errorf("pgproc: user %q cannot run PostgreSQL (uid %s)", name, u.Uid)
	}
	return &account{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

// command returns cmd set to run as a, if a is not nil.
func (a *account) command(cmd *exec.Cmd) *exec.Cmd {
	if a != nil {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: a.uid, Gid: a.gid}
	}
	return cmd
}

// prepareDataDir creates dataDir for a (owned by it, mode 0700) and checks
// that a can reach it: every directory above must let it pass.
func prepareDataDir(dataDir string, a *account) error {
	if err := os.Mkdir(dataDir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("pgproc: create data directory: %w", err)
	}
	if a == nil {
		return nil
	}
	if err := os.Chown(dataDir, int(a.uid), int(a.gid)); err != nil {
		return fmt.Errorf("pgproc: give data directory to %s: %w", a.name, err)
	}
	for d := filepath.Dir(dataDir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("pgproc: %w", err)
		}
		sys, _ := st.Sys().(*syscall.Stat_t)
		owned := sys != nil && sys.Uid == a.uid
		if !owned && st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("pgproc: user %s, who runs PostgreSQL, cannot reach %s: directory %s lets only its owner pass (mode %v); allow it with chmod o+x %s, or keep the data directory elsewhere",
				a.name, dataDir, d, st.Mode().Perm(), d)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// initialized reports whether dataDir holds a database cluster.
func initialized(dataDir string) bool {
	return isFile(filepath.Join(dataDir, "PG_VERSION"))
}
