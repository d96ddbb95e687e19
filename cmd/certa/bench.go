package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"certa/bench"
)

// runBench measures a cluster and, in the same invocation, the same
// workload on a local SQLite file, and prints their ratio.
func runBench(args []string) error {
	fs := flag.NewFlagSet("certa bench", flag.ExitOnError)
	nodes := fs.String("nodes", "127.0.0.1:5433,127.0.0.1:5434,127.0.0.1:5435", "PostgreSQL addresses of the nodes, comma-separated; clients are spread round-robin")
	clients := fs.Int("clients", 8, "concurrent clients")
	duration := fs.Duration("duration", 10*time.Second, "measured duration of each run")
	warmup := fs.Duration("warmup", 2*time.Second, "unmeasured warm-up before each run")
	rows := fs.Int("rows", 10000, "rows preloaded into the benchmark table")
	baseline := fs.Bool("baseline", true, "also run the workload on a local SQLite file (WAL, synchronous=FULL) and print the ratio")
	fs.Parse(args)
	if *clients < 1 || *duration <= 0 {
		return errors.New("--clients must be at least 1 and --duration positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := bench.Config{Clients: *clients, Duration: *duration, Warmup: *warmup, Rows: *rows}

	fmt.Printf("workload: autocommit single-row UPDATE and INSERT (alternating), %d clients, %s after %s warm-up, %d preloaded rows\n",
		cfg.Clients, cfg.Duration, cfg.Warmup, cfg.Rows)
	cluster := bench.Cluster{Addrs: strings.Split(*nodes, ",")}
	if err := bench.Setup(ctx, cluster, cfg); err != nil {
		return fmt.Errorf("set up cluster: %w", err)
	}
	res, err := bench.Run(ctx, cluster, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("certa     (%d nodes):                       %s\n", len(cluster.Addrs), res)
	if !*baseline {
		return nil
	}
	dir, err := os.MkdirTemp("", "certa-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	file, err := bench.OpenSQLiteFile(filepath.Join(dir, "baseline.db"))
	if err != nil {
		return err
	}
	defer file.Close()
	if err := bench.Setup(ctx, file, cfg); err != nil {
		return fmt.Errorf("set up baseline: %w", err)
	}
	base, err := bench.Run(ctx, file, cfg)
	if err != nil {
		return err
	}
	fmt.Printf("baseline  (local SQLite, WAL, sync=FULL):   %s\n", base)
	if base.CommitsPerSec() > 0 {
		fmt.Printf("ratio certa/baseline commits/s: %.2f\n", res.CommitsPerSec()/base.CommitsPerSec())
	}
	return nil
}
