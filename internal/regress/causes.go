package regress

import (
	"bytes"
	"regexp"
	"slices"
)

// Cause is why a part of a test's output differs from PostgreSQL's, read
// from one hunk of the unified diff of the two outputs (writeDiff): the
// errors in it, or its shape. It is a reading for the report, by
// patterns, not a proof: a hunk whose first error names a superuser
// privilege may hide another difference after it.
type Cause string

const (
	// CauseSuperuser: PostgreSQL lets a superuser alone do it (C
	// functions, base types, internal aggregates, some settings, the
	// catalogs of roles, SET SESSION AUTHORIZATION), and certa's clients
	// are not superusers.
	CauseSuperuser Cause = "superuser"
	// CauseDatabases: another database or a tablespace.
	CauseDatabases Cause = "several databases"
	// CauseTwoPhase: the client's PREPARE TRANSACTION.
	CauseTwoPhase Cause = "two-phase commit"
	// CauseRoles: roles the client cannot make, change or become.
	CauseRoles Cause = "roles"
	// CauseRefusal: a refusal of certa's own (an "ERROR:  certa:" line).
	CauseRefusal Cause = "certa's refusal"
	// CauseNumbers: the hunk differs only in numbers (and the widths of
	// psql's columns that hold them), as sequence values from blocks of
	// another node's, or the sizes of relations, do.
	CauseNumbers Cause = "numbers only"
	// CauseMessages: the hunk differs only in messages (Compare's
	// Messages, for one hunk).
	CauseMessages Cause = "messages only"
	// CauseOrder: the same lines in another order (rows of a query
	// without ORDER BY, or a wrong order).
	CauseOrder Cause = "order only"
	// CauseSilent: certa sent no error in the hunk and its lines differ
	// from PostgreSQL's: other values, or a statement PostgreSQL refuses
	// accepted. These are the ones to read first: a wrong result.
	CauseSilent Cause = "silent"
	// CauseOther: anything else (certa failed a statement with an error
	// of its engine's).
	CauseOther Cause = "other"
)

// Causes lists the causes in report order.
var Causes = []Cause{CauseSuperuser, CauseDatabases, CauseTwoPhase, CauseRoles, CauseRefusal,
	CauseNumbers, CauseMessages, CauseOrder, CauseSilent, CauseOther}

// Excused reports whether a test that differs for c alone may stay so:
// what the issue of the suite lets certa refuse.
func (c Cause) Excused() bool {
	return c == CauseSuperuser || c == CauseDatabases || c == CauseTwoPhase
}

// causePatterns are matched, in order, against a hunk's lines; the first
// that matches names its cause.
var causePatterns = []struct {
	cause Cause
	re    *regexp.Regexp
}{
	{CauseTwoPhase, regexp.MustCompile(`PREPARE TRANSACTION is not supported|prepared transactions are disabled`)},
	{CauseDatabases, regexp.MustCompile(`(CREATE|DROP|ALTER) (DATABASE|TABLESPACE)|database "regression_|tablespace "regress_`)},
	{CauseSuperuser, regexp.MustCompile(`[Mm]ust be superuser|permission denied for language (c|internal)|access to library|` +
		`permission denied to set parameter|permission denied for (table|view|function) pg_|` +
		`permission denied for column "[^"]*" of relation "pg_|aggregate transition data type cannot be internal|` +
		`no privileges were granted for "pg_|only superusers? (can|may)|permission denied to set session authorization`)},
	{CauseRoles, regexp.MustCompile(`permission denied to (create|drop|alter) role|role "[^"]*" does not exist|` +
		`must be member of role|must have CREATEROLE`)},
	{CauseRefusal, regexp.MustCompile(`ERROR:  certa:`)},
}

// numberShape is what CauseNumbers sets aside: digits, and the spaces
// and rules of psql's table borders, which widen with them.
var numberShape = regexp.MustCompile(`[0-9 +-]+`)

// DiffCauses returns the causes of the hunks of a unified diff, each
// once, in report order.
func DiffCauses(diff []byte) []Cause {
	var found []Cause
	for _, c := range HunkCauses(diff) {
		if !slices.Contains(found, c) {
			found = append(found, c)
		}
	}
	slices.SortFunc(found, func(a, b Cause) int { return slices.Index(Causes, a) - slices.Index(Causes, b) })
	return found
}

// countCause returns how many hunks of diff read as c.
func countCause(diff []byte, c Cause) int {
	n := 0
	for _, hc := range HunkCauses(diff) {
		if hc == c {
			n++
		}
	}
	return n
}

// SilentHunks returns the hunks of a unified diff that read as
// CauseSilent, each as its lines: what to read first.
func SilentHunks(diff []byte) []string {
	var out []string
	for _, h := range hunks(diff) {
		if hunkCause(h) == CauseSilent {
			out = append(out, string(bytes.Join(h.all, []byte("\n"))))
		}
	}
	return out
}

// HunkCauses returns the cause of each hunk of a unified diff, in
// order.
func HunkCauses(diff []byte) []Cause {
	var out []Cause
	for _, h := range hunks(diff) {
		out = append(out, hunkCause(h))
	}
	return out
}

// hunk is one hunk of a unified diff: its removed (PostgreSQL's) and
// added (certa's) lines, and all its lines.
type hunk struct {
	removed, added, all [][]byte
}

// hunks splits a unified diff into its hunks.
func hunks(diff []byte) []hunk {
	var out []hunk
	for _, l := range bytes.Split(diff, []byte("\n")) {
		switch {
		case bytes.HasPrefix(l, []byte("@@")):
			out = append(out, hunk{})
		case len(out) == 0 || len(l) == 0:
		default:
			h := &out[len(out)-1]
			h.all = append(h.all, l)
			switch l[0] {
			case '-':
				h.removed = append(h.removed, l[1:])
			case '+':
				h.added = append(h.added, l[1:])
			}
		}
	}
	return out
}

// hunkCause reads one hunk's cause.
func hunkCause(h hunk) Cause {
	text := bytes.Join(h.all, []byte("\n"))
	for _, p := range causePatterns {
		if p.re.Match(text) {
			return p.cause
		}
	}
	if len(h.removed) == len(h.added) && slices.EqualFunc(h.removed, h.added, func(a, b []byte) bool {
		return bytes.Equal(numberShape.ReplaceAll(a, nil), numberShape.ReplaceAll(b, nil))
	}) {
		return CauseNumbers
	}
	removed, added := normalize(asStrings(h.removed)).texts, normalize(asStrings(h.added)).texts
	switch {
	case slices.Equal(removed, added):
		return CauseMessages
	case len(removed) > 0 && slices.Equal(slices.Sorted(slices.Values(removed)), slices.Sorted(slices.Values(added))):
		return CauseOrder
	case !slices.Contains(added, "ERROR"):
		return CauseSilent
	}
	return CauseOther
}

// asStrings converts lines.
func asStrings(ls [][]byte) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}
