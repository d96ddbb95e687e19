package sqlite

import (
	"testing"

	"certa/writeset"
)

func TestParseLocking(t *testing.T) {
	for _, c := range []struct{ sql, stripped, table string }{
		{"SELECT * FROM t WHERE id = 1 FOR UPDATE", "SELECT * FROM t WHERE id = 1", "t"},
		{"select v from \"Acc\" a where id = $1 for no key update nowait;", "select v from \"Acc\" a where id = $1", "Acc"},
		{"SELECT * FROM t JOIN u ON t.id = u.id FOR UPDATE OF u SKIP LOCKED", "SELECT * FROM t JOIN u ON t.id = u.id", "u"},
		{"SELECT * FROM t FOR SHARE", "SELECT * FROM t", ""},
	} {
		req, ok := parseLocking(c.sql)
		if !ok || req.sql != c.stripped || req.table != c.table {
			t.Errorf("%q: got %+v %v, want %q on %q", c.sql, req, ok, c.stripped, c.table)
		}
	}
	for _, sql := range []string{"SELECT 'for update'", "UPDATE t SET v = 1", "SELECT * FROM t"} {
		if _, ok := parseLocking(sql); ok {
			t.Errorf("%q has no locking clause", sql)
		}
	}
}

// Rows read FOR UPDATE are keys of the write set, even without changes;
// the client sees the columns it asked for.
func TestForUpdateKeys(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE acc (id INTEGER PRIMARY KEY, v INTEGER)")
	e.commit("INSERT INTO acc VALUES (1, 10), (2, 20), (3, 30)")
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT v FROM acc a WHERE a.id >= 2 ORDER BY id FOR UPDATE")
	wantRows(t, r.rows, row(int64(20)), row(int64(30)))
	if len(r.cols) != 1 || r.cols[0].Name != "v" {
		t.Fatalf("columns %v", r.cols)
	}
	ws, err := tx.WriteSet()
	if err != nil || ws == nil {
		t.Fatalf("write set %v, %v", ws, err)
	}
	want := []writeset.Key{writeset.EncodeKey("acc", int64(2)), writeset.EncodeKey("acc", int64(3))}
	if len(ws.Keys) != 2 || ws.Keys[0] != want[0] || ws.Keys[1] != want[1] || len(ws.Changes) != 0 {
		t.Fatalf("keys %q, changes %d", ws.Keys, len(ws.Changes))
	}
	r = exec(t, tx, "SELECT v FROM acc WHERE id = 1 FOR SHARE")
	wantRows(t, r.rows, row(int64(10)))
}

// A row locked FOR UPDATE has the key an update of it has, whatever its
// key's type: numeric keys come out of a query as PostgreSQL's text
// ("1.50") and out of a changeset as the double.
func TestForUpdateKeyTypes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE n (id numeric(8,2) PRIMARY KEY, v int)`)
	e.ddl(`CREATE TABLE b (id boolean PRIMARY KEY, v int)`)
	e.ddl(`CREATE TABLE c (a text, id bigint, v int, PRIMARY KEY (a, id))`)
	e.commit("INSERT INTO n VALUES (1.5, 1), (2, 1)", "INSERT INTO b VALUES (true, 1)", "INSERT INTO c VALUES ('x', 7, 1)")
	for _, c := range []struct{ lock, update string }{
		{"SELECT v FROM n WHERE id = 1.5 FOR UPDATE", "UPDATE n SET v = 2 WHERE id = 1.5"},
		{"SELECT v FROM n WHERE id = 2 FOR UPDATE", "UPDATE n SET v = 2 WHERE id = 2"},
		{"SELECT v FROM b WHERE id FOR UPDATE", "UPDATE b SET v = 2 WHERE id"},
		{"SELECT v FROM c WHERE id = 7 FOR UPDATE", "UPDATE c SET v = 2 WHERE id = 7"},
	} {
		locked, updated := e.capture(c.lock), e.capture(c.update)
		if got, want := fmtKeys(locked.Keys), fmtKeys(updated.Keys); len(got) != 1 || got[0] != want[0] {
			t.Errorf("%s: keys %q, %s: %q", c.lock, got, c.update, want)
		}
	}
}

// FOR UPDATE OF may name a table by its alias, as PostgreSQL requires when
// the table has one: the rows of the table behind the alias become keys,
// in a join, in a block and nested in a subquery alike.
func TestForUpdateOfAlias(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE acc (id INTEGER PRIMARY KEY, v INTEGER)")
	e.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO acc VALUES (1, 10), (2, 20)", "INSERT INTO other VALUES (1), (2)")
	for _, c := range []struct {
		sql  string
		want []writeset.Key
	}{
		{"SELECT v FROM acc AS x WHERE id = 1 FOR UPDATE OF x", []writeset.Key{writeset.EncodeKey("acc", int64(1))}},
		{"SELECT x.v FROM other o JOIN acc x ON x.id = o.id WHERE o.id = 2 FOR UPDATE OF x", []writeset.Key{writeset.EncodeKey("acc", int64(2))}},
		{"SELECT * FROM (SELECT v FROM acc x WHERE id = 2 FOR UPDATE OF x) s", []writeset.Key{writeset.EncodeKey("acc", int64(2))}},
	} {
		ws := e.capture(c.sql)
		if got := fmtKeys(ws.Keys); len(got) != len(c.want) || got[0] != fmtKeys(c.want)[0] {
			t.Errorf("%s: keys %q, want %q", c.sql, got, fmtKeys(c.want))
		}
	}
}
