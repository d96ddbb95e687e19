package regress

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Report is what a run saw.
type Report struct {
	Out     string
	Tests   []string    // in the order they ran
	Plains  []PlainRuns // one per clock the engines use
	Engines []EngineReport
}

// PlainRuns are the plain PostgreSQL's runs with one clock.
type PlainRuns struct {
	Clock  Clock
	Plain  PlainReport
	Client *PlainReport // the plain PostgreSQL's client's run (Config.AsClient), or nil
}

// PlainReport is the plain PostgreSQL's run.
type PlainReport struct {
	Runs    map[string]TestRun
	Elapsed time.Duration
	Stopped string // why it stopped before the last test, if it did
}

// run returns test t's run, if p has one (p may be nil).
func (p *PlainReport) run(t string) (TestRun, bool) {
	if p == nil {
		return TestRun{}, false
	}
	run, ok := p.Runs[t]
	return run, ok
}

// EngineReport is one engine's run.
type EngineReport struct {
	Engine  string
	Results []TestResult // in the order of Report.Tests
	Elapsed time.Duration
	Stopped string // why it stopped before the last test, if it did
}

// TestResult is one test through certa, compared with the plain
// PostgreSQL.
type TestResult struct {
	Test   string
	Class  Class
	Diff   Difference // unless Identical
	Note   string     // for Timeout and Error
	Causes []Cause    // of its differences, unless Identical (DiffCauses)
	// Silent is how many hunks read as CauseSilent: against the plain
	// PostgreSQL's superuser, or its client if fewer (none if identical
	// to the client's).
	Silent int
	// AsClient is how the output compares with the plain PostgreSQL's
	// client's (Config.AsClient), where it differs from the superuser's
	// and both ran to the end; NotRun otherwise.
	AsClient   Class
	ClientDiff Difference // unless AsClient is Identical or NotRun
	Exit       int        // psql's exit status
	Elapsed    time.Duration
	Problems   []Problem // the cluster's, seen after the test
}

// Tests returns the tests of class c.
func (er EngineReport) Tests(c Class) []string {
	var out []string
	for _, r := range er.Results {
		if r.Class == c {
			out = append(out, r.Test)
		}
	}
	return out
}

// Problems returns every cluster problem of the run.
func (er EngineReport) Problems() []Problem {
	var out []Problem
	for _, r := range er.Results {
		out = append(out, r.Problems...)
	}
	return out
}

// WriteSummary writes the counts per class, the tests of each class and
// the cluster's problems; with details, also each test's first
// differing lines.
func (r *Report) WriteSummary(w io.Writer, details bool) {
	fmt.Fprintf(w, "PostgreSQL regression suite through certa: %d tests, outputs in %s\n", len(r.Tests), r.Out)
	for _, p := range r.Plains {
		clock := fmt.Sprintf("TimeZone %s, DateStyle %s", p.Clock.TimeZone, p.Clock.DateStyle)
		fmt.Fprintf(w, "plain PostgreSQL (%s): %d tests in %s", clock, len(p.Plain.Runs), p.Plain.Elapsed.Round(time.Second))
		if p.Plain.Stopped != "" {
			fmt.Fprintf(w, " (%s)", p.Plain.Stopped)
		}
		fmt.Fprintln(w)
		if p.Client != nil {
			fmt.Fprintf(w, "plain PostgreSQL (%s), as a client that is not a superuser: %d tests in %s", clock, len(p.Client.Runs), p.Client.Elapsed.Round(time.Second))
			if p.Client.Stopped != "" {
				fmt.Fprintf(w, " (%s)", p.Client.Stopped)
			}
			fmt.Fprintln(w)
		}
	}
	for _, er := range r.Engines {
		fmt.Fprintf(w, "\n== %s: %s", er.Engine, er.Elapsed.Round(time.Second))
		if er.Stopped != "" {
			fmt.Fprintf(w, " (%s)", er.Stopped)
		}
		fmt.Fprintln(w)
		var counts []string
		for _, c := range Classes {
			counts = append(counts, fmt.Sprintf("%s %d", c, len(er.Tests(c))))
		}
		fmt.Fprintf(w, "%s\n", strings.Join(counts, ", "))
		for _, c := range Classes {
			if ts := er.Tests(c); len(ts) > 0 {
				fmt.Fprintf(w, "%s: %s\n", c, strings.Join(ts, " "))
			}
		}
		if cfgAsClient(r) {
			ts := er.asClient(Identical)
			fmt.Fprintf(w, "of those not identical, identical to the plain PostgreSQL's client (they differ only where PostgreSQL needs a superuser): %d\n", len(ts))
			if len(ts) > 0 {
				fmt.Fprintf(w, "  %s\n", strings.Join(ts, " "))
			}
		}
		er.writeCauses(w)
		ps := er.Problems()
		fmt.Fprintf(w, "cluster problems: %d\n", len(ps))
		for _, p := range ps {
			fmt.Fprintf(w, "  after %s: %s: %s\n", p.Test, p.Kind, p.Detail)
		}
		if !details {
			continue
		}
		for _, res := range er.Results {
			if res.Class == Identical || res.Class == NotRun {
				continue
			}
			fmt.Fprintf(w, "\n-- %s %s: %s", er.Engine, res.Test, res.Class)
			if res.Note != "" {
				fmt.Fprintf(w, " (%s)", res.Note)
			}
			fmt.Fprintf(w, ", first difference at line %d of the plain output", res.Diff.Line)
			if len(res.Causes) > 0 {
				fmt.Fprintf(w, "; causes: %s", joinCauses(res.Causes))
			}
			fmt.Fprintln(w)
			for _, l := range res.Diff.Want {
				fmt.Fprintf(w, "   pg| %s\n", truncate(l, 160))
			}
			for _, l := range res.Diff.Got {
				fmt.Fprintf(w, "certa| %s\n", truncate(l, 160))
			}
			switch res.AsClient {
			case NotRun:
			case Identical:
				fmt.Fprintln(w, "   as the plain PostgreSQL's client: identical")
			default:
				fmt.Fprintf(w, "   as the plain PostgreSQL's client: %s, first difference at line %d of its output\n", res.AsClient, res.ClientDiff.Line)
				for _, l := range res.ClientDiff.Want {
					fmt.Fprintf(w, "client| %s\n", truncate(l, 160))
				}
				for _, l := range res.ClientDiff.Got {
					fmt.Fprintf(w, " certa| %s\n", truncate(l, 160))
				}
			}
		}
	}
}

// asClient returns the tests that compared with the plain PostgreSQL's
// client as c.
func (er EngineReport) asClient(c Class) []string {
	var out []string
	for _, r := range er.Results {
		if r.Class != Identical && r.AsClient == c {
			out = append(out, r.Test)
		}
	}
	return out
}

// writeCauses writes how many of the tests that differ (in messages or
// more) have each cause, and which differ only for causes the suite's
// issue excuses (Cause.Excused, or identical to the plain PostgreSQL's
// client).
func (er EngineReport) writeCauses(w io.Writer) {
	counts := map[Cause]int{}
	var excused []string
	for _, res := range er.Results {
		if res.Class != Messages && res.Class != Differs {
			continue
		}
		all := len(res.Causes) > 0
		for _, c := range res.Causes {
			counts[c]++
			all = all && c.Excused()
		}
		if all || res.AsClient == Identical {
			excused = append(excused, res.Test)
		}
	}
	var parts []string
	for _, c := range Causes {
		if counts[c] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, counts[c]))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(w, "tests that differ, by cause (one may have several): %s\n", strings.Join(parts, ", "))
	}
	if len(excused) > 0 {
		fmt.Fprintf(w, "differ only where a superuser, several databases or two-phase commit is needed: %s\n", strings.Join(excused, " "))
	}
	var silent []string
	hunks := 0
	for _, res := range er.Results {
		if res.Silent > 0 {
			silent = append(silent, fmt.Sprintf("%s(%d)", res.Test, res.Silent))
			hunks += res.Silent
		}
	}
	fmt.Fprintf(w, "silent hunks (no error from certa, output other than a client's PostgreSQL's): %d in %d tests\n", hunks, len(silent))
	if len(silent) > 0 {
		fmt.Fprintf(w, "  %s\n", strings.Join(silent, " "))
	}
}

// joinCauses writes causes as a list.
func joinCauses(cs []Cause) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

// Write writes the report into its output directory: summary.txt (with
// details) and, per engine, identical.txt (the tests that came out
// identical, one a line).
func (r *Report) Write() error {
	f, err := os.Create(filepath.Join(r.Out, "summary.txt"))
	if err != nil {
		return err
	}
	r.WriteSummary(f, true)
	if err := f.Close(); err != nil {
		return err
	}
	for _, er := range r.Engines {
		list := strings.Join(er.Tests(Identical), "\n") + "\n"
		if err := os.WriteFile(filepath.Join(r.Out, er.Engine, "identical.txt"), []byte(list), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cfgAsClient reports whether the run compared with the plain
// PostgreSQL's client (Config.AsClient).
func cfgAsClient(r *Report) bool {
	return len(r.Plains) > 0 && r.Plains[0].Client != nil
}
