package regress

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ReadSchedule returns the tests of dir/parallel_schedule in the order
// pg_regress runs them: groups in order, the tests of a group in the
// order they are listed ("ignore:" lines only mark a test's failure as
// ignorable; they do not run it).
func ReadSchedule(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "parallel_schedule"))
	if err != nil {
		return nil, fmt.Errorf("read schedule: %w", err)
	}
	defer f.Close()
	var tests []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "test:"); ok {
			tests = append(tests, strings.Fields(rest)...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read schedule: %w", err)
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("read schedule: no tests in %s", f.Name())
	}
	return tests, nil
}

// Always are the tests every other test may need (parallel_schedule:
// "Most test scripts can be run after running just test_setup and
// possibly create_index").
var Always = []string{"test_setup", "create_index"}

// prerequisites are the other dependencies parallel_schedule of
// PostgreSQL 15 documents, test: the tests it needs.
var prerequisites = map[string][]string{
	"multirangetypes": {"rangetypes"},
	"geometry":        {"point", "lseg", "line", "box", "path", "polygon", "circle"},
	"horology":        {"date", "time", "timetz", "timestamp", "timestamptz", "interval"},
	"aggregates":      {"create_aggregate"},
	"join":            {"create_misc"},
	"psql":            {"create_am"},
	"amutils":         {"geometry", "create_index_spgist", "hash_index", "brin"},
	"select_parallel": {"create_misc"},
	"select_views":    {"create_view"},
	"with":            {"create_misc"},
}

// Select returns the tests of schedule that are in want, with the tests
// they need (Always and the documented dependencies, transitively), in
// schedule order. A name of want missing from schedule is an error.
func Select(schedule, want []string) ([]string, error) {
	need := map[string]bool{}
	var add func(string)
	add = func(t string) {
		if need[t] {
			return
		}
		need[t] = true
		for _, p := range prerequisites[t] {
			add(p)
		}
	}
	for _, t := range want {
		if !slices.Contains(schedule, t) {
			return nil, fmt.Errorf("test %q is not in the schedule", t)
		}
		add(t)
	}
	if len(want) > 0 {
		for _, t := range Always {
			add(t)
		}
	}
	var out []string
	for _, t := range schedule {
		if need[t] {
			out = append(out, t)
			delete(need, t) // a test listed twice runs once
		}
	}
	return out, nil
}
