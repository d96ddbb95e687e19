package sqlite

import (
	"context"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
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
//
// A locking SELECT nested in a statement (a subquery, a CTE, an INSERT's
// query) cannot return the key columns to its statement, so it runs first
// on its own, in the same transaction and snapshot, the way a top-level one
// does: with no row locks in SQLite, the rows it locks are the rows it
// returns, and on its own it returns the same ones. Its rows are dropped,
// its keys kept; then the statement runs (the SQLite printer drops the
// nested clause). One that refers to the statement around it (correlated,
// or reading one of its WITH queries) cannot run alone and is refused.

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

// lockingMode returns the mode of sql's trailing locking clause, as
// PostgreSQL names it in messages ("FOR UPDATE", "FOR KEY SHARE").
func lockingMode(sql string) (string, bool) {
	if !containsFold(sql, "for") {
		return "", false
	}
	m := lockingClause.FindStringSubmatch(sql)
	if m == nil {
		return "", false
	}
	return "FOR " + strings.ToUpper(strings.Join(strings.Fields(m[1]), " ")), true
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

// countFold returns how many times s contains the lower-case ASCII word w
// in any case.
func countFold(s, w string) int {
	n := 0
	for i := 0; i+len(w) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(w)], w) {
			n++
		}
	}
	return n
}

// nestedCache holds nestedLocks' answers by statement text: clients that
// prepare their statements send the same text again and again, and
// PostgreSQL's parser costs more than running a short statement. An
// answer depends on the text alone; the cache is emptied when full.
var nestedCache struct {
	mu sync.Mutex
	m  map[string][]string
}

// nestedLocks returns the SELECTs nested in sql that lock rows for update
// (pgparse.NestedLockingSelects), each a statement of its own; an error if
// one cannot run on its own.
func nestedLocks(sql string) ([]string, error) {
	// Most statements say neither word; a top-level clause with no other
	// "for" in the text (TPC-C's SELECT ... FOR UPDATE) has none nested.
	if !containsFold(sql, "for") || !containsFold(sql, "update") {
		return nil, nil
	}
	nestedCache.mu.Lock()
	sels, ok := nestedCache.m[sql]
	nestedCache.mu.Unlock()
	if ok {
		return sels, nil
	}
	_, trailing := parseLocking(sql)
	if trailing && countFold(sql, "for") == 1 {
		return nil, nil
	}
	sels, ok = pgparse.NestedLockingSelects(sql)
	if !ok {
		return nil, errNestedLockAlone()
	}
	if !trailing {
		// A top-level clause parseLocking does not see (the whole
		// SELECT in parentheses) runs alone first too, in the form it
		// sees: the statement then reads the same rows without it.
		if top, ok := pgparse.TopLevelLockingSelect(sql); ok {
			sels = append([]string{top}, sels...)
		}
	}
	nestedCache.mu.Lock()
	if len(nestedCache.m) >= maxNestedCached || nestedCache.m == nil {
		nestedCache.m = make(map[string][]string)
	}
	nestedCache.m[sql] = sels
	nestedCache.mu.Unlock()
	return sels, nil
}

const maxNestedCached = 1024

// errNestedLockAlone refuses a nested locking SELECT that cannot run on its
// own: certa could not tell which rows it locks, and running it without
// certifying them would let write skew through.
func errNestedLockAlone() error {
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"certa: a SELECT ... FOR UPDATE nested in a statement must not refer to the statement around it (its columns or WITH queries) on the embedded SQLite engine")
	e.Hint = "Lock the rows with a SELECT ... FOR UPDATE of their own first, then run the statement; or make the nested SELECT stand alone."
	return e
}

// execLockingNested runs the locking SELECTs nested in sql, each on its own
// through execOnce (which keeps the keys of the rows it returns, as for a
// top-level FOR UPDATE), then sql itself. Re-running sql (a replayed or
// revalidated log: moveforward.go, park.go) runs them again, so their keys
// come back wherever a top-level one's do. tx.mu is held.
func (tx *Tx) execLockingNested(ctx context.Context, sql string, nested []string, w result.Writer, args []any) error {
	c := tx.conn
	for _, sel := range nested {
		alone := sel
		if req, ok := parseLocking(sel); ok {
			alone = req.sql
		}
		stmt, _, _, err := c.prepareCached(alone)
		if err != nil {
			// If the statement prepares and its SELECT does not, the
			// SELECT needs the statement around it; else the statement
			// has an error of its own, which the client should see.
			whole := sql
			if req, ok := parseLocking(sql); ok {
				whole = req.sql
			}
			stmt, _, _, werr := c.prepareCached(whole)
			if werr != nil {
				return werr
			}
			c.release(stmt)
			c.endStatement()
			return errNestedLockAlone()
		}
		c.release(stmt)
		c.endStatement()
	}
	locked, lockedIn, reads := len(tx.locked), len(tx.lockedIn), maps.Clone(tx.reads)
	for _, sel := range nested {
		if err := tx.execOnce(ctx, sel, result.Discard, args); err != nil {
			return err
		}
	}
	err := tx.execStmt(ctx, sql, w, args)
	if sqlite.ErrCode(err) == sqlite.ResultBusySnapshot {
		// The statement will be re-run, nested SELECTs and all, on a
		// newer snapshot (Exec): what they read and locked at this one
		// does not count, as the statement's own reads do not.
		tx.locked, tx.lockedIn, tx.reads = tx.locked[:locked], tx.lockedIn[:lockedIn], reads
	}
	return err
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
	alias := ""
	if !ti.exists {
		// FOR UPDATE OF may name the table by its alias.
		if rel, ok := pgparse.FromRelation(req.sql, req.table); ok {
			if ti, err = c.table(rel); err != nil {
				return "", nil, 0, err
			}
			alias = req.table
		}
	}
	if !ti.exists || len(ti.keyColumns()) == 0 {
		return "", nil, 0, sqlerr.New(sqlerr.FeatureNotSupported,
			"SELECT ... FOR UPDATE needs a table whose rows have keys after FROM (or named in FOR UPDATE OF), got %q", req.table)
	}
	// The table's alias in FROM, if it has one, qualifies the key columns.
	qual := quoteIdent(ti.name)
	if alias != "" {
		qual = quoteIdent(alias)
	} else if a := fromAlias(req.sql, req.table); a != "" {
		qual = a
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

// fromAlias returns the alias that table has after FROM (or a comma) in
// sql, as written, or "".
func fromAlias(sql, table string) string {
	toks := tokenize(sql)
	for i, t := range toks {
		if strings.EqualFold(unquote(t), table) && i > 0 && (strings.EqualFold(toks[i-1], "from") || toks[i-1] == ",") {
			j := i + 1
			if j < len(toks) && strings.EqualFold(toks[j], "as") {
				j++
			}
			if j < len(toks) && isIdent(unquote(toks[j])) && !isKeyword(toks[j]) {
				return toks[j]
			}
			return ""
		}
	}
	return ""
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
