package replica

import (
	"context"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// fakeEngine runs statements as text: a Tx keeps the statements it ran, a
// statement containing FAIL fails, and WriteSet records what would be
// committed (and returns nil, so that no log is needed).
type fakeEngine struct {
	engine.Engine
	committed [][]string // what each WriteSet captured
	open      int        // transactions begun and not rolled back
}

func (e *fakeEngine) Begin(ctx context.Context) (engine.Tx, error) {
	e.open++
	return &fakeTx{e: e}, nil
}

func (e *fakeEngine) Read(ctx context.Context, sql string, w result.Writer, args ...any) error {
	return engine.ErrNotReadOnly
}

type fakeTx struct {
	e     *fakeEngine
	ran   []string
	marks []int // len(ran) at each savepoint
	done  bool
}

func (tx *fakeTx) Savepoint(ctx context.Context) error {
	tx.marks = append(tx.marks, len(tx.ran))
	return nil
}

func (tx *fakeTx) RollbackTo(ctx context.Context, n int) error {
	tx.ran = tx.ran[:tx.marks[n-1]]
	tx.marks = tx.marks[:n]
	return nil
}

func (tx *fakeTx) Release(ctx context.Context, n int) error {
	tx.marks = tx.marks[:n-1]
	return nil
}

func (tx *fakeTx) Snapshot() uint64 { return 0 }

func (tx *fakeTx) Exec(ctx context.Context, sql string, w result.Writer, args ...any) error {
	if strings.Contains(sql, "FAIL") {
		return sqlerr.New(sqlerr.UniqueViolation, "fake failure")
	}
	tx.ran = append(tx.ran, sql)
	return w.Complete("INSERT 0 1")
}

func (tx *fakeTx) WriteSet() (*writeset.WriteSet, error) {
	tx.e.committed = append(tx.e.committed, append([]string{}, tx.ran...))
	return nil, nil
}

func (tx *fakeTx) Prioritize(time.Duration) {}

func (tx *fakeTx) Rollback() error {
	if !tx.done {
		tx.done = true
		tx.e.open--
	}
	return nil
}

func newTestSession() (*Session, *fakeEngine) {
	e := &fakeEngine{}
	n := &Node{engine: e}
	n.cfg.setDefaults()
	return n.NewSession(), e
}

// step runs one statement and returns its tag, or the SQLSTATE of its
// error prefixed with "!", and the session's status after it.
func step(s *Session, sql string) (string, byte) {
	buf := &result.Buffer{}
	if err := s.Query(context.Background(), sql, buf); err != nil {
		return "!" + sqlerr.Code(err), s.TxStatus()
	}
	return buf.Tag, s.TxStatus()
}

type sessionStep struct {
	sql    string
	tag    string // or "!" and the SQLSTATE
	status byte
}

func runSteps(t *testing.T, s *Session, steps []sessionStep) {
	t.Helper()
	for i, st := range steps {
		tag, status := step(s, st.sql)
		if tag != st.tag || status != st.status {
			t.Fatalf("step %d %q: got %q, status %c; want %q, status %c", i+1, st.sql, tag, status, st.tag, st.status)
		}
	}
}

// A block that failed commits nothing, and its COMMIT answers ROLLBACK, as
// in PostgreSQL.
func TestCommitOfFailedBlockAnswersRollback(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
		{"INSERT 2", "!25P02", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
	})
	if len(e.committed) != 0 || e.open != 0 {
		t.Fatalf("committed %v, %d transactions open; want nothing", e.committed, e.open)
	}
}

// Savepoint commands never end the block.
func TestSavepointCommandsNeverEndTheBlock(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"ROLLBACK TO SAVEPOINT nosuch", "!3B001", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"RELEASE nosuch", "!3B001", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"COMMIT AND CHAIN", "!0A000", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
	})
	if len(e.committed) != 0 || e.open != 0 {
		t.Fatalf("committed %v, %d transactions open; want nothing", e.committed, e.open)
	}
}

// Savepoints as in PostgreSQL 15 (the same statements run there by hand):
// the errors and states outside a block and in a failed one, and which
// statements a COMMIT keeps, with names reused and quoted.
func TestSavepointsAsInPostgreSQL(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"SAVEPOINT a", "!25P01", 'I'},
		{"RELEASE a", "!25P01", 'I'},
		{"ROLLBACK TO a", "!25P01", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"SAVEPOINT a", "SAVEPOINT", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
		{"RELEASE a", "!25P02", 'E'},
		{"SAVEPOINT b", "!25P02", 'E'},
		{"ROLLBACK TO nosuch", "!3B001", 'E'},
		{"ROLLBACK TO a", "ROLLBACK", 'T'},
		{`SAVEPOINT "A"`, "SAVEPOINT", 'T'},
		{"INSERT 2", "INSERT 0 1", 'T'},
		{"SAVEPOINT a", "SAVEPOINT", 'T'},
		{"INSERT 3", "INSERT 0 1", 'T'},
		{"ROLLBACK TO SAVEPOINT a", "ROLLBACK", 'T'},
		{`RELEASE "A"`, "RELEASE", 'T'},
		{"ROLLBACK TO a", "ROLLBACK", 'T'},
		{"INSERT 4", "INSERT 0 1", 'T'},
		{"COMMIT", "COMMIT", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"SAVEPOINT x", "SAVEPOINT", 'T'},
		{"SAVEPOINT X", "SAVEPOINT", 'T'},
		{"INSERT 5", "INSERT 0 1", 'T'},
		{"ROLLBACK TO x", "ROLLBACK", 'T'},
		{"RELEASE SAVEPOINT x", "RELEASE", 'T'},
		{"INSERT 6", "INSERT 0 1", 'T'},
		{"ROLLBACK WORK TO SAVEPOINT x", "ROLLBACK", 'T'},
		{"INSERT 7", "INSERT 0 1", 'T'},
		{"ROLLBACK TO x", "ROLLBACK", 'T'},
		{"SAVEPOINT", "!42601", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"SAVEPOINT y", "SAVEPOINT", 'T'},
		{"INSERT 8", "INSERT 0 1", 'T'},
		{"RELEASE savepoint", "!3B001", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
	})
	want := [][]string{{"INSERT 1", "INSERT 4"}}
	if len(e.committed) != 1 || strings.Join(e.committed[0], ",") != strings.Join(want[0], ",") || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want %q", e.committed, e.open, want)
	}
}

// A block that failed with a savepoint keeps its transaction for ROLLBACK
// TO; one without lets it go at once.
func TestFailedBlockKeepsTxOnlyWithSavepoints(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
	})
	if e.open != 0 {
		t.Fatalf("%d transactions open in a failed block without savepoints", e.open)
	}
	runSteps(t, s, []sessionStep{
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"SAVEPOINT a", "SAVEPOINT", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
	})
	if e.open != 1 {
		t.Fatalf("%d transactions open in a failed block with a savepoint, want 1", e.open)
	}
	runSteps(t, s, []sessionStep{{"ROLLBACK", "ROLLBACK", 'I'}})
	if e.open != 0 {
		t.Fatalf("%d transactions open after ROLLBACK", e.open)
	}
}

// The transaction status through idle, block and failed block: errors
// outside a block leave it idle, an error in a block fails it until
// ROLLBACK or COMMIT, in which nothing but those runs, and the statements
// of one query after a failed one do not run.
func TestTransactionStatus(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"INSERT FAIL", "!23505", 'I'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"INSERT 1; INSERT FAIL; INSERT 2", "!23505", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"BEGIN", "BEGIN", 'T'},
		{"SET application_name = 'x'", "SET", 'T'},
		{"INSERT 3; INSERT FAIL; INSERT 4", "!23505", 'E'},
		{"INSERT 5", "!25P02", 'E'},
		{"SET application_name = 'y'", "!25P02", 'E'},
		{"SHOW application_name", "!25P02", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"SHOW application_name", "SHOW", 'I'},
		{"BEGIN; INSERT 6; COMMIT", "COMMIT", 'I'},
	})
	want := []string{"INSERT 1", "INSERT 6"}
	got := make([]string, len(e.committed))
	for i, c := range e.committed {
		got[i] = strings.Join(c, ",")
	}
	if strings.Join(got, "|") != strings.Join(want, "|") || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want %q", got, e.open, want)
	}
}
