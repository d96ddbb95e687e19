package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/sqlerr"
)

// A local transaction holding the write lock that blocks the applier is
// brute-force aborted after the grace: the applier's batch lands and the
// transaction's next Exec and WriteSet fail with 40001.
func TestBruteForceAbortIdleHolder(t *testing.T) {
	e := openTest(t, Config{ApplyGrace: 20 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	ws := e.capture("INSERT INTO t VALUES (1, 'from the log')")

	tx := e.begin()
	exec(t, tx, "INSERT INTO t VALUES (2, 'local')") // takes the write lock, then idles
	start := time.Now()
	e.apply(ws)
	t.Logf("apply waited %v", time.Since(start))
	wantRows(t, e.query("SELECT id FROM t"), row(int64(1)))

	code, err := execErr(tx, "SELECT 1")
	if code != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "aborted") {
		t.Fatalf("Exec after abort: %v", err)
	}
	if _, err := tx.WriteSet(); sqlerr.Code(err) != sqlerr.SerializationFailure {
		t.Fatalf("WriteSet after abort: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The connection went back to the pool in a clean state.
	e.commit("INSERT INTO t VALUES (3, 'after')")
	wantRows(t, e.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(3)))
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

// A second local writer waits at most LockTimeout for the lock, then fails
// with 40001; it never sees "database is locked".
func TestSecondLocalWriterTimesOut(t *testing.T) {
	e := openTest(t, Config{LockTimeout: 50 * time.Millisecond})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
	tx1 := e.begin()
	exec(t, tx1, "INSERT INTO t VALUES (1, 'a')")
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
	// tx1 is unaffected; once it ends, others can write.
	exec(t, tx1, "INSERT INTO t VALUES (3, 'c')")
	tx1.Rollback()
	tx3 := e.begin()
	exec(t, tx3, "INSERT INTO t VALUES (2, 'b')")
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

// ...and fails with 40001 when a table it read changed.
func TestMoveForwardRefusedWhenReadsChanged(t *testing.T) {
	e := openTest(t, Config{})
	for _, s := range []string{"a", "c"} {
		e.ddl("CREATE TABLE " + s + " (id INTEGER PRIMARY KEY, v TEXT)")
	}
	e.commit("INSERT INTO a VALUES (1, 'a1')")
	tx := e.begin()
	exec(t, tx, "SELECT count(*) FROM a")
	e.commit("UPDATE a SET v = 'changed'")
	code, err := execErr(tx, "INSERT INTO c VALUES (1, 'x')")
	if code != sqlerr.SerializationFailure || !strings.Contains(err.Error(), "read was changed") {
		t.Fatalf("got %v", err)
	}
}

// A transaction that read nothing always moves forward, and a history that
// does not reach back far enough counts as changed.
func TestMoveForwardHistoryBounds(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE a (id INTEGER PRIMARY KEY)")
	e.ddl("CREATE TABLE c (id INTEGER PRIMARY KEY)")
	tx := e.begin()
	e.commit("INSERT INTO a VALUES (1)")
	exec(t, tx, "INSERT INTO c VALUES (1)") // read nothing: moves forward
	tx.Rollback()

	tx = e.begin()
	exec(t, tx, "SELECT * FROM c")
	e.commit("INSERT INTO a VALUES (2)")
	e.hist.reset(e.seqno) // as after a Restore: history starts now
	code, _ := execErr(tx, "INSERT INTO c VALUES (2)")
	if code != sqlerr.SerializationFailure {
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
