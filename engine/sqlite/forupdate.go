package sqlite

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// SELECT ... FOR UPDATE / FOR NO KEY UPDATE / FOR SHARE / FOR KEY SHARE.
// SQLite has no row locks, and under certification none are needed for
// reads. FOR UPDATE keeps its purpose the way Galera gives it: the rows it
// returns join the transaction's certification keys, so a concurrent
// commit to any of them makes this transaction fail with 40001 (first
// committer wins) and this transaction's commit makes concurrent ones to
// them fail. FOR SHARE is accepted and reads as a plain SELECT (snapshot
// isolation already keeps the rows read stable for the transaction).

// lockingClause matches a trailing locking clause.
var lockingClause = regexp.MustCompile(`(?is)\s+for\s+(update|no\s+key\s+update|share|key\s+share)` +
	`(\s+of\s+[\w".]+(\s*,\s*[\w".]+)*)?(\s+nowait|\s+skip\s+locked)?\s*;?\s*$`)

// lockRequest is a parsed FOR UPDATE: the statement without the clause and
// the table whose rows it locks ("" for FOR SHARE: nothing to lock).
type lockRequest struct {
	sql   string
	table string
}

// parseLocking strips a trailing locking clause from a SELECT. ok is false
// if sql has none.
func parseLocking(sql string) (req lockRequest, ok bool) {
	// Every statement comes here: the cheap tests first (the regular
	// expression was 3% of a node's CPU under TPC-C).
	if first := firstWord(sql); !strings.EqualFold(first, "select") && !strings.EqualFold(first, "with") || !containsFold(sql, "for") {
		return lockRequest{}, false
	}
	m := lockingClause.FindStringSubmatchIndex(sql)
	if m == nil {
		return lockRequest{}, false
	}
	req.sql = sql[:m[0]]
	mode := strings.ToLower(strings.Join(strings.Fields(sql[m[2]:m[3]]), " "))
	if mode == "share" || mode == "key share" {
		return req, true
	}
	if m[4] >= 0 { // OF t[, ...]: the first table named
		of := strings.TrimSpace(sql[m[4]:m[5]])
		of = strings.TrimSpace(of[2:])
		req.table = unquote(strings.TrimSpace(strings.SplitN(of, ",", 2)[0]))
		return req, true
	}
	toks := tokenize(req.sql)
	for i, t := range toks {
		if strings.EqualFold(t, "from") && i+1 < len(toks) {
			req.table = unquote(toks[i+1])
			break
		}
	}
	return req, true
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

func firstWord(sql string) string {
	sql = skipBlank(sql)
	if i := strings.IndexFunc(sql, unicode.IsSpace); i >= 0 {
		sql = sql[:i]
	}
	return strings.TrimLeft(sql, "(")
}

// lockedSelect rewrites req's SELECT to return the locked table's primary
// key first; k is how many columns were added.
func (c *conn) lockedSelect(req lockRequest) (sql string, ti *tableInfo, k int, err error) {
	if err := c.refreshSchema(); err != nil {
		return "", nil, 0, err
	}
	ti, err = c.table(req.table)
	if err != nil {
		return "", nil, 0, err
	}
	if !ti.exists || len(ti.keyColumns()) == 0 {
		return "", nil, 0, sqlerr.New(sqlerr.FeatureNotSupported,
			"SELECT ... FOR UPDATE needs a table whose rows have keys after FROM (or named in FOR UPDATE OF), got %q", req.table)
	}
	// The table's alias in FROM, if it has one, qualifies the key columns.
	qual := quoteIdent(ti.name)
	toks := tokenize(req.sql)
	for i, t := range toks {
		if strings.EqualFold(unquote(t), req.table) && i > 0 && (strings.EqualFold(toks[i-1], "from") || toks[i-1] == ",") {
			j := i + 1
			if j < len(toks) && strings.EqualFold(toks[j], "as") {
				j++
			}
			if j < len(toks) && isIdent(unquote(toks[j])) && !isKeyword(toks[j]) {
				qual = toks[j]
			}
			break
		}
	}
	start := strings.Index(strings.ToLower(req.sql), "select")
	if start < 0 || strings.HasPrefix(strings.ToLower(strings.TrimSpace(req.sql[start+6:])), "distinct") {
		return "", nil, 0, sqlerr.New(sqlerr.FeatureNotSupported, "FOR UPDATE is not allowed with DISTINCT")
	}
	var cols []string
	for _, pk := range ti.keyColumns() {
		cols = append(cols, qual+"."+quoteIdent(pk))
	}
	sql = req.sql[:start+6] + " " + strings.Join(cols, ", ") + "," + req.sql[start+6:]
	return sql, ti, len(cols), nil
}

// isKeyword reports whether t, after a table name, starts the next clause
// rather than naming an alias.
func isKeyword(t string) bool {
	switch strings.ToLower(t) {
	case "where", "join", "inner", "left", "right", "cross", "natural", "on", "using", "group", "order",
		"limit", "offset", "having", "window", "union", "except", "intersect":
		return true
	}
	return false
}

// lockWriter passes a result on without its first k columns, which it
// records as the primary keys of locked rows of table.
type lockWriter struct {
	result.Writer
	k     int
	table string
	keys  *[]writeset.Key
	cols  []result.Column // the key columns, once Columns is called
}

// numericKey turns a numeric key value back into the number it is stored
// as: the result gives numeric in PostgreSQL's text ("1.50"), the
// changesets of writes give the double, and the keys must be equal.
func numericKey(v result.Value) result.Value {
	if s, ok := v.(string); ok {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return v
}

func (w *lockWriter) Columns(cols []result.Column) error {
	w.cols = cols[:w.k]
	return w.Writer.Columns(cols[w.k:])
}

func (w *lockWriter) Row(values []result.Value) error {
	pk := make([]any, w.k)
	for i, v := range values[:w.k] {
		if b, ok := v.(bool); ok { // a boolean key column is stored as 0/1
			v = int64(0)
			if b {
				v = int64(1)
			}
		}
		if w.cols[i].Type == result.Numeric {
			v = numericKey(v)
		}
		pk[i] = v
	}
	*w.keys = append(*w.keys, writeset.EncodeKey(w.table, pk...))
	return w.Writer.Row(values[w.k:])
}
