package regress

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// Class is how certa's output of a test compares with PostgreSQL's.
type Class int

const (
	// Identical: byte for byte.
	Identical Class = iota
	// Messages: the outputs differ only in messages: NOTICE, WARNING,
	// INFO, DETAIL, HINT, CONTEXT, QUERY, LINE lines and their carets,
	// and the text of ERROR lines. An ERROR on one side where the other
	// has none (a statement failed on one and not the other) is not a
	// difference in messages.
	Messages
	// Differs: in anything else (results, echoed statements, errors).
	Differs
	// Timeout: psql did not finish within the test's time.
	Timeout
	// Error: the test could not run or be compared (psql lost its
	// connection or could not start, or the plain PostgreSQL failed it).
	Error
	// NotRun: the run stopped before the test (time bound, cluster hung or
	// crashed).
	NotRun
)

// Classes are the classes in report order.
var Classes = []Class{Identical, Messages, Differs, Timeout, Error, NotRun}

func (c Class) String() string {
	return [...]string{"identical", "messages", "differs", "timeout", "error", "not run"}[c]
}

// Difference is where two outputs first differ.
type Difference struct {
	Line      int      // 1-based line of the first difference in want
	Want, Got []string // a few lines of each output from there
}

// excerptLines is how many lines of each side a Difference keeps.
const excerptLines = 4

var (
	// messageLine matches the lines of a server or psql message other
	// than the ERROR line itself, with psql's optional location prefix.
	messageLine = regexp.MustCompile(`^(psql:[^ ]*:[0-9]+: )?(NOTICE|WARNING|INFO|DETAIL|HINT|CONTEXT|QUERY|STATEMENT|LOCATION|LOG|DEBUG|LINE [0-9]+): `)
	// errorLine matches an ERROR line (FATAL too: a failed statement).
	errorLine = regexp.MustCompile(`^(psql:[^ ]*:[0-9]+: )?(ERROR|FATAL):  `)
	// caretLine is the line under a LINE n: line that points at the error.
	caretLine = regexp.MustCompile(`^\s*\^\s*$`)
)

// Compare classifies got (certa's output) against want (PostgreSQL's)
// and, unless they are identical, says where they first differ: for
// Differs, the first difference that is not in messages.
func Compare(want, got []byte) (Class, Difference) {
	if bytes.Equal(want, got) {
		return Identical, Difference{}
	}
	wl, gl := lines(want), lines(got)
	wn, gn := normalize(wl), normalize(gl)
	if slices.Equal(wn.texts, gn.texts) {
		i := commonPrefix(wl, gl)
		return Messages, Difference{Line: i + 1, Want: excerpt(wl, i), Got: excerpt(gl, i)}
	}
	i := commonPrefix(wn.texts, gn.texts)
	w, g := wn.line(i, len(wl)), gn.line(i, len(gl))
	return Differs, Difference{Line: w + 1, Want: excerpt(wl, w), Got: excerpt(gl, g)}
}

// normalized is an output as the Messages comparison sees it: message
// lines dropped, each ERROR line turned into "ERROR".
type normalized struct {
	texts []string
	at    []int // the index of texts[i] in the output
}

func normalize(ls []string) normalized {
	var n normalized
	for i, l := range ls {
		switch {
		case errorLine.MatchString(l):
			n.texts, n.at = append(n.texts, "ERROR"), append(n.at, i)
		case messageLine.MatchString(l), caretLine.MatchString(l):
		default:
			n.texts, n.at = append(n.texts, l), append(n.at, i)
		}
	}
	return n
}

// line returns the index in the output of texts[i]; past the end, the
// output's length.
func (n normalized) line(i, outputLen int) int {
	if i < len(n.at) {
		return n.at[i]
	}
	return outputLen
}

// commonPrefix returns how many lines a and b have in common from the
// start.
func commonPrefix(a, b []string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

// excerpt returns up to excerptLines lines of ls from i.
func excerpt(ls []string, i int) []string {
	if i >= len(ls) {
		return []string{"(end of output)"}
	}
	return append([]string(nil), ls[i:min(i+excerptLines, len(ls))]...)
}

// lines splits an output into lines, without a final empty one.
func lines(b []byte) []string {
	s := string(bytes.TrimSuffix(b, []byte("\n")))
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
