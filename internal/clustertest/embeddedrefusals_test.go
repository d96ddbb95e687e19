package clustertest

import (
	"strings"
	"testing"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// What the embedded engine has no counterpart of is refused as such
// (0A000, naming the command, pointing at the PostgreSQL engine), not
// answered with SQLite's "syntax error" for SQL PostgreSQL takes, nor
// run as something else: EXPLAIN would return SQLite's program. A role
// other than the client's own cannot be taken, as PostgreSQL refuses a
// role that does not exist; a real syntax error stays PostgreSQL's, and a
// query SQLite cannot run as printed is refused (0A000), not 42601.
func TestEmbeddedRefusesWhatItHasNot(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	conn := c.Conn(0)
	mustExec(t, conn, "CREATE TABLE t (id int PRIMARY KEY)")
	for _, sql := range []string{
		"EXPLAIN SELECT * FROM t",
		"NOTIFY ch",
		"LISTEN ch",
		"DO $$ BEGIN END $$",
		"CALL p()",
		"PREPARE q AS SELECT 1",
		"DECLARE c CURSOR FOR SELECT 1",
		"CHECKPOINT",
		"CREATE ROLE r",
		"CREATE USER u",
		"ALTER ROLE certa SET work_mem = '1MB'",
		"DROP ROLE r",
		"CREATE DATABASE other",
		"CREATE EXTENSION hstore",
		"CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1'",
		"CREATE TYPE mood AS ENUM ('ok')",
		"CREATE SCHEMA s",
		"SECURITY LABEL ON TABLE t IS 'x'",
	} {
		_, err := conn.Exec(ctxT(t), sql)
		code, msg, _, hint := pgclient.ErrorFields(err)
		if code != "0A000" || !strings.Contains(msg, "not supported by the embedded SQLite engine") || !strings.Contains(hint, "--engine postgres") {
			t.Errorf("%s: %v, want 0A000 naming what the embedded engine has not", sql, err)
		}
	}
	mustFail(t, conn, "42704", "SET ROLE someone")
	mustFail(t, conn, "42704", "SET SESSION AUTHORIZATION someone")
	mustFail(t, conn, "42704", "SELECT set_config('role', 'someone', false)")
	mustExec(t, conn, "SET ROLE certa")
	mustExec(t, conn, "RESET ROLE")
	mustFail(t, conn, "42601", "SELEC 1")
	mustFail(t, conn, "42601", "DROP OPERATOR") // PostgreSQL's parser refuses it too
	// A query PostgreSQL takes and SQLite cannot run as printed.
	_, err := conn.Exec(ctxT(t), "SELECT count(b.*) FROM t a LEFT JOIN t b USING (id)")
	if code, msg, _, _ := pgclient.ErrorFields(err); code != "0A000" || !strings.Contains(msg, "embedded SQLite engine does not support") {
		t.Errorf("a query SQLite cannot run: %v, want 0A000", err)
	}
	if got := values(t, conn, "SELECT count(*), count(*) FROM t"); got != "0=0" {
		t.Fatalf("after the refusals: %s", got)
	}
}
