package sqlite

import (
	"sync"

	"certa/pgparse"
)

// Statements printed for SQLite, by their PostgreSQL text: parsing is a
// large part of a short statement's cost, and every pooled connection
// prepares the same texts. A printed statement depends on its text
// alone, so the cache needs no invalidation; clients that inline their
// values send a new text every time, so when full it is emptied rather
// than tracked for recency.

const maxPrinted = 4096

var printCache struct {
	sync.Mutex
	m map[string]printedStmt
}

type printedStmt struct {
	s   *pgparse.SQLite
	err error
}

// toSQLite is pgparse.ToSQLite through the cache.
func toSQLite(sql string) (*pgparse.SQLite, error) {
	printCache.Lock()
	p, ok := printCache.m[sql]
	printCache.Unlock()
	if ok {
		return p.s, p.err
	}
	s, err := pgparse.ToSQLite(sql)
	printCache.Lock()
	if len(printCache.m) >= maxPrinted || printCache.m == nil {
		printCache.m = make(map[string]printedStmt)
	}
	printCache.m[sql] = printedStmt{s, err}
	printCache.Unlock()
	return s, err
}
