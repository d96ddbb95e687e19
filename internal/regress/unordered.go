package regress

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// A query without ORDER BY may return its rows in any order: SQLite's
// joins visit them in another order than PostgreSQL's, and a diff of a
// large result in another order splits into hunks that do not read as
// CauseOrder alone. The silent count (res.Silent) is taken from outputs
// whose unordered results have their rows sorted (unordered), so that
// only other values count.

var (
	// tableRule is the line under the header of psql's aligned table.
	tableRule = regexp.MustCompile(`^-+(\+-+)*$`)
	// rowCount ends psql's table.
	rowCount = regexp.MustCompile(`^\([0-9]+ rows?\)$`)
	// ordered in a statement's echoed text keeps its rows' order: an
	// ORDER BY, or EXPLAIN's plan.
	ordered = regexp.MustCompile(`(?im)\border\s+by\b|^\s*explain\b`)
)

// unordered returns output (psql's, echoing each statement before its
// result) with the rows of each table sorted, where the statement echoed
// before it (the text since the blank line that ends the output before
// it) has no ORDER BY and is no EXPLAIN.
func unordered(output string) string {
	lines := strings.Split(output, "\n")
	stmtStart := 0
	for i := 0; i < len(lines); i++ {
		if lines[i] == "" {
			stmtStart = i + 1
			continue
		}
		// A header starts with a space and is as wide as its rule (not
		// two "--" comment lines).
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i], " ") || !tableRule.MatchString(lines[i+1]) ||
			len(lines[i]) != len(lines[i+1]) {
			continue
		}
		// A query's result ends with its row count; a table of psql's
		// \d, with a blank line.
		end := i + 2
		for end < len(lines) && lines[end] != "" && !rowCount.MatchString(lines[end]) {
			end++
		}
		if end == len(lines) || lines[end] == "" {
			continue
		}
		if !ordered.MatchString(strings.Join(lines[stmtStart:i], "\n")) {
			slices.Sort(lines[i+2 : end])
		}
		i = end
	}
	return strings.Join(lines, "\n")
}

// writeUnorderedDiff writes the diff of the two outputs with their
// unordered results' rows sorted (unordered) to path and returns it.
func writeUnorderedDiff(want, got, path string) []byte {
	dir := filepath.Dir(path)
	base := strings.TrimSuffix(filepath.Base(path), ".diff")
	wantSorted, gotSorted := filepath.Join(dir, base+".want.tmp"), filepath.Join(dir, base+".got.tmp")
	defer os.Remove(wantSorted)
	defer os.Remove(gotSorted)
	for _, f := range [][2]string{{want, wantSorted}, {got, gotSorted}} {
		b, err := os.ReadFile(f[0])
		if err != nil {
			return nil
		}
		if err := os.WriteFile(f[1], []byte(unordered(string(b))), 0o644); err != nil {
			return nil
		}
	}
	return writeDiff(wantSorted, gotSorted, path)
}
