package clustertest

import (
	"fmt"
	"testing"

	"certa/internal/pgclient"
)

// Rows locked where certa cannot see the rows (a locking read in a
// function, in dynamic SQL, in a view) still certify, on the PostgreSQL
// engine: two transactions on two nodes that each check under such a
// lock that two doctors are on call and then take a different one off
// cannot both commit (the write skew PostgreSQL prevents), whichever way
// the lock is hidden, also when the transaction locks other rows of the
// table at its top level too.
func TestHiddenLockingReadsCertifyPostgres(t *testing.T) {
	c := startPostgresCluster(t, 2)
	a, b := c.Conn(0), syncConn(t, c, 1)
	for _, stmt := range []string{
		"CREATE TABLE doctors (id integer PRIMARY KEY, on_call boolean NOT NULL)",
		`CREATE FUNCTION on_call_plpgsql() RETURNS bigint LANGUAGE plpgsql AS $$
			DECLARE n bigint;
			BEGIN
				SELECT count(*) INTO n FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d;
				RETURN n;
			END $$`,
		`CREATE FUNCTION on_call_sql() RETURNS bigint LANGUAGE sql AS $$
			SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR NO KEY UPDATE) d $$`,
		`CREATE FUNCTION on_call_dynamic() RETURNS bigint LANGUAGE plpgsql AS $$
			DECLARE n bigint;
			BEGIN
				EXECUTE 'SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call ' || 'FOR UPDATE) d' INTO n;
				RETURN n;
			END $$`,
		`CREATE FUNCTION on_call_commented() RETURNS bigint LANGUAGE sql AS $$
			SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR /* the rows */ UPDATE) d $$`,
		"CREATE VIEW on_call_doctors AS SELECT id FROM doctors WHERE on_call FOR UPDATE",
	} {
		mustExec(t, a, stmt)
	}
	for _, check := range []struct{ name, count, before string }{
		{"plpgsql function", "SELECT 0, on_call_plpgsql()", ""},
		{"sql function", "SELECT 0, on_call_sql()", ""},
		{"dynamic SQL", "SELECT 0, on_call_dynamic()", ""},
		{"view", "SELECT 0, count(*) FROM on_call_doctors", ""},
		{"comment inside the locking clause", "SELECT 0, on_call_commented()", ""},
		{"function after a top-level lock", "SELECT 0, on_call_plpgsql()", "SELECT id, on_call FROM doctors WHERE id = %d FOR UPDATE"},
	} {
		t.Run(check.name, func(t *testing.T) {
			mustExec(t, a, "DELETE FROM doctors")
			mustExec(t, a, "INSERT INTO doctors VALUES (1, true), (2, true)")
			syncConn(t, c, 1)
			conns := []*pgclient.Conn{a, b}
			for i, conn := range conns {
				mustExec(t, conn, "BEGIN")
				if check.before != "" {
					values(t, conn, fmt.Sprintf(check.before, i+1))
				}
				if got := values(t, conn, check.count); got != "0=2" {
					t.Fatalf("node %d: doctors on call %q, want 2", i+1, got)
				}
			}
			for i, conn := range conns {
				if tag := mustExec(t, conn, fmt.Sprintf("UPDATE doctors SET on_call = false WHERE id = %d", i+1)); tag != "UPDATE 1" {
					t.Fatalf("node %d: %q", i+1, tag)
				}
			}
			commitOneOfTwo(t, c, a, b)
		})
	}

	// A function that locks nothing, and a foreign key's own check, keep
	// row grain: two transactions that add children of one parent and
	// each change a different doctor both commit.
	mustExec(t, a, "CREATE TABLE shifts (id serial PRIMARY KEY, doctor integer NOT NULL REFERENCES doctors)")
	mustExec(t, a, "CREATE FUNCTION plain() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$")
	mustExec(t, a, "UPDATE doctors SET on_call = true")
	syncConn(t, c, 1)
	for i, conn := range []*pgclient.Conn{a, b} {
		mustExec(t, conn, "BEGIN")
		values(t, conn, "SELECT 0, plain()")
		mustExec(t, conn, fmt.Sprintf("INSERT INTO shifts (doctor) VALUES (%d)", i+1))
		mustExec(t, conn, fmt.Sprintf("UPDATE doctors SET on_call = false WHERE id = %d", i+1))
	}
	for i, conn := range []*pgclient.Conn{a, b} {
		if _, err := conn.Exec(ctxT(t), "COMMIT"); err != nil {
			t.Errorf("node %d: COMMIT of a transaction whose only locks are a foreign key's: %v", i+1, err)
		}
	}
}
