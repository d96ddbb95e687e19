package sqlite

import (
	"context"
	"slices"
	"testing"
	"time"

	"certa/sqlerr"
	"certa/writeset"
)

// rowidTable makes h, a table without a primary key, on each engine.
func rowidTable(engines ...*testEngine) {
	for _, e := range engines {
		e.ddl("CREATE TABLE h (v text, n integer UNIQUE)")
	}
}

// rowsByRowid returns h's rows with their rowids.
func rowsByRowid(e *testEngine) [][]any {
	var out [][]any
	for _, r := range e.query("SELECT rowid, v FROM h ORDER BY rowid") {
		out = append(out, []any{r[0], r[1]})
	}
	return out
}

func wantSameRows(t *testing.T, a, b *testEngine) {
	t.Helper()
	ra, rb := rowsByRowid(a), rowsByRowid(b)
	if !slicesEqual(ra, rb) {
		t.Fatalf("rows differ:\n%v\n%v", ra, rb)
	}
	sa, err := a.Checksums(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Checksums(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sa.Tables, sb.Tables) {
		t.Fatalf("checksums differ:\n%v\n%v", sa.Tables, sb.Tables)
	}
}

func slicesEqual(a, b [][]any) bool {
	return slices.EqualFunc(a, b, func(x, y []any) bool { return slices.Equal(x, y) })
}

// Rows of a table without a primary key replicate: an INSERT has no key
// and gets the applying node's next rowid, whatever rowid it had on its
// origin; an UPDATE or DELETE is keyed by the rowid, the same on every node.
func TestRowidTableReplicates(t *testing.T) {
	origin, a, b := openTest(t, Config{}), openTest(t, Config{}), openTest(t, Config{})
	rowidTable(origin, a, b)
	// The origin's own rowids run ahead of the others'.
	origin.commit("INSERT INTO h VALUES ('origin only', 100)")
	ws := origin.capture("INSERT INTO h VALUES ('x', 1), ('y', 2)")
	if len(ws.Keys) != 0 || !slices.Equal(ws.Tables, []string{"h"}) {
		t.Fatalf("insert: keys %v tables %v, want no key, table h", fmtKeys(ws.Keys), ws.Tables)
	}
	a.apply(ws)
	b.apply(ws)
	wantSameRows(t, a, b)
	if got := rowsByRowid(a); !slicesEqual(got, [][]any{{int64(1), "x"}, {int64(2), "y"}}) {
		t.Fatalf("rows %v, want rowids 1 and 2", got)
	}

	up := a.capture("UPDATE h SET v = 'x2' WHERE n = 1")
	del := a.capture("DELETE FROM h WHERE n = 2")
	for _, w := range []*writeset.WriteSet{up, del} {
		if len(w.Keys) != 1 {
			t.Fatalf("keys %v, want one", fmtKeys(w.Keys))
		}
	}
	if want := writeset.EncodeKey("h", int64(1)); up.Keys[0] != want {
		t.Fatalf("update key %v, want (h, rowid 1)", fmtKeys(up.Keys))
	}
	a.apply(up, del)
	b.apply(up, del)
	wantSameRows(t, a, b)
	wantRows(t, a.query("SELECT v FROM h"), row("x2"))
	// A new row after the largest was deleted takes the same rowid on both.
	ins := origin.capture("INSERT INTO h VALUES ('z', 3)")
	a.apply(ins)
	b.apply(ins)
	wantSameRows(t, a, b)
}

// Two transactions that insert into the same table from the same snapshot
// both commit (their rows have no keys), and every node gives the rows
// the same rowids. Two that update the same row conflict.
func TestRowidConcurrentWrites(t *testing.T) {
	origin, a := openTest(t, Config{}), openTest(t, Config{})
	rowidTable(origin, a)
	w1 := origin.capture("INSERT INTO h VALUES ('one', 1)")
	w2 := origin.capture("INSERT INTO h VALUES ('two', 2)")
	if len(w1.Keys)+len(w2.Keys) != 0 {
		t.Fatalf("insert keys %v %v", fmtKeys(w1.Keys), fmtKeys(w2.Keys))
	}
	origin.apply(w1, w2)
	a.apply(w1, w2)
	wantSameRows(t, origin, a)

	u1 := origin.capture("UPDATE h SET v = 'uno' WHERE n = 1")
	u2 := origin.capture("UPDATE h SET v = 'eins' WHERE n = 1")
	if len(u1.Keys) != 1 || !slices.Equal(u1.Keys, u2.Keys) {
		t.Fatalf("updates of one row: keys %v and %v, want the same one", fmtKeys(u1.Keys), fmtKeys(u2.Keys))
	}
	// An UPDATE that leaves the row as it was, and FOR UPDATE, certify
	// the row too.
	same := origin.capture("UPDATE h SET v = v WHERE n = 1")
	tx := origin.begin()
	exec(t, tx, "SELECT v FROM h WHERE n = 1 FOR UPDATE")
	exec(t, tx, "INSERT INTO h VALUES ('three', 3)")
	locked, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	for _, w := range []*writeset.WriteSet{same, locked} {
		if !slices.Contains(w.Keys, u1.Keys[0]) {
			t.Fatalf("keys %v lack the row's %v", fmtKeys(w.Keys), fmtKeys(u1.Keys))
		}
	}
}

// A transaction that inserted into such a table and was parked does not
// take for its own a row that another transaction's commit put at the
// rowid it had used (the session it had would report that row as its
// insert). Both ways of parking: re-run, and changes set aside.
func TestRowidParkedInsert(t *testing.T) {
	for _, read := range []bool{false, true} {
		e, replica := openTest(t, Config{ApplyGrace: time.Hour}), openTest(t, Config{})
		rowidTable(e, replica)
		e.ddl("CREATE TABLE u (id integer PRIMARY KEY)")
		replica.ddl("CREATE TABLE u (id integer PRIMARY KEY)")
		tx := e.begin()
		if read {
			exec(t, tx, "SELECT count(*) FROM u") // parks by setting its changes aside
		}
		exec(t, tx, "INSERT INTO h VALUES ('mine', 1)") // rowid 1 here
		other := e.capture("INSERT INTO h VALUES ('theirs', 2)")
		e.apply(other) // parks tx; 'theirs' takes rowid 1
		replica.apply(other)
		exec(t, tx, "INSERT INTO h VALUES ('mine too', 3)")
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		tx.Rollback()
		e.apply(ws)
		replica.apply(ws)
		wantRows(t, e.query("SELECT v FROM h ORDER BY rowid"), row("theirs"), row("mine"), row("mine too"))
		wantSameRows(t, e, replica)
	}
}

// In a savepoint rolled back, the rows inserted after it are not written.
func TestRowidSavepoint(t *testing.T) {
	e := openTest(t, Config{})
	rowidTable(e)
	tx := e.begin()
	exec(t, tx, "INSERT INTO h VALUES ('kept', 1)")
	if err := tx.Savepoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO h VALUES ('dropped', 2)")
	if err := tx.RollbackTo(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO h VALUES ('later', 3)")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT v FROM h ORDER BY rowid"), row("kept"), row("later"))
}

// When a batch falls back to applying item by item, such a table's rows
// still go in without their origin's rowids, so that a node that applied
// them in the fast path agrees; a constraint they break is the item's
// error.
func TestRowidSlowPath(t *testing.T) {
	origin, a, b := openTest(t, Config{}), openTest(t, Config{}), openTest(t, Config{})
	rowidTable(origin, a, b)
	origin.commit("INSERT INTO h VALUES ('origin only', 100)")
	ins := origin.capture("INSERT INTO h VALUES ('x', 1)")
	dup := origin.capture("INSERT INTO h VALUES ('dup', 1)") // n is UNIQUE
	after := origin.capture("INSERT INTO h VALUES ('y', 2)")

	items := a.apply(ins, dup, after) // the fast path fails: item by item
	if sqlerr.Code(items[1].Err) != sqlerr.UniqueViolation || items[0].Err != nil || items[2].Err != nil {
		t.Fatalf("item errors %v, %v, %v; want the second 23505", items[0].Err, items[1].Err, items[2].Err)
	}
	b.apply(ins)
	b.apply(dup)
	b.apply(after)
	wantSameRows(t, a, b)
	wantRows(t, a.query("SELECT rowid, v FROM h ORDER BY rowid"), row(int64(1), "x"), row(int64(2), "y"))
}

// Foreign keys from such a table: a child row certifies its parent's key,
// and a cascade from the parent deletes the children by rowid everywhere.
func TestRowidForeignKeys(t *testing.T) {
	origin, a := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{origin, a} {
		e.ddl("CREATE TABLE p (id integer PRIMARY KEY)")
		e.ddl("CREATE TABLE c (p_id integer REFERENCES p ON DELETE CASCADE, v text)")
	}
	both := func(ws *writeset.WriteSet) {
		for _, e := range []*testEngine{origin, a} {
			if items := e.apply(ws); items[0].Err != nil {
				t.Fatal(items[0].Err)
			}
		}
	}
	both(origin.capture("INSERT INTO p VALUES (1), (2)"))
	ws := origin.capture("INSERT INTO c VALUES (1, 'a'), (1, 'b'), (2, 'c')")
	if want := writeset.EncodeKey("p", int64(1)); !slices.Contains(ws.SharedKeys, want) {
		t.Fatalf("child insert keys %v lack the parent's", fmtKeys(ws.Keys))
	}
	both(ws)
	del := origin.capture("DELETE FROM p WHERE id = 1")
	for _, rowid := range []int64{1, 2} {
		if !slices.Contains(del.Keys, writeset.EncodeKey("c", rowid)) {
			t.Fatalf("cascade keys %v lack child rowid %d", fmtKeys(del.Keys), rowid)
		}
	}
	both(del)
	for _, e := range []*testEngine{origin, a} {
		wantRows(t, e.query("SELECT rowid, p_id, v FROM c"), row(int64(3), int64(2), "c"))
	}
}

// A table without a primary key with a column named _rowid_, which hides
// its rowid from SQLite's session, is refused (TestExecRefusals writes to
// one made before); a column named rowid or oid hides nothing.
func TestRowidHidden(t *testing.T) {
	e := openTest(t, Config{})
	_, err := e.CheckDDL(context.Background(), "CREATE TABLE hid (v text, _ROWID_ text)")
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("create: %v", err)
	}
	e.ddl("CREATE TABLE ok (rowid text, oid text)")
	e.commit("INSERT INTO ok VALUES ('a', 'b')")
	e.commit("UPDATE ok SET rowid = 'c'")
	wantRows(t, e.query("SELECT _rowid_, rowid, oid FROM ok"), row(int64(1), "c", "b"))
}

// A schema change that copies rows into a table without a primary key
// (CREATE TABLE AS) runs on every node alike.
func TestRowidCreateTableAs(t *testing.T) {
	origin, a := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{origin, a} {
		e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	}
	ws := origin.capture("INSERT INTO t VALUES (2, 'b'), (1, 'a')")
	for _, e := range []*testEngine{origin, a} {
		e.apply(ws)
		e.ddl("CREATE TABLE h AS SELECT v, id AS n FROM t")
	}
	wantSameRows(t, origin, a)
	wantRows(t, a.query("SELECT rowid, v FROM h ORDER BY rowid"), row(int64(1), "a"), row(int64(2), "b"))
}
