package chaos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"certa/internal/pgclient"
)

// The PostgreSQL engine's own faults: what reaches a node's server and
// not the node itself. They are of class "postgres" and run only over
// that engine (--engine postgres). The node must get over each by itself:
// no heal restarts it.
var postgresNemeses = []Nemesis{
	{"kill-postgres", "postgres", func(e *env) func() {
		// SIGKILL of a random node's postmaster: the node starts it again
		// and reconnects.
		i := e.rng.IntN(len(e.c.Nodes))
		if pid := postmasterPID(e.c.Nodes[i].DataDir); pid != 0 {
			e.fault(ignoreGone(syscall.Kill(pid, syscall.SIGKILL)))
		}
		return func() {}
	}},
	{"crash-backend", "postgres", func(e *env) func() {
		// SIGSEGV of one backend of a random node's server: the
		// postmaster ends all the others and starts again.
		i := e.rng.IntN(len(e.c.Nodes))
		if pid := databaseBackend(e.c.Nodes[i].DataDir); pid != 0 {
			e.fault(ignoreGone(syscall.Kill(pid, syscall.SIGSEGV)))
		}
		return func() {}
	}},
	{"vacuum-full", "postgres", func(e *env) func() {
		// A client of a random node runs VACUUM FULL of a workload's
		// table again and again: it must never hold the node's applier
		// for long (it is cancelled instead).
		i := e.rng.IntN(len(e.c.Nodes))
		table := vacuumTables[e.rng.IntN(len(vacuumTables))]
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		var n vacuums
		go func() {
			defer close(done)
			n = vacuumLoop(ctx, e.c.Nodes[i].PGAddr, table)
		}()
		return func() {
			cancel()
			<-done
			if e.log != nil {
				fmt.Fprintf(e.log, "chaos: VACUUM FULL %s on %s: %d done, %d cancelled (57014), %d failed otherwise %v\n",
					table, e.c.Nodes[i].ID, n.done, n.cancelled, n.failed, n.codes)
			}
		}
	}},
}

// vacuumTables are the workloads' tables.
var vacuumTables = []string{"bank", "lists", "acked", "registers", "keyed"}

func init() { Nemeses = append(Nemeses, postgresNemeses...) }

// forEngine reports whether scenario nem runs over the nodes' engine
// (cfg.NodeArgs' --engine, sqlite by default).
func (cfg Config) forEngine(nem Nemesis) bool {
	if nem.Class != "postgres" {
		return true
	}
	for k, a := range cfg.NodeArgs {
		if a == "--engine=postgres" || a == "--engine" && k+1 < len(cfg.NodeArgs) && cfg.NodeArgs[k+1] == "postgres" {
			return true
		}
	}
	return false
}

// vacuums counts vacuumLoop's commands by outcome.
type vacuums struct {
	done, cancelled, failed int
	codes                   map[string]int // of the failed ones
}

// vacuumLoop runs VACUUM FULL of table on the node at addr until ctx
// ends. Its failures are expected: cancelled (57014) when it blocks the
// applier, or the node restarting.
func vacuumLoop(ctx context.Context, addr, table string) (n vacuums) {
	n.codes = map[string]int{}
	var conn *pgclient.Conn
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for ctx.Err() == nil {
		if conn == nil {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			c, err := pgclient.Connect(cctx, addr)
			cancel()
			if err != nil {
				sleep(ctx, 100*time.Millisecond)
				continue
			}
			conn = c
		}
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := conn.Exec(sctx, "VACUUM FULL "+table)
		cancel()
		switch code := pgclient.SQLState(err); {
		case err == nil:
			n.done++
		case code == "57014" && ctx.Err() == nil:
			n.cancelled++
		case ctx.Err() == nil:
			n.failed++
			n.codes[code]++
		}
		if err != nil && pgclient.SQLState(err) == "" {
			conn.Close()
			conn = nil
		}
		sleep(ctx, 50*time.Millisecond)
	}
	return n
}

// postmasterPID returns the pid of the PostgreSQL server of the node
// with data directory dir, or 0.
func postmasterPID(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "pg", "postmaster.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	return pid
}

// databaseBackend returns the pid of a backend of the node's server that
// serves its database (the applier's, a pooled client connection...), or
// 0.
func databaseBackend(dir string) int {
	pm := postmasterPID(dir)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pm, pm))
	if err != nil {
		return 0
	}
	for _, f := range strings.Fields(string(b)) {
		pid, _ := strconv.Atoi(f)
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(cmd), " certa ") { // "postgres: <role> certa [local] ..."
			return pid
		}
	}
	return 0
}

// ignoreGone drops the error of signalling a process that has just
// ended.
func ignoreGone(err error) error {
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// lostBackend reports whether a statement failed with code because the
// PostgreSQL backend it ran on ended under it (the server crashed or was
// killed): a connection exception, or the server ending the backend. It
// did not commit.
func lostBackend(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02"
}
