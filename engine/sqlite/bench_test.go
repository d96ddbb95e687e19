package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"certa/engine"
	"certa/writeset"
)

// BenchmarkAutocommitInsert measures one autocommit write end to end on one
// node: local execution, capture, rollback, apply of a one-item batch.
func BenchmarkAutocommitInsert(b *testing.B) {
	e := openBench(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := e.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, 'value')", i), &recorder{}); err != nil {
			b.Fatal(err)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
		seq := uint64(i + 2)
		if err := e.Apply(ctx, []engine.ApplyItem{{Seqno: seq, WS: ws}}, seq); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPointSelect measures a read-only transaction with one point query.
func BenchmarkPointSelect(b *testing.B) {
	e := openBench(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := e.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Exec(ctx, "SELECT v FROM t WHERE id = 1", &recorder{}); err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
	}
}

// openBench opens an engine with table t at seqno 1.
func openBench(b *testing.B) *Engine {
	e, err := Open(Config{Path: filepath.Join(b.TempDir(), "db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	ws := &writeset.WriteSet{DDL: "CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"}
	if err := e.Apply(context.Background(), []engine.ApplyItem{{Seqno: 1, WS: ws}}, 1); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkAutocommitInsertChild is BenchmarkAutocommitInsert on a table
// with a foreign key (fk: SQLite's check, at capture the parent's lookup for
// its certification key, fkeys.go, and no row images) and without one.
func BenchmarkAutocommitInsertChild(b *testing.B) {
	b.Run("fk", func(b *testing.B) { benchInsertChild(b, "REFERENCES t (id)") })
	b.Run("nofk", func(b *testing.B) { benchInsertChild(b, "") })
}

func benchInsertChild(b *testing.B, references string) {
	e := openBench(b)
	ctx := context.Background()
	seq := uint64(1)
	for _, ddl := range []string{"CREATE TABLE c (id INTEGER PRIMARY KEY, tid INTEGER " + references + ", v TEXT)"} {
		seq++
		ws := &writeset.WriteSet{DDL: ddl}
		if err := e.Apply(ctx, []engine.ApplyItem{{Seqno: seq, WS: ws}}, seq); err != nil {
			b.Fatal(err)
		}
	}
	tx, err := e.Begin(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Exec(ctx, "INSERT INTO t VALUES (1, 'parent')", &recorder{}); err != nil {
		b.Fatal(err)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		b.Fatal(err)
	}
	tx.Rollback()
	seq++
	if err := e.Apply(ctx, []engine.ApplyItem{{Seqno: seq, WS: ws}}, seq); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tx, err := e.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Exec(ctx, fmt.Sprintf("INSERT INTO c VALUES (%d, 1, 'value')", i), &recorder{}); err != nil {
			b.Fatal(err)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			b.Fatal(err)
		}
		tx.Rollback()
		seq++
		if err := e.Apply(ctx, []engine.ApplyItem{{Seqno: seq, WS: ws}}, seq); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchemaChange measures a schema statement (checked, applied,
// then a transaction begun on a connection, which makes its touch
// triggers) on an empty schema and on one of 400 tables: the two should
// cost about the same, as only what the statement touched is read
// again, besides SQLite's own reading of the schema.
func BenchmarkSchemaChange(b *testing.B) {
	for _, tables := range []int{0, 400} {
		b.Run(fmt.Sprintf("tables=%d", tables), func(b *testing.B) {
			e := &testEngine{Engine: openBench(b), t: &testing.T{}, seqno: 1}
			ctx := context.Background()
			change := func(stmt string) {
				ddl, err := e.CheckDDL(ctx, stmt)
				if err != nil {
					b.Fatal(err)
				}
				e.seqno++
				items := []engine.ApplyItem{{Seqno: e.seqno, WS: &writeset.WriteSet{DDL: ddl.Statement, Tables: ddl.Tables}}}
				if err := e.Apply(ctx, items, e.seqno); err != nil || items[0].Err != nil {
					b.Fatal(err, items[0].Err)
				}
				tx, err := e.Begin(ctx)
				if err != nil {
					b.Fatal(err)
				}
				tx.Rollback()
			}
			for i := range tables {
				change(fmt.Sprintf("CREATE TABLE s%d (id serial PRIMARY KEY, a int CHECK (a > 0), b text REFERENCES t (id))", i))
			}
			b.ResetTimer()
			for i := range b.N {
				change(fmt.Sprintf("CREATE TABLE n%d (id serial PRIMARY KEY, a int CHECK (a > 0))", i))
			}
		})
	}
}
