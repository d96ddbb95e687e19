package enginetest

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
)

// Tx.Exec: results, command tags, parameters, and errors with PostgreSQL's
// SQLSTATEs.
var execTests = []subtest{
	{"CommandTags", testCommandTags},
	{"ResultColumns", testResultColumns},
	{"Parameters", testParameters},
	{"Errors", testExecErrors},
	{"RefusesSchemaChange", testExecRefusesSchemaChange},
	{"Describe", testDescribe},
	{"CatalogColumns", testCatalogColumns},
}

// Exec reports PostgreSQL's command tags.
func testCommandTags(t *testing.T, f Factory) {
	n := openT(t, f)
	tx := n.begin()
	for _, c := range []struct {
		sql, tag string
		rows     int
	}{
		{"INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30)", "INSERT 0 3", 0},
		{"INSERT INTO t (id, v) VALUES (4, 'd')", "INSERT 0 1", 0},
		{"UPDATE t SET v = v || '!' WHERE id > 1", "UPDATE 3", 0},
		{"UPDATE t SET v = 'x' WHERE id = 99", "UPDATE 0", 0},
		{"DELETE FROM t WHERE id = 4", "DELETE 1", 0},
		{"DELETE FROM t WHERE id > 99", "DELETE 0", 0},
		{"INSERT INTO t VALUES (5, 'e', 50) RETURNING id", "INSERT 0 1", 1},
		{"UPDATE t SET n = n + 1 WHERE id IN (1, 2) RETURNING id, n", "UPDATE 2", 2},
		{"DELETE FROM t WHERE id = 5 RETURNING id, v", "DELETE 1", 1},
		{"SELECT id FROM t", "SELECT 3", 3},
		{"SELECT id FROM t WHERE id > 99", "SELECT 0", 0},
	} {
		b := exec(t, tx, c.sql)
		if b.Tag != c.tag || len(b.Rows) != c.rows {
			t.Errorf("%s: tag %q with %d rows, want %q with %d", c.sql, b.Tag, len(b.Rows), c.tag, c.rows)
		}
	}
}

// Result columns have their names and PostgreSQL's types, and values the
// Go types result.Value names.
func testResultColumns(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1099511627776), (2, NULL, NULL)")
	tx := n.begin()
	b := exec(t, tx, "SELECT id, v, n FROM t ORDER BY id")
	wantCols := []result.Column{{Name: "id", Type: result.Int4}, {Name: "v", Type: result.Text}, {Name: "n", Type: result.Int8}}
	if !reflect.DeepEqual(b.Cols, wantCols) {
		t.Errorf("columns %+v, want %+v", b.Cols, wantCols)
	}
	wantRows(t, b.Rows, row(int64(1), "a", int64(1)<<40), row(int64(2), nil, nil))

	b = exec(t, tx, "SELECT count(*) AS c FROM t")
	if want := []result.Column{{Name: "c", Type: result.Int8}}; !reflect.DeepEqual(b.Cols, want) {
		t.Errorf("count(*): columns %+v, want %+v", b.Cols, want)
	}
	wantRows(t, b.Rows, row(int64(2)))

	// No rows: the columns are still described.
	b = exec(t, tx, "SELECT id, v FROM t WHERE id < 0")
	if !reflect.DeepEqual(b.Cols, wantCols[:2]) || b.Tag != "SELECT 0" {
		t.Errorf("empty result: columns %+v, tag %q", b.Cols, b.Tag)
	}
}

// $n is args[n-1], wherever and however often it appears; nil is NULL.
func testParameters(t *testing.T, f Factory) {
	n := openT(t, f)
	tx := n.begin()
	b := &result.Buffer{}
	if err := tx.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3), ($4, $2, $5)", b,
		int64(1), "one", int64(1)<<40, int64(2), nil); err != nil {
		t.Fatal(err)
	}
	if b.Tag != "INSERT 0 2" {
		t.Fatalf("tag %q", b.Tag)
	}
	exec(t, tx, "UPDATE t SET v = $2 WHERE id = $1", int64(2), "two")
	wantRows(t, exec(t, tx, "SELECT id, v, n FROM t WHERE id >= $1 AND v <> $2 ORDER BY id", int64(1), "x").Rows,
		row(int64(1), "one", int64(1)<<40), row(int64(2), "two", nil))
}

// Errors carry PostgreSQL's SQLSTATEs as *sqlerr.Error. Each statement runs
// in a Tx of its own (after an error PostgreSQL's transaction is aborted).
func testExecErrors(t *testing.T, f Factory) {
	n := open(t, f)
	n.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text NOT NULL, u text UNIQUE, n bigint CHECK (n >= 0))")
	n.commit("INSERT INTO t VALUES (1, 'a', 'u1', 1)")
	for _, c := range []struct {
		name, setup, sql, code string
	}{
		{"unique violation of the key", "", "INSERT INTO t VALUES (1, 'b', 'u2', 2)", sqlerr.UniqueViolation},
		{"unique violation of a unique column", "", "INSERT INTO t VALUES (2, 'b', 'u1', 2)", sqlerr.UniqueViolation},
		{"key update onto a key", "INSERT INTO t VALUES (3, 'c', 'u3', 3)", "UPDATE t SET id = 1 WHERE id = 3", sqlerr.UniqueViolation},
		{"NULL key", "", "INSERT INTO t (id, v) VALUES (NULL, 'b')", sqlerr.NotNullViolation},
		{"NULL in a NOT NULL column", "", "INSERT INTO t (id, v) VALUES (2, NULL)", sqlerr.NotNullViolation},
		{"check violation", "", "INSERT INTO t VALUES (2, 'b', 'u2', -1)", sqlerr.CheckViolation},
		{"undefined table", "", "SELECT id FROM nope", sqlerr.UndefinedTable},
		{"insert into undefined table", "", "INSERT INTO nope VALUES (1)", sqlerr.UndefinedTable},
		{"undefined column", "", "SELECT nope FROM t", sqlerr.UndefinedColumn},
		{"syntax error", "", "SELEC 1", sqlerr.SyntaxError},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := n.begin()
			if c.setup != "" {
				exec(t, tx, c.setup)
			}
			wantCode(t, c.sql, execErr(tx, c.sql), c.code)
		})
	}
	// Nothing a failed statement did stayed.
	wantRows(t, n.query("SELECT id, v, u, n FROM t"), row(int64(1), "a", "u1", int64(1)))
}

// Exec refuses schema changes (they go through CheckDDL and Apply) with a
// *sqlerr.Error, and nothing changes.
func testExecRefusesSchemaChange(t *testing.T, f Factory) {
	n := openT(t, f)
	for _, sql := range []string{
		"CREATE TABLE x (id integer PRIMARY KEY)",
		"ALTER TABLE t ADD COLUMN w text",
		"DROP TABLE t",
	} {
		tx := n.begin()
		wantSQLErr(t, sql, execErr(tx, sql))
		tx.Rollback()
	}
	wantRows(t, n.query("SELECT id, v, n FROM t"))
	tx := n.begin()
	wantCode(t, "x was not created", execErr(tx, "SELECT id FROM x"), sqlerr.UndefinedTable)
}

// Describe gives the types of parameters and result columns without
// running the statement.
func testDescribe(t *testing.T, f Factory) {
	n := openT(t, f)
	for _, c := range []struct {
		sql    string
		params []result.Type
		cols   []result.Column
	}{
		{"SELECT id, v, n FROM t WHERE id = $1 AND n > $2", []result.Type{result.Int4, result.Int8},
			[]result.Column{{Name: "id", Type: result.Int4}, {Name: "v", Type: result.Text}, {Name: "n", Type: result.Int8}}},
		{"INSERT INTO t (id, v, n) VALUES ($1, $2, $3)", []result.Type{result.Int4, result.Text, result.Int8}, nil},
		{"UPDATE t SET v = $1 WHERE id = $2", []result.Type{result.Text, result.Int4}, nil},
		{"DELETE FROM t WHERE id = $1 RETURNING v", []result.Type{result.Int4}, []result.Column{{Name: "v", Type: result.Text}}},
	} {
		params, cols, err := n.e.Describe(ctx, c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if !reflect.DeepEqual(params, c.params) || !reflect.DeepEqual(cols, c.cols) {
			t.Errorf("%s:\n got params %v, columns %+v\nwant params %v, columns %+v", c.sql, params, cols, c.params, c.cols)
		}
	}
	if rows := n.query("SELECT id FROM t"); len(rows) != 0 {
		t.Fatalf("Describe ran a statement: %v", rows)
	}
}

// Catalog answers information_schema from the node's schema.
func testCatalogColumns(t *testing.T, f Factory) {
	n := openT(t, f)
	b := &result.Buffer{}
	err := n.e.Catalog(ctx, "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position", b, "t")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, b.Rows, row("id", "integer"), row("v", "text"), row("n", "bigint"))
}

// Engine.Read: one read-only statement at the latest applied state.
var readTests = []subtest{
	{"Query", testReadQuery},
	{"NotReadOnly", testReadNotReadOnly},
	{"Errors", testReadErrors},
	{"Interrupted", testReadInterrupted},
}

// Read reports a query's result as Exec does, at the latest applied state.
func testReadQuery(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20)")
	b := n.readBuf("SELECT id, v FROM t WHERE id >= $1 ORDER BY id", int64(1))
	want := []result.Column{{Name: "id", Type: result.Int4}, {Name: "v", Type: result.Text}}
	if b.Tag != "SELECT 2" || !reflect.DeepEqual(b.Cols, want) {
		t.Fatalf("tag %q, columns %+v", b.Tag, b.Cols)
	}
	wantRows(t, b.Rows, row(int64(1), "a"), row(int64(2), "b"))
	n.commit("UPDATE t SET v = 'c' WHERE id = 2")
	wantRows(t, n.read("SELECT v FROM t WHERE id = $1", int64(2)), row("c"))
}

// Read refuses, with ErrNotReadOnly, statements that may write or lock
// rows, having run nothing and told w nothing.
func testReadNotReadOnly(t *testing.T, f Factory) {
	n := openT(t, f, "INSERT INTO t VALUES (1, 'a', 10)")
	for _, sql := range []string{
		"INSERT INTO t VALUES (2, 'b', 20)",
		"UPDATE t SET v = 'x'",
		"DELETE FROM t",
		"INSERT INTO t VALUES (3, 'c', 30) RETURNING id",
		"SELECT v FROM t WHERE id = 1 FOR UPDATE",
	} {
		b := &result.Buffer{}
		if err := n.e.Read(ctx, sql, b); !errors.Is(err, engine.ErrNotReadOnly) {
			t.Errorf("%s: %v, want ErrNotReadOnly", sql, err)
		}
		if !reflect.DeepEqual(b, &result.Buffer{}) {
			t.Errorf("%s: the writer was told %+v", sql, b)
		}
	}
	wantRows(t, n.query("SELECT id, v, n FROM t"), row(int64(1), "a", int64(10)))
}

// A statement that fails gets its *sqlerr.Error from Read, or
// ErrNotReadOnly with nothing reported (then the Tx it is run in reports
// the error).
func testReadErrors(t *testing.T, f Factory) {
	n := openT(t, f)
	for _, c := range []struct{ sql, code string }{
		{"SELECT id FROM nope", sqlerr.UndefinedTable},
		{"SELECT nope FROM t", sqlerr.UndefinedColumn},
		{"SELEC 1", sqlerr.SyntaxError},
	} {
		b := &result.Buffer{}
		err := n.e.Read(ctx, c.sql, b)
		if errors.Is(err, engine.ErrNotReadOnly) {
			if !reflect.DeepEqual(b, &result.Buffer{}) {
				t.Errorf("%s: ErrNotReadOnly, and the writer was told %+v", c.sql, b)
			}
			continue
		}
		wantCode(t, c.sql, err, c.code)
	}
}

// Read's ctx ending interrupts the statement (57014, query_canceled).
func testReadInterrupted(t *testing.T, f Factory) {
	n := open(t, f)
	timeout, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.e.Read(timeout, endlessCount, &result.Buffer{}) }()
	select {
	case err := <-done:
		wantCode(t, "Read when its ctx ended", err, sqlerr.QueryCanceled)
	case <-time.After(applyBound):
		t.Fatalf("Read ran on for %v after its ctx ended", applyBound)
	}
	wantRows(t, n.read("SELECT 1"), row(int64(1)))
}
