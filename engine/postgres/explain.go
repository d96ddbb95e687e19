package postgres

import (
	"bytes"
	"strings"
)

// EXPLAIN ANALYZE lists the triggers that fired, certa's capture trigger
// among them: certa's own, which clients do not see in the catalogs
// either (certa.hide_trigger). writeResult takes it out of the plans it
// relays (a result of one column named QUERY PLAN), in each of EXPLAIN's
// formats.

// withoutCapture returns a line of a text plan, or a whole JSON, YAML or
// XML plan, without certa's capture trigger, and false for a text line
// that is the trigger's.
func withoutCapture(plan []byte) ([]byte, bool) {
	if !bytes.Contains(plan, []byte(" certa_capture")) {
		return plan, true
	}
	if line := bytes.TrimLeft(plan, " "); bytes.HasPrefix(line, []byte("Trigger  certa_capture: ")) ||
		bytes.HasPrefix(line, []byte("Trigger  certa_capture on ")) { // "on t:" where the plan has several tables
		return nil, false
	}
	lines := strings.Split(string(plan), "\n")
	for i := 1; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		start, end := -1, -1
		switch line {
		case `"Trigger Name": " certa_capture",`: // JSON: { ... } or { ... },
			start, end = i-1, closing(lines, i, "}", "},")
			if end >= 0 && strings.TrimSpace(lines[end]) == "}" && strings.HasSuffix(lines[start-1], "},") {
				lines[start-1] = strings.TrimSuffix(lines[start-1], ",") // it was the last of several
			}
		case "<Trigger-Name> certa_capture</Trigger-Name>": // XML: <Trigger> ... </Trigger>
			start, end = i-1, closing(lines, i, "</Trigger>")
		case `- Trigger Name: " certa_capture"`: // YAML: its lines indented further
			start, end = i, i
			for depth := indent(lines[i]); end+1 < len(lines) && indent(lines[end+1]) > depth; end++ {
			}
		}
		if start >= 0 && end >= 0 {
			lines = append(lines[:start], lines[end+1:]...)
			i = start
		}
	}
	return []byte(strings.Join(lines, "\n")), true
}

// closing returns the first line after i that is one of ends (spaces
// aside), or -1.
func closing(lines []string, i int, ends ...string) int {
	for j := i + 1; j < len(lines); j++ {
		for _, e := range ends {
			if strings.TrimSpace(lines[j]) == e {
				return j
			}
		}
	}
	return -1
}

// indent is the number of spaces line starts with.
func indent(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }
