package replica

import (
	"context"
	"slices"
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
	noValues  int        // how many more statements with NOSEQ find no sequence values
	conflicts int        // how many more statements with CONFLICT lose certification
	waited    int        // WaitSequenceValues calls
}

func (e *fakeEngine) WaitSequenceValues(ctx context.Context, name string) error {
	e.waited++
	return nil
}

func (e *fakeEngine) Begin(ctx context.Context) (engine.Tx, error) {
	e.open++
	return &fakeTx{e: e}, nil
}

func (e *fakeEngine) RunsPostgreSQL() bool { return false }

func (e *fakeEngine) NewSession() engine.Session { return fakeSession{e} }

// fakeSession is the fake engine's session: the engine itself.
type fakeSession struct{ *fakeEngine }

func (fakeSession) Close() {}

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

func (tx *fakeTx) TrackReads(context.Context) error {
	tx.ran = append(tx.ran, "track reads")
	return nil
}

func (tx *fakeTx) Reads(context.Context) (engine.Reads, error) { return engine.Reads{}, nil }

func (tx *fakeTx) SetReadOnly(context.Context) error {
	tx.ran = append(tx.ran, "read only")
	return nil
}

func (tx *fakeTx) Exec(ctx context.Context, sql string, w result.Writer, args ...any) error {
	if strings.Contains(sql, "FAIL") {
		return sqlerr.New(sqlerr.UniqueViolation, "fake failure")
	}
	if strings.Contains(sql, "NOSEQ") && tx.e.noValues > 0 {
		tx.e.noValues--
		return sqlerr.Wrap(&engine.NoSequenceValuesError{Sequence: "s"}, sqlerr.SerializationFailure, "no values yet")
	}
	if strings.Contains(sql, "CONFLICT") && tx.e.conflicts > 0 {
		tx.e.conflicts--
		return sqlerr.New(sqlerr.SerializationFailure, "fake conflict")
	}
	tx.ran = append(tx.ran, sql)
	return w.Complete("INSERT 0 1")
}

func (tx *fakeTx) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	return nil, nil, nil
}

func (tx *fakeTx) ExecSchema(ctx context.Context, sql string, w result.Writer) error {
	if strings.Contains(sql, "FAIL") {
		return sqlerr.New(sqlerr.FeatureNotSupported, "fake refusal")
	}
	tx.ran = append(tx.ran, "schema: "+sql)
	return w.Complete("CREATE TABLE")
}

func (tx *fakeTx) WriteSet() (*writeset.WriteSet, error) {
	tx.e.committed = append(tx.e.committed, append([]string{}, tx.ran...))
	return nil, nil
}

func (tx *fakeTx) HandOver(uint64) {}

func (tx *fakeTx) ExecLocal(context.Context, string, result.Writer) (bool, error) { return false, nil }

func (tx *fakeTx) CommitLocal(context.Context) error { return tx.Rollback() }

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

// A schema statement inside a block runs in the block's transaction
// (Tx.ExecSchema) and commits with it; a refused one fails the block.
func TestSchemaStatementsInABlock(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"CREATE TABLE t (id int PRIMARY KEY)", "CREATE TABLE", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"SAVEPOINT a", "SAVEPOINT", 'T'},
		{"CREATE TABLE FAIL (id int PRIMARY KEY)", "!0A000", 'E'},
		{"ROLLBACK TO SAVEPOINT a", "ROLLBACK", 'T'},
		{"COMMIT", "COMMIT", 'I'},
	})
	want := []string{"schema: CREATE TABLE t (id int PRIMARY KEY)", "INSERT 1"}
	if len(e.committed) != 1 || !slices.Equal(e.committed[0], want) || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want %q", e.committed, e.open, want)
	}
}

// PREPARE TRANSACTION, which certa refuses, ends the block as a failed
// PREPARE TRANSACTION does in PostgreSQL (it becomes a ROLLBACK): with
// the error in a block, with ROLLBACK's answer in a failed one.
func TestRefusedPrepareTransactionRollsBack(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"PREPARE TRANSACTION 'x'", "!0A000", 'I'},
		{"INSERT 2", "INSERT 0 1", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
		{"PREPARE TRANSACTION 'y'", "ROLLBACK", 'I'},
		{"COMMIT PREPARED 'x'", "!0A000", 'I'},
	})
	if len(e.committed) != 1 || !slices.Equal(e.committed[0], []string{"INSERT 2"}) || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want INSERT 2 alone", e.committed, e.open)
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
	})
	if len(e.committed) != 0 || e.open != 0 {
		t.Fatalf("committed %v, %d transactions open; want nothing", e.committed, e.open)
	}
}

// COMMIT AND CHAIN and ROLLBACK AND CHAIN end the block and start another
// (TestReadOnlyTransactionsAsPostgreSQL: with its modes), as in
// PostgreSQL 15: after a failed block too, never outside one.
func TestAndChain(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"COMMIT AND CHAIN", "!25P01", 'I'},
		{"ROLLBACK AND CHAIN", "!25P01", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT 1", "INSERT 0 1", 'T'},
		{"COMMIT AND CHAIN", "COMMIT", 'T'},
		{"INSERT 2", "INSERT 0 1", 'T'},
		{"INSERT FAIL", "!23505", 'E'},
		{"COMMIT AND CHAIN", "ROLLBACK", 'T'},
		{"INSERT 3", "INSERT 0 1", 'T'},
		{"ROLLBACK AND CHAIN", "ROLLBACK", 'T'},
		{"INSERT 4", "INSERT 0 1", 'T'},
		{"COMMIT AND NO CHAIN", "COMMIT", 'I'},
	})
	want := [][]string{{"INSERT 1"}, {"INSERT 4"}}
	if len(e.committed) != 2 || !slices.Equal(e.committed[0], want[0]) || !slices.Equal(e.committed[1], want[1]) || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want %q", e.committed, e.open, want)
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
// ROLLBACK or COMMIT, in which nothing but those runs (BEGIN neither), and
// the statements of one query after a failed one do not run.
func TestTransactionStatus(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"INSERT FAIL", "!23505", 'I'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"INSERT INTO t VALUES (1); INSERT INTO \"FAIL\" VALUES (0); INSERT INTO t VALUES (2)", "!23505", 'I'},
		{"INSERT INTO t VALUES (7); INSERT INTO t VALUES (8)", "INSERT 0 1", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"BEGIN", "BEGIN", 'T'},
		{"SET application_name = 'x'", "SET", 'T'},
		{"INSERT INTO t VALUES (3); INSERT INTO \"FAIL\" VALUES (0); INSERT INTO t VALUES (4)", "!23505", 'E'},
		{"INSERT 5", "!25P02", 'E'},
		{"BEGIN", "!25P02", 'E'},
		{"SET application_name = 'y'", "!25P02", 'E'},
		{"SHOW application_name", "!25P02", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"SHOW application_name", "SHOW", 'I'},
		{"BEGIN; INSERT INTO t VALUES (6); COMMIT", "COMMIT", 'I'},
	})
	// A query's statements outside a block are one transaction, as in
	// PostgreSQL: all or nothing.
	want := []string{"INSERT INTO t VALUES (7),INSERT INTO t VALUES (8)", "INSERT INTO t VALUES (6)"}
	got := make([]string, len(e.committed))
	for i, c := range e.committed {
		got[i] = strings.Join(c, ",")
	}
	if strings.Join(got, "|") != strings.Join(want, "|") || e.open != 0 {
		t.Fatalf("committed %q, %d transactions open; want %q", got, e.open, want)
	}
}

// show returns the value SHOW name gives in s.
func show(t *testing.T, s *Session, name string) string {
	t.Helper()
	buf := &result.Buffer{}
	if err := s.Query(context.Background(), "SHOW "+name, buf); err != nil || len(buf.Rows) != 1 {
		t.Fatalf("SHOW %s: %v %v", name, err, buf.Rows)
	}
	return buf.Rows[0][0].(string)
}

// Settings roll back with their block, to a savepoint with it, and SET
// LOCAL lasts until the block ends, as in PostgreSQL.
func TestSettingsFollowTheTransaction(t *testing.T) {
	s, _ := newTestSession()
	for _, c := range []struct {
		steps []string
		name  string
		want  string
	}{
		{[]string{"BEGIN", "SET application_name = 'x'", "ROLLBACK"}, "application_name", ""},
		{[]string{"BEGIN", "SET application_name = 'x'", "COMMIT"}, "application_name", "x"},
		{[]string{"BEGIN", "SET application_name = 'y'", "INSERT FAIL", "COMMIT"}, "application_name", "x"},
		{[]string{"SET application_name = 'z'; INSERT INTO \"FAIL\" VALUES (0)"}, "application_name", "x"},
		{[]string{"SET application_name = 'z'; INSERT INTO t VALUES (1)"}, "application_name", "z"},
		{[]string{"SET LOCAL certa.consistency = 'sync'"}, "certa.consistency", "local"},
		{[]string{"BEGIN", "SET LOCAL certa.consistency = 'sync'"}, "certa.consistency", "sync"},
		{[]string{"COMMIT"}, "certa.consistency", "local"},
		{[]string{"BEGIN", "SET timezone = 'GMT'", "SET LOCAL timezone = 'Etc/UTC'", "COMMIT"}, "timezone", "GMT"},
		{[]string{"BEGIN", "SET statement_timeout = '5s'", "SAVEPOINT a", "SET statement_timeout = '7s'",
			"ROLLBACK TO SAVEPOINT a"}, "statement_timeout", "5s"},
		{[]string{"SET statement_timeout = '9s'", "INSERT FAIL", "ROLLBACK TO a", "COMMIT"}, "statement_timeout", "5s"},
	} {
		for _, sql := range c.steps {
			step(s, sql)
		}
		if got := show(t, s, c.name); got != c.want {
			t.Fatalf("after %q: %s = %q, want %q", c.steps, c.name, got, c.want)
		}
	}
	// The client is told of reported parameters the rollback changes.
	s.TakeReported()
	step(s, "BEGIN")
	step(s, "SET application_name = 'w'")
	step(s, "ROLLBACK")
	if got := s.TakeReported(); len(got) != 2 || got[1] != [2]string{"application_name", "z"} {
		t.Fatalf("reported %q, want application_name w then z", got)
	}
}

// SET LOCAL and SET TRANSACTION outside a block warn, as in PostgreSQL
// (25P01), and in a block (an implicit one too) do not.
func TestSetOutsideBlockWarns(t *testing.T) {
	s, _ := newTestSession()
	for sql, want := range map[string]int{
		"SET LOCAL application_name = 'x'":                             1,
		"SET TRANSACTION READ ONLY":                                    1,
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE":        0,
		"SELECT set_config('application_name', 'x', true)":             0,
		"SET LOCAL application_name = 'x'; SET application_name = 'y'": 0,
	} {
		var got []*sqlerr.Error
		ctx := sqlerr.WithNotices(context.Background(), func(n *sqlerr.Error) { got = append(got, n) })
		if err := s.Query(ctx, sql, &result.Buffer{}); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if len(got) != want || want == 1 && (got[0].Severity != "WARNING" || got[0].Code != sqlerr.NoActiveTransaction) {
			t.Errorf("%s: notices %v, want %d warning", sql, got, want)
		}
	}
}

// Over an engine that keeps timestamps in UTC and writes ISO dates (the
// embedded one), SET TimeZone to another zone and SET DateStyle to
// another output style are refused, not taken and ignored (a time
// written without offset would be read as UTC).
func TestTimeZoneAndDateStyleOfUTCEngine(t *testing.T) {
	s, _ := newTestSession()
	for sql, want := range map[string]string{
		"SET TimeZone = 'UTC'":                            "SET",
		"SET TIME ZONE 'Etc/UTC'":                         "SET",
		"SET timezone TO '+00:00'":                        "SET",
		"SET TIME ZONE LOCAL":                             "SET",
		"SET TimeZone = 'America/Los_Angeles'":            "!0A000",
		"SET TIME ZONE '+02'":                             "!0A000",
		"SELECT set_config('timezone', 'EST5EDT', false)": "!0A000",
		"set time zone -7":                                "!0A000",
		"SET TIME ZONE 0":                                 "SET",
		"SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE":  "SET",
		"SET TIME ZONE INTERVAL '+02:00' HOUR TO MINUTE":  "!0A000",
		"SET DateStyle = 'ISO, DMY'":                      "SET",
		"SET DateStyle = 'SQL'":                           "!0A000",
		"SET datestyle = German":                          "!0A000",
		"SET DateStyle = 'nonsense'":                      "!22023",
	} {
		if got, _ := step(s, sql); got != want {
			t.Errorf("%s: %s, want %s", sql, got, want)
		}
	}
	step(s, "SET TimeZone = 'UTC'")
	step(s, "SET TimeZone = 'Europe/Paris'")
	if got := show(t, s, "timezone"); got != "UTC" {
		t.Errorf("TimeZone after a refusal: %q", got)
	}
}

// DISCARD SEQUENCES forgets the session's sequence values (what currval
// and lastval answer), as it does a backend's; DISCARD ALL runs it as
// one of its steps (discardAll).
func TestDiscardForgetsSequenceValues(t *testing.T) {
	s, _ := newTestSession()
	for _, c := range []struct {
		sql    string
		forget bool
	}{{"DISCARD SEQUENCES", true}, {"discard sequences", true}, {"DISCARD PLANS", false}} {
		s.seqValues = engine.SequenceValues{}
		s.seqValues.Took("s", 5)
		step(s, c.sql)
		if _, ok := s.seqValues.LastValue(); ok == c.forget {
			t.Errorf("%s: session's values %+v", c.sql, s.seqValues)
		}
	}
}

// An autocommit statement that finds no values of a sequence waits for
// them and runs again, as often as it takes (up to maxSequenceWaits):
// those runs are not conflicts, whose retries stay AutocommitRetries.
func TestAutocommitWaitsForSequenceValues(t *testing.T) {
	s, e := newTestSession()
	e.noValues, e.conflicts = 6, 2
	if tag, _ := step(s, "INSERT NOSEQ CONFLICT"); tag != "INSERT 0 1" || e.waited != 6 {
		t.Fatalf("got %q after %d waits, want INSERT 0 1 after 6", tag, e.waited)
	}
	e.noValues = maxSequenceWaits + 1
	if tag, _ := step(s, "INSERT NOSEQ"); tag != "!40001" {
		t.Fatalf("with no values ever: %q, want !40001", tag)
	}
	e.noValues, e.conflicts = 0, s.node.cfg.AutocommitRetries+1
	if tag, _ := step(s, "INSERT CONFLICT"); tag != "!40001" {
		t.Fatalf("losing every time: %q, want !40001", tag)
	}
	if e.open != 0 {
		t.Fatalf("%d transactions left open", e.open)
	}
}

// SHOW's column is the setting's name as PostgreSQL spells it, in the
// result and when described.
func TestShowColumnNames(t *testing.T) {
	s, _ := newTestSession()
	for sql, want := range map[string]string{"SHOW datestyle": "DateStyle", "SHOW TIMEZONE": "TimeZone",
		"SHOW intervalstyle": "IntervalStyle", "SHOW search_path": "search_path"} {
		buf := &result.Buffer{}
		if err := s.Query(context.Background(), sql, buf); err != nil || len(buf.Cols) != 1 || buf.Cols[0].Name != want {
			t.Errorf("%s: columns %v, %v; want %s", sql, buf.Cols, err, want)
		}
		if _, cols, err := s.Describe(context.Background(), sql); err != nil || len(cols) != 1 || cols[0].Name != want {
			t.Errorf("%s described: %v, %v; want %s", sql, cols, err, want)
		}
	}
}
