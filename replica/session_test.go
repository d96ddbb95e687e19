package replica

import (
	"context"
	"strings"
	"testing"

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
	e    *fakeEngine
	ran  []string
	done bool
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
		{"ROLLBACK TO SAVEPOINT nosuch", "!0A000", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"RELEASE nosuch", "!0A000", 'E'},
		{"COMMIT", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"COMMIT AND CHAIN", "!0A000", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
	})
	if len(e.committed) != 0 || e.open != 0 {
		t.Fatalf("committed %v, %d transactions open; want nothing", e.committed, e.open)
	}
}
