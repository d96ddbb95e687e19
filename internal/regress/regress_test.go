package regress

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// TestIdentical runs the tests of identical-<engine>.txt, with the tests
// they need, through a fresh cluster of each engine and through a plain
// PostgreSQL: each must come out identical, and the cluster must stay
// consistent (no lag past the bound, no unforeseen conflict, equal
// checksums). It fails, not skips, when the suite's source is missing.
func TestIdentical(t *testing.T) {
	src := sourceDir(t)
	for _, engine := range Engines {
		// One engine at a time: the package runs beside the cluster
		// tests, and two clusters and a PostgreSQL at once loaded the
		// 2-vCPU CI machine enough to time their commits out.
		t.Run(engine, func(t *testing.T) {
			want := readList(t, "identical-"+engine+".txt")
			out := t.TempDir()
			// The postgres user (the servers' when the test runs as root)
			// must get through the test's own directory to out.
			if err := os.Chmod(filepath.Dir(out), 0o711); err != nil {
				t.Fatal(err)
			}
			// A bound on a stuck run, not on speed: beside the cluster
			// tests on the 2-vCPU CI machine the postgres engine's run
			// has taken from 6 to 15 minutes.
			ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
			defer cancel()
			report, err := Run(ctx, Config{Source: src, Tests: want, Engines: []string{engine},
				Certa: testcluster.Binary(t), Out: out, ChecksumEvery: 5,
				// partition_join took over psql's default 2 minutes
				// through the postgres engine on a slow CI machine.
				TestTimeout: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, report, want)
		})
	}
}

// checkReport fails t for each test of want that did not come out
// identical and for each problem of the cluster.
func checkReport(t *testing.T, r *Report, want []string) {
	t.Helper()
	listed := map[string]bool{}
	for _, w := range want {
		listed[w] = true
	}
	for _, er := range r.Engines {
		if er.Stopped != "" {
			t.Errorf("%s: the run stopped: %s", er.Engine, er.Stopped)
		}
		for _, res := range er.Results {
			if !listed[res.Test] || res.Class == Identical {
				continue
			}
			diff, _ := os.ReadFile(filepath.Join(r.Out, er.Engine, "diffs", res.Test+".diff"))
			t.Errorf("%s: %s is %s, not identical (%s); diff -u plain certa:\n%s",
				er.Engine, res.Test, res.Class, res.Note, truncate(string(diff), 4000))
		}
		for _, p := range er.Problems() {
			t.Errorf("%s: after %s: %s: %s", er.Engine, p.Test, p.Kind, p.Detail)
		}
	}
}

// sourceDir returns the regress directory: $CERTA_PGREGRESS, else the
// one .ci/pgregress-source fetched. It fails the test when there is none.
func sourceDir(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv("CERTA_PGREGRESS"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "parallel_schedule")); err != nil {
			t.Fatalf("CERTA_PGREGRESS=%s is not PostgreSQL's src/test/regress (%v): run .ci/deps, or unset it", dir, err)
		}
		return dir
	}
	dirs, _ := filepath.Glob("../../.ci/deps.d/pgregress/*/src/test/regress")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "parallel_schedule")); err == nil {
			dir, err := filepath.Abs(dirs[i])
			if err != nil {
				t.Fatal(err)
			}
			return dir
		}
	}
	t.Fatal("PostgreSQL's regression suite is missing: run .ci/deps (it fetches it with .ci/pgregress-source), or set CERTA_PGREGRESS to a src/test/regress directory")
	return ""
}

// readList reads a list of tests: one name a line, # comments.
func readList(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no tests", name)
	}
	return out
}
