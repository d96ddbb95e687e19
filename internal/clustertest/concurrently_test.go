package clustertest

import (
	"context"
	"testing"
	"time"

	"certa/internal/pgclient"
)

// concurrentlyScript has CONCURRENTLY in every form PostgreSQL runs or
// refuses, on ordinary, partitioned and temporary relations.
var concurrentlyScript = []string{
	"CREATE TABLE idxpart (a int, b int) PARTITION BY RANGE (a)",
	"CREATE TABLE idxpart1 PARTITION OF idxpart FOR VALUES FROM (0) TO (10)",
	"CREATE INDEX CONCURRENTLY ON idxpart (a)", // partitioned: refused
	"CREATE INDEX ON idxpart (a)",
	"CREATE INDEX CONCURRENTLY idxpart1_b ON idxpart1 (b)",
	"DROP INDEX CONCURRENTLY idxpart_a_idx", // partitioned: refused
	"DROP INDEX CONCURRENTLY idxpart_a_idx, idxpart1_b",
	"DROP INDEX CONCURRENTLY idxpart1_b CASCADE",
	"DROP INDEX CONCURRENTLY IF EXISTS nope",
	"BEGIN",
	"CREATE INDEX CONCURRENTLY ON idxpart1 (a, b)",
	"ROLLBACK",
	"BEGIN",
	"DROP INDEX CONCURRENTLY idxpart1_b",
	"ROLLBACK",
	"DROP INDEX CONCURRENTLY idxpart1_b",
	"CREATE TEMP TABLE tmp (a int) PARTITION BY RANGE (a)",
	"CREATE INDEX tmp_a ON tmp (a)",
	"DROP INDEX CONCURRENTLY tmp_a", // temporary: runs as without it
	"CREATE TABLE rp (a int) PARTITION BY RANGE (a)",
	"CREATE TABLE rp1 PARTITION OF rp FOR VALUES FROM (0) TO (100)",
	"CREATE TABLE rpd PARTITION OF rp DEFAULT",
	"ALTER TABLE rp DETACH PARTITION rp1 CONCURRENTLY", // a default partition: refused
	"ALTER TABLE rp DETACH PARTITION rpd CONCURRENTLY",
	"DROP TABLE rpd",
	"ALTER TABLE rp DETACH PARTITION rp1 CONCURRENTLY",
}

// CONCURRENTLY through the PostgreSQL engine as on a real PostgreSQL:
// each statement of concurrentlyScript succeeds on both or fails with the
// same SQLSTATE and message (certa runs it without the word, so
// PostgreSQL's refusals of what it does not do concurrently are certa's
// to make), and the relations are the same, on node 2 too.
func TestConcurrentlyAsPostgreSQL(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	writer := syncConn(t, c, 0)
	for _, sql := range concurrentlyScript {
		_, refErr := ref.Exec(ctx, sql)
		_, err := writer.Exec(ctx, sql)
		if got, want := errorText(err), errorText(refErr); got != want {
			t.Errorf("%s\n  certa:      %s\n  PostgreSQL: %s", sql, got, want)
		}
	}
	const relations = "SELECT c.relname, c.relkind, c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace " +
		"WHERE n.nspname = 'public' OR n.oid = pg_my_temp_schema() ORDER BY 1"
	want := describedOutcome(ctx, ref, relations, false)
	if got := describedOutcome(ctx, writer, relations, false); got != want {
		t.Errorf("relations: certa %s, PostgreSQL %s", got, want)
	}
	const replicated = "SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' ORDER BY 1"
	want = describedOutcome(ctx, ref, replicated, false)
	if got := describedOutcome(ctx, syncConn(t, c, 1), replicated, false); got != want {
		t.Errorf("relations on node 2: certa %s, PostgreSQL %s", got, want)
	}
}

// errorText is "ok", or err's SQLSTATE and message.
func errorText(err error) string {
	if err == nil {
		return "ok"
	}
	return pgclient.SQLState(err) + " " + err.Error()
}
