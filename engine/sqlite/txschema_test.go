package sqlite

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

func execSchema(tx engine.Tx, sql string) error {
	return tx.ExecSchema(context.Background(), sql, &recorder{})
}

// A ROLLBACK TO a savepoint set before the transaction's first schema
// statement undoes the statement, keeps the rows written before the mark
// and drops those after: the write set is a plain changeset again.
func TestSchemaRollbackToBeforeFirstStatement(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	tx := e.begin()
	ctx := context.Background()
	exec(t, tx, "INSERT INTO t VALUES (1, 'kept')")
	if err := tx.Savepoint(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO t VALUES (2, 'undone')")
	if err := execSchema(tx, "CREATE TABLE s (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO s VALUES (1)")
	exec(t, tx, "UPDATE t SET v = 'undone too' WHERE id = 1")
	if err := tx.RollbackTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO t VALUES (3, 'after')")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Schema != writeset.SchemaNone {
		t.Fatalf("write set Schema %d, want none: the schema statement was rolled back", ws.Schema)
	}
	tx.Rollback()
	other := openTest(t, Config{})
	other.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	for _, n := range []*testEngine{e, other} {
		if items := n.apply(ws); items[0].Err != nil {
			t.Fatal(items[0].Err)
		}
		wantRows(t, n.query("SELECT id, v FROM t ORDER BY id"), row(int64(1), "kept"), row(int64(3), "after"))
		tx := n.begin()
		if code, _ := execErr(tx, "SELECT id FROM s"); code != sqlerr.UndefinedTable {
			t.Fatalf("table s after ROLLBACK TO: SQLSTATE %q, want 42P01", code)
		}
		tx.Rollback()
	}
}

// A refused first schema statement leaves the transaction as it was: its
// rows travel as a plain changeset. One after a schema statement leaves
// the earlier statement in place.
func TestSchemaRefusedStatementLeavesTransaction(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	tx := e.begin()
	exec(t, tx, "INSERT INTO t VALUES (1, 'a')")
	wantCode(t, execSchema(tx, "CREATE TABLE ai (id money PRIMARY KEY)"), sqlerr.FeatureNotSupported)
	exec(t, tx, "INSERT INTO t VALUES (2, 'b')")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Schema != writeset.SchemaNone || len(ws.Keys) != 2 {
		t.Fatalf("write set Schema %d with %d keys, want none and 2", ws.Schema, len(ws.Keys))
	}
	tx.Rollback()

	tx = e.begin()
	if err := execSchema(tx, "CREATE TABLE s (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, execSchema(tx, "CREATE TABLE ai (id money PRIMARY KEY)"), sqlerr.FeatureNotSupported)
	exec(t, tx, "INSERT INTO s VALUES (1)")
	ws, err = tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	if items := e.apply(ws); items[0].Err != nil {
		t.Fatal(items[0].Err)
	}
	wantRows(t, e.query("SELECT id FROM s"), row(int64(1)))
}

// A sequence made in the transaction hands out values there, from its
// row: applied, on another node too, the rows have them and the row says
// where the nodes' reservations start.
func TestSchemaNewSequenceValues(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	if err := execSchema(tx, "CREATE TABLE s (id serial PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO s (v) VALUES ('a'), ('b')")
	exec(t, tx, "INSERT INTO s (id, v) VALUES (10, 'given')")
	wantRows(t, exec(t, tx, "SELECT id, v FROM s ORDER BY id").rows, row(int64(1), "a"), row(int64(2), "b"), row(int64(10), "given"))
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	other := openTest(t, Config{})
	for _, n := range []*testEngine{e, other} {
		if items := n.apply(ws); items[0].Err != nil {
			t.Fatal(items[0].Err)
		}
		wantRows(t, n.query("SELECT id, v FROM s ORDER BY id"), row(int64(1), "a"), row(int64(2), "b"), row(int64(10), "given"))
		wantRows(t, n.query("SELECT reserved FROM _certa_sequences WHERE name = 's_id_seq'"), row(int64(3)))
	}
}

// A transaction that changed the schema is parked when idle, as any
// writer: an apply does not wait for it, and it resumes on the new state
// with its schema statements and rows applied again, unless the apply
// changed a table it read or wrote (40001). Its own connection describes
// its new table before and after.
func TestSchemaTransactionParkedByApply(t *testing.T) {
	for _, clash := range []bool{false, true} {
		e := openTest(t, Config{SchemaGrace: 5 * time.Second})
		e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
		e.ddl("CREATE TABLE u (id integer PRIMARY KEY, v text)")
		tx := e.begin()
		exec(t, tx, "INSERT INTO t VALUES (5, 'before')")
		if err := execSchema(tx, "CREATE TABLE s (id integer PRIMARY KEY, v text)"); err != nil {
			t.Fatal(err)
		}
		exec(t, tx, "INSERT INTO s VALUES (1, 'y')")
		params, cols, err := tx.Describe(context.Background(), "SELECT v FROM s WHERE id = $1")
		if err != nil || len(params) != 1 || len(cols) != 1 || cols[0].Name != "v" {
			t.Fatalf("Describe in the transaction: %v %v %v", params, cols, err)
		}
		other := openTest(t, Config{})
		other.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
		other.ddl("CREATE TABLE u (id integer PRIMARY KEY, v text)")
		table := "u"
		if clash {
			table = "t"
		}
		e.apply(other.capture("INSERT INTO " + table + " VALUES (1, 'x')")) // parks tx: does not wait for SchemaGrace
		code, err := execErr(tx, "INSERT INTO s VALUES (2, 'z')")
		if clash {
			if code != sqlerr.SerializationFailure {
				t.Fatalf("after an apply to its table: %v, want 40001", err)
			}
			tx.Rollback()
			wantRows(t, e.query("SELECT name FROM sqlite_schema WHERE name = 's'"))
			continue
		}
		if err != nil {
			t.Fatalf("after an apply: %v", err)
		}
		if _, _, err := tx.Describe(context.Background(), "SELECT v FROM s"); err != nil {
			t.Fatalf("Describe after resuming: %v", err)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		if items := e.apply(ws); items[0].Err != nil {
			t.Fatal(items[0].Err)
		}
		wantRows(t, e.query("SELECT id, v FROM s ORDER BY id"), row(int64(1), "y"), row(int64(2), "z"))
		wantRows(t, e.query("SELECT id, v FROM t ORDER BY id"), row(int64(5), "before"))
		wantRows(t, e.query("SELECT id, v FROM u"), row(int64(1), "x"))
	}
}

// A parked transaction that changed the schema gives its write set
// without the lock; a local writer parks it (Flyway writes its history
// table on a second connection while its migration's block is open).
func TestSchemaTransactionParkedByLocalWriter(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 5 * time.Second})
	e.ddl("CREATE TABLE history (id integer PRIMARY KEY)")
	tx := e.begin()
	if err := execSchema(tx, "CREATE TABLE m (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := execSchema(tx, "CREATE SEQUENCE m_seq"); err != nil {
		t.Fatal(err)
	}
	e.commit("INSERT INTO history VALUES (1)") // parks tx instead of waiting (then failing with 40001)
	ws, err := tx.WriteSet()
	if err != nil || ws == nil || ws.Schema == writeset.SchemaNone {
		t.Fatalf("write set of the parked transaction: %+v %v", ws, err)
	}
	tx.Rollback()
	if items := e.apply(ws); items[0].Err != nil {
		t.Fatal(items[0].Err)
	}
	wantRows(t, e.query("SELECT name FROM sqlite_schema WHERE name = 'm'"), row("m"))
	wantRows(t, e.query("SELECT name FROM _certa_sequences"), row("m_seq"))
}

// A parked transaction that changed the schema describes its next
// statement on its own schema: Flyway's migration adds a column, its
// history write on a second connection parks the block, and the UPDATE
// of the new column (parsed and described first, extended protocol) must
// find it (it failed with 42703 under load).
func TestParkedSchemaTransactionDescribesOnItsSchema(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 5 * time.Second})
	e.ddl("CREATE TABLE history (id integer PRIMARY KEY)")
	e.ddl("CREATE TABLE customer (id integer PRIMARY KEY, name text)")
	tx := e.begin()
	if err := execSchema(tx, "ALTER TABLE customer ADD COLUMN tier varchar(255)"); err != nil {
		t.Fatal(err)
	}
	e.commit("INSERT INTO history VALUES (1)") // parks tx
	if _, _, err := tx.Describe(context.Background(), "UPDATE customer SET tier = $1"); err != nil {
		t.Fatalf("Describe in the parked transaction: %v", err)
	}
	exec(t, tx, "UPDATE customer SET tier = 'basic'")
}

// A connection whose transaction changed the schema and rolled back
// forgets what it knew of that schema: the same schema version, reached
// by another change, is read afresh.
func TestSchemaRollbackForgetsSchema(t *testing.T) {
	e := openTest(t, Config{MaxConns: 1})
	tx := e.begin()
	if err := execSchema(tx, "CREATE TABLE a (id integer PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "SELECT v FROM a")
	tx.Rollback()
	e.ddl("CREATE TABLE a (id integer PRIMARY KEY, w integer)")
	e.commit("INSERT INTO a VALUES (1, 2)")
	tx = e.begin()
	r := &recorder{}
	if err := tx.Exec(context.Background(), "SELECT * FROM a", r); err != nil {
		t.Fatal(err)
	}
	if len(r.cols) != 2 || r.cols[1].Name != "w" {
		t.Fatalf("columns %v, want id and w", r.cols)
	}
	wantRows(t, r.rows, row(int64(1), int64(2)))
}

// A savepoint set after the first schema statement can be returned to
// after the transaction was parked: its segments up to the mark are
// applied again. One set before it cannot (0A000).
func TestSchemaSavepointAfterPark(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, Config{LockTimeout: 5 * time.Second})
	e.ddl("CREATE TABLE other (id integer PRIMARY KEY)")
	tx := e.begin()
	if err := execSchema(tx, "CREATE TABLE a (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO a VALUES (1)")
	if err := tx.Savepoint(ctx); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO a VALUES (2)")
	if err := execSchema(tx, "CREATE TABLE gone (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	e.commit("INSERT INTO other VALUES (1)") // parks tx
	if err := tx.RollbackTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO a VALUES (3)")
	wantRows(t, exec(t, tx, "SELECT id FROM a ORDER BY id").rows, row(int64(1)), row(int64(3)))
	if code, err := execErr(tx, "SELECT * FROM gone"); code != sqlerr.UndefinedTable {
		t.Fatalf("table made after the savepoint: %v", err)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id FROM a ORDER BY id"), row(int64(1)), row(int64(3)))

	tx = e.begin()
	if err := tx.Savepoint(ctx); err != nil {
		t.Fatal(err)
	}
	if err := execSchema(tx, "CREATE TABLE b (id integer PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	e.commit("INSERT INTO other VALUES (2)") // parks tx
	if err := tx.RollbackTo(ctx, 1); sqlerr.Code(err) != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "before its first schema change") {
		t.Fatalf("ROLLBACK TO a savepoint before the first schema change, after parking: %v", err)
	}
}

// A schema transaction set aside by an apply (parked: its SQLite
// transaction rolled back, its table cache dropped) gives its write set,
// index entries of its rows included, without resuming.
func TestParkedSchemaTransactionIndexKeys(t *testing.T) {
	e := openTest(t, Config{SchemaGrace: 5 * time.Second})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	e.ddl("CREATE INDEX t_v ON t (v)")
	e.ddl("CREATE TABLE u (id integer PRIMARY KEY, v text)")
	tx := e.begin()
	defer tx.Rollback()
	exec(t, tx, "INSERT INTO t VALUES (5, 'before')")
	if err := execSchema(tx, "CREATE TABLE s (id integer PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	other := openTest(t, Config{})
	other.ddl("CREATE TABLE u (id integer PRIMARY KEY, v text)")
	e.apply(other.capture("INSERT INTO u VALUES (1, 'x')")) // parks tx
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if want := writeset.IndexKey("t", "v", "before"); !slices.Contains(ws.IndexKeys, want) {
		t.Fatalf("index keys %q, want %q among them", ws.IndexKeys, want)
	}
}
