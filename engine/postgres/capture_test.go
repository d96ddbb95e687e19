package postgres

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/writeset"
)

// testDB is a database of a test's server with certa's objects, and a
// connection to it as the client role, one as the applier's (as the
// engine's applier: replica, with the token testToken) and one as the
// superuser.
type testDB struct{ client, applier, admin *pgconn.PgConn }

// testToken is the engine's token in the databases of startServer.
const testToken = "test-token"

// startServer runs a PostgreSQL server for the test and returns
// connections to two new databases of it, origin and replica, each with
// certa's objects.
func startServer(t *testing.T) (origin, replica testDB) {
	t.Helper()
	s := startOneServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	admin, err := pgconn.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	var dbs []testDB
	for _, db := range []string{"origin", "replica"} {
		mustExec(t, admin, "CREATE DATABASE "+db)
		var d testDB
		for _, user := range []string{"", clientRole, applierRole} {
			c, err := connect(ctx, s.DSN(db), user, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close(context.Background()) })
			switch user {
			case "":
				mustExec(t, c, bootstrapSQL("")+"; INSERT INTO certa.token VALUES ('"+testToken+"')")
				d.admin = c
			case clientRole:
				d.client = c
			default:
				mustExec(t, c, "SET session_replication_role = replica")
				d.applier = c
			}
		}
		dbs = append(dbs, d)
	}
	return dbs[0], dbs[1]
}

// asClient makes a superuser's schema statement run as the client role,
// as the applier runs it.
func asClient(ddl string) string { return "SET ROLE " + clientRole + "; " + ddl + "; RESET ROLE" }

func mustExec(t *testing.T, c *pgconn.PgConn, sql string) []*pgconn.Result {
	t.Helper()
	res, err := c.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

// rowsOf returns every row of table in key order, each as its text.
func rowsOf(t *testing.T, c *pgconn.PgConn, table string) []string {
	t.Helper()
	res := mustExec(t, c, "SELECT t::text FROM "+table+" t ORDER BY 1")
	var out []string
	for _, r := range res[0].Rows {
		out = append(out, string(r[0]))
	}
	return out
}

// Transactions captured on one database and applied, as certified write
// sets are, on another leave both with the same rows, whatever the
// columns' types; the keys are those of the rows written, in the SQLite
// engine's encoding.
func TestCaptureAndApply(t *testing.T) {
	o, r := startServer(t)
	origin, originAdmin, replica := o.client, o.admin, r.applier
	schema := []string{
		`CREATE TABLE acct (id bigint PRIMARY KEY, owner text NOT NULL, balance numeric(14,2), opened timestamptz,
			tags text[], doc jsonb, photo bytea, flag boolean, ratio double precision, doubled bigint GENERATED ALWAYS AS (id * 2) STORED)`,
		`CREATE TABLE entry (acct bigint REFERENCES acct ON DELETE CASCADE ON UPDATE CASCADE, n int, memo text, PRIMARY KEY (acct, n))`,
		`CREATE SCHEMA other`,
		`CREATE TABLE other."Odd Name" ("k""ey" text PRIMARY KEY, v interval)`,
	}
	for _, ddl := range schema {
		mustExec(t, originAdmin, asClient(ddl)) // DDL runs on every node, in total order
		mustExec(t, replica, asClient(ddl))
	}
	ctx := context.Background()
	var ts, tsReplica tables
	for _, c := range []struct {
		stmts []string
		keys  []writeset.Key // want
	}{
		{[]string{`INSERT INTO acct (id, owner, balance, opened, tags, doc, photo, flag, ratio) VALUES
			(1, 'ann', 10.50, '2024-01-01 10:00:00+02', '{a,"b c"}', '{"x": [1, 2.50]}', '\xdeadbeef', true, 0.1),
			(2, 'bob''s', 12345678901.99, NULL, NULL, NULL, NULL, false, 1e-300)`},
			[]writeset.Key{key("acct", 1), key("acct", 2)}},
		{[]string{`INSERT INTO entry VALUES (1, 1, 'x'), (1, 2, NULL), (2, 1, 'ünï')`}, // and their parents' keys (refkeys.go)
			[]writeset.Key{key("entry", 1, 1), key("entry", 1, 2), key("entry", 2, 1), key("acct", 1), key("acct", 2)}},
		{[]string{`UPDATE acct SET balance = balance + 0.01 WHERE owner = 'ann'`}, []writeset.Key{key("acct", 1)}},
		{[]string{`UPDATE acct SET owner = owner WHERE id = 2`}, []writeset.Key{key("acct", 2)}}, // same values: written, as in PostgreSQL
		{[]string{`UPDATE acct SET id = 3 WHERE id = 2`}, []writeset.Key{key("acct", 2), key("acct", 3), key("entry", 2, 1), key("entry", 3, 1)}},
		{[]string{`INSERT INTO acct (id, owner) VALUES (1, 'x') ON CONFLICT (id) DO UPDATE SET owner = 'ann2'`}, []writeset.Key{key("acct", 1)}},
		{[]string{`DELETE FROM acct WHERE id = 1`}, []writeset.Key{key("acct", 1), key("entry", 1, 1), key("entry", 1, 2)}},
		{[]string{`INSERT INTO other."Odd Name" VALUES ('k', '1 day 2 hours')`, `UPDATE other."Odd Name" SET "k""ey" = 'K'`},
			[]writeset.Key{key("other.Odd Name", "K"), key("other.Odd Name", "k")}},
		{[]string{`SELECT count(*) FROM acct`}, nil},
	} {
		mustExec(t, origin, "BEGIN ISOLATION LEVEL REPEATABLE READ")
		for _, s := range c.stmts {
			mustExec(t, origin, s)
		}
		mustExec(t, origin, "SET CONSTRAINTS ALL IMMEDIATE")
		cap, err := capture(ctx, origin, &ts)
		rows, keys := cap.rows, append(cap.keys, cap.shared...) // parents' keys are shared
		if err != nil {
			t.Fatalf("%q: %v", c.stmts, err)
		}
		mustExec(t, origin, "COMMIT")
		got, want := writeset.WriteSet{Keys: keys}, writeset.WriteSet{Keys: c.keys}
		got.Normalize()
		want.Normalize()
		if !slices.Equal(got.Keys, want.Keys) {
			t.Errorf("%q: keys %q, want %q", c.stmts, got.Keys, want.Keys)
		}
		// On the way: encoded into the write set, decoded on the replica.
		decoded, err := decodeRows(appendRows(nil, rows))
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, replica, "BEGIN; SET LOCAL session_replication_role = replica")
		if err := applyRows(ctx, replica, &tsReplica, decoded, "", nil); err != nil {
			t.Fatalf("%q: %v", c.stmts, err)
		}
		mustExec(t, replica, "COMMIT")
		for _, table := range []string{"acct", "entry", `other."Odd Name"`} {
			if o, r := rowsOf(t, origin, table), rowsOf(t, replica, table); !slices.Equal(o, r) {
				t.Fatalf("after %q, %s differs:\norigin  %q\nreplica %q", c.stmts, table, o, r)
			}
		}
	}
	// Nothing is left in the capture table after its clean-up; a table
	// without a key is refused at capture, and nothing is captured of
	// what another role than the client role does (the applier).
	if err := gcCapture(ctx, originAdmin); err != nil {
		t.Fatal(err)
	}
	if n := mustExec(t, origin, "SELECT count(*) FROM certa.capture")[0].Rows[0][0]; string(n) != "0" {
		t.Fatalf("%s capture rows left", n)
	}
	mustExec(t, originAdmin, "BEGIN; INSERT INTO acct (id, owner) VALUES (9, 'z')")
	if cap, err := capture(ctx, originAdmin, &ts); err != nil || len(cap.rows) != 0 {
		t.Fatalf("capture of the superuser's changes: %v %v", cap.rows, err)
	}
	mustExec(t, originAdmin, "ROLLBACK")

	// The client role cannot make its changes escape capture, nor change
	// the schema on this node alone (codeNotLocal: clients get 0A000).
	for stmt, code := range map[string]string{
		"DELETE FROM certa.capture":                         "42501",
		"SET session_replication_role = replica":            "42501",
		`ALTER TABLE acct DISABLE TRIGGER " certa_capture"`: codeNotLocal,
		"TRUNCATE entry":                                    codeNotLocal,
		"CREATE TABLE x (id int PRIMARY KEY)":               codeNotLocal,
		"DO $$ BEGIN EXECUTE 'DROP TABLE entry'; END $$":    codeNotLocal,
		// Nor forge the engine's permit for a schema statement.
		"SET certa.ddl_permit = 'x'; DROP TABLE entry":        codeNotLocal,
		"SELECT certa.permit_ddl('guess', 'DROP TABLE acct')": "42501",
		"SELECT certa.end_permit('guess', 0, NULL, NULL)":     "42501",
		"SELECT * FROM certa.permits":                         "42501",
		// Nor write large objects, which no trigger captures.
		"SELECT lo_from_bytea(0, 'x')": "42501",
		"SELECT lo_create(0)":          "42501",
	} {
		_, err := origin.Exec(ctx, stmt).ReadAll()
		if err == nil || !strings.Contains(err.Error(), "SQLSTATE "+code) {
			t.Errorf("%s as the client role: %v, want SQLSTATE %s", stmt, err, code)
		}
	}
}

// key is writeset.EncodeKey with ints as int64.
func key(table string, vals ...any) writeset.Key {
	for i, v := range vals {
		if n, ok := v.(int); ok {
			vals[i] = int64(n)
		}
	}
	return writeset.EncodeKey(table, vals...)
}

// What a transaction's write set carries (its keys, its rows) does not
// depend on the settings of the session that wrote it: not on TimeZone,
// DateStyle, IntervalStyle, extra_float_digits or bytea_output, whichever
// capture the table has (certa.capture_fn), nor on a search_path that
// puts the client's own to_jsonb and left before PostgreSQL's.
func TestCaptureAlikeUnderAnySettings(t *testing.T) {
	o, _ := startServer(t)
	for _, ddl := range []string{
		"CREATE DOMAIN small AS numeric(6,2) CHECK (VALUE > 0)",
		"CREATE TYPE pair AS (at timestamp, n numeric)",
		`CREATE TABLE inv (id int PRIMARY KEY, b bool, s smallint, big bigint, n numeric(10,3), t text, v varchar(5),
			c char(3), nm name, ch "char", u uuid, d date, ts timestamp, tm time, tz timetz, ip inet, cd cidr,
			m macaddr, m8 macaddr8, bt bit(3), vb varbit, sm small, p pair)`,
		"CREATE TABLE dep (id int PRIMARY KEY, at timestamptz, f float8, r real, i interval, by bytea)",
		"CREATE TABLE bare (ts timestamp, n numeric, at timestamptz)",
		"CREATE SCHEMA evil",
		"CREATE FUNCTION evil.to_jsonb(anyelement) RETURNS jsonb LANGUAGE sql AS 'SELECT ''{}''::jsonb'",
		"CREATE FUNCTION evil.left(text, integer) RETURNS text LANGUAGE sql AS 'SELECT ''D'''",
	} {
		mustExec(t, o.admin, asClient(ddl))
	}
	stmts := []string{
		`INSERT INTO inv VALUES (1, true, -3, 9007199254740993, 12.5, 'x', 'ab', 'c', 'nm', 'q',
			'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2024-02-29', '2024-02-29 23:59:59.5', '12:34:56.789', '12:00+05:30',
			'10.1.2.3/8', '10.0.0.0/8', '08:00:2b:01:02:03', '08:00:2b:01:02:03:04:05', B'101', B'1', 3.5,
			ROW('2001-01-01 01:01', 0.10)), (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
			NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)`,
		"UPDATE inv SET n = n * 2, d = d + 1, ts = ts + interval '1 day' WHERE id = 1",
		"DELETE FROM inv WHERE id = 2",
		`INSERT INTO dep VALUES (1, '2024-01-01 10:00:00.25+02', 0.1::float8 + 0.2::float8, 1.1, '1 year 2 mons 3 days 04:05:06.5', '\xdeadbeef')`,
		"UPDATE dep SET f = f * 3, i = i * 2",
		"INSERT INTO bare VALUES ('2024-01-01 10:00', 1.50, '2024-01-01 10:00+00'), ('2024-01-01 10:00', 1.50, '2024-01-01 10:00+00')",
		"UPDATE bare SET n = 2 WHERE ctid = (SELECT min(ctid) FROM bare)",
	}
	var ts tables
	want := captureTx(t, o.client, &ts, false, stmts...)
	mustExec(t, o.client, `SET TimeZone = 'Asia/Kolkata'; SET DateStyle = 'SQL, DMY'; SET IntervalStyle = 'sql_standard';
		SET extra_float_digits = -3; SET bytea_output = 'escape'; SET search_path = evil, pg_catalog, public`)
	got := captureTx(t, o.client, &ts, false, stmts...)
	if !slices.Equal(got.Keys, want.Keys) {
		t.Errorf("keys under the client's settings:\n%q\nunder PostgreSQL's defaults:\n%q", got.Keys, want.Keys)
	}
	if !bytes.Equal(got.Changes, want.Changes) {
		t.Errorf("rows under the client's settings:\n%q\nunder PostgreSQL's defaults:\n%q", got.Changes, want.Changes)
	}
}
