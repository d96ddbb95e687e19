package postgres

import (
	"context"
	"fmt"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
)

// currval and lastval answer a session with what its own nextval took,
// in any earlier transaction of it (committed or not), on whichever
// pooled backend it runs now, and never with another session's value:
// as in PostgreSQL, where a session is its backend.
func TestSessionsKeepTheirOwnSequenceValues(t *testing.T) {
	e := openResetEngine(t, Config{MaxConns: 2, ClientLogin: "certa_login_seq", ApplierLogin: "certa_applier_seq", ClientPassword: "secret"})
	f := &tempFixture{t: t, e: e}
	grantSlot(f)
	resetDDL(f, "CREATE SEQUENCE s", "CREATE TABLE t (id serial PRIMARY KEY, v text)",
		"CREATE TABLE ident (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)",
		"CREATE TABLE drawn (id int PRIMARY KEY, n bigint DEFAULT nextval('s'))")

	newSession := func() seqSession { return newSeqSession(t, e) }
	run := func(s seqSession, sql, end string) []result.Value {
		t.Helper()
		row, err := s.run(f, sql, end)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return row
	}
	read := func(s seqSession, sql string, args ...any) ([]result.Value, error) {
		var buf result.Buffer
		if err := s.s.Read(s.ctx, sql, &buf, args...); err != nil {
			return nil, err
		}
		return buf.Rows[0], nil
	}
	a, b := newSession(), newSession()

	took := run(a, "SELECT nextval('s')", "commit")[0]
	run(a, "INSERT INTO t (v) VALUES ('a')", "commit")
	id := run(a, "SELECT max(id) FROM t", "commit")[0]

	// B took nothing: PostgreSQL's errors, whichever backend A used.
	for _, sql := range []string{"SELECT currval('s')", "SELECT lastval()", "SELECT currval('t_id_seq')"} {
		if _, err := read(b, sql); sqlerr.Code(err) != "55000" {
			t.Errorf("another session's %s: %v, want 55000 (not yet defined in this session)", sql, err)
		}
	}
	// B holds a backend: A's next statement runs on the other one.
	held, err := b.s.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := held.Exec(b.ctx, "SELECT 1", result.Discard); err != nil {
		t.Fatal(err)
	}
	got, err := read(a, "SELECT currval('s'), pg_catalog.currval('public.t_id_seq'::regclass), lastval()")
	if want := []result.Value{took, id, id}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the session's currval(s), currval(t_id_seq), lastval(): %v, %v; want %v", got, err, want)
	}
	if got, err := read(a, "SELECT currval($1)", "s"); err != nil || fmt.Sprint(got[0]) != fmt.Sprint(took) {
		t.Errorf("currval($1) with 's': %v, %v; want %v", got, err, took)
	}
	held.Rollback()

	// A value taken in a transaction that rolled back is the session's
	// too; one taken in the transaction is the backend's own.
	again := run(a, "SELECT nextval('s')", "rollback")[0]
	if got, err := read(a, "SELECT currval('s'), lastval()"); err != nil || fmt.Sprint(got) != fmt.Sprint([]result.Value{again, again}) {
		t.Errorf("after a rolled back nextval %v: currval, lastval %v, %v", again, got, err)
	}
	inTx := run(a, "SELECT nextval('s'), currval('s'), lastval(), currval('t_id_seq')", "commit")
	if inTx[0] != inTx[1] || inTx[0] != inTx[2] || fmt.Sprint(inTx[3]) != fmt.Sprint(id) {
		t.Errorf("nextval, currval, lastval, currval(t_id_seq) in one statement: %v", inTx)
	}
	if _, err := read(b, "SELECT currval('s')"); sqlerr.Code(err) != "55000" {
		t.Errorf("session B's currval after A's work: %v, want 55000", err)
	}

	// In the transaction of the insert, lastval is the serial's: the
	// capture of the row takes no sequence value of its own.
	tx, err := a.s.Begin(a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var inserted, last result.Buffer
	if err := tx.Exec(a.ctx, "INSERT INTO t (v) VALUES ('b') RETURNING id", &inserted); err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(a.ctx, "SELECT lastval()", &last); err != nil || fmt.Sprint(last.Rows) != fmt.Sprint(inserted.Rows) {
		t.Errorf("lastval after an insert in its transaction: %v, %v; want %v", last.Rows, err, inserted.Rows)
	}
	tx.Rollback()

	// An identity column and a default that draws from a sequence no
	// column owns, through rows written in transactions of their own.
	run(a, "INSERT INTO ident (v) VALUES ('x')", "commit")
	identID := run(a, "SELECT max(id) FROM ident", "commit")[0]
	run(a, "INSERT INTO drawn (id) VALUES (1)", "commit")
	drawnN := run(a, "SELECT n FROM drawn", "commit")[0]
	got, err = read(a, "SELECT currval('ident_id_seq'), currval('s'), lastval()")
	if want := []result.Value{identID, drawnN, drawnN}; err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after inserts into an identity and a drawing default: %v, %v; want %v", got, err, want)
	}

	// lastval is the currval of the sequence that gave the last value:
	// a setval of it, in the same transaction or a later one, moves it;
	// once that sequence is dropped, lastval is undefined (PostgreSQL 15).
	if got := run(a, "SELECT setval('s', 99), lastval()", "commit"); fmt.Sprint(got) != "[99 99]" {
		t.Errorf("setval and lastval in one transaction: %v, want [99 99]", got)
	}
	if got, err := read(a, "SELECT lastval(), currval('s')"); err != nil || fmt.Sprint(got) != "[99 99]" {
		t.Errorf("lastval, currval after a setval: %v, %v; want [99 99]", got, err)
	}
	run(a, "SELECT setval('s', 7)", "commit")
	if got := run(a, "SELECT lastval()", "commit"); fmt.Sprint(got) != "[7]" {
		t.Errorf("lastval in a transaction after a setval: %v, want [7]", got)
	}
	resetDDL(f, "CREATE SEQUENCE gone")
	run(a, "SELECT nextval('gone')", "commit")
	resetDDL(f, "DROP SEQUENCE gone")
	if _, err := read(a, "SELECT lastval()"); sqlerr.Code(err) != "55000" {
		t.Errorf("lastval once its sequence is dropped: %v, want 55000", err)
	}
}

// A column default that calls currval answers, in the session's next
// transaction, with what the session's nextval took (as in PostgreSQL,
// where autocommit INSERTs often link rows so): the backend keeps the
// session's sequence state for it while other sessions have backends of
// their own. A session that gets a backend holding another's state
// finds none there.
func TestDefaultsSeeTheSessionsCurrval(t *testing.T) {
	e := openResetEngine(t, Config{MaxConns: 2, ClientLogin: "certa_login_seqdef", ApplierLogin: "certa_applier_seqdef", ClientPassword: "secret"})
	f := &tempFixture{t: t, e: e}
	grantSlot(f)
	resetDDL(f, "CREATE SEQUENCE s", "CREATE TABLE linked (id int PRIMARY KEY, ref bigint DEFAULT currval('s'))")
	newSession := func() seqSession { return newSeqSession(t, e) }
	run := func(s seqSession, sql string) ([]result.Value, error) { return s.run(f, sql, "commit") }
	must := func(s seqSession, sql string) []result.Value {
		t.Helper()
		row, err := run(s, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return row
	}
	a, b := newSession(), newSession()
	// Each session's transaction ran on a backend of its own.
	txA, err := a.s.Begin(a.ctx)
	if err != nil {
		t.Fatal(err)
	}
	txB, err := b.s.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	txA.Rollback()
	txB.Rollback()

	took := must(a, "SELECT nextval('s')")[0]
	tookB := must(b, "SELECT nextval('s')")[0]
	must(a, "INSERT INTO linked (id) VALUES (1)")
	if got := must(a, "SELECT ref FROM linked WHERE id = 1"); fmt.Sprint(got[0]) != fmt.Sprint(took) {
		t.Errorf("a default's currval in the session's next transaction: %v, want %v", got[0], took)
	}
	must(b, "INSERT INTO linked (id) VALUES (2)")
	if got := must(b, "SELECT ref FROM linked WHERE id = 2"); fmt.Sprint(got[0]) != fmt.Sprint(tookB) {
		t.Errorf("the other session's: %v, want %v", got[0], tookB)
	}
	// A third session takes a backend of theirs: none of their state.
	c := newSession()
	if _, err := run(c, "INSERT INTO linked (id) VALUES (3)"); sqlerr.Code(err) != "55000" {
		t.Errorf("a default's currval in a session that took no value: %v, want 55000", err)
	}
}

// A backend pinned to its session for its temporary tables keeps the
// session's sequence state as PostgreSQL does (a temporary serial's
// currval in the next transaction), and gives none of it to the next
// session once unpinned.
func TestPinnedBackendsSequenceState(t *testing.T) {
	// One connection: every transaction runs on the same backend.
	e := openResetEngine(t, Config{MaxConns: 1, ClientLogin: "certa_login_seqpin", ApplierLogin: "certa_applier_seqpin", ClientPassword: "secret"})
	f := &tempFixture{t: t, e: e}
	ctx := context.Background()
	grantSlot(f)
	resetDDL(f, "CREATE SEQUENCE s")

	a := e.NewSession()
	actx := engine.WithSequenceValues(ctx, &engine.SequenceValues{})
	if ran, err := f.local(a, "CREATE TEMP TABLE tt (id serial PRIMARY KEY)"); !ran || err != nil {
		t.Fatalf("CREATE TEMP TABLE: ran %v, %v", ran, err)
	}
	exec := func(s engine.Session, ctx context.Context, sql string) []result.Value {
		t.Helper()
		row, err := f.firstRow(s, ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return row
	}
	exec(a, actx, "INSERT INTO tt DEFAULT VALUES")
	took := exec(a, actx, "SELECT nextval('s')")[0]
	if got := exec(a, actx, "SELECT currval('tt_id_seq'), currval('s')"); fmt.Sprint(got) != fmt.Sprint([]result.Value{int64(1), took}) {
		t.Errorf("on the pinned backend: currval of the temporary serial and of s %v, want [1 %v]", got, took)
	}
	if ran, err := f.local(a, "DROP TABLE tt"); !ran || err != nil {
		t.Fatalf("DROP TABLE tt: ran %v, %v", ran, err)
	}
	b := e.NewSession()
	defer b.Close()
	var buf result.Buffer
	if err := b.Read(engine.WithSequenceValues(ctx, &engine.SequenceValues{}), "SELECT currval('s')", &buf); sqlerr.Code(err) != "55000" {
		t.Errorf("the next session on the unpinned backend: currval %v, %v; want 55000", buf.Rows, err)
	}
	a.Close()
}

// grantSlot gives f's node its sequence slot, as the log would.
func grantSlot(f *tempFixture) {
	f.t.Helper()
	ws, block, err := f.e.ReserveSequence(context.Background(), slotSequence)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.apply(ws); err != nil {
		f.t.Fatal(err)
	}
	f.e.GrantSequence(block)
}

// seqSession is a session with sequence values of its own
// (engine.WithSequenceValues), closed with the test.
type seqSession struct {
	s   engine.Session
	ctx context.Context
}

func newSeqSession(t *testing.T, e *Engine) seqSession {
	s := e.NewSession()
	t.Cleanup(s.Close)
	return seqSession{s, engine.WithSequenceValues(context.Background(), &engine.SequenceValues{})}
}

// run runs sql in a transaction of s that ends with end ("commit" or
// "rollback"), and returns its first row, or the statement's error.
func (s seqSession) run(f *tempFixture, sql, end string) ([]result.Value, error) {
	f.t.Helper()
	tx, err := s.s.Begin(s.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	var buf result.Buffer
	if err := tx.Exec(s.ctx, sql, &buf); err != nil {
		return nil, err
	}
	if end == "commit" {
		if err := f.commit(tx); err != nil {
			f.t.Fatalf("%s: commit: %v", sql, err)
		}
	}
	if len(buf.Rows) == 0 {
		return nil, nil
	}
	return buf.Rows[0], nil
}
