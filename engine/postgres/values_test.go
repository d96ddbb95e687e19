package postgres

import (
	"context"
	"testing"

	"certa/result"
)

// A query of no columns (SELECT;, SELECT FROM t) has a result of rows of
// no values, as PostgreSQL sends it: a description of no columns, not a
// bare command tag. Describe says so too.
func TestZeroColumnResult(t *testing.T) {
	e := openEngine(t)
	ctx := context.Background()
	tx, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var buf result.Buffer
	if err := tx.Exec(ctx, "SELECT FROM generate_series(1, 3)", &buf); err != nil {
		t.Fatal(err)
	}
	if buf.Cols == nil || len(buf.Cols) != 0 || len(buf.Rows) != 3 || buf.Tag != "SELECT 3" {
		t.Fatalf("result %+v", buf)
	}
	_, cols, err := tx.Describe(ctx, "SELECT")
	if err != nil || cols == nil || len(cols) != 0 {
		t.Fatalf("Describe: %v %v", cols, err)
	}
}
