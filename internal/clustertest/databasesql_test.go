package clustertest

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// database/sql through pgx's stdlib driver, with SCRAM-SHA-256: parameters,
// NULLs, a prepared statement reused, a transaction losing to a concurrent
// commit (40001), its retry, and a statement cancelled through its context.
func TestDatabaseSQL(t *testing.T) { forEachEngine(t, testDatabaseSQL) }

func testDatabaseSQL(t *testing.T, start startFunc) {
	c := startWithPassword(t, start)
	ctx := ctxT(t)
	a, b := openDB(t, c, 0), openDB(t, c, 1)
	if _, err := a.ExecContext(ctx, "CREATE TABLE dbsql (id bigint PRIMARY KEY, n integer, s text, f double precision, by bytea)"); err != nil {
		t.Fatal(err)
	}
	ins, err := a.PrepareContext(ctx, "INSERT INTO dbsql (id, n, s, f, by) VALUES ($1, $2, $3, $4, $5)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	for k := int64(1); k <= 30; k++ {
		if _, err := ins.ExecContext(ctx, k, k*10, "row", 0.5, []byte{byte(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ins.ExecContext(ctx, 31, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}

	bc, err := b.Conn(ctx) // one connection, so the SET applies to the reads
	if err != nil {
		t.Fatal(err)
	}
	defer bc.Close()
	if _, err := bc.ExecContext(ctx, "SET certa.consistency = 'sync'"); err != nil {
		t.Fatal(err)
	}
	var (
		n  sql.NullInt64
		s  sql.NullString
		f  sql.NullFloat64
		by []byte
	)
	if err := bc.QueryRowContext(ctx, "SELECT n, s, f, by FROM dbsql WHERE id = $1", 7).Scan(&n, &s, &f, &by); err != nil ||
		n.Int64 != 70 || s.String != "row" || f.Float64 != 0.5 || len(by) != 1 || by[0] != 7 {
		t.Fatalf("row 7: %v %v %v %v, %v", n, s, f, by, err)
	}
	if err := bc.QueryRowContext(ctx, "SELECT n, s, f, by FROM dbsql WHERE id = $1", 31).Scan(&n, &s, &f, &by); err != nil ||
		n.Valid || s.Valid || f.Valid || by != nil {
		t.Fatalf("NULL row: %v %v %v %v, %v", n, s, f, by, err)
	}
	var count int64
	if err := bc.QueryRowContext(ctx, "SELECT count(*) FROM dbsql").Scan(&count); err != nil || count != 31 {
		t.Fatalf("count %d, %v", count, err)
	}

	type execer interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}
	update := func(ex execer, by int) {
		t.Helper()
		if _, err := ex.ExecContext(ctx, "UPDATE dbsql SET n = n + $1 WHERE id = $2", by, 1); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := a.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	update(tx, 1)
	update(b, 100)
	if err := tx.Commit(); pgclient.SQLState(err) != "40001" {
		t.Fatalf("commit after a concurrent update: %v, want 40001", err)
	}
	if tx, err = a.BeginTx(ctx, nil); err != nil {
		t.Fatal(err)
	}
	update(tx, 1)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := bc.QueryRowContext(ctx, "SELECT n FROM dbsql WHERE id = $1", 1).Scan(&n); err != nil || n.Int64 != 111 {
		t.Fatalf("after the retry: %v, %v (want 111)", n, err)
	}

	// A context that ends cancels the statement on the server (57014).
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	err = bc.QueryRowContext(cctx, forever).Scan(&count)
	if err == nil || !(errors.Is(err, context.DeadlineExceeded) || pgclient.SQLState(err) == "57014") {
		t.Fatalf("statement with a context that ended: %v", err)
	}
	if err := a.QueryRowContext(ctx, "SELECT count(*) FROM dbsql").Scan(&count); err != nil || count != 31 {
		t.Fatalf("after the cancel: %d, %v", count, err)
	}
}

func openDB(t *testing.T, c *testcluster.Cluster, i int) *sql.DB {
	t.Helper()
	db, err := pgclient.OpenDB(passwordURL(c, i))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
