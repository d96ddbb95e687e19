package clustertest

import (
	"strings"
	"testing"
	"time"
)

// Roles on the PostgreSQL engine, used as an application's migrations
// use them: made, granted, commented and set on one node (alone or in a
// block), present alike on every node; a session acts as one (SET ROLE)
// and what it makes is that role's on every node; PostgreSQL's privilege
// checks hold for it. What would let a client past the node (CREATEROLE,
// predefined roles, certa's roles, the server's other roles, a forged
// call of certa's function) is refused. A node that joins late gets the
// roles with its snapshot; dropping them drops them everywhere.
func TestClientRoles(t *testing.T) {
	c := startPostgresCluster(t, 3, snapshotArgs...)
	// b and d read in sync: what a committed is there for their schema
	// statements' trials.
	a, b, d := c.Conn(0), syncConn(t, c, 1), syncConn(t, c, 2)
	mustExec(t, a, "CREATE ROLE app_owner")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "CREATE ROLE app_reader")
	mustExec(t, a, "COMMENT ON ROLE app_reader IS 'reads'")
	mustExec(t, a, "ALTER ROLE app_reader SET work_mem = '8MB'")
	mustExec(t, a, "COMMIT")
	mustExec(t, b, "CREATE USER app_user PASSWORD 'not used' IN ROLE app_reader")
	// The session's password_encryption decides how a password is kept,
	// on every node.
	mustExec(t, b, "SET password_encryption = 'md5'")
	mustExec(t, b, "CREATE USER app_md5 PASSWORD 'not used either'")
	mustExec(t, b, "RESET password_encryption")
	mustExec(t, b, "GRANT USAGE, CREATE ON SCHEMA public TO app_owner")

	// A session acting as app_owner owns what it makes, on every node.
	mustExec(t, b, "SET ROLE app_owner")
	mustExec(t, b, "CREATE TABLE owned (id int PRIMARY KEY, v text)")
	mustExec(t, b, "INSERT INTO owned VALUES (1, 'one')")
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "CREATE VIEW owned_view AS SELECT id FROM owned")
	mustExec(t, b, "INSERT INTO owned VALUES (2, 'two')")
	mustExec(t, b, "GRANT SELECT ON owned, owned_view TO app_reader")
	mustExec(t, b, "COMMIT")
	mustFail(t, b, "42501", "CREATE ROLE not_by_owner") // app_owner has no CREATEROLE
	mustExec(t, b, "RESET ROLE")
	c.WaitConverged(20 * time.Second)
	for i := range c.Nodes {
		conn := syncConn(t, c, i)
		checks := map[string]string{
			"SELECT 'owners', string_agg(c.relname || ':' || pg_get_userbyid(c.relowner), ' ' ORDER BY c.relname) FROM pg_class c WHERE c.relname IN ('owned', 'owned_view')":                         "owners=owned:app_owner owned_view:app_owner",
			"SELECT 'reader', shobj_description('app_reader'::regrole, 'pg_authid') || ' ' || (SELECT array_to_string(setconfig, ',') FROM pg_db_role_setting WHERE setrole = 'app_reader'::regrole)": "reader=reads work_mem=8MB",
			"SELECT 'user', pg_has_role('app_user', 'app_reader', 'MEMBER') AND has_table_privilege('app_user', 'owned', 'SELECT') AND NOT has_table_privilege('app_user', 'owned', 'INSERT')":        "user=true",
			"SELECT count(*), sum(id) FROM owned": "2=3",
			// A client's LOGIN role cannot reach the node's database past certa.
			"SELECT 'connect', has_database_privilege('app_user', current_database(), 'CONNECT')": "connect=false",
		}
		for q, want := range checks {
			if got := values(t, conn, q); got != want {
				t.Errorf("node %d: %s = %s, want %s", i+1, q, got, want)
			}
		}
		q := "SELECT 'pw', string_agg(rolname || ':' || left(rolpassword, 5), ' ' ORDER BY rolname) FROM pg_authid WHERE rolname IN ('app_user', 'app_md5')"
		if got := strings.Fields(values(t, superuserConn(t, c, i), q)); len(got) != 2 || !strings.HasPrefix(got[0], "pw=app_md5:md5") || got[1] != "app_user:SCRAM" {
			t.Errorf("node %d: passwords %s, want app_md5's md5 and app_user's SCRAM", i+1, got)
		}
	}

	// PostgreSQL's checks hold for a session acting as a client role; it
	// reads no capture rows but its own transaction's (certa.captured).
	mustExec(t, d, "SET ROLE app_reader")
	if got := values(t, d, "SELECT count(*), max(v) FROM owned"); got != "2=two" {
		t.Fatalf("app_reader reads %s", got)
	}
	mustFail(t, d, "42501", "INSERT INTO owned VALUES (3, 'three')")
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "INSERT INTO owned VALUES (3, 'three')")
	mustFail(t, d, "42501", "SELECT count(*) FROM certa.capture")
	if got := values(t, d, "SELECT 'capture rows', count(*) FROM certa.captured()"); got != "capture rows=0" {
		t.Fatalf("app_reader sees another transaction's rows: %s", got)
	}
	mustExec(t, a, "COMMIT")
	mustExec(t, d, "RESET ROLE")

	// What would reach past the node.
	mustExec(t, a, "CREATE ROLE delegate")
	mustExec(t, a, "GRANT app_reader TO delegate WITH ADMIN OPTION")
	mustExec(t, a, "SET ROLE delegate")
	mustFail(t, a, "42501", "GRANT app_reader TO postgres") // it may grant app_reader, but not to the server's roles
	mustExec(t, a, "GRANT app_reader TO app_owner")
	mustExec(t, a, "RESET ROLE")
	mustFail(t, a, "0A000", "CREATE ROLE maker CREATEROLE")
	mustFail(t, a, "0A000", "ALTER ROLE app_owner CREATEROLE")
	mustFail(t, a, "42501", "GRANT pg_execute_server_program TO app_owner")
	mustFail(t, a, "42501", "GRANT certa_client TO app_owner")
	mustFail(t, a, "42501", "ALTER ROLE certa_applier PASSWORD 'x'")
	mustFail(t, a, "42501", "DROP ROLE postgres")
	mustFail(t, a, "42501", "GRANT app_reader TO postgres")
	mustFail(t, a, "0A000", "ALTER ROLE CURRENT_USER NOLOGIN")
	mustFail(t, a, "0A000", "ALTER ROLE certa_client SET role = 'app_owner'")
	mustFail(t, a, "0A000", "ALTER ROLE SESSION_USER SET work_mem = '5MB'")
	mustExec(t, a, "ALTER ROLE CURRENT_USER SET work_mem = '5MB'")
	mustExec(t, a, "ALTER ROLE certa_client RESET work_mem")
	mustFail(t, a, "42501", "SELECT certa.role_statement('guess', 'CREATE ROLE forged', NULL, '{}', 'public')")
	mustFail(t, a, "42501", "DO $$ BEGIN CREATE ROLE in_do; END $$")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT 'made', count(*) FROM pg_roles WHERE rolname IN ('maker', 'in_do', 'forged') OR rolcreaterole AND pg_has_role('certa_client', oid, 'MEMBER')"); got != "made=0" {
			t.Fatalf("node %d: %s", i+1, got)
		}
	}

	// A node that joins after the log was compacted gets the roles, and
	// what they own, from its snapshot: also a table of one role's in a
	// schema of another's, which granted it CREATE (the restore, not a
	// superuser's, needs that grant before it gives the table its owner).
	mustExec(t, a, "CREATE SCHEMA app AUTHORIZATION app_owner")
	mustExec(t, a, "GRANT CREATE, USAGE ON SCHEMA app TO app_reader")
	mustExec(t, a, "SET ROLE app_reader")
	mustExec(t, a, "CREATE TABLE app.notes (id int PRIMARY KEY)")
	mustExec(t, a, "RESET ROLE")
	mustExec(t, a, "CREATE TABLE acked (id integer PRIMARY KEY, node integer)")
	mustExec(t, syncConn(t, c, 1), "SELECT 1 FROM acked") // node 2 has the table
	insertRows(t, c, []int{0, 1}, 1, 40)
	snapshotAdvanced(t, c, 0, 0)
	joined := c.Add(0)
	c.WaitConverged(30 * time.Second)
	j := syncConn(t, c, joined)
	if got := values(t, j, "SELECT relname, pg_get_userbyid(relowner) FROM pg_class WHERE relname IN ('owned_view', 'notes') ORDER BY 1"); got != "notes=app_reader,owned_view=app_owner" {
		t.Fatalf("the new node: %s", got)
	}
	mustExec(t, j, "SET ROLE app_reader")
	if got := values(t, j, "SELECT count(*), sum(id) FROM owned_view"); got != "3=6" {
		t.Fatalf("the new node, as app_reader: %s", got)
	}
	mustFail(t, j, "42501", "DELETE FROM owned")
	mustExec(t, j, "RESET ROLE")

	// Dropped everywhere, the new node included.
	mustExec(t, j, "DROP OWNED BY app_reader")
	mustExec(t, j, "REASSIGN OWNED BY app_owner TO certa_client")
	mustExec(t, j, "DROP OWNED BY app_owner")
	mustExec(t, j, "DROP ROLE app_user, app_md5, app_reader, app_owner, delegate")
	c.WaitConverged(20 * time.Second)
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT 'left', count(*) FROM pg_roles WHERE rolname LIKE 'app\\_%' OR rolname = 'delegate'"); got != "left=0" {
			t.Fatalf("node %d: %s", i+1, got)
		}
	}
}
