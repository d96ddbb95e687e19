package clustertest

import (
	"testing"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// Statements without WHERE, each told to the client as changing every
// row, change every row on every node, as a client of each reads them
// (with and without a primary key; the second round runs statements the
// origin has prepared before). On the embedded engine DELETE FROM t was
// acknowledged and undone at COMMIT (SQLite's truncate optimization).
func TestWholeTableWritesOnEveryNode(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	w := c.Conn(0)
	readers := []*pgclient.Conn{syncConn(t, c, 0), syncConn(t, c, 1), syncConn(t, c, 2)}
	mustExec(t, w, "CREATE TABLE wk (id int PRIMARY KEY, v text)")
	mustExec(t, w, "CREATE TABLE wn (id int, v text)")
	for round := range 2 {
		for _, table := range []string{"wk", "wn"} {
			for _, step := range []struct{ sql, tag, want string }{
				{"INSERT INTO " + table + " VALUES (1, 'a'), (2, NULL), (3, 'c')", "INSERT 0 3", "1=a,2=<nil>,3=c"},
				{"UPDATE " + table + " SET v = 'all'", "UPDATE 3", "1=all,2=all,3=all"},
				{"DELETE FROM " + table, "DELETE 3", ""},
			} {
				tag, err := w.Exec(ctxT(t), step.sql)
				if err != nil || tag != step.tag {
					t.Fatalf("round %d, %s: %q %v", round, step.sql, tag, err)
				}
				for i, r := range readers {
					if got := values(t, r, "SELECT id, v FROM "+table+" ORDER BY id"); got != step.want {
						t.Fatalf("round %d, %s: node %d has %q, want %q", round, step.sql, i+1, got, step.want)
					}
				}
			}
		}
	}
}
