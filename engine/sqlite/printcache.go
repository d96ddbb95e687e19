package sqlite

import (
	"certa/pgparse"
)

// printCache holds the statements printed for SQLite (pgparse's caches:
// by text, and by shape for texts with their values written in). A
// printed statement depends on its text alone, so one cache serves every
// engine of the process and needs no invalidation.
var printCache pgparse.SQLiteCache

// toSQLite is pgparse.ToSQLite through the cache.
func toSQLite(sql string) (*pgparse.SQLite, error) {
	return printCache.ToSQLite(sql)
}
