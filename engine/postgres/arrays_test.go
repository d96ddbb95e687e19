package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/sqlerr"
)

// A row holding an array whose lower bound is not 1 is refused (0A000):
// JSON keeps no bounds, and the other nodes would store [1:n]. Arrays
// with PostgreSQL's default bounds, multidimensional ones and NULLs
// replicate as they are.
func TestArrayBounds(t *testing.T) {
	o, r := startServer(t)
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE arr (id int PRIMARY KEY, e numeric[], m int[][])"))
	}
	for _, stmt := range []string{
		"INSERT INTO arr VALUES (9, '[0:2]={1,2,3}', NULL)",
		"INSERT INTO arr VALUES (9, '{1}', '[2:2][1:1]={{1}}')",
	} {
		mustExec(t, o.client, "BEGIN")
		if _, err := o.client.Exec(ctx, stmt).ReadAll(); sqlerr.Code(pgError(err)) != "0A000" {
			t.Fatalf("%s: %v, want 0A000", stmt, err)
		}
		mustExec(t, o.client, "ROLLBACK")
	}
	var ts, tsr tables
	w := captureTx(t, o.client, &ts, true, "INSERT INTO arr VALUES (1, '{1.5,2.25}', '{{1,2},{3,4}}'), (2, NULL, '{}'), (3, '{NULL,1}', NULL)")
	items := []engine.ApplyItem{{Seqno: 1, WS: w}}
	if err := applyItems(ctx, r.applier, &tsr, items, 1, testToken, nil); err != nil || items[0].Err != nil {
		t.Fatal(err, items[0].Err)
	}
	if got, want := rowsOf(t, r.admin, "arr"), rowsOf(t, o.admin, "arr"); !slices.Equal(got, want) {
		t.Fatalf("replica %q, origin %q", got, want)
	}
	// The example: assigning element 0 moves the lower bound.
	mustExec(t, o.client, "BEGIN")
	if _, err := o.client.Exec(ctx, "UPDATE arr SET e[0] = 1.1 WHERE id = 1").ReadAll(); sqlerr.Code(pgError(err)) != "0A000" {
		t.Fatalf("UPDATE arr SET e[0]: %v, want 0A000", err)
	}
	mustExec(t, o.client, "ROLLBACK")
}
