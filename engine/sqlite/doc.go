// Package sqlite implements certa's engine (certa/engine) on embedded SQLite,
// through zombiezen.com/go/sqlite (pure Go, modernc.org/sqlite underneath).
// It is the only package of certa that imports SQLite.
//
// Local transactions run on pooled connections in WAL mode, each reading the
// snapshot pinned by its deferred BEGIN; their write sets come from the SQLite
// session extension. Certified write sets are applied in log order by one
// dedicated applier connection, in one SQLite transaction per batch that also
// records the applied seqno.
//
// SQLite allows one writer per file. Rather than let writers collide inside
// SQLite ("database is locked"), every writer first takes a Go-level write
// lock (writelock.go): local writers wait for it with a bounded timeout, and
// the applier has priority, brute-force aborting a local holder that keeps it
// past a short grace. Read-only work never takes the lock. A deferred
// transaction whose snapshot went stale before its first write
// (SQLITE_BUSY_SNAPSHOT) moves its snapshot forward when the tables it has read
// were not changed since (history.go), instead of failing.
//
// Files by concept: config.go (Config), engine.go (Open, pool, metadata),
// conn.go (one connection and its authorizer), auth.go (what statements may
// do), writelock.go, tx.go (local transactions), exec.go (running a statement
// and reporting its result), capture.go (write sets from changesets), ddl.go
// (schema statements), apply.go, history.go, snapshot.go (state transfer),
// errors.go (SQLite errors to SQLSTATEs), sqltext.go (tiny SQL lexing),
// baseline.go (the no-replication baseline for benchmarks).
package sqlite
