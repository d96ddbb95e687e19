package clustertest

import (
	"fmt"
	"testing"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// A SELECT ... FOR UPDATE nested in an UPDATE certifies its rows as if
// written, on the SQLite engine as at the top level: two transactions on
// two nodes that each check, under a nested lock, that two doctors are on
// call and then take one off cannot both commit (the write skew
// PostgreSQL prevents). Node 2 sends its id as a parameter (the extended
// protocol).
func TestNestedForUpdateWriteSkewSQLite(t *testing.T) {
	c := testcluster.Start(t, 2, testArgs...)
	a, b := c.Conn(0), syncConn(t, c, 1)
	mustExec(t, a, "CREATE TABLE doctors (id integer PRIMARY KEY, on_call boolean NOT NULL)")
	mustExec(t, a, "INSERT INTO doctors VALUES (1, true), (2, true)")

	const offCall = "UPDATE doctors SET on_call = false WHERE id = %s AND " +
		"(SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2"
	mustExec(t, a, "BEGIN")
	mustExec(t, b, "BEGIN")
	if tag := mustExec(t, a, fmt.Sprintf(offCall, "2")); tag != "UPDATE 1" {
		t.Fatalf("node 1: %q", tag)
	}
	if tag := mustExec(t, b, fmt.Sprintf(offCall, "$1"), 1); tag != "UPDATE 1" {
		t.Fatalf("node 2: %q", tag)
	}
	commitOneOfTwo(t, c, a, b)
}

// commitOneOfTwo commits a and b, each taking one doctor off call, and
// checks that exactly one failed with 40001 and that every node has one
// doctor on call.
func commitOneOfTwo(t *testing.T, c *testcluster.Cluster, a, b *pgclient.Conn) {
	t.Helper()
	_, errA := a.Exec(ctxT(t), "COMMIT")
	_, errB := b.Exec(ctxT(t), "COMMIT")
	switch {
	case errA == nil && pgclient.SQLState(errB) == "40001", errB == nil && pgclient.SQLState(errA) == "40001":
	default:
		t.Fatalf("COMMITs: node 1 %v, node 2 %v; want exactly one 40001", errA, errB)
	}
	for i := range 2 {
		if got := values(t, syncConn(t, c, i), "SELECT count(*), count(*) FROM doctors WHERE on_call"); got != "1=1" {
			t.Errorf("node %d: doctors on call %q, want 1", i+1, got)
		}
	}
}
