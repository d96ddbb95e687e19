package sqlite

import (
	"context"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
)

// sessionRun runs sql in a transaction of s as the session layer does
// outside a block: a statement on the session's own objects through
// ExecLocal, any other through Exec; a transaction without a write set
// commits here (CommitLocal), one with a write set is applied.
func (e *testEngine) sessionRun(s engine.Session, sql string) (*recorder, error) {
	e.t.Helper()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	r := &recorder{}
	ran, err := tx.ExecLocal(ctx, sql, r)
	if !ran && err == nil {
		err = tx.Exec(ctx, sql, r)
	}
	if err != nil {
		return r, err
	}
	ws, err := tx.WriteSet()
	if err != nil {
		return r, err
	}
	if ws == nil {
		return r, tx.CommitLocal(ctx)
	}
	tx.HandOver(1)
	e.apply(ws)
	return r, nil
}

// mustRun is sessionRun failing the test on error.
func (e *testEngine) mustRun(s engine.Session, sql string) *recorder {
	e.t.Helper()
	r, err := e.sessionRun(s, sql)
	if err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return r
}

// sessionRead reads through s.Read, falling back to a transaction as the
// session layer does.
func (e *testEngine) sessionRead(s engine.Session, sql string) [][]result.Value {
	e.t.Helper()
	r := &recorder{}
	err := s.Read(context.Background(), sql, r)
	if err == engine.ErrNotReadOnly {
		return e.mustRun(s, sql).rows
	}
	if err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return r.rows
}

// A temporary table is its session's alone: it hides the replicated table
// of its name there only, its rows are never in a write set, and it goes
// with the session. The connection holding it is out of the pool.
func TestTempTablesAreTheSessions(t *testing.T) {
	e := openTest(t, Config{MaxConns: 1})
	e.ddl("CREATE TABLE t (id int PRIMARY KEY, v text)")
	e.commit("INSERT INTO t VALUES (1, 'replicated')")

	s1, s2 := e.NewSession(), e.NewSession()
	defer s2.Close()
	e.mustRun(s1, "CREATE TEMP TABLE t (id int, v varchar(3))")
	if r := e.mustRun(s1, "INSERT INTO t VALUES (7, 'own')"); r.tag != "INSERT 0 1" {
		t.Fatalf("tag %q", r.tag)
	}
	if _, err := e.sessionRun(s1, "INSERT INTO t VALUES (8, 'long')"); sqlerr.Code(err) != sqlerr.StringDataRightTruncation {
		t.Fatalf("varchar(3) of the temporary table: %v", err)
	}
	wantRows(t, e.sessionRead(s1, "SELECT id, v FROM t"), row(int64(7), "own"))
	wantRows(t, e.sessionRead(s2, "SELECT id, v FROM t"), row(int64(1), "replicated"))
	wantRows(t, e.query("SELECT id, v FROM t"), row(int64(1), "replicated"))
	if _, err := e.sessionRun(s1, "SELECT * FROM public.t"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("public.t while a temporary t hides it: %v", err)
	}

	// The session's Tx writing only its table has no write set.
	tx, err := s1.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "UPDATE t SET v = 'new'")
	if ws, err := tx.WriteSet(); ws != nil || err != nil {
		t.Fatalf("write set of a temporary table's update: %v, %v", ws, err)
	}
	if err := tx.CommitLocal(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantRows(t, e.sessionRead(s1, "SELECT v FROM t"), row("new"))

	s1.Close()
	s3 := e.NewSession()
	defer s3.Close()
	wantRows(t, e.sessionRead(s3, "SELECT id, v FROM t"), row(int64(1), "replicated"))
	e.mustRun(s3, "CREATE TEMP TABLE t (x int)")
	wantRows(t, e.sessionRead(s3, "SELECT * FROM t"))
}

// A transaction changes temporary tables or replicated ones, not both:
// its replicated changes are applied from its write set and the rest
// rolled back, so what it did to its temporary tables would be lost.
func TestTempTransactions(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE r (id int PRIMARY KEY)")
	s := e.NewSession()
	defer s.Close()
	ctx := context.Background()
	e.mustRun(s, "CREATE TEMP TABLE tt (a int)")

	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO tt VALUES (1)")
	code, _ := execErr(tx, "INSERT INTO r VALUES (1)")
	if code != sqlerr.FeatureNotSupported {
		t.Fatalf("replicated write after a temporary one: %q", code)
	}
	tx.Rollback()
	wantRows(t, e.sessionRead(s, "SELECT * FROM tt")) // rolled back

	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO r VALUES (2)")
	if code, _ := execErr(tx, "INSERT INTO tt VALUES (2)"); code != sqlerr.FeatureNotSupported {
		t.Fatalf("temporary write after a replicated one: %q", code)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE TEMP TABLE t2 (a int)", &recorder{}); !ran || sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("temporary table made after a replicated write: %v %v", ran, err)
	}
	tx.Rollback()

	// A read-only transaction may write temporary tables, as in PostgreSQL.
	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.SetReadOnly(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO tt VALUES (3)")
	if code, _ := execErr(tx, "INSERT INTO r VALUES (3)"); code != sqlerr.ReadOnlyTransaction {
		t.Fatalf("replicated write in a read-only transaction: %q", code)
	}
	tx.Rollback()

	// Rolled back, a transaction's temporary table is not there.
	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE TEMP TABLE gone (a int)", &recorder{}); !ran || err != nil {
		t.Fatal(ran, err)
	}
	exec(t, tx, "INSERT INTO gone VALUES (1)")
	tx.Rollback()
	if _, err := e.sessionRun(s, "SELECT * FROM gone"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("a rolled-back temporary table: %v", err)
	}

	// ON COMMIT DELETE ROWS and DROP act at the end of each transaction.
	e.mustRun(s, "CREATE TEMP TABLE del (a int) ON COMMIT DELETE ROWS")
	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE TEMP TABLE dropped (a int) ON COMMIT DROP", &recorder{}); !ran || err != nil {
		t.Fatal(ran, err)
	}
	exec(t, tx, "INSERT INTO del VALUES (1)")
	exec(t, tx, "INSERT INTO dropped VALUES (1)")
	wantRows(t, exec(t, tx, "SELECT (SELECT count(*) FROM del), (SELECT count(*) FROM dropped)").rows, row(int64(1), int64(1)))
	if err := tx.CommitLocal(ctx); err != nil {
		t.Fatal(err)
	}
	wantRows(t, e.sessionRead(s, "SELECT count(*) FROM del"), row(int64(0)))
	if _, err := e.sessionRun(s, "SELECT * FROM dropped"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("an ON COMMIT DROP table after its commit: %v", err)
	}
}

// The statements on temporary objects: what PostgreSQL makes temporary is
// made so, and what cannot be done is refused.
func TestTempStatements(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE m (id int PRIMARY KEY, n numeric(8,2), v text)")
	e.commit("INSERT INTO m VALUES (1, 1.5, 'a'), (2, 2.25, 'b')")
	s := e.NewSession()
	defer s.Close()

	if r := e.mustRun(s, "CREATE TEMP TABLE c AS SELECT id, n, v || '!' AS w FROM m"); r.tag != "SELECT 2" {
		t.Fatalf("tag %q", r.tag)
	}
	r := &recorder{}
	if err := s.Read(context.Background(), "SELECT * FROM c ORDER BY id", r); err != nil {
		t.Fatal(err)
	}
	if r.cols[1].Type != result.Numeric || r.cols[1].Mod != 8<<16|2+4 || r.cols[2].Type != result.Text {
		t.Fatalf("columns of CREATE TEMP TABLE AS: %+v", r.cols)
	}
	wantRows(t, r.rows, row(int64(1), "1.50", "a!"), row(int64(2), "2.25", "b!"))
	if r := e.mustRun(s, "SELECT id INTO TEMP i FROM m WHERE id > 1"); r.tag != "SELECT 1" {
		t.Fatalf("tag %q", r.tag)
	}
	wantRows(t, e.sessionRead(s, "SELECT * FROM i"), row(int64(2)))

	e.mustRun(s, "CREATE INDEX ON c (w)")
	e.mustRun(s, "CREATE TEMP VIEW tv AS SELECT id FROM m")
	var notices []string
	ctx := sqlerr.WithNotices(context.Background(), func(n *sqlerr.Error) { notices = append(notices, n.Message) })
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := tx.ExecLocal(ctx, "CREATE VIEW cv AS SELECT w FROM c WHERE w <> 'zz' AND id > 0", &recorder{}); !ran || err != nil {
		t.Fatal(ran, err)
	}
	if err := tx.CommitLocal(ctx); err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || notices[0] != `view "cv" will be a temporary view` {
		t.Fatalf("notices %q", notices)
	}
	wantRows(t, e.sessionRead(s, "SELECT count(*) FROM cv"), row(int64(2)))
	e.mustRun(s, "TRUNCATE c")
	wantRows(t, e.sessionRead(s, "SELECT count(*) FROM cv"), row(int64(0)))

	for sql, code := range map[string]string{
		"CREATE TEMP TABLE s (a serial)":   sqlerr.FeatureNotSupported,
		"ALTER TABLE c ADD COLUMN x int":   sqlerr.FeatureNotSupported,
		"DROP TABLE c, m":                  sqlerr.FeatureNotSupported,
		"CREATE TEMP SEQUENCE q":           sqlerr.FeatureNotSupported,
		"CREATE TEMP TABLE c (a int)":      sqlerr.DuplicateTable,
		"CREATE TEMP TABLE z AS EXECUTE p": sqlerr.FeatureNotSupported,
		// Views whose query the engine refuses, temporary or not.
		"CREATE TEMP VIEW sv AS SELECT v FROM m WHERE v SIMILAR TO 'a'": sqlerr.FeatureNotSupported,
		"CREATE VIEW sv AS SELECT v FROM m WHERE v SIMILAR TO 'a'":      sqlerr.FeatureNotSupported,
	} {
		if _, err := e.sessionRun(s, sql); sqlerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}

	e.mustRun(s, "DROP VIEW cv")
	e.mustRun(s, "DISCARD TEMP")
	for _, name := range []string{"c", "i", "tv"} {
		if _, err := e.sessionRun(s, "SELECT * FROM "+name); sqlerr.Code(err) != sqlerr.UndefinedTable {
			t.Errorf("%s after DISCARD TEMP: %v", name, err)
		}
	}
	wantRows(t, e.sessionRead(s, "SELECT count(*) FROM m"), row(int64(2)))
}

// The session's catalogs show its temporary objects, in their schema;
// another session's do not.
func TestTempCatalog(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE r (id int PRIMARY KEY)")
	s1, s2 := e.NewSession(), e.NewSession()
	defer s1.Close()
	defer s2.Close()
	e.mustRun(s1, "CREATE TEMP TABLE r (a int, b varchar(3))")
	e.mustRun(s1, "CREATE TEMP VIEW rv AS SELECT a FROM r")
	catalog := func(s engine.Session, sql string) [][]result.Value {
		t.Helper()
		r := &recorder{}
		if err := s.Catalog(context.Background(), sql, r); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		return r.rows
	}
	q := `SELECT c.relname, c.relkind, c.relpersistence, n.nspname, pg_table_is_visible(c.oid) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relname IN ('r', 'rv') ORDER BY 1, 4`
	wantRows(t, catalog(s1, q),
		row("r", "r", "t", "pg_temp_3", true), row("r", "r", "p", "public", false), row("rv", "v", "t", "pg_temp_3", true))
	wantRows(t, catalog(s2, q), row("r", "r", "p", "public", true))
	wantRows(t, catalog(s1, "SELECT attname FROM pg_attribute WHERE attrelid = 'r'::regclass AND attnum > 0 ORDER BY attnum"),
		row("a"), row("b"))
	e.mustRun(s1, "DROP VIEW rv")
	e.mustRun(s1, "DROP TABLE r")
	wantRows(t, catalog(s1, q), row("r", "r", "p", "public", true))
}

// A temporary table ON COMMIT DELETE ROWS that another table references
// fails its transaction's COMMIT, as in PostgreSQL.
func TestTempOnCommitForeignKey(t *testing.T) {
	e := openTest(t, Config{})
	s := e.NewSession()
	defer s.Close()
	ctx := context.Background()
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{"CREATE TEMP TABLE p (id int PRIMARY KEY) ON COMMIT DELETE ROWS", "CREATE TEMP TABLE ch (id int REFERENCES p)"} {
		if ran, err := tx.ExecLocal(ctx, sql, &recorder{}); !ran || err != nil {
			t.Fatal(sql, ran, err)
		}
	}
	err = tx.CommitLocal(ctx)
	wantCode(t, err, sqlerr.FeatureNotSupported)
	if _, err := e.sessionRun(s, "SELECT * FROM ch"); sqlerr.Code(err) != sqlerr.UndefinedTable {
		t.Fatalf("the failed COMMIT's table: %v", err)
	}
}
