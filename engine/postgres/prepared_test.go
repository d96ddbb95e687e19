package postgres

import (
	"context"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// readArgs runs a query with arguments through s and returns its rows
// and columns.
func readArgs(t *testing.T, s engine.Session, sql string, args ...any) ([][]result.Value, []result.Column) {
	t.Helper()
	var buf result.Buffer
	if err := s.Read(context.Background(), sql, &buf, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return buf.Rows, buf.Cols
}

// A client's statement with parameters is prepared on the backend once
// (conn.clientStatement) and still means what it means unnamed: after a
// schema change, after the client's own DEALLOCATE ALL, and when a
// temporary table made in the same transaction (by a function, which
// certa cannot see) now comes first on the search path.
func TestClientStatementsPrepared(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	for _, ddl := range []string{"CREATE TABLE t (id int PRIMARY KEY, v text)",
		`CREATE FUNCTION make_temp() RETURNS void LANGUAGE plpgsql AS $$
		BEGIN CREATE TEMP TABLE t (id int, v text); INSERT INTO t VALUES (1, 'temporary'); END $$`} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
			t.Fatal(err)
		}
	}
	s := e.NewSession()
	defer s.Close()
	f.exec(s, "INSERT INTO t VALUES (1, 'a')")

	// One backend serves these reads one after another (the pool reuses
	// the last one back): the statement is prepared there.
	pid := func() any { return mustRead(t, s, "SELECT pg_backend_pid()")[0][0] }
	before := pid()
	if rows, _ := readArgs(t, s, "SELECT v FROM t WHERE id = $1", int64(1)); rows[0][0] != "a" {
		t.Fatalf("read %v", rows)
	}
	if rows, _ := readArgs(t, s, "SELECT * FROM t WHERE id = $1", int64(1)); len(rows[0]) != 2 {
		t.Fatalf("read %v", rows)
	}
	// pg_prepared_statement(), which the view reads: the view hides
	// certa's statements from clients (certaRows).
	prepared := "SELECT count(*) FROM pg_prepared_statement() WHERE statement IN ('SELECT v FROM t WHERE id = $1', 'SELECT * FROM t WHERE id = $1')"
	if rows := mustRead(t, s, prepared); rows[0][0] != int64(2) || pid() != before {
		t.Fatalf("statements prepared on the backend: %v (backend %v, was %v)", rows, pid(), before)
	}

	// A schema change: the same text now has three columns.
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("ALTER TABLE t ADD COLUMN w int DEFAULT 7")}); err != nil {
		t.Fatal(err)
	}
	if rows, cols := readArgs(t, s, "SELECT * FROM t WHERE id = $1", int64(1)); len(cols) != 3 || rows[0][2] != int64(7) {
		t.Fatalf("after ADD COLUMN: %v %v", cols, rows)
	}

	// The client deallocates a statement of its own, then every statement
	// of the backend.
	f.exec(s, "PREPARE mine AS SELECT 1")
	mustRead(t, s, "DEALLOCATE mine")
	if rows, _ := readArgs(t, s, "SELECT v FROM t WHERE id = $1", int64(1)); rows[0][0] != "a" {
		t.Fatalf("after DEALLOCATE of the client's statement: %v", rows)
	}
	mustRead(t, s, "DEALLOCATE ALL")
	if rows, _ := readArgs(t, s, "SELECT * FROM t WHERE id = $1", int64(1)); rows[0][0] != int64(1) {
		t.Fatalf("after DEALLOCATE ALL: %v", rows)
	}
	f.exec(s, "DEALLOCATE ALL") // in a transaction
	if rows, _ := readArgs(t, s, "SELECT * FROM t WHERE id = $1", int64(1)); rows[0][0] != int64(1) {
		t.Fatalf("after DEALLOCATE ALL in a transaction: %v", rows)
	}
	if pid() != before {
		t.Fatalf("the reads ran on backends %v and %v: the test needs one", before, pid())
	}

	// A temporary table made inside a function shadows t for the rest of
	// the transaction, prepared statement or not. The backend has a
	// temporary schema already (a transaction made and dropped a table
	// there): the search path does not change when the table is made.
	f.exec(s, "SELECT make_temp()", "DROP TABLE pg_temp.t")
	if pid() != before {
		t.Fatalf("the reads ran on backends %v and %v: the test needs one", before, pid())
	}
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	get := func() any {
		var buf result.Buffer
		if err := tx.Exec(ctx, "SELECT v FROM t WHERE id = $1", &buf, int64(1)); err != nil {
			t.Fatal(err)
		}
		return buf.Rows[0][0]
	}
	if v := get(); v != "a" {
		t.Fatalf("before the temporary table: %v", v)
	}
	if err := tx.Exec(ctx, "SELECT make_temp()", result.Discard); err != nil {
		t.Fatal(err)
	}
	if v := get(); v != "temporary" {
		t.Fatalf("after a function made a temporary table t: read %v, want the temporary table's row", v)
	}
}

// State a statement leaves in its PostgreSQL session beyond the
// transaction stays with the client's session, on a backend of its own,
// and no other session finds it: pg_dump's set_config of search_path,
// session-level advisory locks (migration tools), PREPARE. LISTEN is
// refused: notifications are not passed on.
func TestSessionStateKeepsBackend(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY)")}); err != nil {
		t.Fatal(err)
	}
	s1, s2 := e.NewSession(), e.NewSession()
	defer s2.Close()
	backend := func(s engine.Session) any { return mustRead(t, s, "SELECT pg_backend_pid()")[0][0] }

	mustRead(t, s1, "SELECT pg_catalog.set_config('search_path', '', false)")
	if rows := mustRead(t, s1, "SELECT current_setting('search_path')"); rows[0][0] != "" {
		t.Fatalf("the session's own search_path: %q", rows[0][0])
	}
	if _, err := read(s1, "SELECT count(*) FROM t"); sqlerr.Code(err) != "42P01" {
		t.Fatalf("unqualified name with an empty search_path: %v, want 42P01", err)
	}
	for range 3 {
		if rows := mustRead(t, s2, "SELECT count(*) FROM t"); rows[0][0] != int64(0) || backend(s2) == backend(s1) {
			t.Fatalf("another session: %v on backend %v (the first is on %v)", rows, backend(s2), backend(s1))
		}
	}

	mustRead(t, s1, "SELECT pg_advisory_lock(42)")
	if rows := mustRead(t, s2, "SELECT pg_try_advisory_lock(42)"); rows[0][0] != false {
		t.Fatalf("another session took the advisory lock a session holds")
	}
	f.exec(s1, "PREPARE seven AS SELECT 7")
	if rows := mustRead(t, s1, "EXECUTE seven"); rows[0][0] != int64(7) {
		t.Fatalf("EXECUTE of the session's statement: %v", rows)
	}
	if _, err := read(s2, "EXECUTE seven"); sqlerr.Code(err) != "26000" {
		t.Fatalf("another session executed the session's prepared statement: %v", err)
	}
	if _, err := read(s2, "LISTEN events"); sqlerr.Code(err) != "0A000" {
		t.Fatalf("LISTEN: %v, want 0A000", err)
	}

	// The session's end ends its backend, and its lock (a moment after
	// Close: the backend exits by itself).
	s1.Close()
	s3 := e.NewSession()
	defer s3.Close()
	deadline := time.Now().Add(10 * time.Second)
	for mustRead(t, s3, "SELECT pg_try_advisory_lock(42)")[0][0] != true {
		if time.Now().After(deadline) {
			t.Fatalf("the lock outlived its session")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A session whose backend is pinned runs its SET checks and
// descriptions inside its open transaction: run beside it, on the same
// backend, they ended it (a SET in a block of a session with a
// temporary table lost the block's earlier rows, and its later ones
// committed on the node alone). A RESET of a session that keeps state
// on its backend changes the backend's session value, as pg_dump's
// RESET search_path expects after its set_config.
func TestPinnedSessionTransaction(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY)")}); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	defer s.Close()
	if ran, err := f.local(s, "CREATE TEMP TABLE tt (id int)"); !ran || err != nil {
		t.Fatalf("CREATE TEMP TABLE: ran %v, %v", ran, err)
	}
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, "INSERT INTO t VALUES (1)", result.Discard); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Setting(ctx, "SET search_path = public", "search_path"); err != nil || v != "public" {
		t.Fatalf("SET in the transaction: %q, %v", v, err)
	}
	if _, err := s.Setting(ctx, "SET statement_timeout = 'soon'", "statement_timeout"); err == nil {
		t.Fatalf("a bad SET was accepted")
	}
	if _, cols, err := s.Describe(engine.WithSettings(ctx, map[string]string{"search_path": "public"}), "SELECT * FROM t"); err != nil || len(cols) != 1 {
		t.Fatalf("describe in the transaction: %v, %v", cols, err)
	}
	if err := tx.Exec(ctx, "INSERT INTO t VALUES (2)", result.Discard); err != nil {
		t.Fatal(err)
	}
	ws, err := tx.WriteSet()
	if err != nil || ws == nil || len(ws.Keys) != 2 {
		t.Fatalf("write set after SET and describe: %+v, %v; want both rows", ws, err)
	}
	if err := f.commitWS(tx, ws); err != nil {
		t.Fatal(err)
	}
	if rows := mustRead(t, e.NewSession(), "SELECT count(*) FROM t"); rows[0][0] != int64(2) {
		t.Fatalf("rows committed: %v, want 2", rows)
	}

	s2 := e.NewSession()
	defer s2.Close()
	mustRead(t, s2, "SELECT pg_catalog.set_config('search_path', '', false)")
	if _, err := s2.Setting(ctx, "RESET search_path", "search_path"); err != nil {
		t.Fatal(err)
	}
	if rows := mustRead(t, s2, "SELECT current_setting('search_path')"); rows[0][0] != `"$user", public` {
		t.Fatalf("search_path after RESET: %q", rows[0][0])
	}
}

// A client's own prepared statement (PREPARE, which pins the session's
// backend) outlives certa's: after a schema change certa deallocates the
// statements it prepared there, not the client's.
func TestClientPrepareOutlivesCertaStatements(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY, v text)")}); err != nil {
		t.Fatal(err)
	}
	s := e.NewSession()
	defer s.Close()
	f.exec(s, "INSERT INTO t VALUES (1, 'a')")
	mustRead(t, s, "PREPARE mine(int) AS SELECT v FROM t WHERE id = $1")
	if rows, _ := readArgs(t, s, "SELECT v FROM t WHERE id = $1", int64(1)); rows[0][0] != "a" {
		t.Fatalf("read %v", rows)
	}
	// certa's statement goes stale with the schema change: the next
	// one prepared deallocates it.
	if err := f.apply(&writeset.WriteSet{DDL: ddlText("ALTER TABLE t ADD COLUMN w int DEFAULT 7")}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := readArgs(t, s, "SELECT w FROM t WHERE id = $1", int64(1)); rows[0][0] != int64(7) {
		t.Fatalf("after ADD COLUMN: %v", rows)
	}
	if rows := mustRead(t, s, "EXECUTE mine(1)"); len(rows) != 1 || rows[0][0] != "a" {
		t.Fatalf("the client's statement after certa's were deallocated: %v", rows)
	}
	if rows := mustRead(t, s, "SELECT count(*) FROM pg_prepared_statement() WHERE from_sql"); rows[0][0] != int64(1) {
		t.Fatalf("the client's prepared statements: %v", rows)
	}
}
