package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// boundaryFixture drives one engine as a node's sessions do: a client's
// schema statement sent on its own is checked (CheckDDL) and applied at
// the next position; one in a transaction block runs in the block
// (ExecSchema); anything else runs as an ordinary statement.
type boundaryFixture struct {
	*tempFixture
	s engine.Session
}

func newBoundaryFixture(t *testing.T, e *Engine) *boundaryFixture {
	s := e.NewSession()
	t.Cleanup(func() { s.Close() })
	return &boundaryFixture{tempFixture: &tempFixture{t: t, e: e}, s: s}
}

// ddl replicates a schema statement sent on its own.
func (f *boundaryFixture) ddl(stmt string) error {
	d, err := f.e.CheckDDL(context.Background(), stmt)
	if errors.Is(err, engine.ErrRunAsTransaction) {
		return f.statement(stmt) // as the session runs it
	}
	if err != nil {
		return err
	}
	return f.apply(&writeset.WriteSet{DDL: d.Statement, Tables: d.Tables})
}

func (f *boundaryFixture) mustDDL(stmts ...string) {
	f.t.Helper()
	for _, stmt := range stmts {
		if err := f.ddl(stmt); err != nil {
			f.t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// inBlock runs a schema statement in a transaction block, which it then
// commits.
func (f *boundaryFixture) inBlock(stmt string) error {
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.ExecSchema(ctx, stmt, result.Discard); err != nil {
		return err
	}
	return f.commit(tx)
}

// statement runs sql as an ordinary statement of the client's, which it
// then commits.
func (f *boundaryFixture) statement(sql string) error {
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, sql, result.Discard); err != nil {
		return err
	}
	return f.commit(tx)
}

// captured runs insert in a client's transaction and returns the keys of
// its write set; the transaction rolls back.
func (f *boundaryFixture) captured(insert string) []writeset.Key {
	f.t.Helper()
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, insert, result.Discard); err != nil {
		f.t.Fatalf("%s: %v", insert, err)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		f.t.Fatalf("%s: %v", insert, err)
	}
	if ws == nil {
		return nil
	}
	return ws.Keys
}

// wantCaptured fails unless insert's write set holds k.
func (f *boundaryFixture) wantCaptured(insert string, k writeset.Key) {
	f.t.Helper()
	if keys := f.captured(insert); !slices.Contains(keys, k) {
		f.t.Errorf("%s: write set keys %q, want %q among them: the table does not capture", insert, keys, k)
	}
}

// triggers returns table's triggers (certa's, and not PostgreSQL's
// internal ones) and rules with their enabled state, and its persistence:
// "p" for a logged table. certa's are marked ":visible" unless they are
// internal (hidden from psql's \d and pg_dump, as they must be).
func (f *boundaryFixture) triggers(table string) string {
	f.t.Helper()
	rows := inspect(f.t, f.e, `SELECT c.relpersistence::text || ' ' || coalesce((SELECT string_agg(t.tgname || ':' || t.tgenabled::text ||
			CASE WHEN t.tgparentid <> 0 THEN ':clone' ELSE '' END ||
			CASE WHEN t.tgname IN (' certa_capture', 'certa_capture', 'certa_no_truncate') AND NOT t.tgisinternal THEN ':visible' ELSE '' END, ' ' ORDER BY t.tgname)
		FROM pg_trigger t WHERE t.tgrelid = c.oid AND (NOT t.tgisinternal OR t.tgname IN (' certa_capture', 'certa_no_truncate'))), '') ||
		coalesce(' ' || (SELECT string_agg('rule ' || r.rulename || ':' || r.ev_enabled::text, ' ' ORDER BY r.rulename)
		FROM pg_rewrite r WHERE r.ev_class = c.oid), '')
		FROM pg_class c WHERE c.oid = `+quoteLiteral(table)+`::regclass`)
	return rows[0][0].(string)
}

// refusedChange reports whether err refuses a change to certa's triggers:
// certa's 0A000, or PostgreSQL's refusals to change an internal trigger
// (42501 "permission denied: ... is a system trigger" for ALTER TABLE,
// 42710 "... is an internal or a child trigger" for CREATE OR REPLACE).
func refusedChange(err error) bool {
	se, ok := err.(*sqlerr.Error)
	return sqlerr.Code(err) == sqlerr.FeatureNotSupported ||
		ok && se.Code == sqlerr.InsufficientPrivilege && strings.Contains(se.Message, "is a system trigger") ||
		ok && se.Code == sqlerr.DuplicateObject && strings.Contains(se.Message, "is an internal or a child trigger")
}

// A client cannot take a replicated table out of capture, nor make a
// trigger or rule fire on the applying nodes alone, nor make a table that
// PostgreSQL empties after a crash: each such schema statement is refused
// with 0A000, however it is sent (on its own, in a transaction block, in a
// DO block, in a function, in a function that a schema statement runs, or
// as a DDL write set that reached the log), and the table goes on
// capturing as before.
func TestBoundaryRefusals(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE acct (id int PRIMARY KEY, v text)",
		"CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v = 'stamped'; RETURN NEW; END $$",
		"CREATE TRIGGER stamp BEFORE INSERT ON acct FOR EACH ROW EXECUTE FUNCTION stamp()",
		"CREATE RULE skip AS ON INSERT TO acct WHERE NEW.id < 0 DO INSTEAD NOTHING",
		"CREATE TABLE meas (id int, r int, v text, PRIMARY KEY (id, r)) PARTITION BY RANGE (r)",
		"CREATE TABLE meas1 PARTITION OF meas FOR VALUES FROM (0) TO (10)",
		"CREATE TRIGGER stamp BEFORE INSERT ON meas FOR EACH ROW EXECUTE FUNCTION stamp()",
		// A function a client may run, and a table whose one row makes a
		// schema statement run a function (a CHECK it adds: a CHECK must
		// be immutable, and may call one that is not).
		"CREATE FUNCTION run_ddl(stmt text) RETURNS int LANGUAGE plpgsql AS $$ BEGIN EXECUTE stmt; RETURN 1; END $$",
		"CREATE FUNCTION run_ddl_immutable(stmt text) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN run_ddl(stmt); END $$",
		"CREATE TABLE holder (id int PRIMARY KEY)",
		"CREATE VIEW acct_v AS SELECT * FROM acct",
		// Types that hold a type PostgreSQL does not read back.
		"CREATE DOMAIN tree AS pg_node_tree",
		"CREATE TYPE pair AS (n int, stats pg_ndistinct)",
	)
	if err := f.statement("INSERT INTO holder VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	wantAcct := "p  certa_capture:O certa_no_truncate:O stamp:O rule skip:O"
	wantMeas1 := "p  certa_capture:O certa_no_truncate:O stamp:O:clone"
	if got := f.triggers("acct"); got != wantAcct {
		t.Fatalf("acct: %s, want %s", got, wantAcct)
	}
	if got := f.triggers("meas1"); got != wantMeas1 {
		t.Fatalf("meas1: %s, want %s", got, wantMeas1)
	}

	forms := []string{
		"ALTER TABLE acct DISABLE TRIGGER \" certa_capture\"",
		"ALTER TABLE acct DISABLE TRIGGER ALL",
		"DROP TRIGGER \" certa_capture\" ON acct",
		"ALTER TABLE acct ENABLE REPLICA TRIGGER \" certa_capture\"",
		"ALTER TABLE acct ENABLE ALWAYS TRIGGER \" certa_capture\"",
		"ALTER TABLE acct DISABLE TRIGGER certa_no_truncate",
		"DROP TRIGGER certa_no_truncate ON acct",
		"ALTER TABLE acct ENABLE REPLICA TRIGGER certa_no_truncate",
		"ALTER TABLE acct ENABLE ALWAYS TRIGGER certa_no_truncate",
		"ALTER TRIGGER \" certa_capture\" ON acct RENAME TO mine",
		"CREATE OR REPLACE TRIGGER \" certa_capture\" AFTER INSERT ON acct FOR EACH ROW EXECUTE FUNCTION certa.capture_row()",
		"CREATE TRIGGER again AFTER INSERT OR UPDATE OR DELETE ON acct FOR EACH ROW EXECUTE FUNCTION certa.capture_row()",
		"CREATE TRIGGER capture_v INSTEAD OF INSERT ON acct_v FOR EACH ROW EXECUTE FUNCTION certa.capture_row()",
		// A trigger that would fire before certa's capture trigger,
		// which must record a row before triggers change more rows.
		`CREATE TRIGGER " a" AFTER INSERT ON acct FOR EACH ROW EXECUTE FUNCTION stamp()`,
		"CREATE TRIGGER \"\x01\" AFTER INSERT ON meas FOR EACH ROW EXECUTE FUNCTION stamp()",
		`ALTER TRIGGER stamp ON acct RENAME TO " b"`,
		"ALTER TABLE acct ENABLE ALWAYS TRIGGER stamp",
		"ALTER TABLE acct ENABLE REPLICA TRIGGER stamp",
		"ALTER TABLE acct ENABLE ALWAYS RULE skip",
		"ALTER TABLE acct ENABLE REPLICA RULE skip",
		// Values PostgreSQL does not read back.
		"CREATE TABLE scratch (id int PRIMARY KEY, plan pg_node_tree)",
		"CREATE TABLE scratch AS SELECT oid AS id, relpartbound FROM pg_class",
		"ALTER TABLE acct ADD COLUMN stats pg_ndistinct",
		"CREATE TABLE scratch (id int PRIMARY KEY, t tree)",
		"CREATE TABLE scratch (id int PRIMARY KEY, p pair[])",
		// A partition: its own triggers, and the clone of its table's.
		"ALTER TABLE meas1 DISABLE TRIGGER \" certa_capture\"",
		"DROP TRIGGER certa_no_truncate ON meas1",
		"ALTER TABLE meas ENABLE ALWAYS TRIGGER stamp",
		"ALTER TABLE meas1 ENABLE REPLICA TRIGGER stamp",
		"ALTER TABLE meas DISABLE TRIGGER certa_no_truncate",
	}
	ways := []struct {
		name string
		run  func(form string) error
	}{
		{"alone", f.ddl},
		{"block", f.inBlock},
		{"do", func(form string) error {
			return f.statement("DO $$ BEGIN EXECUTE " + quoteLiteral(form) + "; END $$")
		}},
		{"function", func(form string) error { return f.statement("SELECT run_ddl(" + quoteLiteral(form) + ")") }},
		{"in-ddl", func(form string) error {
			return f.ddl("ALTER TABLE holder ADD CHECK (run_ddl_immutable(" + quoteLiteral(form) + ") = 1)")
		}},
		{"applied", func(form string) error { return f.apply(&writeset.WriteSet{DDL: ddlText(form)}) }},
	}
	n := 0
	for i, form := range forms {
		for _, way := range ways {
			t.Run(fmt.Sprintf("%02d-%s", i, way.name), func(t *testing.T) {
				f.t = t
				if err := way.run(form); !refusedChange(err) {
					t.Errorf("%s (%s): %v, want SQLSTATE 0A000 (or 42501 for a system trigger)", form, way.name, err)
				}
				if got := f.triggers("acct"); got != wantAcct {
					t.Errorf("after %s (%s): acct %s, want %s", form, way.name, got, wantAcct)
				}
				if got := f.triggers("meas1"); got != wantMeas1 {
					t.Errorf("after %s (%s): meas1 %s, want %s", form, way.name, got, wantMeas1)
				}
				if rows := query(t, f.e, "SELECT count(*) FROM pg_class WHERE relname IN ('scratch', 'meas2')"); rows[0][0] != int64(0) {
					t.Errorf("after %s (%s): a refused statement left a relation", form, way.name)
				}
				if rows := inspect(t, f.e, `SELECT count(*) FROM pg_trigger WHERE tgfoid IN ('certa.capture_row'::regproc, 'certa.refuse_truncate'::regproc)
					AND tgname NOT IN (' certa_capture', 'certa_no_truncate')`); rows[0][0] != int64(0) {
					t.Errorf("after %s (%s): a refused statement left a trigger calling certa's functions", form, way.name)
				}
				n++
				f.wantCaptured(fmt.Sprintf("INSERT INTO acct VALUES (%d)", n), key("acct", n))
				f.wantCaptured(fmt.Sprintf("INSERT INTO meas VALUES (%d, 1)", n), key("meas1", n, 1))
			})
		}
	}
	f.t = t
	// The refusals say why, and what to do instead.
	_, err := e.CheckDDL(context.Background(), `DROP TRIGGER " certa_capture" ON acct`)
	if se, ok := err.(*sqlerr.Error); !ok || !strings.Contains(se.Message, "replicate") || !strings.Contains(se.Hint, "replicate the table's changes") {
		t.Errorf("DROP TRIGGER certa_capture: %#v, want it said that the trigger replicates the table", err)
	}
	_, err = e.CheckDDL(context.Background(), `ALTER TABLE acct DISABLE TRIGGER " certa_capture"`)
	if se, ok := err.(*sqlerr.Error); !ok || se.Code != sqlerr.InsufficientPrivilege || !strings.Contains(se.Message, `" certa_capture" is a system trigger`) {
		t.Errorf("DISABLE TRIGGER certa_capture: %#v, want PostgreSQL's refusal of a system trigger", err)
	}
	// TRUNCATE's guard still holds, a partition's too.
	for _, table := range []string{"acct", "meas", "meas1"} {
		if err := f.statement("DO $$ BEGIN EXECUTE 'TRUNCATE " + table + "'; END $$"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("TRUNCATE %s in a DO block: %v, want 0A000", table, err)
		}
	}
}

// Partitions capture whatever happens to their table: a new partition
// (made as one, or attached: a table with its own capture trigger can be
// attached) gets certa's triggers, the TRUNCATE guard included; a
// detached partition keeps capturing; TRUNCATE of a partitioned table
// names its partitions among the tables it changes. A partitioned table
// itself has no row trigger of certa's (its partitions have their own).
func TestBoundaryPartitions(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE meas (id int, r int, v text, PRIMARY KEY (id, r)) PARTITION BY RANGE (r)",
		"CREATE TABLE meas1 PARTITION OF meas FOR VALUES FROM (0) TO (10)",
		"CREATE TABLE meas2 PARTITION OF meas FOR VALUES FROM (10) TO (20)",
		"CREATE TABLE loose (id int, r int, v text, PRIMARY KEY (id, r))",
		"ALTER TABLE meas ATTACH PARTITION loose FOR VALUES FROM (20) TO (30)",
		"ALTER TABLE meas DETACH PARTITION meas2",
		// Partitions of partitions, made in a transaction block.
		"CREATE TABLE sub PARTITION OF meas FOR VALUES FROM (30) TO (40) PARTITION BY RANGE (id)",
	)
	if err := f.inBlock("CREATE TABLE sub1 PARTITION OF sub FOR VALUES FROM (0) TO (100)"); err != nil {
		t.Fatal(err)
	}
	if err := f.inBlock("ALTER TABLE meas DETACH PARTITION meas1"); err != nil {
		t.Fatal(err)
	}
	if err := f.inBlock("ALTER TABLE meas ATTACH PARTITION meas1 FOR VALUES FROM (0) TO (10)"); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{
		"meas":  "p certa_no_truncate:O",
		"sub":   "p certa_no_truncate:O",
		"meas1": "p  certa_capture:O certa_no_truncate:O",
		"meas2": "p  certa_capture:O certa_no_truncate:O",
		"loose": "p  certa_capture:O certa_no_truncate:O",
		"sub1":  "p  certa_capture:O certa_no_truncate:O",
	} {
		if got := f.triggers(table); got != want {
			t.Errorf("%s: %s, want %s", table, got, want)
		}
	}
	f.wantCaptured("INSERT INTO meas VALUES (1, 5)", key("meas1", 1, 5))
	f.wantCaptured("INSERT INTO meas2 VALUES (1, 15)", key("meas2", 1, 15))
	f.wantCaptured("INSERT INTO meas VALUES (1, 25)", key("loose", 1, 25))
	f.wantCaptured("INSERT INTO loose VALUES (2, 25)", key("loose", 2, 25))
	f.wantCaptured("INSERT INTO meas VALUES (1, 35)", key("sub1", 1, 35))
	for _, table := range []string{"meas", "meas1", "meas2", "loose", "sub", "sub1"} {
		if err := f.statement("DO $$ BEGIN EXECUTE 'TRUNCATE " + table + "'; END $$"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("TRUNCATE %s in a DO block: %v, want 0A000", table, err)
		}
	}
	d, err := e.CheckDDL(context.Background(), "TRUNCATE meas")
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"meas", "meas1", "loose", "sub1"} {
		if !slices.Contains(d.Tables, table) {
			t.Errorf("TRUNCATE meas changes tables %q, want %s among them", d.Tables, table)
		}
	}
}

// Ordinary schema statements are not hindered: tables, indexes, columns,
// a user's triggers and rules (enabled as ordinary ones), a table made
// with its schema, CREATE TABLE AS, a logged table made logged again,
// temporary tables (never checked: they stay the session's), and a
// superuser's (the node's own) work.
func TestBoundaryOrdinaryDDL(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE acct (id int PRIMARY KEY, v text)",
		"CREATE INDEX acct_v ON acct (v)",
		"ALTER TABLE acct ADD COLUMN w int DEFAULT 0",
		"CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v = 'stamped'; RETURN NEW; END $$",
		"CREATE TRIGGER stamp BEFORE INSERT ON acct FOR EACH ROW EXECUTE FUNCTION stamp()",
		"ALTER TABLE acct DISABLE TRIGGER stamp",
		"ALTER TABLE acct ENABLE TRIGGER stamp",
		"CREATE RULE skip AS ON INSERT TO acct WHERE NEW.id < 0 DO INSTEAD NOTHING",
		"ALTER TABLE acct DISABLE RULE skip",
		"ALTER TABLE acct ENABLE RULE skip",
		"ALTER TABLE acct SET LOGGED",
		"COMMENT ON TRIGGER \" certa_capture\" ON acct IS 'certa''s'",
		"CREATE SCHEMA s CREATE TABLE t (id int PRIMARY KEY)",
		"CREATE TABLE copy AS SELECT * FROM acct",
		"ALTER TABLE acct RENAME TO account",
		"ALTER TABLE account RENAME TO acct",
	)
	if err := f.inBlock("CREATE TABLE blocked (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	for table, want := range map[string]string{
		"acct":    "p  certa_capture:O certa_no_truncate:O stamp:O rule skip:O",
		"s.t":     "p  certa_capture:O certa_no_truncate:O",
		"copy":    "p  certa_capture:O certa_no_truncate:O",
		"blocked": "p  certa_capture:O certa_no_truncate:O",
	} {
		if got := f.triggers(table); got != want {
			t.Errorf("%s: %s, want %s", table, got, want)
		}
	}
	f.wantCaptured("INSERT INTO acct (id) VALUES (1)", key("acct", 1))
	f.wantCaptured("INSERT INTO s.t VALUES (1)", key("s.t", 1))
	f.mustDDL("DROP RULE skip ON acct", "DROP TRIGGER stamp ON acct", "DROP TABLE copy", "DROP SCHEMA s CASCADE")
	if got, want := f.triggers("acct"), "p  certa_capture:O certa_no_truncate:O"; got != want {
		t.Errorf("acct: %s, want %s", got, want)
	}
	// Temporary tables stay the session's.
	for _, stmt := range []string{"CREATE TEMP TABLE tt (id int PRIMARY KEY)", "ALTER TABLE tt ADD COLUMN w int", "DROP TABLE tt"} {
		if ran, err := f.local(f.s, stmt); !ran || err != nil {
			t.Errorf("%s: ran %v, %v; want it run on the session's backend", stmt, ran, err)
		}
	}
	// The node's own work (a superuser's) is not checked.
	admin, err := pgconn.Connect(context.Background(), e.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	mustExec(t, admin, "CREATE UNLOGGED TABLE own (id int PRIMARY KEY); DROP TABLE own")
}

// A database made before the boundary existed is mended when the engine
// opens it: a partitioned table's row trigger (cloned to its partitions,
// which then had no TRUNCATE guard, could not be attached and lost their
// capture when detached) goes, each partition gets its own triggers, and
// a capture trigger a client disabled is enabled again. Its partitions
// can then be detached and attached.
func TestBoundaryEarlierLayout(t *testing.T) {
	srv := startOneServer(t)
	fac := &factory{srv: srv, dbs: map[engine.Engine]string{}}
	e := fac.Open(t).(*Engine)
	f := newBoundaryFixture(t, e)
	ctx := context.Background()
	admin, err := pgconn.Connect(ctx, e.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	// As the client role made them before: without this check, and with
	// the triggers the earlier install_capture gave (a row trigger on the
	// partitioned table, cloned to its partitions).
	mustExec(t, admin, `ALTER EVENT TRIGGER certa_verify_capture DISABLE; ALTER EVENT TRIGGER certa_verify_drop DISABLE;
		ALTER EVENT TRIGGER certa_install_capture DISABLE;
		SET ROLE certa_client;
		CREATE TABLE old (id int, r int, PRIMARY KEY (id, r)) PARTITION BY RANGE (r);
		CREATE TRIGGER certa_capture AFTER INSERT OR UPDATE OR DELETE ON old FOR EACH ROW EXECUTE FUNCTION certa.capture_row();
		CREATE TRIGGER certa_no_truncate BEFORE TRUNCATE ON old FOR EACH STATEMENT EXECUTE FUNCTION certa.refuse_truncate();
		CREATE TABLE old1 PARTITION OF old FOR VALUES FROM (0) TO (10);
		CREATE TABLE old2 PARTITION OF old FOR VALUES FROM (10) TO (20);
		CREATE TABLE off (id int PRIMARY KEY);
		CREATE TRIGGER certa_capture AFTER INSERT OR UPDATE OR DELETE ON off FOR EACH ROW EXECUTE FUNCTION certa.capture_row();
		CREATE TRIGGER certa_no_truncate BEFORE TRUNCATE ON off FOR EACH STATEMENT EXECUTE FUNCTION certa.refuse_truncate();
		ALTER TABLE off DISABLE TRIGGER certa_capture;
		RESET ROLE;
		ALTER EVENT TRIGGER certa_verify_capture ENABLE ALWAYS; ALTER EVENT TRIGGER certa_verify_drop ENABLE ALWAYS;
		ALTER EVENT TRIGGER certa_install_capture ENABLE ALWAYS`)
	if got, want := f.triggers("old1"), "p certa_capture:O:clone:visible"; got != want {
		t.Fatalf("old1 before: %s, want %s", got, want)
	}
	e.Close()
	e = fac.Reopen(t, e).(*Engine)
	f = newBoundaryFixture(t, e)
	for table, want := range map[string]string{
		"old":  "p certa_no_truncate:O",
		"old1": "p  certa_capture:O certa_no_truncate:O",
		"old2": "p  certa_capture:O certa_no_truncate:O",
		"off":  "p  certa_capture:O certa_no_truncate:O",
	} {
		if got := f.triggers(table); got != want {
			t.Errorf("%s after the engine opened it: %s, want %s", table, got, want)
		}
	}
	f.mustDDL("ALTER TABLE old DETACH PARTITION old2", "ALTER TABLE old ATTACH PARTITION old2 FOR VALUES FROM (10) TO (20)")
	f.wantCaptured("INSERT INTO old VALUES (1, 5)", key("old1", 1, 5))
	f.wantCaptured("INSERT INTO old VALUES (1, 15)", key("old2", 1, 15))
	f.wantCaptured("INSERT INTO off VALUES (1)", key("off", 1))

	// A superuser's partitioned table (not checked) gets the same
	// layout from install_capture; a client's partition of it too.
	mustExec(t, admin, `CREATE TABLE op (id int, r int, PRIMARY KEY (id, r)) PARTITION BY RANGE (r);
		CREATE TABLE op1 PARTITION OF op FOR VALUES FROM (0) TO (10);
		ALTER TABLE op OWNER TO certa_client; ALTER TABLE op1 OWNER TO certa_client`)
	f.mustDDL("CREATE TABLE op2 PARTITION OF op FOR VALUES FROM (10) TO (20)")
	for table, want := range map[string]string{
		"op":  "p certa_no_truncate:O",
		"op1": "p  certa_capture:O certa_no_truncate:O",
		"op2": "p  certa_capture:O certa_no_truncate:O",
	} {
		if got := f.triggers(table); got != want {
			t.Errorf("%s after a partition was added: %s, want %s", table, got, want)
		}
	}
	f.wantCaptured("INSERT INTO op VALUES (1, 5)", key("op1", 1, 5))
}

// A change to what the whole server shares (a role's settings, here)
// commits only where every node makes it: sent as a schema statement, in a
// transaction block or on its own. Made inside a DO block or a function,
// in a transaction of its own or after a permitted one, it is refused
// with 0A000 and leaves nothing, and the backend's earlier counts (which
// PostgreSQL keeps until it is idle) never refuse an ordinary write.
func TestGlobalObjectsChangeEverywhereOrNowhere(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE acct (id int PRIMARY KEY)",
		"CREATE FUNCTION set_style() RETURNS int LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'ALTER ROLE certa_client SET DateStyle = ''German'''; RETURN 1; END $$",
	)
	settings := func() string {
		t.Helper()
		rows := query(t, e, "SELECT coalesce((SELECT array_to_string(s.setconfig, ',') FROM pg_db_role_setting s WHERE s.setrole = 'certa_client'::regrole), '')")
		return rows[0][0].(string)
	}
	// Permitted: on its own, and in a block, where the write set carries it.
	f.mustDDL("ALTER ROLE certa_client SET extra_float_digits = 2")
	if err := f.inBlock("ALTER ROLE certa_client SET IntervalStyle = 'iso_8601'"); err != nil {
		t.Fatalf("in a block: %v", err)
	}
	want := "extra_float_digits=2,IntervalStyle=iso_8601"
	if got := settings(); got != want {
		t.Fatalf("settings %q, want %q", got, want)
	}
	refused := []string{
		"DO $$ BEGIN EXECUTE 'ALTER ROLE certa_client SET DateStyle = ''German'''; END $$",
		"DO $$ BEGIN EXECUTE 'ALTER ROLE certa_client RESET ALL'; END $$",
		"SELECT set_style()",
		"INSERT INTO acct VALUES (set_style())",
	}
	for _, stmt := range refused {
		if err := f.statement(stmt); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v, want 0A000", stmt, err)
		}
		// Right after, on the same backend: an ordinary write commits.
		if err := f.statement("INSERT INTO acct VALUES (" + fmt.Sprint(len(stmt)) + ") ON CONFLICT DO NOTHING"); err != nil {
			t.Errorf("after %s: %v", stmt, err)
		}
	}
	// A permitted change does not cover one a function makes after it.
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.ExecSchema(ctx, "ALTER ROLE certa_client SET lc_monetary = 'C'", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "SELECT set_style()", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := f.commit(tx); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("a permitted change, then a function's: %v, want 0A000", err)
	}
	tx.Rollback()
	if got := settings(); got != want {
		t.Errorf("settings %q after the refusals, want %q", got, want)
	}
}

// Client code that a schema statement runs on the applier and in CheckDDL
// cannot step out of the boundary's check by changing the role it runs as
// (SET LOCAL ROLE NONE leaves certa_applier's own session role): the
// statement is refused and the table goes on capturing.
func TestBoundaryHoldsWhateverRoleCodeSets(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE acct (id int PRIMARY KEY, v text)",
		"CREATE TABLE holder (id int PRIMARY KEY)",
		"CREATE FUNCTION sneak_v() RETURNS int LANGUAGE plpgsql AS $$ BEGIN SET LOCAL ROLE NONE; ALTER TABLE acct DISABLE TRIGGER \" certa_capture\"; RETURN 1; END $$",
		"CREATE FUNCTION sneak() RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN sneak_v(); END $$",
	)
	if err := f.statement("INSERT INTO holder VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	stmt := "ALTER TABLE holder ADD CHECK (sneak() = 1)"
	if err := f.ddl(stmt); !refusedChange(err) {
		t.Errorf("%s: %v, want 0A000", stmt, err)
	}
	// As a forged write set, which CheckDDL never saw: it fails at apply.
	if err := f.apply(&writeset.WriteSet{DDL: schemaChange{SQL: stmt}.encode()}); err == nil {
		t.Errorf("%s applied", stmt)
	}
	f.wantCaptured("INSERT INTO acct VALUES (7)", key("acct", 7))
}

// certa's trigger functions read the catalogs with PostgreSQL's own
// operators whatever search_path the client set: an operator = of the
// client's that answers false does not let TRUNCATE in a DO block through.
func TestTruncateGuardIgnoresSearchPath(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE acct (id int PRIMARY KEY)",
		"CREATE FUNCTION public.fake_eq(name, name) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false'",
		"CREATE OPERATOR public.= (LEFTARG = name, RIGHTARG = name, FUNCTION = public.fake_eq)",
	)
	if err := f.statement("INSERT INTO acct VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, "SET LOCAL search_path = public, pg_catalog", result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "DO $$ BEGIN EXECUTE 'TRUNCATE acct'; END $$", result.Discard); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("TRUNCATE in a DO block under the client's =: %v, want 0A000", err)
	}
}

// A statement that changes a global object and names pg_temp (so that it
// may look local) is not run on this node alone: it is replicated as a
// schema statement, in a block and on its own.
func TestGlobalChangeNamingTempIsNotLocal(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	stmt := "ALTER ROLE certa_client SET search_path = \"$user\", public, pg_temp"
	if ran, err := f.local(f.s, stmt); ran || err != nil {
		t.Fatalf("%s ran as local work: %v, %v", stmt, ran, err)
	}
	ctx := context.Background()
	tx, err := f.s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if ran, err := tx.ExecLocal(ctx, stmt, result.Discard); ran || err != nil {
		t.Fatalf("%s ran as local work in a block: %v, %v", stmt, ran, err)
	}
	if err := tx.ExecSchema(ctx, stmt, result.Discard); err != nil {
		t.Fatal(err)
	}
	if err := f.commit(tx); err != nil {
		t.Fatalf("replicated in a block: %v", err)
	}
}
