package sqlite

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"certa/engine"
	"certa/writeset"
)

// doctorsEngine is an engine with the on-call doctors of the write-skew
// example: 1 and 2 on call, 3 not.
func doctorsEngine(t *testing.T, cfg Config) *testEngine {
	e := openTest(t, cfg)
	e.ddl("CREATE TABLE doctors (id INTEGER PRIMARY KEY, on_call boolean NOT NULL)")
	e.ddl("CREATE TABLE log (id INTEGER PRIMARY KEY)")
	e.ddl("CREATE TABLE other (id INTEGER PRIMARY KEY)")
	e.commit("INSERT INTO doctors VALUES (1, true), (2, true), (3, false)")
	return e
}

// wantKeys fails the test unless ws's keys are exactly want, in any order.
func wantKeys(t *testing.T, what string, ws *writeset.WriteSet, want ...writeset.Key) {
	t.Helper()
	var got []writeset.Key
	if ws != nil {
		got = slices.Clone(ws.Keys)
	}
	slices.Sort(got)
	got = slices.Compact(got)
	want = slices.Clone(want)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: keys %q, want %q", what, fmtKeys(got), fmtKeys(want))
	}
}

func doctor(id int64) writeset.Key { return writeset.EncodeKey("doctors", id) }

// A SELECT ... FOR UPDATE nested in a statement (a scalar subquery, a CTE,
// IN (...), an INSERT's query) makes the rows it returns keys of the write
// set, as a top-level one does; the statement's own result is unchanged.
func TestNestedForUpdateKeys(t *testing.T) {
	e := doctorsEngine(t, Config{})
	for _, c := range []struct {
		sql  string
		rows int
		want []writeset.Key
	}{
		{"UPDATE doctors SET on_call = false WHERE id = 2 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2",
			0, []writeset.Key{doctor(1), doctor(2)}},
		{"WITH x AS (SELECT id FROM doctors WHERE id = 1 FOR UPDATE) SELECT * FROM x",
			1, []writeset.Key{doctor(1)}},
		{"SELECT * FROM doctors WHERE id IN (SELECT id FROM doctors WHERE on_call FOR NO KEY UPDATE)",
			2, []writeset.Key{doctor(1), doctor(2)}},
		{"INSERT INTO log SELECT id FROM doctors WHERE id = 3 FOR UPDATE",
			0, []writeset.Key{doctor(3), writeset.EncodeKey("log", int64(3))}},
		{"SELECT * FROM doctors d WHERE d.id IN (SELECT o.id FROM doctors o WHERE o.id IN (SELECT id FROM doctors WHERE id = 3 FOR UPDATE) FOR UPDATE)",
			1, []writeset.Key{doctor(3)}},
		// The whole statement in parentheses: its clause is not a
		// trailing one, yet it locks.
		{"(SELECT id FROM doctors WHERE id = 2 FOR UPDATE)",
			1, []writeset.Key{doctor(2)}},
	} {
		tx := e.begin()
		r := exec(t, tx, c.sql)
		if len(r.rows) != c.rows {
			t.Errorf("%s: rows %v, want %d", c.sql, r.rows, c.rows)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		wantKeys(t, c.sql, ws, c.want...)
		tx.Rollback()
	}
}

// Parameters of the statement reach its nested locking SELECT.
func TestNestedForUpdateParameters(t *testing.T) {
	e := doctorsEngine(t, Config{})
	tx := e.begin()
	r := &recorder{}
	sql := "SELECT id FROM doctors WHERE on_call = $1 AND id IN (SELECT id FROM doctors WHERE id >= $2 FOR UPDATE)"
	if err := tx.Exec(context.Background(), sql, r, true, int64(2)); err != nil {
		t.Fatal(err)
	}
	wantRows(t, r.rows, row(int64(2)))
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, sql, ws, doctor(2), doctor(3))
}

// A nested FOR SHARE (or FOR KEY SHARE) is no key, as at the top level.
func TestNestedForShareNoKey(t *testing.T) {
	e := doctorsEngine(t, Config{})
	for _, sql := range []string{
		"SELECT * FROM doctors WHERE id IN (SELECT id FROM doctors FOR SHARE)",
		"WITH x AS (SELECT id FROM doctors FOR KEY SHARE) SELECT * FROM x",
	} {
		tx := e.begin()
		if r := exec(t, tx, sql); len(r.rows) != 3 {
			t.Errorf("%s: rows %v", sql, r.rows)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		wantKeys(t, sql, ws)
		tx.Rollback()
	}
}

// A nested locking SELECT that refers to the statement around it cannot
// run alone: the statement is refused (0A000), never run uncertified. A
// statement that is wrong on its own gets its own error.
func TestNestedForUpdateCorrelatedRefused(t *testing.T) {
	e := doctorsEngine(t, Config{})
	e.ddl("CREATE TABLE shifts (day INTEGER PRIMARY KEY, doctor_id INTEGER)")
	for _, sql := range []string{
		"SELECT * FROM doctors o WHERE EXISTS (SELECT 1 FROM doctors d WHERE d.id = o.id FOR UPDATE)",
		"SELECT * FROM shifts WHERE EXISTS (SELECT 1 FROM doctors WHERE id = doctor_id FOR UPDATE)",
		"UPDATE doctors SET on_call = false WHERE id = (SELECT max(s.doctor_id) FROM shifts s WHERE s.doctor_id = doctors.id FOR UPDATE)",
		"WITH a AS (SELECT 1 AS id) SELECT * FROM doctors WHERE id IN (SELECT d.id FROM doctors d JOIN a ON a.id = d.id FOR UPDATE OF d)",
	} {
		tx := e.begin()
		code, err := execErr(tx, sql)
		if code != "0A000" {
			t.Errorf("%s: %v (%s), want 0A000", sql, err, code)
		}
		tx.Rollback()
	}
	tx := e.begin()
	if code, err := execErr(tx, "SELECT * FROM doctors WHERE id IN (SELECT nope FROM doctors FOR UPDATE)"); code != "42703" {
		t.Errorf("unknown column: %v (%s), want 42703", err, code)
	}
}

// Read leaves a statement with a nested lock to a Tx.
func TestReadRefusesNestedForUpdate(t *testing.T) {
	e := doctorsEngine(t, Config{})
	for _, sql := range []string{
		"SELECT * FROM doctors WHERE id IN (SELECT id FROM doctors FOR UPDATE)",
		"WITH x AS (SELECT id FROM doctors WHERE id = 1 FOR UPDATE) SELECT * FROM x",
		"(SELECT id FROM doctors WHERE id = 2 FOR UPDATE)",
	} {
		r := &recorder{}
		if err := e.Read(context.Background(), sql, r); !errors.Is(err, engine.ErrNotReadOnly) {
			t.Errorf("%q: %v, want ErrNotReadOnly", sql, err)
		}
		if r.cols != nil || r.rows != nil {
			t.Errorf("%q: the writer was told %+v", sql, r)
		}
	}
}

// The keys of nested locks survive a re-run (a parked transaction's
// statements run again), as a top-level FOR UPDATE's do.
func TestNestedForUpdateKeysSurviveRerun(t *testing.T) {
	e := doctorsEngine(t, Config{ApplyGrace: time.Hour})
	tx := e.begin()
	exec(t, tx, "UPDATE doctors SET on_call = false WHERE id = 2 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2")
	e.apply(e.capture("INSERT INTO other VALUES (1)")) // parks tx, to be re-run
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "after a re-run", ws, doctor(1), doctor(2))
	wantRows(t, exec(t, tx, "SELECT id FROM doctors WHERE on_call").rows, row(int64(1)))
	ws, err = tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	wantKeys(t, "after going on", ws, doctor(1), doctor(2))
}

// A statement whose snapshot went stale runs again on the latest state,
// its nested locks too: what they locked on the stale snapshot is no key.
func TestNestedForUpdateMovesForward(t *testing.T) {
	e := doctorsEngine(t, Config{})
	tx := e.begin()
	snap := tx.Snapshot()
	e.apply(e.capture("UPDATE doctors SET on_call = false WHERE id = 1"))
	r := exec(t, tx, "UPDATE doctors SET on_call = false WHERE id = 2 AND (SELECT count(*) FROM (SELECT id FROM doctors WHERE on_call FOR UPDATE) d) = 2")
	if r.tag != "UPDATE 0" {
		t.Fatalf("tag %q: the statement ran on the stale snapshot", r.tag)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Snapshot == snap {
		t.Fatalf("snapshot %d did not move", snap)
	}
	wantKeys(t, "moved forward", ws, doctor(2))
}
