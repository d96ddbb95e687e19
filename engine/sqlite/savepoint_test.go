package sqlite

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/sqlerr"
)

// spScenario runs steps in one Tx: "SAVEPOINT", "ROLLBACK TO n",
// "RELEASE n", "!sql" (a statement that must fail), or a statement.
// park runs after every step; it may park the Tx.
func spScenario(t *testing.T, e *testEngine, tx engine.Tx, steps []string, park func()) {
	t.Helper()
	ctx := context.Background()
	for _, s := range steps {
		var err error
		switch {
		case s == "SAVEPOINT":
			err = tx.Savepoint(ctx)
		case strings.HasPrefix(s, "ROLLBACK TO "):
			n, _ := strconv.Atoi(strings.TrimPrefix(s, "ROLLBACK TO "))
			err = tx.RollbackTo(ctx, n)
		case strings.HasPrefix(s, "RELEASE "):
			n, _ := strconv.Atoi(strings.TrimPrefix(s, "RELEASE "))
			err = tx.Release(ctx, n)
		case strings.HasPrefix(s, "!"):
			if _, err := execErr(tx, s[1:]); err == nil {
				t.Fatalf("%s: succeeded, want an error", s[1:])
			}
		default:
			exec(t, tx, s)
		}
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		park()
	}
}

// Savepoints give PostgreSQL's results (the scenarios were run on
// PostgreSQL 15), whether or not the transaction is parked between
// statements, parked to be re-run or with its changes set aside, and
// re-run on a changed table; and its write set holds exactly the changes
// that survive: the SQLite session leaves out rows changed only inside a
// savepoint rolled back later (keys count them).
func TestSavepoints(t *testing.T) {
	scenarios := []struct {
		name  string
		steps []string
		want  string // id=v of rows below 100 after COMMIT
		keys  int    // rows in the write set
	}{
		{"gorm nested", []string{
			"INSERT INTO t VALUES (1, 'a')",
			"SAVEPOINT",
			"INSERT INTO t VALUES (2, 'b')",
			"UPDATE t SET v = 'changed' WHERE id = 1",
			"DELETE FROM t WHERE id = 10",
			"ROLLBACK TO 1",
			"INSERT INTO t VALUES (3, 'c')",
		}, "1=a,3=c,10=x", 2},
		{"error then rollback to", []string{
			"INSERT INTO t VALUES (1, 'a')",
			"SAVEPOINT",
			"INSERT INTO t VALUES (2, 'b')",
			"!INSERT INTO t VALUES (1, 'dup')",
			"ROLLBACK TO 1",
			"INSERT INTO t VALUES (3, 'c')",
		}, "1=a,3=c,10=x", 2},
		{"nested, released, reused", []string{
			"INSERT INTO t VALUES (1, 'a')",
			"SAVEPOINT", // a
			"UPDATE t SET v = 'y' WHERE id = 10",
			"SAVEPOINT", // "A"
			"INSERT INTO t VALUES (2, 'b')",
			"SAVEPOINT", // a again
			"INSERT INTO t VALUES (3, 'c')",
			"ROLLBACK TO 3",
			"RELEASE 2", // releases "A" and the second a
			"ROLLBACK TO 1",
			"INSERT INTO t VALUES (4, 'd')",
			"SAVEPOINT",
			"DELETE FROM t WHERE id = 10",
			"RELEASE 2",
			"SAVEPOINT",
			"UPDATE t SET v = 'e' WHERE id = 4",
			"SAVEPOINT",
			"DELETE FROM t WHERE id = 1",
			"ROLLBACK TO 2",
			"ROLLBACK TO 2",
			"RELEASE 2",
		}, "1=a,4=d", 3},
		{"savepoint first", []string{
			"SAVEPOINT",
			"SAVEPOINT",
			"INSERT INTO t VALUES (1, 'a')",
			"ROLLBACK TO 1",
			"INSERT INTO t VALUES (2, 'b')",
			"RELEASE 1",
		}, "2=b,10=x", 1},
	}
	parks := []struct {
		name   string
		change string // what a commit between steps writes (%d: a counter); "" for none
	}{
		{"not parked", ""},
		{"parked", "INSERT INTO u VALUES (%d)"},
		{"parked, own table changed", "INSERT INTO t VALUES (100 + %d, 'other')"},
	}
	for _, sc := range scenarios {
		for _, p := range parks {
			for _, read := range []bool{false, true} {
				if strings.Contains(p.change, "INTO t") && strings.Contains(sc.name, "error") {
					// A Tx that saw an error cannot be re-run: its
					// client saw something a re-run cannot compare.
					continue
				}
				t.Run(fmt.Sprintf("%s/%s/read=%v", sc.name, p.name, read), func(t *testing.T) {
					e := openTest(t, Config{ApplyGrace: time.Hour})
					e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
					e.ddl("CREATE TABLE u (id INTEGER PRIMARY KEY)")
					e.ddl("CREATE TABLE r (id INTEGER PRIMARY KEY)")
					e.commit("INSERT INTO t VALUES (10, 'x')")
					tx := e.begin()
					if read {
						// Not re-run when parked: its changes are set aside.
						exec(t, tx, "SELECT count(*) FROM r")
					}
					k := 0
					park := func() {
						if p.change != "" {
							k++
							e.apply(e.capture(fmt.Sprintf(p.change, k)))
						}
					}
					spScenario(t, e, tx, sc.steps, park)
					ws, err := tx.WriteSet()
					if err != nil {
						t.Fatal(err)
					}
					tx.Rollback()
					if len(ws.Keys) != sc.keys {
						t.Errorf("write set has %d keys %v, want %d", len(ws.Keys), fmtKeys(ws.Keys), sc.keys)
					}
					e.apply(ws)
					var got []string
					for _, r := range e.query("SELECT id, v FROM t WHERE id < 100 ORDER BY id") {
						got = append(got, fmt.Sprintf("%v=%v", r[0], r[1]))
					}
					if g := strings.Join(got, ","); g != sc.want {
						t.Fatalf("rows %s, want %s", g, sc.want)
					}
				})
			}
		}
	}
}

// Savepoint numbers out of range are refused.
func TestSavepointOutOfRange(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	if err := tx.RollbackTo(context.Background(), 1); sqlerr.Code(err) == "" {
		t.Fatal("RollbackTo without a savepoint succeeded")
	}
}

// A write interrupted inside a savepoint: SQLite may roll the whole
// transaction back. Then ROLLBACK TO must not pretend (40001, and so does
// everything after); else it returns to the savepoint as usual.
func TestSavepointAfterInterruptedWrite(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	tx := e.begin()
	exec(t, tx, "INSERT INTO t VALUES (1)")
	if err := tx.Savepoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	exec(t, tx, "INSERT INTO t VALUES (2)")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := tx.Exec(ctx, "INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 3 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c", &recorder{})
	wantCode(t, err, sqlerr.QueryCanceled)
	if err := tx.RollbackTo(context.Background(), 1); err != nil {
		wantCode(t, err, sqlerr.SerializationFailure)
		if _, err := tx.WriteSet(); sqlerr.Code(err) != sqlerr.SerializationFailure {
			t.Fatalf("WriteSet after the transaction ended: %v", err)
		}
		t.Log("the interrupted write ended the SQLite transaction")
		return
	}
	exec(t, tx, "INSERT INTO t VALUES (4)")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(4)))
}
