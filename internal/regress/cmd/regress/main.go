// Command regress runs PostgreSQL 15's regression suite through node 1 of
// a fresh 3-node certa cluster of each engine and through a plain
// PostgreSQL, compares the outputs test by test and checks the cluster
// after each test (package certa/internal/regress). It writes the outputs
// and summary.txt to --out and prints the summary.
//
//	go run ./internal/regress/cmd/regress --source "$(.ci/pgregress-source)"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"certa/internal/regress"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "regress:", err)
		os.Exit(1)
	}
}

func run() error {
	var cfg regress.Config
	var engine, tests, certa string
	flag.StringVar(&cfg.Source, "source", "", "PostgreSQL's src/test/regress directory (.ci/pgregress-source prints it)")
	flag.StringVar(&engine, "engine", "both", "certa engine to run the tests through: sqlite, postgres or both")
	flag.StringVar(&tests, "tests", "", "comma-separated tests to run, with the tests they need (test_setup, create_index and the dependencies parallel_schedule documents), in schedule order (default: the whole schedule)")
	flag.DurationVar(&cfg.TestTimeout, "timeout-per-test", 120*time.Second, "psql is killed when a test runs longer")
	flag.StringVar(&cfg.Out, "out", "/tmp/certa-regress", "directory for the outputs and the report (emptied first)")
	flag.StringVar(&certa, "certa", "", "certa binary to run (default: built from this module into --out)")
	flag.DurationVar(&cfg.LagBound, "lag-bound", 60*time.Second, "after each test, how long the other nodes may take to catch up with node 1 and agree on checksums")
	flag.IntVar(&cfg.ChecksumEvery, "checksum-every", 1, "compare the nodes' checksums after every this many tests (and after the last)")
	flag.DurationVar(&cfg.MaxDuration, "max-duration", 40*time.Minute, "bound on each target's run (plain PostgreSQL, each engine): tests not started by then are reported not run")
	flag.BoolVar(&cfg.AsClient, "as-client", true, "also run the tests through a plain PostgreSQL as a client that is not a superuser, and compare with that where the outputs differ")
	silent := flag.String("silent", "", "print the silent hunks of an earlier run's engine directory (--out/sqlite or --out/postgres) and run nothing")
	flag.Parse()
	if *silent != "" {
		return printSilent(*silent)
	}
	if cfg.Source == "" {
		return fmt.Errorf("--source is required: the regress directory (run .ci/pgregress-source to fetch it)")
	}
	switch engine {
	case "both":
		cfg.Engines = regress.Engines
	case "sqlite", "postgres":
		cfg.Engines = []string{engine}
	default:
		return fmt.Errorf("--engine %q: sqlite, postgres or both", engine)
	}
	if tests != "" {
		cfg.Tests = strings.Split(tests, ",")
	}
	var err error
	if cfg.Source, err = filepath.Abs(cfg.Source); err != nil {
		return err
	}
	if cfg.Out, err = filepath.Abs(cfg.Out); err != nil {
		return err
	}
	cfg.Progress = os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if certa == "" {
		// Outside --out, which the run empties.
		dir, err := os.MkdirTemp("", "certa-regress-bin-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		certa = filepath.Join(dir, "certa")
		fmt.Fprintln(os.Stderr, "building certa")
		if out, err := exec.Command("go", "build", "-o", certa, "certa/cmd/certa").CombinedOutput(); err != nil {
			return fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	cfg.Certa = certa
	report, err := regress.Run(ctx, cfg)
	if report != nil {
		if werr := report.Write(); werr != nil && err == nil {
			err = werr
		}
		fmt.Println()
		report.WriteSummary(os.Stdout, false)
		fmt.Printf("\ndetails: %s\n", filepath.Join(cfg.Out, "summary.txt"))
	}
	return err
}

// printSilent prints the silent hunks of each test's diff in an engine's
// output directory: of its diff against the superuser's output or against
// the plain client's, whichever has fewer (as the report counts them).
func printSilent(dir string) error {
	// The diffs of the outputs with unordered results' rows sorted, as
	// the report counts them; a run older than them has the plain ones.
	suffix := ".unordered.diff"
	diffs, err := filepath.Glob(filepath.Join(dir, "diffs", "*"+suffix))
	if err == nil && len(diffs) == 0 {
		suffix = ".diff"
		diffs, err = filepath.Glob(filepath.Join(dir, "diffs", "*"+suffix))
	}
	if err != nil {
		return err
	}
	for _, name := range diffs {
		if strings.HasSuffix(name, ".client"+suffix) {
			continue
		}
		hunks, err := silentHunks(name)
		if err != nil {
			return err
		}
		if client, err := silentHunks(strings.TrimSuffix(name, suffix) + ".client" + suffix); err == nil && len(client) < len(hunks) {
			hunks = client
		}
		for _, h := range hunks {
			fmt.Printf("=== %s\n%s\n", strings.TrimSuffix(filepath.Base(name), suffix), h)
		}
	}
	return nil
}

func silentHunks(file string) ([]string, error) {
	diff, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return regress.SilentHunks(diff), nil
}
