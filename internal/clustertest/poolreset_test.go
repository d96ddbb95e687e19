package clustertest

import "testing"

// A setting a client's function changes for the rest of its PostgreSQL
// session (set_config(..., false)) does not reach another client of the
// node, whose transactions run on the same pooled backends: the other
// client's date '03/04/2025' is March 4th (MDY, the default) on every
// node, as on a plain PostgreSQL.
func TestPostgresEnginePoolReset(t *testing.T) {
	c := startPostgresCluster(t, 3)
	a, b := c.Conn(0), c.Conn(0)
	mustExec(t, a, "CREATE TABLE d (id int PRIMARY KEY, day date)")
	mustExec(t, a, "CREATE FUNCTION dmy() RETURNS text LANGUAGE sql AS $$ SELECT set_config('DateStyle', 'ISO, DMY', false) $$")
	for id := range 3 {
		mustExec(t, a, "SELECT dmy()")
		mustExec(t, b, "INSERT INTO d VALUES ($1, '03/04/2025')", id)
	}
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, day::text FROM d ORDER BY id"); got != "0=2025-03-04,1=2025-03-04,2=2025-03-04" {
			t.Errorf("node %d stores %s, want 2025-03-04 (MDY)", i+1, got)
		}
	}
}
