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
// lock (writelock.go). Read-only work never takes it. A local transaction
// holds it from its first write; when it is idle, waiting for its client, a
// local writer or the applier parks it (park.go: its changes are set aside
// and restored at its next statement); local writers wait for a busy holder
// with a bounded timeout, and the applier, which has priority, brute-force
// aborts a holder still busy after a short grace. DESIGN.md has the details.
//
// A deferred transaction whose snapshot went stale before its first write
// (SQLITE_BUSY_SNAPSHOT) moves its snapshot forward instead of failing when
// that cannot change what it has read: the tables it read (as the authorizer
// reports them) were not changed by the applies since (history.go), or else
// re-running its earlier statements on the new snapshot returns exactly what
// the client saw (moveforward.go).
//
// Files by concept: config.go (Config), engine.go (Open, pool, metadata),
// conn.go (one connection and its authorizer), auth.go (what statements may
// do), writelock.go, tx.go (local transactions), park.go, abort.go
// (interrupts and brute-force abort), savepoint.go, exec.go (running a statement and reporting its
// result), capture.go (write sets from changesets), moveforward.go,
// history.go, ddl.go (schema statements), txschema.go (schema statements inside
// a transaction block) and segments.go (their write sets), altertable.go
// (ALTER TABLE forms SQLite lacks), addprimarykey.go, drop.go, truncate.go, createtable.go (PostgreSQL's CREATE
// TABLE made to mean the same in SQLite), keys.go (keys certification can
// follow), sequence.go (SERIAL and identity values), createsequence.go,
// advisory.go (advisory locks), catalog.go, catalogdef.go, catalogdb.go,
// catalogfuncs.go and catalogacl.go (pg_catalog and information_schema),
// seqrelation.go (a sequence read as a relation), locktable.go (LOCK
// TABLE), fkeys.go (foreign keys:
// parent keys in write sets, deferred checks), apply.go, snapshot.go (state
// transfer), errors.go (SQLite errors to SQLSTATEs), sqltext.go (tiny SQL
// lexing), baseline.go (the no-replication baseline for benchmarks),
// printcache.go (client queries and data changes, read by PostgreSQL's
// parser and printed for SQLite by pgparse, cached), pgops.go (the
// functions that printed SQL calls where SQLite's own mean otherwise).
package sqlite
