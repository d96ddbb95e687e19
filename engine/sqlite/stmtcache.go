package sqlite

import (
	"zombiezen.com/go/sqlite"
)

// Client statements are prepared once per connection and kept: parsing is a
// large part of running a short statement, and a transaction re-run after
// parking (park.go) runs every statement again. What the authorizer recorded
// is kept with each statement; the cache is dropped whenever the schema
// changes, since both the plan and the record may then differ.

// maxCachedStmts bounds the statements kept per connection. Clients that
// inline their values send a new text every time; when the cache is full it
// is emptied rather than tracked for recency.
const maxCachedStmts = 256

type cachedStmt struct {
	stmt *sqlite.Stmt
	rec  record
}

// prepareCached is prepare in modeLocal for a statement run in a
// transaction, through the connection's cache. Release it with release.
func (c *conn) prepareCached(sql string) (stmt *sqlite.Stmt, rec record, trailing string, err error) {
	if err := c.refreshSchema(); err != nil {
		return nil, record{}, "", err
	}
	if cs := c.cache[sql]; cs != nil {
		c.rec = record{}
		c.mode = modeLocal
		return cs.stmt, cs.rec, "", nil
	}
	stmt, rec, trailing, run, parsed, err := c.prepareWrite(sql)
	if err != nil || !isBlank(trailing) {
		return stmt, rec, trailing, err
	}
	err = c.checkWrites(sql, parsed, &rec)
	if err == nil {
		err = c.checkNumericWrites(sql, &rec) // numeric.go
	}
	if err != nil {
		stmt.Finalize()
		c.endStatement()
		return nil, record{}, "", err
	}
	rec.nextval = hasKeyword(run, "NEXTVAL") // once per text, not per run
	rec.keyRead = &lazyKeyRead{sql: sql}
	if hasKeyword(run, "SETVAL") {
		rec.writes = addName(rec.writes, sequencesTable) // setval.go
	}
	if rec.uncached {
		return stmt, rec, trailing, nil
	}
	if len(c.cache) >= maxCachedStmts {
		c.dropCache()
	}
	if c.cache == nil {
		c.cache = make(map[string]*cachedStmt)
		c.cached = make(map[*sqlite.Stmt]struct{})
	}
	c.cache[sql] = &cachedStmt{stmt: stmt, rec: rec}
	c.cached[stmt] = struct{}{}
	return stmt, rec, trailing, nil
}

// release is done with stmt: a cached statement is reset for its next use
// (sqlite3_reset resets even when it reports the last step's error), any
// other finalized.
func (c *conn) release(stmt *sqlite.Stmt) {
	if _, ok := c.cached[stmt]; !ok {
		stmt.Finalize()
		return
	}
	stmt.Reset()
	stmt.ClearBindings()
}

// dropCache finalizes every cached statement. None may be running.
func (c *conn) dropCache() {
	for _, cs := range c.cache {
		cs.stmt.Finalize()
	}
	c.cache, c.cached = nil, nil
}
