package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"certa/internal/localcluster"
	"certa/internal/netfault"
	"certa/internal/pgclient"
)

// Config describes a harness run.
type Config struct {
	Binary    string        // the certa executable
	Dir       string        // scratch space for the clusters
	Nodes     int           // cluster size (default 3)
	Duration  time.Duration // load and faults per scenario (default 60s)
	Clients   int           // clients per workload (default 3)
	Scenarios []string      // scenario names to run (default all)
	Long      bool          // run one mixed scenario per fault class (Classes) instead of Nemeses
	NodeArgs  []string      // extra flags for every node
	Seed      uint64
	Log       io.Writer // progress (default os.Stderr)
}

// Row is one line of the result table.
type Row struct {
	Scenario, Workload string
	Report
	Faults    int           // faults the nemesis injected
	Converged time.Duration // from healing to equal checksums
	Err       error         // the scenario could not be run or checked
}

// Problem reports whether the row shows a problem.
func (r Row) Problem() bool { return r.Err != nil || len(r.Anomalies) > 0 }

// Run runs every scenario and returns the table.
func Run(ctx context.Context, cfg Config) []Row {
	if cfg.Nodes == 0 {
		cfg.Nodes = 3
	}
	if cfg.Duration == 0 {
		cfg.Duration = time.Minute
	}
	if cfg.Clients == 0 {
		cfg.Clients = 3
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	scenarios := Nemeses
	if cfg.Long {
		scenarios = Classes()
	}
	var rows []Row
	for k, nem := range scenarios {
		if len(cfg.Scenarios) > 0 && !contains(cfg.Scenarios, nem.Name) {
			continue
		}
		if !cfg.forEngine(nem) {
			if len(cfg.Scenarios) > 0 {
				fmt.Fprintf(cfg.Log, "chaos: scenario %s skipped: it runs over the PostgreSQL engine only (--engine postgres)\n", nem.Name)
			}
			continue
		}
		fmt.Fprintf(cfg.Log, "chaos: scenario %s, %d nodes, %s\n", nem.Name, cfg.Nodes, cfg.Duration)
		rows = append(rows, runScenario(ctx, cfg, nem, cfg.Seed+uint64(k)*1_000_003)...)
		if ctx.Err() != nil {
			break
		}
	}
	return rows
}

func runScenario(ctx context.Context, cfg Config, nem Nemesis, seed uint64) []Row {
	workloads := []Workload{newBank(), newAppends(), newSerializableAppends(), newInserts(), newRegister(), newKeyed()}
	fail := func(err error) []Row {
		return []Row{{Scenario: nem.Name, Workload: "-", Err: err}}
	}
	e, cleanup, err := startCluster(cfg, nem, seed)
	if err != nil {
		return fail(err)
	}
	defer cleanup()
	c := e.c
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.PGAddr)
	}
	for _, w := range workloads {
		err := localcluster.Poll(30*time.Second, func() error {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return w.Setup(sctx, addrs[0])
		})
		if err != nil {
			return fail(fmt.Errorf("set up %s: %w", w.Name(), err))
		}
	}
	// Every node applies the setup before the clients start: one still
	// behind answers 42P01 for a table made through another (a local
	// read of an older state), which a workload's check counts as wrong.
	for _, addr := range addrs {
		err := localcluster.Poll(30*time.Second, func() error {
			sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return withConn(sctx, addr, func(conn *pgclient.Conn) error {
				if _, err := conn.Exec(sctx, "SET certa.consistency = sync"); err != nil {
					return err
				}
				_, err := conn.Exec(sctx, "SELECT 1")
				return err
			})
		})
		if err != nil {
			return fail(fmt.Errorf("wait for %s to apply the setup: %w", addr, err))
		}
	}

	runCtx, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	for k, w := range workloads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClients(runCtx, w, addrs, cfg.Clients, seed+uint64(k)*104729)
		}()
	}
	faults := nem.run(runCtx, e)
	if e.err != nil {
		stop()
		wg.Wait()
		return fail(fmt.Errorf("the harness failed to inject or heal a fault: %w", e.err))
	}
	wg.Wait()

	healed := time.Now()
	if err := heal(c); err != nil {
		return fail(err)
	}
	convErr := localcluster.Poll(2*time.Minute, c.Converged)
	converged := time.Since(healed)
	if convErr != nil {
		saveGoroutines(cfg, nem, c)
	}
	var rows []Row
	for _, w := range workloads {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		rep := w.Check(cctx, addrs)
		cancel()
		row := Row{Scenario: nem.Name, Workload: w.Name(), Report: rep, Faults: faults, Converged: converged}
		if convErr != nil {
			row.Err = fmt.Errorf("nodes did not converge within 2m: %w", convErr)
		}
		rows = append(rows, row)
	}
	// Nodes never stop by themselves: a node that cannot go on safely
	// stops (fails closed), which the suite still reports.
	for _, x := range c.Exits() {
		rows[0].Anomalies = append(rows[0].Anomalies, fmt.Sprintf("node %s exited by itself: %v", x.Node, x.Err))
	}
	// Signs of divergence are counted in the logs, which outlive restarts.
	for _, n := range c.Nodes {
		if log, err := os.ReadFile(n.Log); err == nil {
			for _, msg := range localcluster.DivergenceLogs {
				if k := bytes.Count(log, []byte(msg)); k > 0 {
					rows[0].Anomalies = append(rows[0].Anomalies, fmt.Sprintf("node %s logged %q %d times", n.ID, msg, k))
				}
			}
		}
	}
	if anyFailed(rows) {
		for i, n := range c.Nodes {
			if log, err := os.ReadFile(n.Log); err == nil {
				if first := beforeDivergence(log, 60); first != "" {
					fmt.Fprintf(cfg.Log, "---- log of %s up to its first sign of divergence ----\n%s\n", n.ID, first)
				}
			}
			fmt.Fprintf(cfg.Log, "---- log of %s (tail) ----\n%s\n", n.ID, c.LogTail(i, 3000))
		}
	}
	return rows
}

// beforeDivergence returns the first line of log that is a sign of
// divergence with the n lines before it, or "": where a divergence began
// matters more than the tail, which shows only its consequences.
func beforeDivergence(log []byte, n int) string {
	lines := strings.Split(string(log), "\n")
	for i, line := range lines {
		for _, msg := range localcluster.DivergenceLogs {
			if strings.Contains(line, msg) {
				return strings.Join(lines[max(0, i-n):i+1], "\n")
			}
		}
	}
	return ""
}

// saveGoroutines writes every node's goroutine dump and a listing of its
// files next to its log.
func saveGoroutines(cfg Config, nem Nemesis, c *localcluster.Cluster) {
	for i, n := range c.Nodes {
		if dump, err := c.Goroutines(i); err == nil {
			path := filepath.Join(cfg.Dir, nem.Name, n.ID+".goroutines.txt")
			if os.WriteFile(path, dump, 0o644) == nil {
				fmt.Fprintf(cfg.Log, "chaos: %s's goroutines are in %s\n", n.ID, path)
			}
		}
		path := filepath.Join(cfg.Dir, nem.Name, n.ID+".files.txt")
		if os.WriteFile(path, []byte(listFiles(n.DataDir)), 0o644) == nil {
			fmt.Fprintf(cfg.Log, "chaos: %s's files are listed in %s\n", n.ID, path)
		}
	}
}

// listFiles lists the files under dir with their sizes, and the space
// left on its file system.
func listFiles(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				fmt.Fprintf(&b, "%12d %s\n", info.Size(), path)
			}
		}
		return nil
	})
	var st syscall.Statfs_t
	if syscall.Statfs(dir, &st) == nil {
		fmt.Fprintf(&b, "free: %d bytes of %d\n", st.Bavail*uint64(st.Bsize), st.Blocks*uint64(st.Bsize))
	}
	return b.String()
}

// startCluster starts a cluster for nem in its own network (and, for the
// disk class, on tmpfs data directories) and waits until it is ready.
// cleanup stops and removes all of it.
func startCluster(cfg Config, nem Nemesis, seed uint64) (e *env, cleanup func(), err error) {
	dir := filepath.Join(cfg.Dir, nem.Name)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, err
	}
	var undo []func()
	undoAll := func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	cleanup = undoAll
	defer func() {
		if err != nil {
			undoAll() // cleanup, a named result, is nil by now
		}
	}()
	// The undo steps hold their own reference: returning an error sets e
	// to nil before they run.
	e = &env{rng: rand.New(rand.NewPCG(seed, 42)), log: cfg.Log}
	env := e
	if e.net, err = netfault.New(cfg.Nodes); err != nil {
		return nil, nil, err
	}
	undo = append(undo, func() { env.net.Close() })
	if nem.Class == "disk" {
		if e.disks, err = mountDisks(dir, cfg.Nodes); err != nil {
			return nil, nil, err
		}
		undo = append(undo, env.disks.unmount)
	}
	e.c, err = localcluster.Start(localcluster.Config{Binary: cfg.Binary, Dir: dir, Args: cfg.NodeArgs, Net: e.net, PeerTLS: true}, cfg.Nodes)
	if err != nil {
		return nil, nil, err
	}
	undo = append(undo, env.c.Stop)
	if err := localcluster.Poll(time.Minute, e.c.Ready); err != nil {
		return nil, nil, fmt.Errorf("cluster not ready: %w", err)
	}
	return e, cleanup, nil
}

// heal makes every node run again, resumed, and waits until the cluster
// is ready.
func heal(c *localcluster.Cluster) error {
	for i, n := range c.Nodes {
		c.Resume(i)
		if !n.Running() {
			if err := c.Restart(i); err != nil {
				return err
			}
		}
	}
	if err := localcluster.Poll(2*time.Minute, c.Ready); err != nil {
		return fmt.Errorf("cluster not ready after healing: %w", err)
	}
	return nil
}

func anyFailed(rows []Row) bool {
	for _, r := range rows {
		if r.Problem() {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// PrintTable writes rows as a table, then each anomaly in full.
func PrintTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tfaults\tworkload\tok\tfailed\tindeterminate\tanomalies\tconverged in\t")
	for _, r := range rows {
		anomalies := fmt.Sprint(len(r.Anomalies))
		if r.Err != nil {
			anomalies = "ERROR"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t\n", r.Scenario, r.Faults, r.Workload, r.OK, r.Failed, r.Indeterminate,
			anomalies, r.Converged.Round(100*time.Millisecond))
	}
	tw.Flush()
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(w, "%s/%s: %v\n", r.Scenario, r.Workload, r.Err)
		}
		for _, a := range r.Anomalies {
			fmt.Fprintf(w, "%s/%s: %s\n", r.Scenario, r.Workload, strings.TrimSpace(a))
		}
	}
}

// ErrAnomalies is returned when some scenario found a problem.
var ErrAnomalies = errors.New("chaos: anomalies or errors found")

// Verdict returns ErrAnomalies if any row failed.
func Verdict(rows []Row) error {
	if anyFailed(rows) {
		return ErrAnomalies
	}
	return nil
}
