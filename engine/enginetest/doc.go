// Package enginetest is the conformance suite of certa/engine: one set of
// tests that every engine.Engine implementation passes, so that the
// contract written on the methods of engine.Engine and engine.Tx is checked
// the same way on every engine (as litestream's replica_client_test.go runs
// one suite over every replica client).
//
// An engine's own package runs it from a test:
//
//	func TestEngineConformance(t *testing.T) {
//		enginetest.Run(t, factory{})
//	}
//
// where factory opens fresh engines (Factory). The suite uses only the
// engine.Engine and engine.Tx interfaces and SQL that PostgreSQL accepts as
// it is (tables with primary keys of integer, bigint and text columns;
// INSERT, UPDATE, DELETE and SELECT with $n parameters), so it says nothing
// about how an engine works inside: SQLite's write lock and parking,
// PostgreSQL's backends and prepared transactions stay behind it. The
// SQLSTATEs it expects are PostgreSQL's.
//
// Each subtest is named after the contract it checks, opens its own
// engines, and takes milliseconds; waiting is bounded by deadlines, never
// by sleeping.
//
// Files by concept: enginetest.go (Factory, Run, the helpers), exec.go
// (Begin, Exec, Read, Describe, Catalog), writeset.go (Tx snapshots, write
// sets, visibility), savepoint.go, apply.go (Apply, FailedSeqnos,
// CheckChanges), ddl.go (CheckDDL and DDL write sets), state.go (Snapshot,
// Restore, Checksums, restart, Close), abort.go (Apply against local
// transactions: parking or brute-force abort).
package enginetest
