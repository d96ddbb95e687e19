package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
)

// Arrays replicate exactly, whatever their bounds: a table with an array
// column (or a domain, composite or range holding one) is captured by its
// record text, which keeps [0:2]={1,2,3}, where JSON would give the other
// nodes [1:3]. Multidimensional arrays and NULLs too.
func TestArrayBounds(t *testing.T) {
	o, r := startServer(t)
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE arr (id int PRIMARY KEY, e numeric[], m int[][])"))
		mustExec(t, c, asClient("CREATE DOMAIN ints AS int[]"))
		mustExec(t, c, asClient("CREATE TABLE loose (v ints)")) // no key: rows found by their text
	}
	var ts, tsr tables
	seqno := uint64(0)
	for _, stmts := range [][]string{
		{"INSERT INTO arr VALUES (1, '{1.5,2.25}', '{{1,2},{3,4}}'), (2, NULL, '{}'), (3, '{NULL,1}', NULL)"},
		{"INSERT INTO arr VALUES (9, '[0:2]={1,2,3}', '[2:2][1:1]={{1}}')", "INSERT INTO loose VALUES ('[5:6]={1,2}'), ('{1,2}')"},
		// The example: assigning element 0 moves the lower bound.
		{"UPDATE arr SET e[0] = 1.1 WHERE id = 1", "UPDATE loose SET v[4] = 0 WHERE v[5] = 1"},
		{"DELETE FROM loose WHERE v = '{1,2}'"},
	} {
		w := captureTx(t, o.client, &ts, true, stmts...)
		seqno++
		items := []engine.ApplyItem{{Seqno: seqno, WS: w}}
		if err := applyItems(ctx, r.applier, &tsr, items, seqno, testToken, nil, nil); err != nil || items[0].Err != nil {
			t.Fatal(stmts, err, items[0].Err)
		}
		for _, table := range []string{"arr", "loose"} {
			if got, want := rowsOf(t, r.admin, table), rowsOf(t, o.admin, table); !slices.Equal(got, want) {
				t.Fatalf("after %q: %s replica %q, origin %q", stmts, table, got, want)
			}
		}
	}
	if got := rowsOf(t, r.admin, "arr"); !slices.Contains(got, `(1,"[0:2]={1.1,1.5,2.25}","{{1,2},{3,4}}")`) {
		t.Fatalf("replica rows %q: want element 0 of row 1 set, with its bound", got)
	}
}
