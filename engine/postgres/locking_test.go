package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/pgparse"
	"certa/result"
	"certa/writeset"
)

// A row that a SELECT nested anywhere in a statement locks for update
// (in a subquery, a CTE, an INSERT's query, a subquery of a subquery) is
// a key of the write set, as a row the top-level SELECT locks is, so that
// certification fails the transaction that locked it if another node
// wrote it meanwhile (write skew, which PostgreSQL prevents with the
// lock). Rows the nested SELECT only read, or skipped (SKIP LOCKED, held
// by another transaction), or share-locked, are not keys.
func TestNestedLockingReads(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE doctors (id int PRIMARY KEY, name text, on_call boolean)",
		"CREATE TABLE jobs (id int PRIMARY KEY, state text)",
	)
	for _, stmt := range []string{
		"INSERT INTO doctors VALUES (1, 'alice', true), (2, 'bob', true), (3, 'carol', false)",
		"INSERT INTO jobs VALUES (1, 'new'), (2, 'new'), (3, 'done')",
	} {
		if err := f.statement(stmt); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		stmt      string
		want, not []writeset.Key
	}{
		{"UPDATE doctors SET on_call = false WHERE id = 2 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) >= 2",
			[]writeset.Key{key("doctors", 1), key("doctors", 2)}, []writeset.Key{key("doctors", 3)}},
		{"UPDATE doctors SET on_call = false WHERE id IN (SELECT id FROM doctors WHERE name = 'bob' FOR UPDATE)",
			[]writeset.Key{key("doctors", 2)}, []writeset.Key{key("doctors", 1)}},
		{"WITH picked AS (SELECT * FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE) UPDATE jobs SET state = 'running' FROM picked WHERE jobs.id = picked.id",
			[]writeset.Key{key("jobs", 1)}, []writeset.Key{key("jobs", 2)}},
		{"SELECT count(*) FROM (SELECT id FROM doctors WHERE id = 3 FOR NO KEY UPDATE) d",
			[]writeset.Key{key("doctors", 3)}, nil},
		{"UPDATE jobs SET state = 'x' WHERE id = 3 AND EXISTS (SELECT 1 FROM doctors WHERE id = 1 FOR SHARE)",
			[]writeset.Key{key("jobs", 3)}, []writeset.Key{key("doctors", 1)}},
		{"UPDATE jobs SET state = 'y' WHERE id = 3 AND EXISTS (SELECT 1 FROM doctors d WHERE d.id IN (SELECT id FROM doctors WHERE id = 2 FOR UPDATE) AND d.id = 2 FOR UPDATE OF d)",
			[]writeset.Key{key("doctors", 2)}, []writeset.Key{key("doctors", 1)}},
		{"INSERT INTO jobs SELECT id + 10, name FROM doctors WHERE id = 1 FOR UPDATE",
			[]writeset.Key{key("doctors", 1), key("jobs", 11)}, []writeset.Key{key("doctors", 2)}},
	}
	for _, c := range cases {
		keys := f.captured(c.stmt)
		for _, k := range c.want {
			if !slices.Contains(keys, k) {
				t.Errorf("%s: keys %q, want %q among them", c.stmt, keys, k)
			}
		}
		for _, k := range c.not {
			if slices.Contains(keys, k) {
				t.Errorf("%s: keys %q hold %q, which it did not lock for update", c.stmt, keys, k)
			}
		}
	}

	// SKIP LOCKED: the row another transaction holds is skipped, and is
	// not a key (it would make the queue's workers conflict).
	ctx := context.Background()
	holder, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Rollback()
	if err := holder.Exec(ctx, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE", result.Discard); err != nil {
		t.Fatal(err)
	}
	keys := f.captured("UPDATE jobs SET state = 'running' WHERE id = (SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)")
	if !slices.Contains(keys, key("jobs", 2)) || slices.Contains(keys, key("jobs", 1)) {
		t.Errorf("SKIP LOCKED past job 1: keys %q, want jobs 2 and not jobs 1", keys)
	}
}

// The rewrite of a statement with nested locking SELECTs answers what
// PostgreSQL answers for the statement itself: the same column names and
// the same rows, in the same order (run on the same server, side by side).
func TestNestedLockingRewriteDifferential(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE doctors (id int PRIMARY KEY, name text, on_call boolean)",
		"CREATE TABLE jobs (id int PRIMARY KEY, state text, doctors int)",
	)
	if err := f.statement("INSERT INTO doctors VALUES (1, 'alice', true), (2, 'bob', true), (3, NULL, false)"); err != nil {
		t.Fatal(err)
	}
	if err := f.statement("INSERT INTO jobs VALUES (1, 'new', 1), (2, 'new', 3), (3, 'done', NULL)"); err != nil {
		t.Fatal(err)
	}
	admin, err := pgconn.Connect(context.Background(), e.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	for _, sql := range []string{
		"SELECT * FROM (SELECT * FROM doctors WHERE on_call ORDER BY id FOR UPDATE) d",
		"SELECT * FROM (SELECT d.*, 1 FROM doctors d ORDER BY name DESC NULLS FIRST FOR UPDATE) d",
		"SELECT (SELECT name FROM doctors WHERE id = 1 FOR UPDATE), (SELECT upper(name) FROM doctors WHERE id = 2 FOR UPDATE), (SELECT d.name::varchar FROM doctors d WHERE id = 3 FOR UPDATE)",
		"WITH x AS (SELECT d.*, j.state FROM doctors d JOIN jobs j ON j.doctors = d.id ORDER BY d.id FOR UPDATE OF d) SELECT * FROM x",
		"WITH x AS (SELECT *, doctors.name AS n FROM doctors, jobs WHERE jobs.doctors = doctors.id FOR NO KEY UPDATE OF jobs) SELECT * FROM x ORDER BY 1, 4",
		"SELECT * FROM (SELECT id, 1, current_date - current_date, coalesce(name, 'n'), CASE WHEN on_call THEN 1 END, name || '!', nullif(id, 2), ARRAY[id], greatest(id, 2), (SELECT 1 AS one) FROM doctors ORDER BY id FOR UPDATE) s",
		"SELECT id FROM jobs WHERE doctors IN (SELECT id FROM doctors WHERE on_call FOR UPDATE) ORDER BY id",
		"SELECT EXISTS (SELECT FROM doctors WHERE id = 2 FOR UPDATE), ARRAY(SELECT id FROM doctors ORDER BY id DESC FOR UPDATE)",
		"SELECT * FROM (SELECT doctors FROM doctors ORDER BY id FOR UPDATE) s",
		`SELECT * FROM (SELECT "D".id AS "Odd Name", "D".* FROM doctors "D" ORDER BY "Odd Name" FOR UPDATE) s`,
	} {
		ls, ok := pgparse.ParseLockingSelect(sql, "certa.row_jsonb", "certa.note_locked", func(string, string) bool { return true })
		if !ok || ls == nil || len(ls.Tables) != 0 || !strings.Contains(ls.SQL, "certa.note_locked") {
			t.Errorf("%s: rewritten %+v, %v", sql, ls, ok)
			continue
		}
		want, got := answer(t, admin, sql), answer(t, admin, ls.SQL)
		if got != want {
			t.Errorf("%s\nrewritten %s\nanswers\n%s\nPostgreSQL answers\n%s", sql, ls.SQL, got, want)
		}
	}
}

// answer runs sql on conn in a transaction it rolls back, and returns its
// column names and rows as text.
func answer(t *testing.T, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	res, err := conn.Exec(context.Background(), "BEGIN ISOLATION LEVEL REPEATABLE READ; "+sql+"; ROLLBACK").ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	r := res[1]
	var b strings.Builder
	for _, fd := range r.FieldDescriptions {
		fmt.Fprintf(&b, "%s(%d) ", fd.Name, fd.DataTypeOID)
	}
	for _, row := range r.Rows {
		b.WriteString("\n")
		for _, v := range row {
			if v == nil {
				b.WriteString("NULL ")
			} else {
				fmt.Fprintf(&b, "%q ", v)
			}
		}
	}
	return b.String()
}

// FOR UPDATE of a view locks its table's rows, as in PostgreSQL (no
// error about the view's tableoid); certa cannot name them, so the
// transaction certifies the tables it locked rows of as read.
func TestLockingThroughView(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	f.mustDDL(
		"CREATE TABLE doctors (id int PRIMARY KEY, name text)",
		"CREATE TABLE jobs (id int PRIMARY KEY, state text)",
		"CREATE VIEW doctors_v AS SELECT * FROM doctors",
	)
	if err := f.statement("INSERT INTO doctors VALUES (1, 'alice'), (2, 'bob')"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, stmt := range []string{
		"SELECT * FROM doctors_v WHERE id = 1 FOR UPDATE",
		"SELECT v.name FROM doctors_v v, jobs j FOR UPDATE OF v",
		"SELECT * FROM public.doctors_v FOR NO KEY UPDATE",
		"UPDATE jobs SET state = 'x' WHERE id IN (SELECT id FROM doctors_v FOR UPDATE)",
	} {
		tx, err := f.s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var rows result.Buffer
		if err := tx.Exec(ctx, stmt, &rows); err != nil {
			t.Errorf("%s: %v", stmt, err)
			tx.Rollback()
			continue
		}
		if strings.HasPrefix(stmt, "SELECT * FROM doctors_v WHERE") && (len(rows.Rows) != 1 || len(rows.Cols) != 2) {
			t.Errorf("%s: %d rows of %d columns, want 1 of 2", stmt, len(rows.Rows), len(rows.Cols))
		}
		if err := tx.Exec(ctx, "INSERT INTO jobs VALUES (9, 'new')", result.Discard); err != nil {
			t.Fatal(err)
		}
		ws, err := tx.WriteSet()
		tx.Rollback()
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if !slices.Contains(ws.ReadTables, "doctors") {
			t.Errorf("%s: tables certified as read %q, want doctors among them", stmt, ws.ReadTables)
		}
	}
}
