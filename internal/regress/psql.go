package regress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Target is a server the tests run against, through psql.
type Target struct {
	Host string
	Port int
	User string
	DB   string
}

// Env is what pg_regress gives a test besides the server: the psql
// variables abs_srcdir, abs_builddir, libdir and dlsuffix that the test
// files read with \getenv.
type Env struct {
	Psql     string // the psql program
	SrcDir   string // the regress directory: sql/, data/, expected/
	BuildDir string // where tests write files (results/ under it)
	LibDir   string // where regress.so would be (the tests that load it fail on both sides)
	// Clock is the TimeZone and DateStyle psql connects with.
	Clock Clock
}

// Clock is the time zone and date style a client asks for at connection
// (PGTZ, PGDATESTYLE).
type Clock struct {
	Name                string // "" for pg_regress's; names the plain runs' directories
	TimeZone, DateStyle string
}

// Clocks: pg_regress's, and UTC with ISO dates for the embedded engine,
// which refuses other zones and styles (a plain PostgreSQL's runs for it
// use the same, so the outputs compare).
var (
	regressClock = Clock{TimeZone: "America/Los_Angeles", DateStyle: "Postgres, MDY"}
	utcClock     = Clock{Name: "utc", TimeZone: "UTC", DateStyle: "ISO, MDY"}
)

// clockFor is the clock the tests use through engine.
func clockFor(engine string) Clock {
	if engine == "sqlite" {
		return utcClock
	}
	return regressClock
}

// TestRun is how one test file ran.
type TestRun struct {
	Output   []byte // psql's standard output and error, interleaved as written
	Exit     int    // psql's exit status; -1 if it was killed
	TimedOut bool   // killed at the timeout
	Elapsed  time.Duration
}

// RunTest feeds script (a test file, see Script) to psql against target
// as pg_regress does: psql -X -a -q -d DB -v HIDE_TABLEAM=on -v
// HIDE_TOAST_COMPRESSION=on < NAME.sql > NAME.out 2>&1, with
// pg_regress's environment (PGTZ, PGDATESTYLE of env.Clock, PGOPTIONS with
// intervalstyle=postgres_verbose, LC_MESSAGES=C, PG_ABS_SRCDIR...). The
// output goes to outFile too. psql is killed after timeout. An error means
// psql could not be run at all.
func RunTest(ctx context.Context, env Env, target Target, name, script, outFile string, timeout time.Duration) (TestRun, error) {
	f, err := os.Create(outFile)
	if err != nil {
		return TestRun{}, err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.Psql, "-X", "-a", "-q", "-d", target.DB,
		"-v", "HIDE_TABLEAM=on", "-v", "HIDE_TOAST_COMPRESSION=on")
	cmd.Env = regressEnviron(env, target, name)
	cmd.Dir = env.BuildDir
	cmd.Stdin = strings.NewReader(script)
	// One file for both, as pg_regress's 2>&1: the order psql wrote in.
	cmd.Stdout, cmd.Stderr = f, f
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err = cmd.Run()
	r := TestRun{Elapsed: time.Since(start), Exit: cmd.ProcessState.ExitCode()}
	r.TimedOut = errors.Is(ctx.Err(), context.DeadlineExceeded)
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) && !r.TimedOut {
		return r, fmt.Errorf("run psql: %w", err)
	}
	r.Output, err = os.ReadFile(outFile)
	return r, err
}

// regressEnviron returns this process's environment with pg_regress's
// settings for a test (pg_regress.c initialize_environment and
// pg_regress_main.c psql_start_test), every other PG variable removed.
func regressEnviron(env Env, target Target, name string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "PG") || k == "LANGUAGE" || k == "LC_ALL" || k == "LC_MESSAGES" {
			continue
		}
		out = append(out, kv)
	}
	if env.Clock.TimeZone != "" {
		out = append(out, "PGTZ="+env.Clock.TimeZone, "PGDATESTYLE="+env.Clock.DateStyle)
	}
	return append(out,
		"PGAPPNAME=pg_regress/"+name,
		"PGHOST="+target.Host,
		"PGPORT="+strconv.Itoa(target.Port),
		"PGUSER="+target.User,
		"PGSSLMODE=disable",
		"LC_MESSAGES=C",
		"PGOPTIONS=-c intervalstyle=postgres_verbose",
		"PG_ABS_SRCDIR="+env.SrcDir,
		"PG_ABS_BUILDDIR="+env.BuildDir,
		"PG_LIBDIR="+env.LibDir,
		"PG_DLSUFFIX=.so",
	)
}

// Psql runs one statement through psql (not as a test: no echo) and
// returns its output; for setting up a server and probing one.
func Psql(ctx context.Context, env Env, target Target, sql string, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, env.Psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-d", target.DB, "-c", sql)
	cmd.Env = regressEnviron(env, target, "setup")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("psql -c %q: %w: %s", sql, err, strings.TrimSpace(string(out)))
	}
	return string(out), nil
}
