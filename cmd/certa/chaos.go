package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"certa/internal/chaos"
)

// runChaos runs the fault-injection suite against clusters of this
// executable's nodes and prints the result table; it fails if any scenario
// found an anomaly.
func runChaos(args []string) error {
	fs := flag.NewFlagSet("certa chaos", flag.ExitOnError)
	nodes := fs.Int("nodes", 3, "nodes per cluster")
	long := fs.Bool("long", false, "soak form: one scenario per fault class ("+classNames()+"), each mixing the faults of its class, for --duration (default 20m)")
	duration := fs.Duration("duration", 0, "load and faults per scenario (default 60s: the short form; 20m with --long)")
	clients := fs.Int("clients", 3, "clients per workload")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run (default all: "+scenarioNames()+")")
	dir := fs.String("dir", "", "scratch directory for the clusters (default a temporary one)")
	seed := fs.Uint64("seed", uint64(time.Now().UnixNano()), "random seed (printed, to replay a run's fault schedule)")
	eng := fs.String("engine", "sqlite", "the nodes' database engine: sqlite, or postgres")
	fs.Parse(args)
	if *duration == 0 {
		*duration = time.Minute
		if *long {
			*duration = 20 * time.Minute
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if *dir == "" {
		if *dir, err = os.MkdirTemp("", "certa-chaos-"); err != nil {
			return err
		}
		defer os.RemoveAll(*dir)
	}
	if *eng == "postgres" && os.Geteuid() == 0 {
		// The nodes run their servers as the postgres user, which must get
		// through to the data directories.
		if err := os.Chmod(*dir, 0o711); err != nil {
			return err
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := chaos.Config{Binary: self, Dir: *dir, Nodes: *nodes, Duration: *duration, Clients: *clients, Seed: *seed, Long: *long,
		NodeArgs: []string{"--engine", *eng, "--commit-timeout", "6s", "--lock-timeout", "1s"}}
	if *scenarios != "" {
		cfg.Scenarios = strings.Split(*scenarios, ",")
	}
	fmt.Printf("certa chaos: seed %d\n", *seed)
	rows := chaos.Run(ctx, cfg)
	chaos.PrintTable(os.Stdout, rows)
	return chaos.Verdict(rows)
}

func classNames() string {
	var names []string
	for _, n := range chaos.Classes() {
		names = append(names, n.Name)
	}
	return strings.Join(names, ",")
}

func scenarioNames() string {
	var names []string
	for _, n := range chaos.Nemeses {
		names = append(names, n.Name)
	}
	return strings.Join(names, ",")
}
