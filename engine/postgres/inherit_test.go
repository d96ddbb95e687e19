package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
)

// Rows of inherited tables apply to the table that holds them: a parent
// and its child holding the same key (or, without a key, the same row),
// an UPDATE ONLY of the parent, an UPDATE of the parent that reaches the
// child, and deletes each way leave the replica's parent and child as the
// origin's. The applier's UPDATE and DELETE reached the child's row too
// and found two rows where the origin changed one.
func TestInheritedTablesApply(t *testing.T) {
	o, r := startServer(t)
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE p (id int PRIMARY KEY, n int)"))
		mustExec(t, c, asClient("CREATE TABLE c (extra text) INHERITS (p)"))
		mustExec(t, c, asClient("CREATE TABLE kp (name text, n int)"))
		mustExec(t, c, asClient("CREATE TABLE kc () INHERITS (kp)"))
		mustExec(t, c, "INSERT INTO p VALUES (1, 0); INSERT INTO c VALUES (1, 0, 'x'); INSERT INTO kp VALUES ('a', 0); INSERT INTO kc VALUES ('a', 0)")
	}
	var ts, tsr tables
	seqno := uint64(0)
	for _, stmts := range [][]string{
		{"UPDATE ONLY p SET n = 2 WHERE id = 1"},
		{"UPDATE p SET n = n + 10 WHERE id = 1"},
		{"UPDATE ONLY kp SET n = 3 WHERE name = 'a'"},
		{"UPDATE kp SET n = n + 10"},
		{"DELETE FROM ONLY p WHERE id = 1"},
		{"DELETE FROM kc"},
	} {
		w := captureTx(t, o.client, &ts, true, stmts...)
		seqno++
		items := []engine.ApplyItem{{Seqno: seqno, WS: w}}
		if err := applyItems(ctx, r.applier, &tsr, items, seqno, testToken, nil, nil); err != nil || items[0].Err != nil {
			t.Fatalf("%s: %v %v", stmts, err, items[0].Err)
		}
		for _, table := range []string{"ONLY p", "c", "ONLY kp", "kc"} {
			if got, want := rowsOf(t, r.admin, table), rowsOf(t, o.admin, table); !slices.Equal(got, want) {
				t.Fatalf("after %s, %s on the replica %q, on the origin %q", stmts, table, got, want)
			}
		}
	}
}
