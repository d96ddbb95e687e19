package postgres

import (
	"context"
	"slices"
	"testing"

	"certa/result"
	"certa/writeset"
)

// A statement that reads rows by an indexed column reads that column's
// index range and the keys of the rows in it; where the client's role
// may not read the key columns, the query that finds them fails inside
// its savepoint: the statement then reads its table whole, and the
// transaction goes on as if nothing happened.
func TestIndexReadsFallBackWhole(t *testing.T) {
	srv := startOneServer(t)
	e, _, _ := openLogged(t, srv, "idxreads")
	ctx := context.Background()
	applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE c (id int PRIMARY KEY, v int, w text)")})
	applyOne(t, e, 2, &writeset.WriteSet{DDL: ddlText("CREATE INDEX c_v ON c (v)")})
	su := superuser(t, srv, "idxreads")
	mustExec(t, su, "INSERT INTO c SELECT g, g % 10, 'w' || g FROM generate_series(1, 50) g")
	reads := func(sql string) ([]string, []writeset.Key, []writeset.KeyRange) {
		t.Helper()
		tx, err := e.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if err := tx.TrackReads(ctx); err != nil {
			t.Fatal(err)
		}
		if err := tx.Exec(ctx, sql, result.Discard); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, err := tx.Reads(ctx)
		if err != nil {
			t.Fatalf("Reads: %v", err)
		}
		var buf result.Buffer
		if err := tx.Exec(ctx, "SELECT count(*) FROM c WHERE v = 3", &buf); err != nil || len(buf.Rows) != 1 {
			t.Fatalf("the transaction after Reads: %v %v", buf.Rows, err)
		}
		return got.Tables, got.Keys, got.Ranges
	}
	tables, keys, ranges := reads("SELECT w FROM c WHERE v = 3")
	want := writeset.EncodeKey(writeset.IndexTable("c", "v"), int64(3))
	if len(tables) != 0 || len(keys) != 5 || !slices.Contains(keys, writeset.EncodeKey("c", int64(13))) ||
		!slices.Equal(ranges, []writeset.KeyRange{{Lo: want, Hi: want}}) {
		t.Fatalf("reads %q %q %q", tables, keys, ranges)
	}
	mustExec(t, su, "REVOKE SELECT ON c FROM "+clientRole)
	mustExec(t, su, "GRANT SELECT (v, w) ON c TO "+clientRole)
	if tables, keys, ranges := reads("SELECT w FROM c WHERE v = 3"); !slices.Equal(tables, []string{"c"}) || len(keys)+len(ranges) != 0 {
		t.Fatalf("without the key's privilege: reads %q %q %q", tables, keys, ranges)
	}
}
