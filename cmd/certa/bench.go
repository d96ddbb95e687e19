package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"certa/bench"
	"certa/bench/plot"
)

// listFlag is a flag that may be given more than once, or as a
// comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// runBench runs every workload against every target at every client
// count, then prints a table and the first target's ratios to the others.
func runBench(args []string) error {
	fs := flag.NewFlagSet("certa bench", flag.ExitOnError)
	var targetSpecs listFlag
	fs.Var(&targetSpecs, "target", "a system to measure, repeatable; the first is compared with the others. A preset (certa, certa-pg, galera, mariadb, postgres, sqlite: where `certa up`, `certa up --engine postgres --port-base 6433` and bench/peers start them) or NAME=KIND:ADDR[,ADDR...], KIND one of certa, postgres, mysql, sqlite (default certa, then sqlite)")
	workloads := fs.String("workload", "oltp-write", "workloads, comma-separated: oltp-write, oltp-read-write, point-select, tpcc")
	clientList := fs.String("clients", "8", "client counts, comma-separated (1 to 1024); clients are spread over the target's nodes")
	duration := fs.Duration("duration", 10*time.Second, "measured time of each run")
	warmup := fs.Duration("warmup", 2*time.Second, "unmeasured warm-up before each run")
	consistency := fs.String("consistency", bench.ConsistencyLocal, "read consistency of every session: local, or sync (certa.consistency; Galera's wsrep_sync_wait=1)")
	isolation := fs.String("isolation", "", "transaction isolation level every session asks for: serializable, repeatable read or read committed (default: each system's own); several, comma-separated, run each target at each level, named NAME@level")
	protocol := fs.String("protocol", string(bench.ProtocolPrepared), "how clients send statements to servers: prepared (once per connection, then only arguments: sysbench's, pgx's and JDBC's default) or simple (text with the arguments written in, as psql)")
	rows := fs.Int("rows", 10000, "oltp workloads: rows in sbtest1")
	warehouses := fs.Int("warehouses", 1, "tpcc: warehouses")
	mixes := fs.String("tpcc-mix", "standard", "tpcc: mixes, comma-separated: standard, or read/write splits 100/0, 80/20, 50/50")
	scale := fs.Float64("tpcc-scale", 1, "tpcc: cardinalities relative to TPC-C's (items, customers, orders per district), for quick runs")
	setupTimeout := fs.Duration("setup-timeout", 30*time.Minute, "longest a workload's tables may take to load")
	csvFile := fs.String("csv", "", "also write the results as CSV to this file")
	jsonFile := fs.String("json", "", "also write the results as JSON to this file")
	plotDir := fs.String("plot", "", "also draw PNG charts (throughput against clients, latency distribution) into this directory")
	fs.Parse(args)
	if len(targetSpecs) == 0 {
		targetSpecs = listFlag{"certa", "sqlite"}
	}
	var clients []int
	for _, s := range strings.Split(*clientList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("--clients: %q is not a count from 1 to 1024", s)
		}
		clients = append(clients, n)
	}
	var loads []bench.Workload
	for _, name := range strings.Split(*workloads, ",") {
		switch name = strings.TrimSpace(name); {
		case slices.Contains(bench.OLTPKinds, name):
			loads = append(loads, bench.OLTP{Kind: name, Rows: *rows})
		case name == "tpcc":
			for _, mix := range strings.Split(*mixes, ",") {
				w := bench.TPCC{Warehouses: *warehouses, Mix: strings.TrimSpace(mix), Scale: *scale}
				if err := w.Validate(); err != nil {
					return err
				}
				loads = append(loads, w)
			}
		default:
			return fmt.Errorf("--workload: unknown workload %q (oltp-write, oltp-read-write, point-select, tpcc)", name)
		}
	}
	if *rows < 200 {
		return errors.New("--rows must be at least 200")
	}
	cfg := bench.Config{Duration: *duration, Warmup: *warmup, Consistency: *consistency}
	if err := cfg.Validate(); err != nil {
		return err
	}
	var targets []bench.Target
	defer func() {
		for _, t := range targets {
			t.Close()
		}
	}()
	levels := strings.Split(*isolation, ",")
	for _, spec := range targetSpecs {
		t, err := bench.ParseTarget(spec, bench.Protocol(*protocol))
		if err != nil {
			return err
		}
		if len(levels) == 1 {
			targets = append(targets, t)
			if err := bench.SetIsolation(t, levels[0]); err != nil {
				return err
			}
			continue
		}
		for _, level := range levels {
			v, ok, err := bench.AtIsolation(t, strings.TrimSpace(level))
			if err != nil {
				return err
			}
			targets = append(targets, v)
			if !ok {
				break // one run of a target without levels
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Printf("%s measured after %s warm-up per run, consistency %s", cfg.Duration, cfg.Warmup, cfg.Consistency)
	if *isolation != "" {
		fmt.Printf(", isolation %s", *isolation)
	}
	fmt.Println()
	for _, t := range targets {
		fmt.Printf("%-8s %d node(s); durability: %s\n", t.Name(), t.Nodes(), t.Durability())
	}
	var results []*bench.Result
	for _, w := range loads {
		for _, t := range targets {
			fmt.Fprintf(os.Stderr, "%s: loading %s...\n", t.Name(), w.Name())
			setupCtx, cancel := context.WithTimeout(ctx, *setupTimeout)
			start := time.Now()
			err := w.Setup(setupCtx, t)
			cancel()
			if err != nil {
				return fmt.Errorf("%s: set up %s: %w", t.Name(), w.Name(), err)
			}
			fmt.Fprintf(os.Stderr, "%s: loaded %s in %.1fs\n", t.Name(), w.Name(), time.Since(start).Seconds())
			for _, n := range clients {
				c := cfg
				c.Clients = n
				res, err := bench.Run(ctx, t, w, c)
				if err != nil {
					return fmt.Errorf("%s %s %d clients: %w", t.Name(), w.Name(), n, err)
				}
				fmt.Fprintf(os.Stderr, "%s %s %d clients: %.0f txn/s, p99 %.2f ms, abort rate %.2f%%\n",
					t.Name(), w.Name(), n, res.TPS, res.Latency.P99, 100*res.AbortRate)
				for _, r := range res.AbortReasons[:min(3, len(res.AbortReasons))] {
					fmt.Fprintf(os.Stderr, "  %d aborts: %s\n", r.Count, r.Message)
				}
				results = append(results, res)
			}
		}
	}
	if err := bench.WriteTable(os.Stdout, results); err != nil {
		return err
	}
	write := func(file string, f func(*os.File) error) error {
		if file == "" {
			return nil
		}
		out, err := os.Create(file)
		if err != nil {
			return err
		}
		if err := f(out); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	}
	if err := write(*csvFile, func(f *os.File) error { return bench.WriteCSV(f, results) }); err != nil {
		return err
	}
	if err := write(*jsonFile, func(f *os.File) error { return bench.WriteJSON(f, results) }); err != nil {
		return err
	}
	if *plotDir != "" {
		files, err := plot.Write(*plotDir, results)
		if err != nil {
			return err
		}
		fmt.Printf("charts: %s\n", strings.Join(files, " "))
	}
	return nil
}
