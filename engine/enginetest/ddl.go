package enginetest

import (
	"reflect"
	"slices"
	"testing"

	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Engine.CheckDDL, and DDL write sets in Apply.
var ddlTests = []subtest{
	{"CheckChangesNothing", testCheckDDLChangesNothing},
	{"Tables", testCheckDDLTables},
	{"Refusals", testCheckDDLRefusals},
	{"FailedItem", testApplyFailedDDL},
	{"InTransaction", testSchemaInTransaction},
	{"NoPrimaryKey", testNoPrimaryKey},
}

// A table without a primary key takes no rows, refused with 42P16 (the
// SQLite engine: it replicates rows by key) until ALTER TABLE ... ADD
// PRIMARY KEY gives it one; or it takes them and replicates them by whole
// rows: identical rows, an update and a delete of one of them, applied on
// another node, leave the same rows.
func testNoPrimaryKey(t *testing.T, f Factory) {
	origin, other := open(t, f), open(t, f)
	const create = "CREATE TABLE nopk (a text, b integer)"
	origin.ddl(create)
	other.ddl(create)
	tx := origin.begin()
	err := tx.Exec(ctx, "INSERT INTO nopk VALUES ('x', 1)", result.Discard)
	tx.Rollback()
	if err != nil {
		wantCode(t, "INSERT", err, sqlerr.InvalidTableDefinition)
		const addKey = "ALTER TABLE nopk ADD CONSTRAINT nopk_pk PRIMARY KEY (a)"
		origin.ddl(addKey)
		other.ddl(addKey)
		wantApplied(t, other.apply(origin.commit("INSERT INTO nopk VALUES ('x', 1), ('y', NULL)"))...)
		for _, n := range []*node{origin, other} {
			wantRows(t, n.query("SELECT a, b FROM nopk ORDER BY a"), row("x", int64(1)), row("y", nil))
		}
		return
	}
	for _, stmts := range [][]string{
		{"INSERT INTO nopk VALUES ('x', 1), ('x', 1), ('y', 2)"},
		{"UPDATE nopk SET b = 3 WHERE a = 'y'"},
		{"DELETE FROM nopk WHERE a = 'y'", "INSERT INTO nopk VALUES ('z', NULL)"},
	} {
		ws := origin.commit(stmts...)
		wantApplied(t, other.apply(ws)...)
	}
	want := [][]result.Value{row("x", int64(1)), row("x", int64(1)), row("z", nil)}
	for _, n := range []*node{origin, other} {
		wantRows(t, n.query("SELECT a, b FROM nopk ORDER BY a"), want...)
	}
}

// Tx.ExecSchema: a schema statement inside a transaction is part of it,
// and its write set carries it in order with the rows (Schema set, its
// tables in Tables): applied on another node, or on the origin, it makes
// the same schema and rows. Rolled back to a savepoint, it does not
// travel. A statement that copies rows (CREATE TABLE AS) is refused with
// 0A000, leaving the transaction as it was, or its rows travel with the
// write set. An engine that cannot run schema statements in a transaction
// refuses them with 0A000, having run nothing.
func testSchemaInTransaction(t *testing.T, f Factory) {
	origin := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1)")
	other := openT(t, f, "INSERT INTO t VALUES (1, 'a', 1)")
	tx := origin.begin()
	exec(t, tx, "INSERT INTO t VALUES (2, 'b', 2)")
	schema := func(sql string) error { return tx.ExecSchema(ctx, sql, &result.Buffer{}) }
	err := schema("CREATE TABLE s (id integer PRIMARY KEY, v text)")
	if sqlerr.Code(err) == sqlerr.FeatureNotSupported {
		exec(t, tx, "INSERT INTO t VALUES (3, 'c', 3)")
		wantCode(t, "s after a refused ExecSchema", execErr(tx, "SELECT id FROM s"), sqlerr.UndefinedTable)
		return
	}
	if err != nil {
		t.Fatalf("ExecSchema: %v", err)
	}
	mustSchema := func(sql string) {
		t.Helper()
		if err := schema(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec(t, tx, "INSERT INTO s VALUES (1, 'x')")
	mustSchema("ALTER TABLE s ADD COLUMN w integer DEFAULT 7")
	exec(t, tx, "INSERT INTO s (id, v) VALUES (2, 'y')")
	exec(t, tx, "UPDATE s SET w = 8 WHERE id = 1")
	if err := tx.Savepoint(ctx); err != nil {
		t.Fatal(err)
	}
	mustSchema("CREATE TABLE gone (id integer PRIMARY KEY)")
	exec(t, tx, "INSERT INTO gone VALUES (1)")
	if err := tx.RollbackTo(ctx, 1); err != nil {
		t.Fatal(err)
	}
	copied := true // CREATE TABLE AS carries its rows
	if err := schema("CREATE TABLE c AS SELECT id FROM t WHERE id < 3"); sqlerr.Code(err) == sqlerr.FeatureNotSupported {
		copied = false
	} else if err != nil {
		t.Fatalf("CREATE TABLE AS in a transaction: %v, want 0A000 or success", err)
	}
	wantRows(t, exec(t, tx, "SELECT id, v, w FROM s ORDER BY id").Rows, row(int64(1), "x", int64(8)), row(int64(2), "y", int64(7)))
	ws := writeSet(t, tx)
	if ws == nil || ws.Schema != writeset.SchemaTables || !slices.Contains(ws.Tables, "s") || !slices.Contains(ws.Tables, "t") {
		t.Fatalf("write set %+v: want Schema %d and tables s and t", ws, writeset.SchemaTables)
	}
	tx.Rollback()
	for _, n := range []*node{other, origin} {
		wantApplied(t, n.apply(ws)...)
		wantRows(t, n.query("SELECT id, v, w FROM s ORDER BY id"), row(int64(1), "x", int64(8)), row(int64(2), "y", int64(7)))
		wantRows(t, n.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(2)))
		gone := []string{"SELECT id FROM gone"}
		if copied {
			wantRows(t, n.query("SELECT id FROM c ORDER BY id"), row(int64(1)), row(int64(2)))
		} else {
			gone = append(gone, "SELECT id FROM c")
		}
		for _, q := range gone {
			tx := n.begin()
			wantCode(t, q+" (rolled back, refused)", execErr(tx, q), sqlerr.UndefinedTable)
			tx.Rollback()
		}
	}
}

// CheckDDL changes nothing; its statement, applied as a DDL write set,
// makes the change at its position.
func testCheckDDLChangesNothing(t *testing.T, f Factory) {
	n := open(t, f)
	ws := n.ddlWriteSet(tableT)
	if !reflect.DeepEqual(ws.Tables, []string{"t"}) {
		t.Fatalf("CheckDDL tables %q, want [t]", ws.Tables)
	}
	tx := n.begin()
	wantCode(t, "before the DDL is applied", execErr(tx, "SELECT id FROM t"), sqlerr.UndefinedTable)
	tx.Rollback()
	n.wantApplied(0)

	wantApplied(t, n.apply(ws)...)
	n.commit("INSERT INTO t VALUES (1, 'a', 1)")
	alter := n.ddlWriteSet("ALTER TABLE t ADD COLUMN w text")
	wantRows(t, n.query("SELECT id, v, n FROM t"), row(int64(1), "a", int64(1)))
	wantApplied(t, n.apply(alter)...)
	n.commit("UPDATE t SET w = 'new' WHERE id = 1")
	wantRows(t, n.query("SELECT id, w FROM t"), row(int64(1), "new"))
}

// CheckDDL names the tables a statement touches.
func testCheckDDLTables(t *testing.T, f Factory) {
	n := open(t, f)
	n.ddl(tableT, "CREATE TABLE u (id integer PRIMARY KEY, t_id integer)", "CREATE INDEX u_t ON u (t_id)")
	for _, c := range []struct {
		stmt   string
		tables []string
	}{
		{"CREATE TABLE k (a text, b bigint, PRIMARY KEY (a, b))", []string{"k"}},
		{"CREATE INDEX t_v ON t (v)", []string{"t"}},
		{"CREATE UNIQUE INDEX t_n ON t (n)", []string{"t"}},
		{"ALTER TABLE t ADD COLUMN w text", []string{"t"}},
		{"DROP INDEX u_t", []string{"u"}},
		{"DROP TABLE u", []string{"u"}},
	} {
		ddl, err := n.e.CheckDDL(ctx, c.stmt)
		if err != nil {
			t.Errorf("%s: %v", c.stmt, err)
			continue
		}
		if !reflect.DeepEqual(ddl.Tables, c.tables) {
			t.Errorf("%s: tables %q, want %q", c.stmt, ddl.Tables, c.tables)
		}
	}
	// Nothing was changed: u and its index are still there, k is not.
	n.ddl("DROP INDEX u_t", "DROP TABLE u")
	tx := n.begin()
	wantCode(t, "k after CheckDDL", execErr(tx, "SELECT a FROM k"), sqlerr.UndefinedTable)
}

// CheckDDL refuses, with a *sqlerr.Error, what would fail.
func testCheckDDLRefusals(t *testing.T, f Factory) {
	n := openT(t, f)
	for _, c := range []struct {
		stmt, code string
	}{
		{"CREATE TABLE t (id integer PRIMARY KEY)", sqlerr.DuplicateTable},
		{"DROP TABLE nope", sqlerr.UndefinedTable},
		{"CREATE INDEX x ON nope (v)", sqlerr.UndefinedTable},
		{"CREATE TABLEX", sqlerr.SyntaxError},
	} {
		_, err := n.e.CheckDDL(ctx, c.stmt)
		wantCode(t, c.stmt, err, c.code)
	}
	// Nothing was created, and the engine goes on.
	tx := n.begin()
	wantCode(t, "nopk after CheckDDL", execErr(tx, "SELECT a FROM nopk"), sqlerr.UndefinedTable)
	tx.Rollback()
	n.commit("INSERT INTO t VALUES (1, 'a', 1)")
}

// A DDL item that fails at its position (every node fails it alike) gets
// Err and is recorded as failed; the other items apply.
func testApplyFailedDDL(t *testing.T, f Factory) {
	n := open(t, f)
	create := n.ddlWriteSet(tableT)
	wantApplied(t, n.apply(create)...)
	ins := n.capture("INSERT INTO t VALUES (1, 'a', 1)")
	items := n.apply(create, ins)
	wantCode(t, "CREATE TABLE t again", items[0].Err, sqlerr.DuplicateTable)
	wantApplied(t, items[1])
	wantRows(t, n.query("SELECT id FROM t"), row(int64(1)))
	if f, err := n.e.FailedSeqnos(1, n.seqno); err != nil || !reflect.DeepEqual(f, map[uint64]bool{items[0].Seqno: true}) {
		t.Fatalf("FailedSeqnos %v, %v; want %d", f, err, items[0].Seqno)
	}
}
