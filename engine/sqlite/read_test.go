package sqlite

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

// Read runs plain queries at the latest applied state, with their column
// types and command tag as in a Tx.
func TestReadRunsQueries(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')")

	r := &recorder{}
	if err := e.Read(context.Background(), "  -- a comment\n SELECT id, v, id * 2.5 AS f FROM t WHERE id >= $1 ORDER BY id", r, int64(1)); err != nil {
		t.Fatal(err)
	}
	wantRows(t, r.rows, row(int64(1), "a", 2.5), row(int64(2), "b", 5.0))
	want := []result.Column{{Name: "id", Type: result.Int4}, {Name: "v", Type: result.Text}, {Name: "f", Type: result.Float8}}
	if r.tag != "SELECT 2" || !reflect.DeepEqual(r.cols, want) {
		t.Fatalf("tag %q, columns %+v", r.tag, r.cols)
	}

	// The next read sees what was applied since.
	e.commit("UPDATE t SET v = 'c' WHERE id = 2")
	r = &recorder{}
	if err := e.Read(context.Background(), "WITH x AS (SELECT v FROM t WHERE id = 2) SELECT v FROM x", r); err != nil {
		t.Fatal(err)
	}
	wantRows(t, r.rows, row("c"))
	r = &recorder{}
	if err := e.Read(context.Background(), "VALUES (7)", r); err != nil || r.tag != "SELECT 1" {
		t.Fatalf("VALUES: %v, tag %q", err, r.tag)
	}
}

// Read leaves to a Tx, having run nothing and told w nothing, every
// statement that may write or lock, and every one that fails to prepare
// (the Tx reports the error).
func TestReadRefusesWhatIsNotAQuery(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.commit("INSERT INTO t VALUES (1, 'a')")
	for _, sql := range []string{
		"INSERT INTO t VALUES (2, 'b')",
		"UPDATE t SET v = 'x'",
		"DELETE FROM t",
		"WITH x AS (SELECT 3 AS id) INSERT INTO t SELECT id, 'c' FROM x",
		"SELECT v FROM t WHERE id = 1 FOR UPDATE",
		"VACUUM",
		"PRAGMA user_version",
		"SELECT 1; DELETE FROM t",
		"SELECT nope FROM t",
		"SELEC 1",
		"",
	} {
		r := &recorder{}
		if err := e.Read(context.Background(), sql, r); !errors.Is(err, engine.ErrNotReadOnly) {
			t.Errorf("%q: %v, want ErrNotReadOnly", sql, err)
		}
		if r.cols != nil || r.rows != nil || r.tag != "" || r.empty {
			t.Errorf("%q: the writer was told %+v", sql, r)
		}
	}
	wantRows(t, e.query("SELECT id, v FROM t"), row(int64(1), "a"))
}

// A query that runs too long is interrupted when its context ends, with
// the SQLSTATE and message of a timeout, and the connection is usable
// after it.
func TestReadInterrupted(t *testing.T) {
	e := openTest(t, Config{MaxConns: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	const forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	err := e.Read(ctx, forever, &recorder{})
	wantCode(t, err, sqlerr.QueryCanceled)
	if se := (*sqlerr.Error)(nil); !errors.As(err, &se) || se.Message != "canceling statement due to statement timeout" {
		t.Fatalf("message: %v", err)
	}
	r := &recorder{}
	if err := e.Read(context.Background(), "SELECT 1", r); err != nil {
		t.Fatal(err)
	}
	wantRows(t, r.rows, row(int64(1)))
}
