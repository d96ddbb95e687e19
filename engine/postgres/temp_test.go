package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// tempFixture drives sessions of one engine as the replica's sessions
// do: statements in local transactions, commits at a position of the
// test's log.
type tempFixture struct {
	t     *testing.T
	e     *Engine
	seqno uint64
}

func (f *tempFixture) apply(ws *writeset.WriteSet) error {
	f.t.Helper()
	f.seqno++
	items := []engine.ApplyItem{{Seqno: f.seqno, WS: ws}}
	if err := f.e.Apply(context.Background(), items, f.seqno); err != nil {
		f.t.Fatal(err)
	}
	return items[0].Err
}

// local runs a schema statement in its own transaction of s, as
// Session.localDDL does; it reports whether it ran locally.
func (f *tempFixture) local(s engine.Session, sql string) (bool, error) {
	f.t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	ran, err := tx.ExecLocal(ctx, sql, result.Discard)
	if !ran || err != nil {
		return ran, err
	}
	return true, f.commit(tx)
}

// exec runs stmts in one transaction of s and commits it; it returns
// its write set (nil: it committed on this node alone).
func (f *tempFixture) exec(s engine.Session, stmts ...string) *writeset.WriteSet {
	f.t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	for _, st := range stmts {
		if err := tx.Exec(ctx, st, result.Discard); err != nil {
			f.t.Fatalf("%s: %v", st, err)
		}
	}
	ws, err := tx.WriteSet()
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.commitWS(tx, ws); err != nil {
		f.t.Fatal(err)
	}
	return ws
}

func (f *tempFixture) commit(tx engine.Tx) error {
	ws, err := tx.WriteSet()
	if err != nil {
		return err
	}
	return f.commitWS(tx, ws)
}

func (f *tempFixture) commitWS(tx engine.Tx, ws *writeset.WriteSet) error {
	if ws == nil {
		return tx.CommitLocal(context.Background())
	}
	ws.Origin, ws.TxID = "n1", 1000+f.seqno
	tx.HandOver(ws.TxID)
	return f.apply(ws)
}

// firstRow runs sql in a transaction of s (under ctx) that it commits,
// and returns the first row sql gave (nil: none), or the error of either.
func (f *tempFixture) firstRow(s engine.Session, ctx context.Context, sql string) ([]result.Value, error) {
	tx, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var buf result.Buffer
	if err := tx.Exec(ctx, sql, &buf); err != nil {
		return nil, err
	}
	if err := f.commit(tx); err != nil {
		return nil, err
	}
	if len(buf.Rows) == 0 {
		return nil, nil
	}
	return buf.Rows[0], nil
}

// read runs a query through s and returns its rows, or its error.
func read(s engine.Session, sql string) ([][]result.Value, error) {
	var buf result.Buffer
	err := s.Read(context.Background(), sql, &buf)
	return buf.Rows, err
}

func mustRead(t *testing.T, s engine.Session, sql string) [][]result.Value {
	t.Helper()
	rows, err := read(s, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// Temporary tables are a session's own: made, written and read on its
// backend only (pinned to it until they are gone), never captured nor
// replicated, shadowing a replicated table of the same name as in
// PostgreSQL, and dropped with the session. PostgreSQL's own view of the
// objects a statement changes decides what stays local.
func TestTemporaryTables(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	for _, ddl := range []string{"CREATE TABLE real (id int PRIMARY KEY, v text)", "CREATE TABLE shadow (id int PRIMARY KEY)",
		"CREATE TABLE counted (id serial PRIMARY KEY)"} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
			t.Fatal(err)
		}
	}
	s1, s2 := e.NewSession(), e.NewSession()
	defer s2.Close()

	if ran, err := f.local(s1, "CREATE TEMP TABLE tt (id int PRIMARY KEY, v text)"); !ran || err != nil {
		t.Fatalf("CREATE TEMP TABLE: ran %v, %v", ran, err)
	}
	// A read-only transaction may write temporary tables; Read keeps it.
	if _, err := read(s1, "INSERT INTO tt VALUES (1, 'a')"); err != nil {
		t.Fatalf("insert into the temporary table through Read: %v", err)
	}
	if ws := f.exec(s1, "INSERT INTO tt VALUES (2, 'b')"); ws != nil {
		t.Fatalf("a write to a temporary table made a write set: %v", ws)
	}
	// Real and temporary rows in one transaction: only the real ones
	// are in its write set.
	ws := f.exec(s1, "INSERT INTO real SELECT id, v FROM tt", "INSERT INTO tt VALUES (3, 'c')", "UPDATE tt SET v = 'B' WHERE id = 2")
	want := []writeset.Key{key("real", 1), key("real", 2)}
	if ws == nil || len(ws.Keys) != 2 || ws.Keys[0] != want[0] || ws.Keys[1] != want[1] || strings.Join(ws.Tables, ",") != "real" {
		t.Fatalf("write set of a transaction writing both: %+v, want keys %q of table real", ws, want)
	}
	// Rows of a temporary table locked FOR UPDATE are the session's own.
	if ws := f.exec(s1, "SELECT * FROM tt FOR UPDATE"); ws != nil {
		t.Fatalf("locking a temporary table's rows made a write set: %v", ws)
	}
	if ws := f.exec(s1, "SELECT * FROM tt JOIN real USING (id) FOR UPDATE"); ws == nil || len(ws.Keys) != 2 || ws.Keys[0] != want[0] {
		t.Fatalf("locking rows of both: %+v, want the keys of real's rows", ws)
	}
	if rows := mustRead(t, s1, "SELECT count(*) FROM tt JOIN real USING (id)"); rows[0][0] != int64(2) {
		t.Fatalf("join: %v", rows)
	}
	if rows := mustRead(t, s1, "SELECT string_agg(v, ',' ORDER BY id) FROM tt"); rows[0][0] != "a,B,c" {
		t.Fatalf("the temporary table holds %v", rows)
	}
	if _, err := read(s2, "SELECT * FROM tt"); sqlerr.Code(err) != "42P01" {
		t.Fatalf("another session reads the temporary table: %v, want 42P01", err)
	}
	if rows := mustRead(t, s2, "SELECT count(*) FROM real"); rows[0][0] != int64(2) {
		t.Fatalf("real rows seen by another session: %v", rows)
	}
	// Described on its backend.
	if _, cols, err := s1.Describe(context.Background(), "SELECT v FROM tt"); err != nil || len(cols) != 1 {
		t.Fatalf("describe: %v %v", cols, err)
	}

	// Rules and triggers of a temporary table are the session's too; of a
	// replicated table, not.
	for _, sql := range []string{
		"CREATE RULE tt_upd AS ON UPDATE TO tt DO INSTEAD NOTHING",
		"CREATE TRIGGER tt_trg BEFORE UPDATE ON tt FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
		"ALTER TRIGGER tt_trg ON tt RENAME TO tt_trg2",
		"DROP TRIGGER tt_trg2 ON tt",
		"DROP RULE tt_upd ON tt",
	} {
		if ran, err := f.local(s1, sql); !ran || err != nil {
			t.Fatalf("%s: ran %v, %v; want it run here", sql, ran, err)
		}
	}
	if ran, err := f.local(s1, "CREATE RULE tt_upd AS ON UPDATE TO tt DO INSTEAD NOTHING"); !ran || err != nil {
		t.Fatalf("rule made again: ran %v, %v", ran, err)
	}
	for _, sql := range []string{
		"CREATE RULE real_upd AS ON UPDATE TO real DO INSTEAD NOTHING",
		"CREATE TRIGGER real_trg BEFORE UPDATE ON real FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
		"DROP RULE IF EXISTS nope ON real",
	} {
		if ran, err := f.local(s1, sql); ran || err != nil {
			t.Errorf("%s: ran %v, %v; want it left to replicate", sql, ran, err)
		}
	}
	if rows := mustRead(t, s1, "SELECT (SELECT count(*) FROM pg_rewrite WHERE rulename = 'real_upd') + (SELECT count(*) FROM pg_trigger WHERE tgname = 'real_trg')"); rows[0][0] != int64(0) {
		t.Fatalf("a rule or trigger of a replicated table was made locally")
	}
	if ran, err := f.local(s1, "DROP RULE tt_upd ON tt"); !ran || err != nil {
		t.Fatalf("DROP RULE of the temporary table's: ran %v, %v", ran, err)
	}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE RULE real_del AS ON DELETE TO real DO INSTEAD NOTHING")}); err != nil {
		t.Fatal(err)
	}
	if ran, err := f.local(s1, "DROP RULE real_del ON real"); ran || err != nil {
		t.Fatalf("DROP RULE of a replicated table's: ran %v, %v; want it left to replicate", ran, err)
	}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("DROP RULE real_del ON real")}); err != nil {
		t.Fatal(err)
	}

	// Shadowing: the temporary table takes the name, as in PostgreSQL.
	if ran, err := f.local(s1, "CREATE TEMPORARY TABLE shadow (id int PRIMARY KEY)"); !ran || err != nil {
		t.Fatalf("shadowing table: ran %v, %v", ran, err)
	}
	if ws := f.exec(s1, "INSERT INTO shadow VALUES (7)"); ws != nil {
		t.Fatalf("a write to the shadowing temporary table made a write set: %v", ws)
	}
	if rows := mustRead(t, s2, "SELECT count(*) FROM shadow"); rows[0][0] != int64(0) {
		t.Fatalf("the real table got the temporary table's row: %v", rows)
	}
	if ran, err := f.local(s1, "DROP TABLE shadow"); !ran || err != nil {
		t.Fatalf("DROP of the shadowing table: ran %v, %v", ran, err)
	}
	// Now the name is the real table's: not local, nothing done.
	if ran, err := f.local(s1, "DROP TABLE shadow"); ran || err != nil {
		t.Fatalf("DROP of the real table: ran %v, %v; want it left to replicate", ran, err)
	}
	if rows := mustRead(t, s2, "SELECT count(*) FROM pg_class WHERE relname = 'shadow'"); rows[0][0] != int64(1) {
		t.Fatalf("the real table was dropped locally")
	}
	// Statements that change replicated objects are not local, even
	// when their words look so; PostgreSQL decides.
	for _, sql := range []string{"CREATE TABLE perm (id int PRIMARY KEY)", "CREATE TABLE temp_like (temp int PRIMARY KEY)",
		"ALTER TABLE real ADD COLUMN tt int", "CREATE INDEX ON real (v) WHERE v <> 'temp'", "DROP TABLE tt, real", "TRUNCATE tt, real"} {
		if ran, err := f.local(s1, sql); ran || err != nil {
			t.Errorf("%s: ran %v, %v; want it left to replicate", sql, ran, err)
		}
	}
	if rows := mustRead(t, s1, "SELECT count(*) FROM pg_class WHERE relname IN ('temp_like', 'perm') OR relname LIKE 'real_v%'"); rows[0][0] != int64(0) {
		t.Fatalf("a refused statement left objects: %v", rows)
	}
	if rows := mustRead(t, s1, "SELECT count(*) FROM real JOIN tt USING (id)"); rows[0][0] != int64(2) {
		t.Fatalf("a refused statement changed rows: %v", rows)
	}
	// What a temporary object may be, and depend on.
	for _, c := range []struct{ sql, code string }{
		{"CREATE INDEX ON tt (v)", ""},
		{"ALTER TABLE tt ADD COLUMN w int", ""},
		{"COMMENT ON TABLE tt IS 'scratch'", ""},
		{"CREATE TEMP TABLE c AS SELECT * FROM real", ""},
		{"CREATE TABLE pg_temp.q (id int)", ""},
		{"CREATE TEMP SEQUENCE ts", ""},
		{"CREATE VIEW tv AS SELECT * FROM tt", ""}, // temporary, as it reads one
		{"TRUNCATE tt", ""},
		{"CREATE TEMP VIEW rv AS SELECT * FROM real", ""},
		{"CREATE TEMP TABLE inh () INHERITS (real)", ""},
		{"CREATE TEMP TABLE l (LIKE real INCLUDING DEFAULTS)", ""},
		{"CREATE TEMP TABLE ls (LIKE counted INCLUDING DEFAULTS)", ""}, // nextval of a replicated sequence
		{"CREATE TEMP TABLE lc (LIKE counted)", ""},
		{"ALTER TABLE l ALTER COLUMN v SET DEFAULT 'x'", ""},
		{"CREATE TEMP TABLE fk (id int REFERENCES real)", "42P16"}, // PostgreSQL's own refusal
		{"CREATE TEMP TABLE dup (id int PRIMARY KEY) ON COMMIT DELETE ROWS", ""},
	} {
		ran, err := f.local(s1, c.sql)
		if !ran || sqlerr.Code(err) != c.code {
			t.Errorf("%s: ran %v, %v; want it run here with SQLSTATE %q", c.sql, ran, err, c.code)
		}
	}

	// The session keeps its backend; another session does not get it.
	pid := mustRead(t, s1, "SELECT pg_backend_pid()")[0][0]
	for range 3 {
		if p := mustRead(t, s1, "SELECT pg_backend_pid()")[0][0]; p != pid {
			t.Fatalf("the session moved from backend %v to %v", pid, p)
		}
		if p := mustRead(t, s2, "SELECT pg_backend_pid()")[0][0]; p == pid {
			t.Fatal("another session ran on the pinned backend")
		}
	}
	// ON COMMIT DROP lives in its transaction.
	ctx := context.Background()
	tx, err := s1.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE TEMP TABLE once (id int) ON COMMIT DROP", result.Discard); !ran || err != nil {
		t.Fatal(ran, err)
	}
	if err := tx.Exec(ctx, "INSERT INTO once VALUES (1)", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := f.commit(tx); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if _, err := read(s1, "SELECT * FROM once"); sqlerr.Code(err) != "42P01" {
		t.Fatalf("ON COMMIT DROP table after its commit: %v", err)
	}

	// A block with a temporary SERIAL table and a replicated schema
	// change: the new sequence is placed in the node's blocks, the temporary one is left
	// as it is.
	tx, err = s1.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE TEMP TABLE ser (id serial PRIMARY KEY)", result.Discard); !ran || err != nil {
		t.Fatal(ran, err)
	}
	if err := tx.ExecSchema(ctx, "CREATE TABLE made (id serial PRIMARY KEY)", result.Discard); err != nil {
		t.Fatalf("a schema statement in a block with a temporary sequence: %v", err)
	}
	if err := tx.Exec(ctx, "INSERT INTO ser DEFAULT VALUES", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := f.commit(tx); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if rows := mustRead(t, s1, "SELECT id FROM ser"); len(rows) != 1 || rows[0][0] != int64(1) {
		t.Fatalf("temporary serial: %v", rows)
	}

	// Gone with the session: its backend is closed, not pooled.
	s1.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := mustRead(t, s2, fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE pid = %d", pid))
		if rows[0][0] == int64(0) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed session's backend %v is still there", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s3 := e.NewSession()
	defer s3.Close()
	if _, err := read(s3, "SELECT * FROM tt"); sqlerr.Code(err) != "42P01" {
		t.Fatalf("a new session reads the closed session's temporary table: %v", err)
	}

	// A session whose temporary objects are gone goes back to the pool.
	if ran, err := f.local(s3, "CREATE TEMP TABLE brief (id int)"); !ran || err != nil {
		t.Fatal(ran, err)
	}
	if s3.(*Session).pinned == nil {
		t.Fatal("not pinned after CREATE TEMP TABLE")
	}
	if ran, err := f.local(s3, "DROP TABLE brief"); !ran || err != nil {
		t.Fatal(ran, err)
	}
	if s3.(*Session).pinned != nil {
		t.Fatal("still pinned with no temporary object left")
	}

	// Replicated schema changes never make temporary objects.
	if _, err := e.CheckDDL(ctx, "CREATE TEMP TABLE x (id int)"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("CheckDDL of CREATE TEMP TABLE: %v, want 0A000", err)
	}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TEMP TABLE x (id int)")}); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("applied CREATE TEMP TABLE: %v, want 0A000", err)
	}
}

// remote returns the write set another node's transaction updating row
// id of table real to v would send (captured here and rolled back).
func (f *tempFixture) remote(id int, v string) *writeset.WriteSet {
	f.t.Helper()
	ctx := context.Background()
	tx, err := f.e.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, fmt.Sprintf("UPDATE real SET v = '%s' WHERE id = %d", v, id), result.Discard); err != nil {
		f.t.Fatal(err)
	}
	ws, err := tx.WriteSet()
	if err != nil || ws == nil {
		f.t.Fatal(ws, err)
	}
	ws.Origin, ws.TxID = "n2", 5000+f.seqno
	return ws
}

// waitActive waits until backend pid runs a statement.
func waitActive(t *testing.T, s engine.Session, pid uint32) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := mustRead(t, s, fmt.Sprintf("SELECT count(*) FROM pg_stat_activity WHERE pid = %d AND state = 'active'", pid))
		if rows[0][0] == int64(1) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d never ran its statement", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The applier's brute-force abort holds with pinned backends: one busy
// in a statement has the statement cancelled and keeps its temporary
// tables; one idle in a transaction that holds what the applier needs is
// ended, and its session reports the loss (57P01) rather than go on
// without its tables.
func TestTemporaryTablesBruteForceAbort(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE real (id int PRIMARY KEY, v text)")}); err != nil {
		t.Fatal(err)
	}
	f.exec(e.NewSession(), "INSERT INTO real VALUES (1, 'a'), (2, 'b')")
	s := e.NewSession()
	defer s.Close()
	if ran, err := f.local(s, "CREATE TEMP TABLE tt (id int)"); !ran || err != nil {
		t.Fatal(ran, err)
	}
	ctx := context.Background()
	theirs1, theirs2 := f.remote(1, "theirs"), f.remote(2, "theirs")
	watcher := e.NewSession()
	defer watcher.Close()

	// Busy: cancelled, the backend and its table stay.
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "UPDATE real SET v = 'mine' WHERE id = 1", result.Discard); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tx.Exec(ctx, "SELECT pg_sleep(30)", result.Discard) }()
	waitActive(t, watcher, tx.(*Tx).pid)
	if err := f.apply(theirs1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; sqlerr.Code(err) != sqlerr.SerializationFailure || !errors.Is(err, engine.ErrAbortedForApply) {
		t.Fatalf("busy statement: %v, want 40001", err)
	}
	tx.Rollback()
	if _, err := read(s, "SELECT * FROM tt"); err != nil {
		t.Fatalf("the temporary table after a cancelled statement: %v", err)
	}

	// Idle in its transaction: ended; the session is lost.
	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "UPDATE real SET v = 'mine' WHERE id = 2", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := f.apply(theirs2); err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "SELECT 1", result.Discard); sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("idle transaction's next statement: %v, want 40001", err)
	}
	tx.Rollback()
	if _, err := read(s, "SELECT 1"); sqlerr.Code(err) != sqlerr.AdminShutdown || !errors.Is(err, engine.ErrSessionLost) {
		t.Fatalf("the session after losing its backend: %v, want 57P01", err)
	}
}

// Functions, types and operators made in pg_temp are the session's as
// its temporary tables are: they pin its backend (they were left on a
// pooled one, where the session lost them and the next session found
// them), and no other session sees them.
func TestTemporaryFunctionsAndTypes(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	s1, s2 := e.NewSession(), e.NewSession()
	defer s1.Close()
	defer s2.Close()
	for _, sql := range []string{
		"CREATE FUNCTION pg_temp.whoami() RETURNS text LANGUAGE sql AS $$ SELECT 'temp' $$",
		"CREATE DOMAIN pg_temp.nonempty AS text CHECK (VALUE <> '')",
		"CREATE OPERATOR pg_temp.@@ (leftarg = int4, rightarg = int4, procedure = int4mi)",
	} {
		if ran, err := f.local(s1, sql); !ran || err != nil {
			t.Fatalf("%s: ran %v, %v", sql, ran, err)
		}
		// Another session's work meanwhile, on whatever backend is free.
		// PostgreSQL's answer when the session has no temporary schema.
		if _, err := read(s2, "SELECT pg_temp.whoami()"); sqlerr.Code(err) != "3F000" {
			t.Fatalf("another session calls pg_temp.whoami(): %v, want 3F000", err)
		}
		if rows := mustRead(t, s1, "SELECT pg_temp.whoami()"); rows[0][0] != "temp" {
			t.Fatalf("after %s: the session's function answers %v", sql, rows)
		}
	}
	if _, err := read(s1, "SELECT ''::pg_temp.nonempty"); sqlerr.Code(err) != "23514" {
		t.Fatalf("the session's domain: %v, want its check's 23514", err)
	}
	if rows := mustRead(t, s1, "SELECT 5 OPERATOR(pg_temp.@@) 3"); rows[0][0] != int64(2) {
		t.Fatalf("the session's operator: %v", rows)
	}
	if _, err := read(s2, "SELECT ''::pg_temp.nonempty"); sqlerr.Code(err) != "3F000" {
		t.Fatalf("another session uses pg_temp.nonempty: %v, want 3F000", err)
	}

}

// A temporary object may depend on replicated ones. A replicated schema
// change it stands in the way of fails on its own node as in PostgreSQL
// (CheckDDL sees every session's temporary objects); applied from another
// node, it wins: the session's dependent objects are dropped, the change
// applies, and the session's other temporary objects stay.
func TestTemporaryObjectsGiveWay(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	for _, ddl := range []string{
		"CREATE TABLE real (id int PRIMARY KEY, v text)",
		"CREATE TYPE mood AS ENUM ('ok', 'sad')",
		"CREATE FUNCTION twice(i int) RETURNS int LANGUAGE sql IMMUTABLE AS $$ SELECT 2 * i $$",
		"CREATE SEQUENCE tickets",
	} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
			t.Fatal(err)
		}
	}
	s := e.NewSession()
	defer s.Close()
	for _, sql := range []string{
		"CREATE TEMP TABLE moods (m mood, n int DEFAULT nextval('tickets'))",
		"CREATE INDEX ON moods (twice(n))",
		"CREATE TEMP VIEW rv AS SELECT id, v FROM real",
		"CREATE FUNCTION pg_temp.cheer(m mood) RETURNS text LANGUAGE sql AS $$ SELECT 'cheer' $$",
		"CREATE TEMP TABLE alone (id int)",
	} {
		if ran, err := f.local(s, sql); !ran || err != nil {
			t.Fatalf("%s: ran %v, %v", sql, ran, err)
		}
	}
	f.exec(s, "INSERT INTO moods VALUES ('ok', 1)")
	ctx := context.Background()
	for _, c := range []struct{ ddl, code string }{
		{"DROP TYPE mood", "2BP01"},
		{"ALTER TABLE real ALTER COLUMN v TYPE varchar(20)", "0A000"},
		{"DROP FUNCTION twice(int)", "2BP01"},
		{"DROP SEQUENCE tickets", "2BP01"},
	} {
		// On this node, as in PostgreSQL.
		if _, err := e.CheckDDL(ctx, c.ddl); sqlerr.Code(err) != c.code {
			t.Fatalf("%s beside the session's temporary objects: %v, want %s", c.ddl, err, c.code)
		}
	}
	// From another node: applied.
	for _, c := range []struct{ ddl, gone string }{
		{"ALTER TABLE real ALTER COLUMN v TYPE varchar(20)", "rv"},
		{"DROP TYPE mood", "moods"},
		{"DROP FUNCTION twice(int)", ""},
		{"DROP SEQUENCE tickets", ""},
	} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText(c.ddl)}); err != nil {
			t.Fatalf("%s applied beside another session's temporary objects: %v", c.ddl, err)
		}
		if c.gone != "" {
			if _, err := read(s, "SELECT * FROM "+c.gone); sqlerr.Code(err) != "42P01" {
				t.Fatalf("after %s: %s %v, want it dropped", c.ddl, c.gone, err)
			}
		}
	}
	if _, err := read(s, "SELECT pg_temp.cheer('ok')"); sqlerr.Code(err) != "42883" {
		t.Fatalf("the temporary function of the dropped type: %v, want it dropped", err)
	}
	if rows := mustRead(t, s, "SELECT count(*) FROM alone"); rows[0][0] != int64(0) {
		t.Fatalf("the session's other temporary table: %v", rows)
	}
}

// A routine's body is checked where the client's session runs it, under
// its names: one that reads the session's temporary table is made, on its
// own or in a block, and applied on a node that has no such table (it
// had failed there: the nodes diverged), as PostgreSQL makes it for a
// session that has the table. A body that does not check in the session
// fails there. A routine whose signature names a temporary type is
// refused: the other nodes could not make it.
func TestRoutinesOfTemporaryObjects(t *testing.T) {
	fac := &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}}
	f := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	other := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	ctx := context.Background()
	s := f.e.NewSession()
	defer s.Close()
	if ran, err := f.local(s, "CREATE TEMP TABLE tt1 (f1 int)"); !ran || err != nil {
		t.Fatalf("CREATE TEMP TABLE: ran %v, %v", ran, err)
	}
	f.exec(s, "INSERT INTO tt1 VALUES (1), (2)")

	// On its own, as the replica's session sends it.
	alone := "CREATE FUNCTION count_tt1() RETURNS int8 AS 'SELECT count(*) FROM tt1' LANGUAGE sql"
	if ran, err := f.local(s, alone); ran || err != nil {
		t.Fatalf("%s tried in the session: ran %v, %v, want it replicated", alone, ran, err)
	}
	ddl, err := f.e.CheckDDL(ctx, alone)
	if err != nil {
		t.Fatalf("CheckDDL(%s): %v", alone, err)
	}
	for _, node := range []*tempFixture{f, other} {
		if err := node.apply(&writeset.WriteSet{DDL: ddl.Statement}); err != nil {
			t.Fatalf("%s applied: %v", alone, err)
		}
	}
	if rows := mustRead(t, s, "SELECT count_tt1()"); rows[0][0] != int64(2) {
		t.Fatalf("count_tt1() in the session: %v", rows)
	}

	// In a block.
	inBlock := "CREATE FUNCTION sum_tt1() RETURNS int8 LANGUAGE sql AS $$ SELECT sum(f1) FROM tt1 $$"
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, inBlock, result.Discard); ran || err != nil {
		t.Fatalf("%s tried in the block: ran %v, %v", inBlock, ran, err)
	}
	if err := tx.ExecSchema(ctx, inBlock, result.Discard); err != nil {
		t.Fatalf("%s in the block: %v", inBlock, err)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.commitWS(tx, ws); err != nil {
		t.Fatalf("the block's commit: %v", err)
	}
	if err := other.apply(ws); err != nil {
		t.Fatalf("the block applied on a node without tt1: %v", err)
	}
	if rows := mustRead(t, s, "SELECT sum_tt1()"); rows[0][0] != int64(3) {
		t.Fatalf("sum_tt1() in the session: %v", rows)
	}

	// Checked in the session: PostgreSQL's error, with its position.
	bad := "CREATE FUNCTION bad() RETURNS int8 AS 'SELECT count(*) FROM nowhere' LANGUAGE sql"
	if ran, err := f.local(s, bad); !ran || sqlerr.Code(err) != "42P01" {
		t.Fatalf("%s: ran %v, %v, want 42P01", bad, ran, err)
	}

	// A signature that names the session's temporary type.
	for _, sql := range []string{
		"CREATE FUNCTION takes_tt1(v tt1) RETURNS int LANGUAGE sql AS 'SELECT 1'",
		"CREATE FUNCTION gives_tt1() RETURNS SETOF tt1 LANGUAGE sql AS 'SELECT * FROM tt1'",
	} {
		ran, err := f.local(s, sql)
		if !ran || sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "which is temporary") {
			t.Fatalf("%s: ran %v, %v, want 0A000", sql, ran, err)
		}
	}
}

// A block that made a temporary table may index it: the block's later
// schema statements are tried in the session whatever they name (they
// were replicated and refused: "names temporary table").
func TestTemporaryTableIndexedInItsBlock(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	s := e.NewSession()
	defer s.Close()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE TEMP TABLE tidv (id int)", "create index on tidv (id)"} {
		if ran, err := tx.ExecLocal(ctx, sql, result.Discard); !ran || err != nil {
			t.Fatalf("%s in the block: ran %v, %v", sql, ran, err)
		}
	}
	if err := f.commit(tx); err != nil {
		t.Fatal(err)
	}
	if rows := mustRead(t, s, "SELECT count(*) FROM pg_indexes WHERE tablename = 'tidv'"); rows[0][0] != int64(1) {
		t.Fatalf("indexes of tidv: %v", rows)
	}
}

// REFRESH MATERIALIZED VIEW CONCURRENTLY makes temporary tables of its
// own and drops them: replicated, it runs (it was refused: "DROP TABLE of
// a temporary object cannot be replicated").
func TestRefreshConcurrently(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	for _, ddl := range []string{
		"CREATE TABLE base (id int PRIMARY KEY, v int)",
		"CREATE MATERIALIZED VIEW mv AS SELECT id, v FROM base",
		"CREATE UNIQUE INDEX ON mv (id)",
	} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	s := e.NewSession()
	defer s.Close()
	f.exec(s, "INSERT INTO base VALUES (1, 10), (2, 20)")
	refresh := "REFRESH MATERIALIZED VIEW CONCURRENTLY mv"
	ddl, err := e.CheckDDL(context.Background(), refresh)
	if err != nil {
		t.Fatalf("CheckDDL(%s): %v", refresh, err)
	}
	if err := f.apply(&writeset.WriteSet{DDL: ddl.Statement}); err != nil {
		t.Fatalf("%s applied: %v", refresh, err)
	}
	if rows := mustRead(t, s, "SELECT sum(v) FROM mv"); fmt.Sprint(rows[0][0]) != "30" {
		t.Fatalf("mv after the refresh: %v", rows)
	}
}

// Extended statistics in pg_temp are the session's, as temporary tables
// are: made, changed and dropped there (they were replicated, and every
// node's applier made them in its own temporary schema, where the
// session could not drop them). Statistics outside pg_temp of a
// temporary table go with the session in PostgreSQL and cannot be
// replicated: refused, saying so.
func TestTemporaryStatistics(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE ab1 (a int, b int)")}); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	defer s.Close()
	count := func() any {
		return mustRead(t, s, "SELECT count(*) FROM pg_statistic_ext WHERE stxname = 'st' AND stxnamespace = pg_my_temp_schema()")[0][0]
	}
	for _, sql := range []string{
		"CREATE TEMP TABLE tt (a int, b int)",
		"CREATE STATISTICS pg_temp.st ON a, b FROM ab1",
		"ALTER STATISTICS pg_temp.st SET STATISTICS 10",
	} {
		if ran, err := f.local(s, sql); !ran || err != nil {
			t.Fatalf("%s: ran %v, %v", sql, ran, err)
		}
	}
	if n := count(); n != int64(1) {
		t.Fatalf("statistics in the session's temporary schema: %v", n)
	}
	if ran, err := f.local(s, "DROP STATISTICS pg_temp.st"); !ran || err != nil {
		t.Fatalf("DROP STATISTICS pg_temp.st: ran %v, %v", ran, err)
	}
	if n := count(); n != int64(0) {
		t.Fatalf("statistics left after DROP: %v", n)
	}
	sql := "CREATE STATISTICS of_tt ON a, b FROM tt"
	if ran, err := f.local(s, sql); !ran || sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "which is temporary") {
		t.Fatalf("%s: ran %v, %v, want 0A000", sql, ran, err)
	}
}
