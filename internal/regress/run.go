package regress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// Config is one run of the suite.
type Config struct {
	// Source is the regress directory: parallel_schedule, sql/, data/.
	Source string
	// Tests are the tests to run, in schedule order (Select); empty: the
	// whole schedule.
	Tests []string
	// Engines are certa's engines to run the tests through, each in a
	// fresh cluster: sqlite, postgres.
	Engines []string
	// Certa is the certa binary.
	Certa string
	// Out is where the outputs and the report go; a run empties it first.
	Out string
	// Psql is the psql program. Default: psql on PATH.
	Psql string
	// TestTimeout bounds one test: psql is killed then. Default 120 s.
	TestTimeout time.Duration
	// LagBound bounds how long the other nodes may take to catch up with
	// node 1, and to agree on checksums, after a test. Default 60 s.
	LagBound time.Duration
	// ChecksumEvery: the nodes' checksums are compared after every this
	// many tests, and after the last. Default 1.
	ChecksumEvery int
	// MaxDuration bounds the tests of one target (the plain PostgreSQL,
	// each engine): the tests not started by then are not run. Default
	// 40 min.
	MaxDuration time.Duration
	// AsClient also runs the tests through a plain PostgreSQL as a client
	// that is not a superuser (Report.Client), and compares certa's
	// outputs that differ with those: a test identical there differs
	// only where PostgreSQL needs a superuser, and the diff with it shows
	// what else differs without what a superuser's statements changed.
	AsClient bool
	// Progress receives a line per test. Default: discarded.
	Progress io.Writer
}

// Engines are the engines a run may use.
var Engines = []string{"sqlite", "postgres"}

// withDefaults returns c with its defaults filled in.
func (c Config) withDefaults() Config {
	if c.Psql == "" {
		c.Psql, _ = exec.LookPath("psql")
	}
	if c.TestTimeout == 0 {
		c.TestTimeout = 120 * time.Second
	}
	if c.LagBound == 0 {
		c.LagBound = 60 * time.Second
	}
	if c.ChecksumEvery == 0 {
		c.ChecksumEvery = 1
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 40 * time.Minute
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// Validate reports what is wrong with c (after its defaults).
func (c Config) Validate() error {
	switch {
	case c.Source == "":
		return errors.New("no regress source directory")
	case c.Certa == "" && len(c.Engines) > 0:
		return errors.New("no certa binary")
	case c.Out == "" || !filepath.IsAbs(c.Out):
		return fmt.Errorf("output directory %q is not an absolute path", c.Out)
	case c.Psql == "":
		return errors.New("psql not found on PATH: install the postgresql-client package (.ci/deps does)")
	case c.TestTimeout < 0 || c.LagBound < 0 || c.ChecksumEvery < 0 || c.MaxDuration < 0:
		return errors.New("negative timeout, bound or interval")
	}
	for _, e := range c.Engines {
		if !slices.Contains(Engines, e) {
			return fmt.Errorf("unknown engine %q (sqlite or postgres)", e)
		}
	}
	if _, err := os.Stat(filepath.Join(c.Source, "parallel_schedule")); err != nil {
		return fmt.Errorf("no regression suite in %s: %w", c.Source, err)
	}
	return nil
}

// Run runs the tests through a plain PostgreSQL, then through a fresh
// cluster of each engine, and compares. It returns what it saw; an error
// only when it could not start (a server, a cluster) or was cancelled.
// Every server and cluster it started is stopped when it returns.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	schedule, err := ReadSchedule(cfg.Source)
	if err != nil {
		return nil, err
	}
	tests := schedule
	if len(cfg.Tests) > 0 {
		if tests, err = Select(schedule, cfg.Tests); err != nil {
			return nil, err
		}
	}
	if err := prepareOut(cfg.Out); err != nil {
		return nil, err
	}
	env := Env{Psql: cfg.Psql, SrcDir: cfg.Source, BuildDir: filepath.Join(cfg.Out, "work"), LibDir: cfg.Source}
	scripts := map[string]string{}
	for _, t := range tests {
		b, err := os.ReadFile(filepath.Join(cfg.Source, "sql", t+".sql"))
		if err != nil {
			return nil, err
		}
		scripts[t] = Script(string(b), env.SrcDir, env.BuildDir)
	}
	r := &Report{Out: cfg.Out, Tests: tests}
	clocks := []Clock{regressClock}
	if len(cfg.Engines) > 0 {
		clocks = nil
		for _, e := range cfg.Engines {
			if !slices.Contains(clocks, clockFor(e)) {
				clocks = append(clocks, clockFor(e))
			}
		}
	}
	for _, clock := range clocks {
		env.Clock = clock
		p := PlainRuns{Clock: clock}
		p.Plain, err = runPlain(ctx, cfg, env, tests, scripts, true)
		if err == nil && cfg.AsClient {
			var client PlainReport
			client, err = runPlain(ctx, cfg, env, tests, scripts, false)
			p.Client = &client
		}
		r.Plains = append(r.Plains, p)
		if err != nil {
			return r, err
		}
	}
	for _, engine := range cfg.Engines {
		env.Clock = clockFor(engine)
		i := slices.IndexFunc(r.Plains, func(p PlainRuns) bool { return p.Clock == env.Clock })
		er, err := runEngine(ctx, cfg, env, engine, tests, scripts, &r.Plains[i])
		if er != nil {
			r.Engines = append(r.Engines, *er)
		}
		if err != nil {
			return r, err
		}
	}
	return r, nil
}

// plainRole is the role the plain PostgreSQL's runs connect as: the one
// certa's clients act as on the PostgreSQL engine (certa_client), so that
// the owners and CURRENT_ROLE the outputs name are alike.
const plainRole = "certa_client"

// runPlain runs the tests through a plain PostgreSQL, as a superuser or
// as a client that is not one.
func runPlain(ctx context.Context, cfg Config, env Env, tests []string, scripts map[string]string, superuser bool) (PlainReport, error) {
	dir := plainDir(cfg.Out, env.Clock, superuser)
	results := filepath.Join(dir, "results")
	if err := mkdirs(0o711, dir, results); err != nil {
		return PlainReport{}, err
	}
	if err := cleanWork(env); err != nil {
		return PlainReport{}, err
	}
	port, err := freePort()
	if err != nil {
		return PlainReport{}, err
	}
	pg, err := StartPlainPG(ctx, env, filepath.Join(dir, "pgdata"), port, plainRole, "certa", superuser)
	if err != nil {
		return PlainReport{}, err
	}
	defer pg.Stop()
	label := "plain"
	if !superuser {
		label = "client"
	}
	fmt.Fprintf(cfg.Progress, "%s PostgreSQL: pid %d, port %d, log %s\n", label, pg.PID(), port, pg.Log())
	pr := PlainReport{Runs: map[string]TestRun{}}
	start := time.Now()
	for _, t := range tests {
		if err := ctx.Err(); err != nil {
			pr.Stopped, pr.Elapsed = "cancelled", time.Since(start)
			return pr, err
		}
		if time.Since(start) > cfg.MaxDuration {
			pr.Stopped = fmt.Sprintf("stopped after %s (bound %s) before %s", time.Since(start).Round(time.Second), cfg.MaxDuration, t)
			break
		}
		run, err := RunTest(ctx, env, pg.Target, t, scripts[t], filepath.Join(results, t+".out"), cfg.TestTimeout)
		if err != nil {
			return pr, err
		}
		pr.Runs[t] = run
		fmt.Fprintf(cfg.Progress, "%-9s %-24s exit %d%s  %s\n", label, t, run.Exit, timedOut(run), run.Elapsed.Round(time.Millisecond))
	}
	pr.Elapsed = time.Since(start)
	return pr, nil
}

func timedOut(r TestRun) string {
	if r.TimedOut {
		return " TIMEOUT"
	}
	return ""
}

// runEngine runs the tests through node 1 of a fresh cluster of engine
// and compares each output with the plain servers'.
func runEngine(ctx context.Context, cfg Config, env Env, engine string, tests []string, scripts map[string]string, plain *PlainRuns) (*EngineReport, error) {
	dir := filepath.Join(cfg.Out, engine)
	results, diffs, clusterDir := filepath.Join(dir, "results"), filepath.Join(dir, "diffs"), filepath.Join(dir, "cluster")
	if err := mkdirs(0o711, dir, results, diffs, clusterDir); err != nil {
		return nil, err
	}
	if err := cleanWork(env); err != nil {
		return nil, err
	}
	c, err := StartCluster(cfg.Certa, clusterDir, engine, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	defer c.Stop()
	fmt.Fprintf(cfg.Progress, "%s cluster: node pids %v, node 1 at %s:%d, logs in %s\n", engine, c.PIDs(), c.Target().Host, c.Target().Port, clusterDir)
	er := &EngineReport{Engine: engine}
	start := time.Now()
	stop := func(i int, why string) {
		er.Stopped, er.Elapsed = why, time.Since(start)
		for _, t := range tests[i:] {
			er.Results = append(er.Results, TestResult{Test: t, Class: NotRun})
		}
	}
	for i, t := range tests {
		if err := ctx.Err(); err != nil {
			stop(i, "cancelled")
			return er, err
		}
		if time.Since(start) > cfg.MaxDuration {
			stop(i, fmt.Sprintf("stopped after %s (bound %s) before %s", time.Since(start).Round(time.Second), cfg.MaxDuration, t))
			break
		}
		res := runOne(ctx, cfg, env, c, t, scripts[t], results, diffs, plain)
		if ctx.Err() != nil {
			stop(i, "cancelled")
			return er, ctx.Err()
		}
		last := i == len(tests)-1
		res.Problems = c.Check(ctx, cfg.LagBound, last || (i+1)%cfg.ChecksumEvery == 0, last)
		why := fatal(ctx, env, c, &res)
		for k := range res.Problems {
			res.Problems[k].Test = t
		}
		er.Results = append(er.Results, res)
		fmt.Fprintf(cfg.Progress, "%-9s %-24s %-9s %s%s\n", engine, t, res.Class, res.Elapsed.Round(time.Millisecond), problemsNote(res.Problems))
		if why != "" {
			stop(i+1, why)
			break
		}
	}
	er.Elapsed = time.Since(start)
	return er, nil
}

// runOne runs test t through the cluster's node 1 and compares.
func runOne(ctx context.Context, cfg Config, env Env, c *Cluster, t, script, results, diffs string, plain *PlainRuns) TestResult {
	res := TestResult{Test: t, AsClient: NotRun}
	outFile := filepath.Join(results, t+".out")
	run, err := RunTest(ctx, env, c.Target(), t, script, outFile, cfg.TestTimeout)
	res.Elapsed, res.Exit = run.Elapsed, run.Exit
	want, ran := plain.Plain.Runs[t]
	switch {
	case err != nil:
		res.Class, res.Note = Error, err.Error()
		return res
	case !ran:
		res.Class, res.Note = Error, "not run on the plain PostgreSQL"
		return res
	}
	res.Class, res.Diff = Compare(want.Output, run.Output)
	switch {
	case run.TimedOut:
		res.Class, res.Note = Timeout, fmt.Sprintf("psql killed after %s", cfg.TestTimeout)
	case want.TimedOut || want.Exit != 0:
		res.Class, res.Note = Error, fmt.Sprintf("psql exited %d on the plain PostgreSQL", want.Exit)
	case run.Exit != 0:
		res.Class, res.Note = Error, fmt.Sprintf("psql exited %d (the plain PostgreSQL's: 0): lost its connection?", run.Exit)
	}
	if res.Class == Identical {
		return res
	}
	diff := writeDiff(filepath.Join(plainDir(cfg.Out, env.Clock, true), "results", t+".out"), outFile, filepath.Join(diffs, t+".diff"))
	res.Causes = DiffCauses(diff)
	res.Silent = countCause(writeUnorderedDiff(filepath.Join(plainDir(cfg.Out, env.Clock, true), "results", t+".out"), outFile,
		filepath.Join(diffs, t+".unordered.diff")), CauseSilent)
	if client, ok := plain.Client.run(t); ok && !run.TimedOut && run.Exit == 0 && !client.TimedOut && client.Exit == 0 {
		res.AsClient, res.ClientDiff = Compare(client.Output, run.Output)
		if res.AsClient == Identical {
			res.Silent = 0
		} else {
			// certa's client is more than PostgreSQL's non-superuser
			// (a member of the roles it makes): a hunk silent against
			// one PostgreSQL but not the other is no wrong result, so the
			// fewer silent hunks count.
			writeDiff(filepath.Join(plainDir(cfg.Out, env.Clock, false), "results", t+".out"), outFile, filepath.Join(diffs, t+".client.diff"))
			cdiff := writeUnorderedDiff(filepath.Join(plainDir(cfg.Out, env.Clock, false), "results", t+".out"), outFile,
				filepath.Join(diffs, t+".client.unordered.diff"))
			res.Silent = min(res.Silent, countCause(cdiff, CauseSilent))
		}
	}
	return res
}

// fatal says why the engine's run cannot go on after res, or "": a node
// crashed, or the test timed out and node 1 no longer answers (a hung
// cluster is reported, not waited on).
func fatal(ctx context.Context, env Env, c *Cluster, res *TestResult) string {
	for _, p := range res.Problems {
		if p.Kind == "crash" {
			return "a node crashed during " + res.Test
		}
	}
	if res.Class == Timeout && ctx.Err() == nil {
		if err := c.Alive(ctx, env, 30*time.Second); err != nil && ctx.Err() == nil {
			res.Problems = append(res.Problems, Problem{Kind: "hung", Detail: err.Error()})
			return fmt.Sprintf("the cluster hung after %s timed out: %v", res.Test, err)
		}
	}
	return ""
}

func problemsNote(ps []Problem) string {
	if len(ps) == 0 {
		return ""
	}
	return fmt.Sprintf("  PROBLEMS: %d (%s: %s)", len(ps), ps[0].Kind, truncate(ps[0].Detail, 200))
}
