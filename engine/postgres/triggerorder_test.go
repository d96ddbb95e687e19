package postgres

import (
	"context"
	"slices"
	"testing"
)

// A client's triggers that change more rows, of their own table or
// another, while the statement that fired them is still running: the
// write set must apply on another node to the rows the origin has. Each
// trigger's name sorts as a client's would ("a_...", before certa's old
// name certa_capture); AFTER triggers fire in name order.
func TestCaptureOrderWithClientTriggers(t *testing.T) {
	o, r := startServer(t)
	origin, originAdmin, replica := o.client, o.admin, r.applier
	schema := []string{
		`CREATE TABLE t (id int PRIMARY KEY, v int, w int)`,
		`CREATE TABLE src (id int PRIMARY KEY, ref int)`,
		`CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree ON UPDATE CASCADE ON DELETE CASCADE, hits int DEFAULT 0)`,
		// AFTER INSERT: count the row's own insert in w.
		`CREATE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE t SET w = coalesce(w, 0) + 1 WHERE id = NEW.id; RETURN NULL; END $$`,
		`CREATE TRIGGER a_bump AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION bump()`,
		// AFTER UPDATE OF v: count the change in w (an update of w alone
		// does not fire it again).
		`CREATE FUNCTION touch() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE t SET w = coalesce(w, 0) + 10 WHERE id = NEW.id; RETURN NULL; END $$`,
		`CREATE TRIGGER a_touch AFTER UPDATE OF v ON t FOR EACH ROW EXECUTE FUNCTION touch()`,
		// Another table's trigger changes t.
		`CREATE FUNCTION follow() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE t SET v = v + 100 WHERE id = NEW.ref; RETURN NULL; END $$`,
		`CREATE TRIGGER a_follow AFTER INSERT ON src FOR EACH ROW EXECUTE FUNCTION follow()`,
		// A child row counts its parent's visits.
		`CREATE FUNCTION visit() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE tree SET hits = hits + 1 WHERE id = NEW.parent; RETURN NULL; END $$`,
		`CREATE TRIGGER a_visit AFTER INSERT ON tree FOR EACH ROW EXECUTE FUNCTION visit()`,
		// A row's trigger changes the next row of the same statement,
		// whose own change is not yet recorded: its capture trigger fires
		// after this one.
		`CREATE TABLE chain (id int PRIMARY KEY, next int, seen int DEFAULT 0, v int DEFAULT 0)`,
		`CREATE FUNCTION pass() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE chain SET seen = seen + 1 WHERE id = NEW.next; RETURN NULL; END $$`,
		`CREATE TRIGGER a_pass AFTER INSERT OR UPDATE OF v ON chain FOR EACH ROW EXECUTE FUNCTION pass()`,
		`CREATE FUNCTION drop_next() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN DELETE FROM chain WHERE id = NEW.next; RETURN NULL; END $$`,
		`CREATE TRIGGER b_drop AFTER INSERT ON chain FOR EACH ROW WHEN (NEW.v < 0) EXECUTE FUNCTION drop_next()`,
		// A client's own DELETE and INSERT of a key, or a key moved onto a
		// deleted one, keep their order: a unique column needs it.
		`CREATE TABLE ren (id int PRIMARY KEY, name text UNIQUE)`,
		// The same without a key: rows are a multiset's.
		`CREATE TABLE bag (id int, next int, seen int DEFAULT 0, v int DEFAULT 0)`,
		`CREATE FUNCTION pass_bag() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE bag SET seen = seen + 1 WHERE id = NEW.next; RETURN NULL; END $$`,
		`CREATE TRIGGER a_pass AFTER INSERT OR UPDATE OF v ON bag FOR EACH ROW EXECUTE FUNCTION pass_bag()`,
		// ... whose trigger also writes another table in between.
		`CREATE TABLE bag2 (id int, next int, seen int DEFAULT 0)`,
		`CREATE TABLE log (n serial PRIMARY KEY, what text)`,
		`CREATE FUNCTION pass_log() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN UPDATE bag2 SET seen = seen + 1 WHERE id = NEW.next; INSERT INTO log (what) VALUES ('passed ' || NEW.id); RETURN NULL; END $$`,
		`CREATE TRIGGER a_pass AFTER INSERT ON bag2 FOR EACH ROW EXECUTE FUNCTION pass_log()`,
	}
	for _, ddl := range schema {
		mustExec(t, originAdmin, asClient(ddl))
		mustExec(t, replica, asClient(ddl))
	}
	ctx := context.Background()
	var ts, tsReplica tables
	for _, stmts := range [][]string{
		{`INSERT INTO t VALUES (1, 1, 0)`},
		{`INSERT INTO t VALUES (2, 2, 0), (3, 3, 0)`},
		{`UPDATE t SET v = v + 1 WHERE id = 1`},
		{`UPDATE t SET v = v + 1`},
		{`INSERT INTO t VALUES (4, 4, 0)`, `UPDATE t SET v = 0 WHERE id = 4`},
		{`INSERT INTO src VALUES (1, 1), (2, 2)`},
		{`INSERT INTO tree (id, parent) VALUES (1, NULL), (2, 1), (3, 1)`},
		{`INSERT INTO tree (id, parent) VALUES (4, 2)`, `UPDATE tree SET id = 10 WHERE id = 1`},
		{`DELETE FROM tree WHERE id = 10`},
		{`INSERT INTO chain (id, next) VALUES (1, 2), (2, 3), (3, NULL)`},
		{`UPDATE chain SET v = v + 1`},
		{`INSERT INTO chain (id, next, v) VALUES (10, 11, -1), (11, NULL, 0)`},
		{`INSERT INTO chain (id, next, v) VALUES (20, 21, -1), (21, NULL, 0)`, `INSERT INTO chain (id, next) VALUES (21, NULL)`},
		{`INSERT INTO bag (id, next) VALUES (1, 2), (2, 3), (3, NULL), (3, NULL)`},
		{`UPDATE bag SET v = v + 1`},
		{`INSERT INTO bag2 (id, next) VALUES (1, 2), (2, 3), (3, NULL)`},
		{`INSERT INTO ren VALUES (1, 'a'), (2, 'b'), (3, 'c')`},
		{`DELETE FROM ren WHERE id = 2`, `UPDATE ren SET id = 2 WHERE id = 1`},
		{`DELETE FROM ren WHERE id = 3`, `UPDATE ren SET name = 'c' WHERE id = 2`, `INSERT INTO ren VALUES (3, 'a')`},
	} {
		mustExec(t, origin, "BEGIN ISOLATION LEVEL REPEATABLE READ")
		for _, s := range stmts {
			mustExec(t, origin, s)
		}
		mustExec(t, origin, "SET CONSTRAINTS ALL IMMEDIATE")
		cap, err := capture(ctx, origin, &ts)
		if err != nil {
			t.Fatalf("%q: %v", stmts, err)
		}
		mustExec(t, origin, "COMMIT")
		decoded, err := decodeRows(appendRows(nil, cap.rows))
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, replica, "BEGIN; SET LOCAL session_replication_role = replica")
		if err := applyRows(ctx, replica, &tsReplica, decoded, "", nil); err != nil {
			t.Fatalf("%q: %v", stmts, err)
		}
		mustExec(t, replica, "COMMIT")
		for _, table := range []string{"t", "src", "tree", "chain", "bag", "bag2", "log", "ren"} {
			if o, r := rowsOf(t, origin, table), rowsOf(t, replica, table); !slices.Equal(o, r) {
				t.Fatalf("after %q, %s differs:\norigin  %q\nreplica %q", stmts, table, o, r)
			}
		}
	}
}
