package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
)

// The examples of issue 32, sent by an ordinary client to a cluster over
// PostgreSQL: what would take a table out of capture (disable, drop or
// re-enable certa's trigger for replica or always), make a trigger or a
// rule fire only on the applying nodes, or make a table PostgreSQL empties
// after a crash, is refused with 0A000, sent on its own, in a transaction
// block or in a DO block, through pgx or psql; detaching and attaching a
// partition works and the partition keeps replicating, and TRUNCATE of a
// partition in a DO block is refused. After each, a write from the node
// that got the statement reaches every node: the nodes stay alike, and the
// cluster takes writes.
func TestBoundaryCluster(t *testing.T) {
	c := startPostgresCluster(t, 3)
	setup := c.Conn(0)
	for _, ddl := range []string{
		"CREATE TABLE acct (id int PRIMARY KEY, v text)",
		"CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v = 'stamped'; RETURN NEW; END $$",
		"CREATE TRIGGER stamp BEFORE INSERT ON acct FOR EACH ROW EXECUTE FUNCTION stamp()",
		"ALTER TABLE acct DISABLE TRIGGER stamp",
		"CREATE RULE skip AS ON INSERT TO acct WHERE NEW.id % 2 = 0 DO INSTEAD NOTHING",
		"ALTER TABLE acct DISABLE RULE skip",
		"CREATE TABLE meas (id int, r int, v text, PRIMARY KEY (id, r)) PARTITION BY RANGE (r)",
		"CREATE TABLE meas1 PARTITION OF meas FOR VALUES FROM (0) TO (10)",
		"CREATE TABLE meas2 PARTITION OF meas FOR VALUES FROM (10) TO (20)",
	} {
		mustExec(t, setup, ddl)
	}
	conns := make([]*pgclient.Conn, len(c.Nodes))
	for i := range conns {
		conns[i] = syncConn(t, c, i)
	}
	n := 0
	// write inserts rows through node i (into each table, odd and even
	// ids) and waits until every node holds the same rows.
	write := func(i int, after string) {
		t.Helper()
		for range 2 {
			n++
			mustExec(t, conns[i], fmt.Sprintf("INSERT INTO acct VALUES (%d, 'node %d')", n, i+1))
			mustExec(t, conns[i], fmt.Sprintf("INSERT INTO meas VALUES (%d, %d, 'node %d')", n, n%10, i+1))
		}
		c.WaitConverged(20 * time.Second)
		want := ""
		for j := range c.Nodes {
			got := values(t, conns[j], "SELECT count(*), string_agg(id || ':' || coalesce(v, ''), ',' ORDER BY id) FROM acct")
			if j == 0 {
				want = got
			} else if got != want {
				t.Fatalf("after %s: node %d holds %s, node 1 %s", after, j+1, got, want)
			}
		}
	}
	write(0, "setup")

	refused := []string{
		`ALTER TABLE acct DISABLE TRIGGER " certa_capture"`,
		`DROP TRIGGER " certa_capture" ON acct`,
		`ALTER TABLE acct ENABLE REPLICA TRIGGER " certa_capture"`,
		"ALTER TABLE acct DISABLE TRIGGER ALL",
		"ALTER TABLE acct ENABLE ALWAYS TRIGGER stamp",
		"ALTER TABLE acct ENABLE REPLICA TRIGGER stamp",
		"ALTER TABLE acct ENABLE ALWAYS RULE skip",
		"ALTER TABLE acct ENABLE REPLICA RULE skip",
		`ALTER TABLE meas1 DISABLE TRIGGER " certa_capture"`,
	}
	for k, stmt := range refused {
		i := k % len(c.Nodes)
		conn := conns[i]
		// certa's refusal (0A000), or PostgreSQL's of a change to an
		// internal trigger (42501 "is a system trigger"): certa's are.
		refuse := func(sql string) {
			t.Helper()
			_, err := conn.Exec(ctxT(t), sql)
			if code := pgclient.SQLState(err); code != "0A000" && code != "42501" {
				t.Fatalf("%s: want SQLSTATE 0A000 or 42501, got %v", sql, err)
			}
		}
		switch k % 3 {
		case 0: // on its own
			refuse(stmt)
		case 1: // in a transaction block, which it aborts
			mustExec(t, conn, "BEGIN")
			mustExec(t, conn, "INSERT INTO acct VALUES (-1, 'in the block')")
			refuse(stmt)
			mustExec(t, conn, "ROLLBACK")
		case 2: // in a DO block
			refuse("DO $$ BEGIN EXECUTE '" + strings.ReplaceAll(stmt, "'", "''") + "'; END $$")
		}
		write(i, stmt)
	}
	// A rule made and then enabled ALWAYS in one psql run, which goes on
	// after the error and writes.
	out := psqlUnchecked(t, c, 1,
		"CREATE RULE drop_all AS ON INSERT TO acct DO INSTEAD NOTHING",
		"ALTER TABLE acct DISABLE RULE drop_all",
		"ALTER TABLE acct ENABLE ALWAYS RULE drop_all",
		"INSERT INTO acct VALUES (1000, 'after psql')")
	if !strings.Contains(out, "cannot be enabled REPLICA or ALWAYS") || !strings.Contains(out, "INSERT 0 1") {
		t.Fatalf("psql output:\n%s", out)
	}
	write(1, "a rule enabled ALWAYS through psql")
	out = psqlUnchecked(t, c, 2, `ALTER TABLE acct DISABLE TRIGGER " certa_capture"`, "INSERT INTO acct VALUES (1001, 'after psql')")
	if !strings.Contains(out, "certa_capture") || !strings.Contains(out, "INSERT 0 1") {
		t.Fatalf("psql output:\n%s", out)
	}
	write(2, "DISABLE TRIGGER certa_capture through psql")

	// Partitions: detached, it replicates; attached again too; TRUNCATE of
	// one in a DO block is refused.
	mustExec(t, conns[1], "ALTER TABLE meas DETACH PARTITION meas2")
	mustExec(t, conns[2], "INSERT INTO meas2 VALUES (5000, 15, 'detached')")
	write(2, "DETACH PARTITION")
	mustExec(t, conns[0], "ALTER TABLE meas ATTACH PARTITION meas2 FOR VALUES FROM (10) TO (20)")
	write(0, "ATTACH PARTITION")
	mustFail(t, conns[1], "0A000", "DO $$ BEGIN TRUNCATE meas1; END $$")
	write(1, "TRUNCATE of a partition in a DO block")
	for i := range c.Nodes {
		if got := values(t, conns[i], "SELECT count(*), count(*) FILTER (WHERE v = 'detached') FROM meas"); !strings.HasSuffix(got, "=1") {
			t.Fatalf("node %d: meas rows (all=detached) %s", i+1, got)
		}
	}

	// Global objects: a role's settings change on every node (on its own,
	// in a block) or on none (in a DO block, in a function).
	mustExec(t, conns[0], "ALTER ROLE certa_client SET extra_float_digits = 2")
	mustExec(t, conns[1], "BEGIN")
	mustExec(t, conns[1], "INSERT INTO acct VALUES (-2, 'with a role setting')")
	mustExec(t, conns[1], "ALTER ROLE certa_client SET IntervalStyle = 'iso_8601'")
	mustExec(t, conns[1], "COMMIT")
	mustFail(t, conns[2], "0A000", "DO $$ BEGIN EXECUTE 'ALTER ROLE certa_client SET DateStyle = ''SQL, DMY'''; END $$")
	mustExec(t, conns[2], "CREATE FUNCTION german() RETURNS int LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'ALTER ROLE certa_client SET DateStyle = ''German'''; RETURN 1; END $$")
	mustFail(t, conns[0], "0A000", "SELECT german()")
	write(2, "ALTER ROLE in a DO block and a function")
	for i := range c.Nodes {
		got := values(t, conns[i], "SELECT 'settings', array_to_string(setconfig, ',') FROM pg_db_role_setting WHERE setrole = 'certa_client'::regrole")
		if got != "settings=extra_float_digits=2,IntervalStyle=iso_8601" {
			t.Fatalf("node %d: certa_client's %s", i+1, got)
		}
	}

	// Write skew through a locking SELECT nested in an UPDATE: two nodes
	// each take one of two doctors off call if both are on call. One of
	// the two fails with 40001 (by certification of the row it locked,
	// or by the applier aborting it), and one doctor stays on call.
	mustExec(t, conns[0], "CREATE TABLE doctors (id int PRIMARY KEY, on_call boolean)")
	mustExec(t, conns[0], "INSERT INTO doctors VALUES (1, true), (2, true)")
	c.WaitConverged(20 * time.Second)
	offCall := "UPDATE doctors SET on_call = false WHERE id = $1 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2"
	mustExec(t, conns[0], "BEGIN")
	mustExec(t, conns[0], offCall, 2)
	_, errA := conns[1].Exec(ctxT(t), offCall, 1)
	_, errB := conns[0].Exec(ctxT(t), "COMMIT")
	if (errA == nil) == (errB == nil) || pgclient.SQLState(errA)+pgclient.SQLState(errB) != "40001" {
		t.Fatalf("write skew: node 2's autocommit %v, node 1's COMMIT %v: want one 40001", errA, errB)
	}
	c.WaitConverged(20 * time.Second)
	for i := range c.Nodes {
		if got := values(t, conns[i], "SELECT 'on call', count(*) FROM doctors WHERE on_call"); got != "on call=1" {
			t.Fatalf("node %d: %s", i+1, got)
		}
	}
	// COPY of a query that locks in a subquery still copies to psql.
	out = psqlUnchecked(t, c, 0, "COPY (SELECT id FROM doctors WHERE id IN (SELECT id FROM doctors FOR UPDATE) ORDER BY id) TO STDOUT")
	if strings.TrimSpace(out) != "1\n2" {
		t.Fatalf("COPY of a locking query: %q", out)
	}
	c.WaitConverged(20 * time.Second)
}
