package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// recorder is a result.Writer that keeps what it is told.
type recorder struct {
	mu    sync.Mutex
	cols  []result.Column
	rows  [][]result.Value
	tag   string
	empty bool
	// onRow, if set, is called (outside mu) before each row is kept.
	onRow func()
}

func (r *recorder) Columns(cols []result.Column) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cols = append([]result.Column(nil), cols...)
	return nil
}

func (r *recorder) Row(vals []result.Value) error {
	if r.onRow != nil {
		r.onRow()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, append([]result.Value(nil), vals...))
	return nil
}

func (r *recorder) Complete(tag string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tag = tag
	return nil
}

func (r *recorder) Empty() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.empty = true
	return nil
}

// testEngine is an engine under test with a seqno counter for Apply.
type testEngine struct {
	*Engine
	t     *testing.T
	seqno uint64
}

func openTest(t *testing.T, cfg Config) *testEngine {
	t.Helper()
	if cfg.Path == "" {
		cfg.Path = filepath.Join(t.TempDir(), "db.sqlite")
	}
	e, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.AppliedSeqno()
	if err != nil {
		t.Fatal(err)
	}
	return &testEngine{Engine: e, t: t, seqno: s}
}

func (e *testEngine) begin() engine.Tx {
	e.t.Helper()
	tx, err := e.Begin(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { tx.Rollback() })
	return tx
}

// exec runs sql in tx and fails the test on error.
func exec(t *testing.T, tx engine.Tx, sql string) *recorder {
	t.Helper()
	r := &recorder{}
	if err := tx.Exec(context.Background(), sql, r); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return r
}

// execErr runs sql in tx and returns its SQLSTATE and error.
func execErr(tx engine.Tx, sql string) (string, error) {
	err := tx.Exec(context.Background(), sql, &recorder{})
	return sqlerr.Code(err), err
}

// capture runs statements in a new local transaction and returns its write
// set (rolling the transaction back, as the session layer does at COMMIT).
func (e *testEngine) capture(stmts ...string) *writeset.WriteSet {
	e.t.Helper()
	tx := e.begin()
	for _, s := range stmts {
		exec(e.t, tx, s)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		e.t.Fatal(err)
	}
	tx.Rollback()
	return ws
}

// apply applies write sets at the next seqnos and returns the items.
func (e *testEngine) apply(wss ...*writeset.WriteSet) []engine.ApplyItem {
	e.t.Helper()
	items := make([]engine.ApplyItem, len(wss))
	for i, ws := range wss {
		e.seqno++
		items[i] = engine.ApplyItem{Seqno: e.seqno, WS: ws}
	}
	if err := e.Apply(context.Background(), items, e.seqno); err != nil {
		e.t.Fatal(err)
	}
	return items
}

// commit captures statements and applies their write set.
func (e *testEngine) commit(stmts ...string) *writeset.WriteSet {
	e.t.Helper()
	ws := e.capture(stmts...)
	if ws == nil {
		e.t.Fatalf("%v changed nothing", stmts)
	}
	e.apply(ws)
	return ws
}

// ddl checks and applies a schema statement.
func (e *testEngine) ddl(stmt string) {
	e.t.Helper()
	ddl, err := e.CheckDDL(context.Background(), stmt)
	if err != nil {
		e.t.Fatalf("%s: %v", stmt, err)
	}
	items := e.apply(&writeset.WriteSet{DDL: ddl.Statement, Tables: ddl.Tables})
	if items[0].Err != nil {
		e.t.Fatalf("%s: %v", stmt, items[0].Err)
	}
}

// legacyDDL applies a schema statement in SQLite's own syntax (a column
// without a type, WITHOUT ROWID), which CheckDDL refuses as PostgreSQL's
// parser does, as the log of an older certa may still hold it.
func (e *testEngine) legacyDDL(stmt string) {
	e.t.Helper()
	if items := e.apply(&writeset.WriteSet{DDL: stmt}); items[0].Err != nil {
		e.t.Fatalf("%s: %v", stmt, items[0].Err)
	}
}

// query returns the rows of a query in a fresh transaction.
func (e *testEngine) query(sql string) [][]result.Value {
	e.t.Helper()
	tx := e.begin()
	defer tx.Rollback()
	return exec(e.t, tx, sql).rows
}

func wantRows(t *testing.T, got [][]result.Value, want ...[]result.Value) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows:\n got %v\nwant %v", got, want)
	}
}

func row(vals ...result.Value) []result.Value { return vals }

func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	if got := sqlerr.Code(err); got != code {
		t.Fatalf("error %v: SQLSTATE %q, want %q", err, got, code)
	}
	var se *sqlerr.Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a *sqlerr.Error", err)
	}
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func fmtKeys(keys []writeset.Key) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = fmt.Sprintf("%q", string(k))
	}
	return out
}
