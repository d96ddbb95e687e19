package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/sqlerr"
)

// A local transaction holding the write lock while idle (its client
// thinking) does not block the applier: it is parked at once, and goes on
// with its changes at its next statement when nothing it touched changed.
func TestApplierParksIdleHolder(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.ddl("CREATE TABLE u (id INTEGER PRIMARY KEY, v TEXT)")
	ws := e.capture("INSERT INTO u VALUES (1, 'from the log')")

	tx := e.begin()
	snap := tx.Snapshot()
	exec(t, tx, "INSERT INTO t VALUES (2, 'local')") // takes the write lock, then idles
	e.apply(ws)                                      // does not wait an hour
	wantRows(t, e.query("SELECT id FROM u"), row(int64(1)))
	wantRows(t, e.query("SELECT id FROM t"))

	// The transaction sees its own write and the new state, and can write on.
	wantRows(t, exec(t, tx, "SELECT t.id, u.id FROM t, u").rows, row(int64(2), int64(1)))
	exec(t, tx, "INSERT INTO t VALUES (3, 'more')")
	got, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != 2 || got.Snapshot != snap {
		t.Fatalf("write set %+v, want 2 keys at snapshot %d", got, snap)
	}
	tx.Rollback()
	e.apply(got)
	wantRows(t, e.query("SELECT id FROM t ORDER BY id"), row(int64(2)), row(int64(3)))
}

// A parked transaction whose tables were changed meanwhile goes on when its
// statements, re-run on the new state, return what its client saw. It keeps
// its snapshot for certification: first committer wins as before. Its write
// set taken without a statement in between is the one it had.
func TestParkedHolderRerunsWhenItsTablesChanged(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
	e.commit("INSERT INTO t VALUES (1, 10), (2, 20)")

	tx := e.begin()
	snap := tx.Snapshot()
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1")
	wantRows(t, exec(t, tx, "SELECT n FROM t WHERE id = 1").rows, row(int64(11)))
	e.apply(e.capture("UPDATE t SET n = 25 WHERE id = 2")) // parks tx; changes its table
	e.apply(e.capture("INSERT INTO t VALUES (3, 30)"))
	before, err := tx.WriteSet()
	if err != nil || before.Snapshot != snap || len(before.Keys) != 1 {
		t.Fatalf("write set of a parked transaction: %+v, %v; want 1 key at snapshot %d", before, err, snap)
	}

	wantRows(t, exec(t, tx, "SELECT id, n FROM t ORDER BY id").rows,
		row(int64(1), int64(11)), row(int64(2), int64(25)), row(int64(3), int64(30)))
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Snapshot != snap || len(ws.Keys) != 1 || ws.Keys[0] != before.Keys[0] {
		t.Fatalf("write set %+v, want %+v", ws, before)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, n FROM t ORDER BY id"),
		row(int64(1), int64(11)), row(int64(2), int64(25)), row(int64(3), int64(30)))
}

// A parked transaction fails with 40001 at its next statement when a
// statement it ran would now return something else than what its client saw:
// a row it read changed, or a predicate it wrote through matches other rows.
// It releases the lock at once.
func TestParkedHolderFailsWhenWhatItSawChanged(t *testing.T) {
	for _, tc := range []struct{ name, stmt, change string }{
		{"read", "SELECT n FROM t WHERE id = 1", "UPDATE t SET n = 11 WHERE id = 1"},
		{"returned", "UPDATE t SET n = n + 1 WHERE id = 1 RETURNING n", "UPDATE t SET n = 11 WHERE id = 1"},
		{"phantom", "UPDATE t SET n = 0 WHERE n >= 10", "INSERT INTO t VALUES (3, 30)"},
		{"deleted", "DELETE FROM t WHERE id = 2", "DELETE FROM t WHERE id = 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := openTest(t, Config{ApplyGrace: time.Hour})
			e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
			e.commit("INSERT INTO t VALUES (1, 10), (2, 20)")
			tx := e.begin()
			exec(t, tx, tc.stmt)
			exec(t, tx, "INSERT INTO t VALUES (9, 90)") // holds the lock
			e.apply(e.capture(tc.change))               // parks tx

			code, err := execErr(tx, "SELECT 1")
			if code != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "changed") {
				t.Fatalf("Exec after what it saw changed: %v", err)
			}
			if _, err := tx.WriteSet(); sqlerr.Code(err) != sqlerr.SerializationFailure {
				t.Fatalf("WriteSet after failing: %v", err)
			}
			// It released the lock at once: others can write before its Rollback.
			e.commit("INSERT INTO t VALUES (5, 50)")
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			wantRows(t, e.query("SELECT count(*) FROM t WHERE id = 9"), row(int64(0)))
		})
	}
}

// Two interactive transactions on one node both write (Hermitage G1c): the
// second parks the first, which takes the lock back at its next statement.
func TestLocalWriterParksIdleHolder(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 10 * time.Second})
	e.ddl("CREATE TABLE test (id INTEGER PRIMARY KEY, value INTEGER)")
	e.commit("INSERT INTO test VALUES (1, 10), (2, 20)")
	t1, t2 := e.begin(), e.begin()
	exec(t, t1, "UPDATE test SET value = 11 WHERE id = 1")
	exec(t, t2, "UPDATE test SET value = 22 WHERE id = 2")
	wantRows(t, exec(t, t1, "SELECT id, value FROM test ORDER BY id").rows, row(int64(1), int64(11)), row(int64(2), int64(20)))
	wantRows(t, exec(t, t2, "SELECT id, value FROM test ORDER BY id").rows, row(int64(1), int64(10)), row(int64(2), int64(22)))
	ws1, err1 := t1.WriteSet()
	ws2, err2 := t2.WriteSet()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	t1.Rollback()
	t2.Rollback()
	e.apply(ws1, ws2)
	wantRows(t, e.query("SELECT id, value FROM test ORDER BY id"), row(int64(1), int64(11)), row(int64(2), int64(22)))
}

// A holder in the middle of a long statement is interrupted.
func TestBruteForceAbortRunningStatement(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: 20 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	ws := e.capture("INSERT INTO t VALUES (1, 'from the log')")

	tx := e.begin()
	exec(t, tx, "INSERT INTO t VALUES (2, 'local')")
	started := make(chan struct{}, 1)
	r := &recorder{onRow: func() { started <- struct{}{} }}
	got := make(chan error, 1)
	go func() {
		// One row, then a computation that runs forever unless interrupted.
		got <- tx.Exec(context.Background(), `SELECT 1 UNION ALL
			SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c)`, r)
	}()
	<-started
	e.apply(ws)
	err := <-got
	wantCode(t, err, sqlerr.SerializationFailure)
	wantRows(t, e.query("SELECT id FROM t"), row(int64(1)))
}

// A holder whose client is slow to take rows does not delay the applier:
// Exec lets go of the connection while it waits on the client.
func TestBruteForceAbortWhileClientBlocked(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: 20 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.commit("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
	ws := e.capture("INSERT INTO t VALUES (4, 'from the log')")

	tx := e.begin()
	exec(t, tx, "UPDATE t SET v = 'local' WHERE id = 1")
	inRow, release := make(chan struct{}), make(chan struct{})
	r := &recorder{onRow: func() {
		select {
		case inRow <- struct{}{}:
			<-release
		default:
		}
	}}
	got := make(chan error, 1)
	go func() { got <- tx.Exec(context.Background(), "SELECT * FROM t", r) }()
	<-inRow // the client is now stuck on the first row
	e.apply(ws)
	close(release)
	wantCode(t, <-got, sqlerr.SerializationFailure)
	wantRows(t, e.query("SELECT count(*) FROM t"), row(int64(4)))
}

// startBusyHolder makes tx take the write lock and then run a statement
// that runs until ctx ends; it returns once the statement runs, and a
// channel that gets its result.
func startBusyHolder(t *testing.T, ctx context.Context, tx engine.Tx) <-chan error {
	t.Helper()
	exec(t, tx, "INSERT INTO t VALUES (100, 'holder')")
	started := make(chan struct{}, 1)
	r := &recorder{onRow: func() {
		select {
		case started <- struct{}{}:
		default:
		}
	}}
	got := make(chan error, 1)
	go func() {
		got <- tx.Exec(ctx, `SELECT 1 UNION ALL
			SELECT (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c)`, r)
	}()
	<-started
	return got
}

// A second local writer waits at most LockTimeout for a holder busy in a
// statement, then fails with 40001; it never sees "database is locked".
func TestSecondLocalWriterTimesOut(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 50 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	ctx, cancel := context.WithCancel(context.Background())
	tx1 := e.begin()
	holder := startBusyHolder(t, ctx, tx1)
	tx2 := e.begin()
	start := time.Now()
	code, err := execErr(tx2, "INSERT INTO t VALUES (2, 'b')")
	d := time.Since(start)
	if code != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "write lock") {
		t.Fatalf("second writer: %v", err)
	}
	if d < 50*time.Millisecond || d > 5*time.Second {
		t.Fatalf("second writer waited %v, want about 50ms", d)
	}
	cancel()
	wantCode(t, <-holder, sqlerr.QueryCanceled)
	// tx1 is unaffected; once it ends, others can write.
	exec(t, tx1, "INSERT INTO t VALUES (3, 'c')")
	tx1.Rollback()
	tx3 := e.begin()
	exec(t, tx3, "INSERT INTO t VALUES (2, 'b')")
}

// CheckDDL is a local writer too: it parks an idle holder and waits for a
// busy one at most LockTimeout.
func TestCheckDDLTakesWriteLock(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 50 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	idle := e.begin()
	exec(t, idle, "INSERT INTO t VALUES (1, 'a')")
	if _, err := e.CheckDDL(context.Background(), "CREATE INDEX t_v ON t (v)"); err != nil {
		t.Fatal(err)
	}
	exec(t, idle, "INSERT INTO t VALUES (2, 'b')") // unaffected: CheckDDL changed nothing
	idle.Rollback()

	ctx, cancel := context.WithCancel(context.Background())
	busy := e.begin()
	holder := startBusyHolder(t, ctx, busy)
	_, err := e.CheckDDL(context.Background(), "CREATE INDEX t_v ON t (v)")
	wantCode(t, err, sqlerr.SerializationFailure)
	cancel()
	<-holder
}

// The waiting writer gets the lock as soon as the holder ends.
func TestSecondLocalWriterProceedsAfterHolderEnds(t *testing.T) {
	e := openTest(t, Config{LockTimeout: time.Minute})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	tx1 := e.begin()
	exec(t, tx1, "INSERT INTO t VALUES (1, 'a')")
	tx2 := e.begin()
	got := make(chan error, 1)
	go func() { _, err := execErr(tx2, "INSERT INTO t VALUES (2, 'b')"); got <- err }()
	tx1.Rollback()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// Reads never wait for the write lock.
func TestReadsDoNotWaitForWriter(t *testing.T) {
	e := openTest(t, Config{LockTimeout: time.Minute, ApplyGrace: time.Minute})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	e.commit("INSERT INTO t VALUES (1, 'a')")
	w := e.begin()
	exec(t, w, "UPDATE t SET v = 'changed' WHERE id = 1")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Rollback()
	rec := &recorder{}
	if err := r.Exec(ctx, "SELECT v FROM t", rec); err != nil {
		t.Fatal(err)
	}
	wantRows(t, rec.rows, row("a"))
	// The writer sees its own change.
	wantRows(t, exec(t, w, "SELECT v FROM t").rows, row("changed"))
}

// A transaction whose snapshot went stale before its first write moves
// forward when nothing it read changed since.
func TestMoveForwardWhenReadsUnchanged(t *testing.T) {
	e := openTest(t, Config{})
	for _, s := range []string{"a", "b", "c"} {
		e.ddl("CREATE TABLE " + s + " (id INTEGER PRIMARY KEY, v TEXT)")
	}
	e.commit("INSERT INTO a VALUES (1, 'a1')")
	tx := e.begin()
	old := tx.Snapshot()
	wantRows(t, exec(t, tx, "SELECT v FROM a").rows, row("a1"))
	e.commit("INSERT INTO b VALUES (1, 'b1')") // a table tx did not read
	r := exec(t, tx, "INSERT INTO c SELECT id, v FROM b")
	if r.tag != "INSERT 0 1" {
		t.Fatalf("tag %q: the statement did not see b's new row", r.tag)
	}
	if tx.Snapshot() != e.seqno || tx.Snapshot() == old {
		t.Fatalf("snapshot %d, want %d", tx.Snapshot(), e.seqno)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Snapshot != e.seqno {
		t.Fatalf("write set snapshot %d, want %d", ws.Snapshot, e.seqno)
	}
}

// When a table it read did change, the statements it ran are re-run on the
// new snapshot: if they return what the client saw, the snapshot moves.
// (These tests write with INSERT ... SELECT, which is not a key write: see
// keywrite_test.go for those.)
func TestMoveForwardRevalidatesReads(t *testing.T) {
	e := openTest(t, Config{})
	for _, s := range []string{"a", "c"} {
		e.ddl("CREATE TABLE " + s + " (id INTEGER PRIMARY KEY, v TEXT)")
	}
	e.commit("INSERT INTO a VALUES (1, 'a1'), (2, 'a2')")
	tx := e.begin()
	wantRows(t, exec(t, tx, "SELECT v FROM a WHERE id = 1").rows, row("a1"))
	exec(t, tx, "SELECT count(*) FROM a")
	e.commit("UPDATE a SET v = 'changed' WHERE id = 2") // a changed, not what tx saw
	exec(t, tx, "INSERT INTO c SELECT 1, 'x'")
	if tx.Snapshot() != e.seqno {
		t.Fatalf("snapshot %d, want %d", tx.Snapshot(), e.seqno)
	}
}

// ...and fails with 40001 when what it read changed.
func TestMoveForwardRefusedWhenReadsChanged(t *testing.T) {
	for _, tt := range []struct {
		name, read, change string
	}{
		{"row changed", "SELECT v FROM a WHERE id = 1", "UPDATE a SET v = 'changed' WHERE id = 1"},
		{"count changed", "SELECT count(*) FROM a", "INSERT INTO a VALUES (3, 'a3')"},
		// A result that differs on every run cannot be revalidated.
		{"nondeterministic", "SELECT v, random() FROM a WHERE id = 1", "UPDATE a SET v = 'changed' WHERE id = 2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := openTest(t, Config{})
			for _, s := range []string{"a", "c"} {
				e.ddl("CREATE TABLE " + s + " (id INTEGER PRIMARY KEY, v TEXT)")
			}
			e.commit("INSERT INTO a VALUES (1, 'a1'), (2, 'a2')")
			tx := e.begin()
			exec(t, tx, tt.read)
			e.commit(tt.change)
			code, err := execErr(tx, "INSERT INTO c SELECT 1, 'x'")
			if code != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "read was changed") {
				t.Fatalf("got %v", err)
			}
			// The transaction stays failed and gave the lock up at once.
			if code, _ := execErr(tx, "SELECT 1"); code != sqlerr.SerializationFailure {
				t.Fatalf("next statement: %q", code)
			}
			e.lock.mu.Lock()
			held := e.lock.held
			e.lock.mu.Unlock()
			if held {
				t.Fatal("write lock still held")
			}
		})
	}
}

// A statement whose result cannot be compared (it failed) rules out
// revalidation; a history that does not reach back far enough counts as
// changed.
func TestMoveForwardWithoutRevalidation(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE a (id INTEGER PRIMARY KEY)")
	e.ddl("CREATE TABLE c (id INTEGER PRIMARY KEY)")
	tx := e.begin()
	e.commit("INSERT INTO a VALUES (1)")
	exec(t, tx, "INSERT INTO c VALUES (1)") // read nothing: moves forward
	tx.Rollback()

	tx = e.begin()
	exec(t, tx, "SELECT * FROM a WHERE id = 99")
	execErr(tx, "SELECT nope FROM a")
	e.commit("INSERT INTO a VALUES (2)")
	if code, _ := execErr(tx, "INSERT INTO c SELECT 2"); code != sqlerr.SerializationFailure {
		t.Fatalf("got %q, want 40001", code)
	}
}

// Canceling ctx stops a running statement with 57014 and leaves the
// transaction and its connection usable.
func TestExecContextCanceled(t *testing.T) {
	e := openTest(t, Config{MaxConns: 1})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	tx := e.begin()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err := tx.Exec(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c", &recorder{})
	wantCode(t, err, sqlerr.QueryCanceled)
	exec(t, tx, "INSERT INTO t VALUES (1)")
	tx.Rollback()
	// The single pooled connection is fine for the next transaction.
	e.commit("INSERT INTO t VALUES (2)")
	wantRows(t, e.query("SELECT id FROM t"), row(int64(2)))
}

// Begin waits for a free connection until ctx ends.
func TestBeginWaitsForConnection(t *testing.T) {
	e := openTest(t, Config{MaxConns: 1})
	tx := e.begin()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := e.Begin(ctx); sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("Begin with no free connection: %v", err)
	}
	got := make(chan error, 1)
	go func() {
		tx2, err := e.Begin(context.Background())
		if err == nil {
			tx2.Rollback()
		}
		got <- err
	}()
	tx.Rollback()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

func TestTxAfterRollbackAndClose(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	tx.Rollback()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if code, _ := execErr(tx, "SELECT 1"); code == "" {
		t.Fatal("Exec after Rollback succeeded")
	}
	tx = e.begin()
	e.Close()
	if code, _ := execErr(tx, "SELECT 1"); code != sqlerr.AdminShutdown {
		t.Fatalf("Exec after Close: %q", code)
	}
	tx.Rollback()
	if _, err := e.Begin(context.Background()); err == nil {
		t.Fatal("Begin after Close succeeded")
	}
	if err := e.Apply(context.Background(), []engine.ApplyItem{}, 1); err == nil {
		t.Fatal("Apply after Close succeeded")
	}
}

// A transaction that only wrote parks without setting its changes aside and
// is re-run when it goes on, or when its write set is taken.
func TestWriteOnlyHolderIsReRun(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
	e.commit("INSERT INTO t VALUES (1, 10), (2, 20)")

	tx := e.begin()
	snap := tx.Snapshot()
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1")
	e.apply(e.capture("UPDATE t SET n = 25 WHERE id = 2")) // parks tx
	exec(t, tx, "INSERT INTO t VALUES (3, 30)")
	e.apply(e.capture("INSERT INTO t VALUES (4, 40)")) // parks tx again
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if ws.Snapshot != snap || len(ws.Keys) != 2 {
		t.Fatalf("write set %+v, want 2 keys at snapshot %d", ws, snap)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, n FROM t ORDER BY id"),
		row(int64(1), int64(11)), row(int64(2), int64(25)), row(int64(3), int64(30)), row(int64(4), int64(40)))
}

// A parked transaction keeps its session (rollbackLocked): its write set
// still holds every row it wrote, including one a commit changed while it
// was parked (certification refuses it for that row), and a schema change
// while it was parked gets it a session that knows the new layout.
func TestParkedHolderKeepsItsSession(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: time.Hour})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER)")
	e.commit("INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")

	tx := e.begin()
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 1")
	e.apply(e.capture("UPDATE t SET n = 99 WHERE id = 1")) // parks tx; changes its row
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 2")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Keys) != 2 {
		t.Fatalf("write set keys %q, want rows 1 and 2", ws.Keys)
	}
	tx.Rollback()

	tx = e.begin()
	exec(t, tx, "UPDATE t SET n = n + 1 WHERE id = 2")
	e.ddl("ALTER TABLE t ADD COLUMN c TEXT DEFAULT 'x'") // parks tx
	exec(t, tx, "UPDATE t SET n = n + 1, c = 'y' WHERE id = 3")
	if ws, err = tx.WriteSet(); err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, n, c FROM t ORDER BY id"),
		row(int64(1), int64(99), "x"), row(int64(2), int64(21), "x"), row(int64(3), int64(31), "y"))
}

// A write interrupted inside a transaction can make SQLite roll the whole
// transaction back. A later statement of the Tx must then fail, not run
// outside any transaction: SQLite would commit it at once, on this node
// alone.
func TestNoWriteAfterTransactionEnded(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY)")
	ended := 0
	for i := range 20 {
		tx := e.begin()
		exec(t, tx, "INSERT INTO t VALUES (1)")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		err := tx.Exec(ctx, "INSERT INTO t WITH RECURSIVE c(x) AS (SELECT 10 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c", &recorder{})
		cancel()
		wantCode(t, err, sqlerr.QueryCanceled)
		if i%2 == 0 {
			if err := tx.Exec(context.Background(), "INSERT INTO t VALUES (2)", &recorder{}); err != nil {
				wantCode(t, err, sqlerr.SerializationFailure)
				ended++
			}
		} else if ws, err := tx.WriteSet(); err != nil {
			// Nor may its write set leave out the row the client was
			// told was inserted.
			wantCode(t, err, sqlerr.SerializationFailure)
			ended++
		} else if ws == nil || len(ws.Keys) == 0 {
			t.Fatalf("write set without the inserted row: %+v", ws)
		}
		tx.Rollback()
		wantRows(t, e.query("SELECT id FROM t"))
	}
	t.Logf("the interrupted write ended the SQLite transaction %d times of 20", ended)
}
