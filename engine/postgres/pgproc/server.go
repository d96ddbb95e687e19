package pgproc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Port is the port number in the name of the server's socket
// (.s.PGSQL.5432); the server opens no TCP port.
const Port = 5432

// SuperUser is the role initdb makes, which the node connects as.
const SuperUser = "postgres"

// Server is a PostgreSQL server running as a child of this process.
type Server struct {
	cfg      Config
	bin      string
	major    int
	acct     *account
	logPath  string
	settings []string // -c name=value arguments

	mu       sync.Mutex
	proc     *os.Process // the running postgres; nil between runs
	restarts int

	stop     chan struct{} // closed by Stop
	stopOnce sync.Once
	done     chan struct{} // closed when supervision ended
}

// Start makes the database cluster if the data directory holds none yet,
// starts the server and returns once it accepts connections. From then on
// the server is restarted whenever it exits, until Stop.
func Start(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	bin, major, err := FindBinDir(cfg.BinDir)
	if err != nil {
		return nil, err
	}
	acct, err := lookupAccount(cfg.User)
	if err != nil {
		return nil, err
	}
	if err := prepareDataDir(cfg.DataDir, acct); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, bin: bin, major: major, acct: acct, logPath: cfg.DataDir + ".log", stop: make(chan struct{}), done: make(chan struct{})}
	settings := DefaultSettings(cfg.DataDir)
	for k, v := range cfg.Settings {
		settings[k] = v
	}
	names := make([]string, 0, len(settings))
	for k := range settings {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		s.settings = append(s.settings, "-c", k+"="+settings[k])
	}
	if !initialized(cfg.DataDir) {
		if err := s.initdb(); err != nil {
			return nil, err
		}
	}
	if err := waitOldServer(cfg.DataDir, cfg.StartTimeout); err != nil {
		return nil, err
	}
	exited, err := s.launch()
	if err != nil {
		return nil, err
	}
	if err := s.waitReady(exited); err != nil {
		s.shutdown(exited)
		return nil, err
	}
	go s.supervise(exited)
	return s, nil
}

// BinDir is the directory of the server's programs (pg_dump is there too).
func (s *Server) BinDir() string { return s.bin }

// Major is the server's major version.
func (s *Server) Major() int { return s.major }

// SocketDir is the directory of the server's socket: libpq's host.
func (s *Server) SocketDir() string { return s.cfg.DataDir }

// DSN is a libpq connection string for database db as the superuser.
func (s *Server) DSN(db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", s.cfg.DataDir, Port, SuperUser, db)
}

// LogPath is the file the server writes its log to.
func (s *Server) LogPath() string { return s.logPath }

// Restarts counts the times the server exited on its own and was started
// again.
func (s *Server) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// PID is the process id of the running postgres, 0 between runs.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid
}

func (s *Server) initdb() error {
	cmd := s.acct.command(exec.Command(filepath.Join(s.bin, "initdb"), "-D", s.cfg.DataDir, "-U", SuperUser,
		"--auth=trust", "--encoding=UTF8", "--locale=C"))
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgproc: initdb %s: %v\n%s", s.cfg.DataDir, err, bytes.TrimSpace(out))
	}
	s.cfg.Logger.Info("created PostgreSQL database cluster", "dir", s.cfg.DataDir, "version", s.major)
	return nil
}

// launch starts postgres. The returned channel is closed when it exits.
// The process is started from a goroutine locked to its OS thread that
// lives as long as the process: the child gets SIGQUIT (immediate
// shutdown) when that thread ends, which is when this process dies, so
// that a node killed with SIGKILL leaves no server behind.
func (s *Server) launch() (<-chan struct{}, error) {
	logFile, err := os.OpenFile(s.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgproc: open server log: %w", err)
	}
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		defer close(exited)
		defer logFile.Close()
		cmd := s.acct.command(exec.Command(filepath.Join(s.bin, "postgres"), append([]string{"-D", s.cfg.DataDir}, s.settings...)...))
		cmd.Dir = "/"
		cmd.Stdout, cmd.Stderr = logFile, logFile
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
		if err := cmd.Start(); err != nil {
			started <- fmt.Errorf("pgproc: start postgres: %w", err)
			return
		}
		s.mu.Lock()
		s.proc = cmd.Process
		s.mu.Unlock()
		started <- nil
		err := cmd.Wait()
		s.mu.Lock()
		s.proc = nil
		s.mu.Unlock()
		select {
		case <-s.stop:
		default:
			s.cfg.Logger.Error("PostgreSQL server exited", "err", err, "log", s.logPath)
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}

// waitReady waits until the server accepts connections: postmaster.pid
// names the running process and says "ready".
func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(s.cfg.StartTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if pid := s.PID(); pid != 0 && readyPID(s.cfg.DataDir) == pid {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("pgproc: postgres exited while starting; its log (%s) ends:\n%s", s.logPath, tail(s.logPath, 20))
		case <-s.stop:
			return errors.New("pgproc: stopped while starting")
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgproc: postgres did not accept connections within %v; its log (%s) ends:\n%s", s.cfg.StartTimeout, s.logPath, tail(s.logPath, 20))
		}
	}
}

// waitOldServer waits until a server that an earlier run of the node
// left on dataDir has exited: a node killed with SIGKILL and restarted at
// once finds its old server still shutting down (it got SIGQUIT), and a
// new one would refuse to start on the lock file.
func waitOldServer(dataDir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pid := filePID(dataDir)
		if pid == 0 || !isPostgres(pid) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgproc: a PostgreSQL server (pid %d) from an earlier run still runs on %s; stop it first", pid, dataDir)
		}
		time.Sleep(20 * time.Millisecond) // polling a process we cannot wait on
	}
}

// filePID returns the pid in dataDir's postmaster.pid, or 0.
func filePID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// isPostgres reports whether process pid runs postgres (not another
// program that took a stale file's pid).
func isPostgres(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(b), "postgres")
}

// readyPID returns the pid in dataDir's postmaster.pid if its status line
// says the server is ready, else 0.
func readyPID(dataDir string) int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 8 || strings.TrimSpace(lines[7]) != "ready" {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
	return pid
}

// tail returns the last n lines of the file at path.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// supervise starts the server again whenever it exits, until Stop. A
// server that fails to start is tried again at growing intervals (from
// 100 ms, up to 30 s): after a postmaster was killed, its children hold
// its shared memory until they notice (an idle backend at once, a busy one
// at its next wait), and a new one refuses to start until then. The node's
// engine reconnects once it is back (engine/postgres/reconnect.go).
func (s *Server) supervise(exited <-chan struct{}) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			s.shutdown(exited)
			return
		case <-exited:
		}
		backoff := 100 * time.Millisecond
		for {
			startedAt := time.Now()
			var err error
			exited, err = s.launch()
			if err == nil {
				err = s.waitReady(exited)
			}
			if err == nil {
				s.mu.Lock()
				s.restarts++
				s.mu.Unlock()
				s.cfg.Logger.Warn("PostgreSQL server restarted", "pid", s.PID(), "took", time.Since(startedAt).Round(time.Millisecond))
				break
			}
			s.cfg.Logger.Error("PostgreSQL server failed to restart; trying again", "err", err, "in", backoff)
			if exited != nil {
				s.shutdown(exited)
			}
			select {
			case <-s.stop:
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	}
}

// Stop shuts the server down and waits for it to exit: a fast shutdown
// (open transactions are rolled back, prepared ones stay), then, if it has
// not exited after 30 s, an immediate one, then SIGKILL.
func (s *Server) Stop() {
	s.stopOnce.Do(func() { close(s.stop) })
	<-s.done
}

// shutdown stops the server process whose exit closes exited.
func (s *Server) shutdown(exited <-chan struct{}) {
	for _, step := range []struct {
		sig  syscall.Signal
		wait time.Duration
	}{{syscall.SIGINT, 30 * time.Second}, {syscall.SIGQUIT, 5 * time.Second}, {syscall.SIGKILL, 5 * time.Second}} {
		s.mu.Lock()
		if s.proc != nil {
			s.proc.Signal(step.sig)
		}
		s.mu.Unlock()
		select {
		case <-exited:
			return
		case <-time.After(step.wait):
		}
	}
	s.cfg.Logger.Error("PostgreSQL server did not exit", "pid", s.PID())
}
