package enginetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Factory opens the engines the suite tests.
type Factory interface {
	// Open returns a new engine holding no data (applied seqno 0), in its
	// default configuration. The factory closes it when t ends, also if
	// the suite closed it already.
	Open(t *testing.T) engine.Engine

	// Reopen opens again the data of e, an engine returned by Open or
	// Reopen that the suite has closed: a node restarting. The factory
	// closes the new engine when t ends.
	Reopen(t *testing.T, e engine.Engine) engine.Engine
}

// KnownFailures may be implemented by a Factory whose engine is known to
// fail some subtests: KnownFailures maps each one's name below Run (such
// as "WriteSet/SameValueUpdate") to why, and the suite skips it
// saying so. It is for differences found and not fixed yet, each with its
// issue; a name that no longer fails should be removed.
type KnownFailures interface {
	KnownFailures() map[string]string
}

// Run runs the whole suite over the engines f opens, one subtest per
// contract.
func Run(t *testing.T, f Factory) {
	var known map[string]string
	if k, ok := f.(KnownFailures); ok {
		known = k.KnownFailures()
	}
	for _, g := range []struct {
		name  string
		tests []subtest
	}{
		{"Exec", execTests},
		{"Read", readTests},
		{"Tx", txTests},
		{"WriteSet", writeSetTests},
		{"Savepoint", savepointTests},
		{"Apply", applyTests},
		{"DDL", ddlTests},
		{"State", stateTests},
		{"Abort", abortTests},
	} {
		t.Run(g.name, func(t *testing.T) {
			for _, st := range g.tests {
				t.Run(st.name, func(t *testing.T) {
					if why, ok := known[g.name+"/"+st.name]; ok {
						t.Skipf("known failure of this engine: %s", why)
					}
					st.run(t, f)
				})
			}
		})
	}
}

// subtest is one contract check.
type subtest struct {
	name string
	run  func(t *testing.T, f Factory)
}

// node is an engine under test with the seqno of its last Apply.
type node struct {
	t     *testing.T
	e     engine.Engine
	f     Factory
	seqno uint64
}

// open opens a fresh engine, which must hold no data.
func open(t *testing.T, f Factory) *node {
	t.Helper()
	n := &node{t: t, e: f.Open(t), f: f}
	if s, err := n.e.AppliedSeqno(); err != nil || s != 0 {
		t.Fatalf("new engine: AppliedSeqno %d, %v; want 0", s, err)
	}
	return n
}

// openT opens a fresh engine, creates table t (tableT) and commits each of
// inserts as a write set of its own.
func openT(t *testing.T, f Factory, inserts ...string) *node {
	t.Helper()
	n := open(t, f)
	n.ddl(tableT)
	for _, s := range inserts {
		n.commit(s)
	}
	return n
}

// reopen closes the engine and opens its data again.
func (n *node) reopen() {
	n.t.Helper()
	if err := n.e.Close(); err != nil {
		n.t.Fatalf("Close: %v", err)
	}
	n.e = n.f.Reopen(n.t, n.e)
}

var ctx = context.Background()

// begin starts a Tx that is rolled back when the test ends.
func (n *node) begin() engine.Tx {
	n.t.Helper()
	tx, err := n.e.Begin(ctx)
	if err != nil {
		n.t.Fatalf("Begin: %v", err)
	}
	n.t.Cleanup(func() { tx.Rollback() })
	return tx
}

// exec runs sql in tx and fails the test on error.
func exec(t *testing.T, tx engine.Tx, sql string, args ...any) *result.Buffer {
	t.Helper()
	b := &result.Buffer{}
	if err := tx.Exec(ctx, sql, b, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return b
}

// execErr runs sql in tx and returns its error.
func execErr(tx engine.Tx, sql string, args ...any) error {
	return tx.Exec(ctx, sql, &result.Buffer{}, args...)
}

// writeSet returns tx's write set, failing the test on error.
func writeSet(t *testing.T, tx engine.Tx) *writeset.WriteSet {
	t.Helper()
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatalf("WriteSet: %v", err)
	}
	return ws
}

// capture runs statements in a new Tx and returns its write set, rolling the
// Tx back as a session does at COMMIT.
func (n *node) capture(stmts ...string) *writeset.WriteSet {
	n.t.Helper()
	tx := n.begin()
	for _, s := range stmts {
		exec(n.t, tx, s)
	}
	ws := writeSet(n.t, tx)
	if err := tx.Rollback(); err != nil {
		n.t.Fatalf("Rollback: %v", err)
	}
	return ws
}

// items makes apply items of write sets at the seqnos after the node's.
func (n *node) items(wss ...*writeset.WriteSet) []engine.ApplyItem {
	items := make([]engine.ApplyItem, len(wss))
	for i, ws := range wss {
		items[i] = engine.ApplyItem{Seqno: n.seqno + uint64(i) + 1, WS: ws}
	}
	return items
}

// apply applies write sets in one batch at the next seqnos and returns the
// items, with their Err.
func (n *node) apply(wss ...*writeset.WriteSet) []engine.ApplyItem {
	n.t.Helper()
	items := n.items(wss...)
	n.applyItems(items, n.seqno+uint64(len(items)))
	return items
}

// applyItems applies items up to upTo, which becomes the node's seqno.
func (n *node) applyItems(items []engine.ApplyItem, upTo uint64) {
	n.t.Helper()
	if err := n.e.Apply(ctx, items, upTo); err != nil {
		n.t.Fatalf("Apply up to %d: %v", upTo, err)
	}
	n.seqno = upTo
	n.wantApplied(upTo)
}

// wantApplied checks the applied seqno.
func (n *node) wantApplied(want uint64) {
	n.t.Helper()
	if s, err := n.e.AppliedSeqno(); err != nil || s != want {
		n.t.Fatalf("AppliedSeqno %d, %v; want %d", s, err, want)
	}
}

// commit captures statements and applies their write set, which must apply.
func (n *node) commit(stmts ...string) *writeset.WriteSet {
	n.t.Helper()
	ws := n.capture(stmts...)
	if ws == nil {
		n.t.Fatalf("%q changed nothing", stmts)
	}
	wantApplied(n.t, n.apply(ws)...)
	return ws
}

// ddlWriteSet checks a schema statement and returns its write set.
func (n *node) ddlWriteSet(stmt string) *writeset.WriteSet {
	n.t.Helper()
	ddl, err := n.e.CheckDDL(ctx, stmt)
	if err != nil {
		n.t.Fatalf("CheckDDL %s: %v", stmt, err)
	}
	if ddl.Statement == "" {
		n.t.Fatalf("CheckDDL %s: no statement to replicate", stmt)
	}
	return &writeset.WriteSet{DDL: ddl.Statement, Tables: ddl.Tables}
}

// ddl checks and applies schema statements, one item each.
func (n *node) ddl(stmts ...string) {
	n.t.Helper()
	for _, s := range stmts {
		wantApplied(n.t, n.apply(n.ddlWriteSet(s))...)
	}
}

// wantApplied fails the test if an item failed.
func wantApplied(t *testing.T, items ...engine.ApplyItem) {
	t.Helper()
	for _, it := range items {
		if it.Err != nil {
			t.Fatalf("seqno %d failed: %v", it.Seqno, it.Err)
		}
	}
}

// query returns the rows of a query run in a new Tx.
func (n *node) query(sql string, args ...any) [][]result.Value {
	n.t.Helper()
	tx := n.begin()
	defer tx.Rollback()
	return exec(n.t, tx, sql, args...).Rows
}

// wantRows compares rows.
func wantRows(t *testing.T, got [][]result.Value, want ...[]result.Value) {
	t.Helper()
	if !sameRows(got, want) {
		t.Fatalf("rows:\n got %v\nwant %v", got, want)
	}
}

// sameRows reports whether two lists of rows are equal (no rows and nil
// alike).
func sameRows(a, b [][]result.Value) bool {
	return len(a) == 0 && len(b) == 0 || reflect.DeepEqual(a, b)
}

func row(vals ...result.Value) []result.Value { return vals }

// wantCode checks that err is a *sqlerr.Error with SQLSTATE code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		t.Fatalf("%s: error %v (%T), want a *sqlerr.Error with SQLSTATE %s", what, err, err, code)
	}
	if se.Code != code {
		t.Fatalf("%s: error %v, want SQLSTATE %s", what, err, code)
	}
}

// wantSQLErr checks that err is a *sqlerr.Error, whatever its SQLSTATE.
func wantSQLErr(t *testing.T, what string, err error) {
	t.Helper()
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code == "" {
		t.Fatalf("%s: error %v (%T), want a *sqlerr.Error", what, err, err)
	}
}

// wantKeys compares a write set's keys with the keys given, in any order.
func wantKeys(t *testing.T, ws *writeset.WriteSet, keys ...writeset.Key) {
	t.Helper()
	want := &writeset.WriteSet{Keys: append([]writeset.Key(nil), keys...)}
	want.Normalize()
	if !reflect.DeepEqual(ws.Keys, want.Keys) {
		t.Errorf("keys %s, want %s", fmtKeys(ws.Keys), fmtKeys(want.Keys))
	}
}

func fmtKeys(keys []writeset.Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = fmt.Sprintf("%q", string(k))
	}
	return fmt.Sprint(s)
}

// key is the key of a row of table with one key column.
func key(table string, pk any) writeset.Key { return writeset.EncodeKey(table, pk) }

// tableT is the table most subtests use.
const tableT = "CREATE TABLE t (id integer PRIMARY KEY, v text, n bigint)"

// readBuf runs a query by Engine.Read and returns what it reported.
func (n *node) readBuf(sql string, args ...any) *result.Buffer {
	n.t.Helper()
	b := &result.Buffer{}
	if err := n.e.Read(ctx, sql, b, args...); err != nil {
		n.t.Fatalf("Read %s: %v", sql, err)
	}
	return b
}

// read returns the rows of a query run by Engine.Read.
func (n *node) read(sql string, args ...any) [][]result.Value {
	n.t.Helper()
	return n.readBuf(sql, args...).Rows
}
