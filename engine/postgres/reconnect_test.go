package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/engine/postgres/pgproc"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// syncBuffer is a log the engine writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openLogged opens an engine of node n1 on a new database of srv's, its
// log in the returned buffer.
func openLogged(t *testing.T, srv *pgproc.Server, db string) (*Engine, *syncBuffer, *pgconn.PgConn) {
	t.Helper()
	ctx := context.Background()
	admin := superuser(t, srv, "postgres")
	mustExec(t, admin, "CREATE DATABASE "+db)
	log := &syncBuffer{}
	e, err := Open(ctx, Config{DSN: srv.DSN(db), NodeID: "n1", BinDir: srv.BinDir(), Logger: slog.New(slog.NewTextHandler(log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Close()
		if t.Failed() {
			t.Logf("engine log:\n%s", log)
		}
	})
	return e, log, nil
}

// superuser connects to db as the server's superuser, outside the
// engine (an operator's psql): what it writes is not captured.
func superuser(t *testing.T, srv *pgproc.Server, db string) *pgconn.PgConn {
	t.Helper()
	var c *pgconn.PgConn
	waitUntil(t, 60*time.Second, "the server accepts connections", func() bool {
		var err error
		c, err = pgconn.Connect(context.Background(), srv.DSN(db))
		return err == nil
	})
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// remoteWS returns the write set of stmts run by another node (captured
// here in a transaction rolled back), with txid.
func remoteWS(t *testing.T, e *Engine, txid uint64, stmts ...string) *writeset.WriteSet {
	t.Helper()
	ctx := context.Background()
	tx, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, s := range stmts {
		if err := tx.Exec(ctx, s, result.Discard); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	ws, err := tx.WriteSet()
	if err != nil || ws == nil {
		t.Fatalf("write set %v, %v", ws, err)
	}
	ws.Origin, ws.TxID = "n2", txid
	return ws
}

// applyOne applies ws alone at seqno.
func applyOne(t *testing.T, e *Engine, seqno uint64, ws *writeset.WriteSet) {
	t.Helper()
	items := []engine.ApplyItem{{Seqno: seqno, WS: ws}}
	if err := e.Apply(context.Background(), items, seqno); err != nil || items[0].Err != nil {
		t.Fatalf("apply seqno %d: %v %v", seqno, err, items[0].Err)
	}
}

// tableSums returns count(*) and sum(id) of t, and the applied seqno.
func tableSums(t *testing.T, e *Engine, table string) string {
	t.Helper()
	rows := query(t, e, "SELECT count(*), coalesce(sum(id), 0), (SELECT max(seqno) FROM certa.applied) FROM "+table)
	return fmt.Sprintf("%v rows, sum %v, applied %v", rows[0][0], rows[0][1], rows[0][2])
}

var replayedRE = regexp.MustCompile(`lost_and_applied_again=(\d+)`)

// A node's engine survives its PostgreSQL restarting (the postmaster
// killed, a backend crash that makes the postmaster restart them all) and
// its backends being ended: the next Apply reconnects, applies again what
// the server lost of the last commits (synchronous_commit is off), then
// its batch, with no row lost or doubled; the open transaction fails with
// 40001, the held one's rows are applied at its position, a session that
// had temporary tables gets 57P01, and new transactions commit.
func TestApplyAcrossServerRestart(t *testing.T) {
	srv := startOneServer(t)
	faults := []struct {
		name   string
		inject func(t *testing.T, db string, victim uint32)
	}{
		{"postmaster killed", func(t *testing.T, db string, victim uint32) {
			if err := syscall.Kill(srv.PID(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}},
		{"backend crashed", func(t *testing.T, db string, victim uint32) {
			// The postmaster ends every backend and restarts.
			if err := syscall.Kill(int(victim), syscall.SIGSEGV); err != nil {
				t.Fatal(err)
			}
		}},
		{"backends terminated", func(t *testing.T, db string, victim uint32) {
			su := superuser(t, srv, db)
			mustExec(t, su, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
		}},
	}
	for k, fault := range faults {
		t.Run(fault.name, func(t *testing.T) {
			db := fmt.Sprintf("restart%d", k)
			e, log, _ := openLogged(t, srv, db)
			ctx := context.Background()
			applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY, v text)")})

			const before, after = 60, 5
			var ws []*writeset.WriteSet
			for i := 1; i <= before+after; i++ {
				ws = append(ws, remoteWS(t, e, uint64(1000+i), fmt.Sprintf("INSERT INTO t VALUES (%d, 'remote')", i)))
			}
			// Held: handed over, its position after the fault.
			heldTx, held, _ := handOver(t, e, 77, "INSERT INTO t VALUES (500, 'held')")
			// Open: a local transaction in progress.
			open, err := e.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer open.Rollback()
			if err := open.Exec(ctx, "INSERT INTO t VALUES (900, 'open')", result.Discard); err != nil {
				t.Fatal(err)
			}
			// Pinned: a session with a temporary table.
			pinned := e.NewSession()
			defer pinned.Close()
			f := &tempFixture{t: t, e: e, seqno: 1}
			if ran, err := f.local(pinned, "CREATE TEMP TABLE tt (id int)"); !ran || err != nil {
				t.Fatal(ran, err)
			}

			// Many commits just before the fault: the last ones are
			// likely not on disk yet.
			seqno := uint64(1)
			for i := range before {
				seqno++
				applyOne(t, e, seqno, ws[i])
			}
			start := time.Now()
			fault.inject(t, db, open.(*Tx).pid)
			// The engine finds out by itself (healthLoop), with no write.
			waitUntil(t, 20*time.Second, "the engine finding a lost connection", func() bool {
				return strings.Contains(log.String(), "reconnecting")
			})
			detected := time.Since(start)

			items := []engine.ApplyItem{}
			for i := before; i < before+after; i++ {
				seqno++
				items = append(items, engine.ApplyItem{Seqno: seqno, WS: ws[i]})
			}
			seqno++
			items = append(items, engine.ApplyItem{Seqno: seqno, WS: held})
			if err := e.Apply(ctx, items, seqno); err != nil {
				t.Fatalf("Apply after the fault: %v", err)
			}
			took := time.Since(start)
			for _, it := range items {
				if it.Err != nil {
					t.Fatalf("seqno %d: %v", it.Seqno, it.Err)
				}
			}
			replayed := "?"
			if m := replayedRE.FindStringSubmatch(log.String()); m != nil {
				replayed = m[1]
			}
			t.Logf("%s: found lost after %v; the next Apply returned %v after the fault; write sets the server had lost and the engine applied again: %s",
				fault.name, detected.Round(time.Millisecond), took.Round(time.Millisecond), replayed)

			want := fmt.Sprintf("%d rows, sum %d, applied %d", before+after+1, (before+after)*(before+after+1)/2+500, seqno)
			if got := tableSums(t, e, "t"); got != want {
				t.Fatalf("after the fault: %s, want %s", got, want)
			}
			if err := open.Exec(ctx, "SELECT 1", result.Discard); sqlerr.Code(err) != sqlerr.SerializationFailure {
				t.Fatalf("the transaction open at the fault: %v, want 40001", err)
			}
			if err := heldTx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if _, err := read(pinned, "SELECT * FROM tt"); sqlerr.Code(err) != sqlerr.AdminShutdown || !errors.Is(err, engine.ErrSessionLost) {
				t.Fatalf("the session whose temporary table was lost: %v, want 57P01", err)
			}
			// New work goes on, on new backends.
			mine, own, _ := handOver(t, e, 78, "INSERT INTO t VALUES (501, 'after')")
			seqno++
			applyOne(t, e, seqno, own)
			mine.Rollback()
			s := e.NewSession()
			defer s.Close()
			if rows := mustRead(t, s, "SELECT v FROM t WHERE id = 501"); len(rows) != 1 || rows[0][0] != "after" {
				t.Fatalf("a transaction after the fault: %v", rows)
			}
			if testing.Verbose() {
				t.Logf("engine log:\n%s", log)
				b, _ := os.ReadFile(srv.LogPath())
				t.Logf("server log:\n%s", b[max(0, len(b)-4000):])
			}
			if !strings.Contains(log.String(), "reconnected to PostgreSQL") {
				t.Fatalf("no reconnection logged:\n%s", log)
			}
		})
	}
}

// What the server lost of the last commits is applied again from the
// batches the engine keeps, and nothing twice: the loss is made by hand
// here (rows and certa.applied rolled back past what the engine keeps,
// then its backends ended), so that it is there every time. A loss the
// engine no longer holds fails Apply with what to do.
func TestReplayLostCommits(t *testing.T) {
	srv := startOneServer(t)
	e, log, _ := openLogged(t, srv, "replay")
	applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE t (id int PRIMARY KEY, v text)")})
	var ws []*writeset.WriteSet
	for i := 1; i <= 40; i++ {
		ws = append(ws, remoteWS(t, e, uint64(1000+i), fmt.Sprintf("INSERT INTO t VALUES (%d, 'remote')", i)))
	}
	for i := range 30 {
		applyOne(t, e, uint64(i+2), ws[i])
	}
	e.applyMu.Lock()
	from := e.retainedFrom // the last batch is always kept
	e.applyMu.Unlock()
	su := superuser(t, srv, "replay")
	mustExec(t, su, fmt.Sprintf("DELETE FROM t WHERE id > %d; DELETE FROM certa.applied; INSERT INTO certa.applied VALUES (%d)", from-1, from))
	mustExec(t, su, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	applyOne(t, e, 32, ws[30])
	if got, want := tableSums(t, e, "t"), fmt.Sprintf("31 rows, sum %d, applied 32", 31*32/2); got != want {
		t.Fatalf("after the loss: %s, want %s", got, want)
	}
	m := replayedRE.FindStringSubmatch(log.String())
	if m == nil || m[1] != fmt.Sprint(31-from) {
		t.Fatalf("applied again: %v, want %d (kept from seqno %d)\n%s", m, 31-from, from+1, log)
	}
	t.Logf("kept from seqno %d: %s write sets applied again", from+1, m[1])

	// Lost below what the engine keeps: Apply fails, saying what to do.
	waitUntil(t, 20*time.Second, "the applied seqno known on disk", func() bool { return e.durable.Load() >= 32 })
	applyOne(t, e, 33, ws[31]) // drops what is on disk
	mustExec(t, su, "DELETE FROM certa.applied; INSERT INTO certa.applied VALUES (20)")
	mustExec(t, su, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
	items := []engine.ApplyItem{{Seqno: 34, WS: ws[32]}}
	err := e.Apply(context.Background(), items, 34)
	if err == nil || !strings.Contains(err.Error(), "restart the node") {
		t.Fatalf("Apply after losing what the engine no longer keeps: %v", err)
	}
	t.Logf("%v", err)
}

// A recover try that closed the engine's connections and then could not
// connect again (here: the applier's role may not log in for a while)
// leaves them closed; the next try closes them again and connects,
// rather than crash the node on a connection already gone.
func TestRecoverAgainAfterFailedConnect(t *testing.T) {
	e := openEngine(t)
	admin, err := pgconn.Connect(context.Background(), e.cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	mustExec(t, admin, "ALTER ROLE certa_applier NOLOGIN")
	err = func() error {
		e.applyMu.Lock()
		defer e.applyMu.Unlock()
		e.closeAdmin()
		if err := e.connectAdmin(context.Background(), false); err == nil {
			t.Error("connected as a role that may not log in")
		}
		e.closeAdmin()
		mustExec(t, admin, "ALTER ROLE certa_applier LOGIN")
		return e.openAdmin(context.Background())
	}()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.AppliedSeqno(); err != nil {
		t.Fatal(err)
	}
}
