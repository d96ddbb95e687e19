package postgres

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/engine/postgres/pgproc"
	"certa/result"
	"certa/writeset"
)

// openResetEngine opens an engine of node n1 on a new database of a new
// server, with cfg's MaxConns and client login.
func openResetEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	e, _ := openResetServer(t, cfg)
	return e
}

// openResetServer is openResetEngine, which also returns the server.
func openResetServer(t *testing.T, cfg Config) (*Engine, *pgproc.Server) {
	t.Helper()
	srv := startOneServer(t)
	admin, err := pgconn.Connect(context.Background(), srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, admin, "CREATE DATABASE db1")
	admin.Close(context.Background())
	cfg.DSN, cfg.NodeID, cfg.BinDir = srv.DSN("db1"), "n1", srv.BinDir()
	e, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e, srv
}

// resetDDL replicates a client's schema statement as a session does:
// checked (CheckDDL), then applied at the next position.
func resetDDL(f *tempFixture, stmts ...string) {
	f.t.Helper()
	for _, stmt := range stmts {
		ddl, err := f.e.CheckDDL(context.Background(), stmt)
		if err != nil {
			f.t.Fatalf("%s: %v", stmt, err)
		}
		if err := f.apply(&writeset.WriteSet{DDL: ddl.Statement}); err != nil {
			f.t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// leakyFunctions are a client's functions that leave state in the
// backend's session, which certa cannot see in the text that calls them.
var leakyFunctions = []string{
	"CREATE TABLE t (id int PRIMARY KEY, d date)",
	`CREATE FUNCTION dmy() RETURNS text LANGUAGE sql AS $$ SELECT set_config('DateStyle', 'DMY', false) $$`,
	`CREATE FUNCTION role_none() RETURNS text LANGUAGE sql AS $$ SELECT set_config('role', 'none', false) $$`,
	`CREATE FUNCTION lock1() RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_advisory_lock(1); END $$`,
	`CREATE FUNCTION listen1() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'LISTEN chan'; END $$`,
	`CREATE FUNCTION hold1() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'DECLARE held CURSOR WITH HOLD FOR SELECT 1'; END $$`,
	`CREATE FUNCTION prep1() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'PREPARE leaked AS SELECT 1'; END $$`,
}

// leakSQL calls them all.
const leakSQL = "SELECT dmy(), role_none(), lock1(), listen1(), hold1(), prep1()"

// backendStateSQL reads what a backend's session holds: its process,
// DateStyle, user, the advisory locks of every backend, its LISTENs and
// cursors and the statements PREPAREd in SQL.
const backendStateSQL = `SELECT pg_backend_pid(), current_setting('DateStyle'), current_user::text,
	(SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
	(SELECT count(*) FROM pg_listening_channels()), (SELECT count(*) FROM pg_cursors),
	(SELECT count(*) FROM pg_prepared_statements WHERE from_sql)`

// A client's function that changes a setting (set_config(..., false),
// the role), takes a session-level advisory lock, LISTENs or declares a
// cursor WITH HOLD leaves nothing on a pooled backend once its
// transaction ends, however it ends: the next transaction finds the
// backend as a new one (and the same backend: a client's DEALLOCATE ALL
// does not cost it). A session that keeps state on its backend on
// purpose (a statement that shows it) keeps it; a backend pinned for its
// temporary tables keeps them and nothing else.
func TestPoolResetsBackend(t *testing.T) {
	// One connection: every transaction runs on the same backend.
	e := openResetEngine(t, Config{MaxConns: 1, ClientLogin: "certa_login_reset", ApplierLogin: "certa_applier_reset", ClientPassword: "secret"})
	f := &tempFixture{t: t, e: e}
	resetDDL(f, leakyFunctions...)
	ctx := context.Background()
	state := func() []result.Value {
		t.Helper()
		s := e.NewSession()
		defer s.Close()
		return mustRead(t, s, backendStateSQL)[0]
	}
	clean := state()
	if clean[1] != "ISO, MDY" || clean[2] != clientRole || clean[3] != int64(0) {
		t.Fatalf("a new backend: %v", clean)
	}
	id := 0
	ends := []struct {
		name string
		run  func(s engine.Session) error
	}{
		{"read", func(s engine.Session) error { _, err := read(s, leakSQL); return err }},
		{"read that fails", func(s engine.Session) error {
			// The lock outlives the transaction's rollback.
			if _, err := read(s, "SELECT lock1(), 1/(random() < 0)::int"); err == nil {
				return fmt.Errorf("1/0 succeeded")
			}
			return nil
		}},
		{"read that drops certa's prepared statements", func(s engine.Session) error {
			// The reset's own prepared statements are gone: it runs
			// again, and the backend stays.
			if _, err := read(s, leakSQL); err != nil {
				return err
			}
			_, err := read(s, "DEALLOCATE ALL")
			return err
		}},
		{"read-only transaction committed", func(s engine.Session) error {
			return e.readOnly(ctx, s.(*Session), "COMMIT", func(c *conn) error { return run(ctx, c, leakSQL, result.Discard, nil) })
		}},
		{"catalog query", func(engine.Session) error { return e.Catalog(ctx, leakSQL, result.Discard) }},
		{"local commit", func(s engine.Session) error {
			if ws := f.exec(s, leakSQL); ws != nil {
				return fmt.Errorf("write set %v", ws)
			}
			return nil
		}},
		{"commit at its position", func(s engine.Session) error {
			id++
			if ws := f.exec(s, fmt.Sprintf("INSERT INTO t VALUES (%d, '2025-03-04')", id), leakSQL); ws == nil {
				return fmt.Errorf("no write set")
			}
			return nil
		}},
		{"rollback", func(s engine.Session) error {
			tx, err := s.Begin(ctx)
			if err != nil {
				return err
			}
			if err := tx.Exec(ctx, leakSQL, result.Discard); err != nil {
				return err
			}
			return tx.Rollback()
		}},
		{"failed commit", func(s engine.Session) error {
			tx, err := s.Begin(ctx)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			if err := tx.Exec(ctx, "SELECT lock1()", result.Discard); err != nil {
				return err
			}
			if err := tx.Exec(ctx, "SELECT 1/0", result.Discard); err == nil {
				return fmt.Errorf("1/0 succeeded")
			}
			if err := tx.CommitLocal(ctx); err == nil {
				return fmt.Errorf("a failed transaction committed")
			}
			return nil
		}},
	}
	for _, end := range ends {
		s := e.NewSession()
		if err := end.run(s); err != nil {
			t.Fatalf("%s: %v", end.name, err)
		}
		s.Close()
		if got := state(); fmt.Sprint(got) != fmt.Sprint(clean) {
			t.Errorf("after a %s: the next transaction's backend (pid, DateStyle, user, advisory locks, LISTENs, cursors, SQL prepared statements) is %v, want %v as new", end.name, got, clean)
		}
	}
	// A session's next transaction too (a date it writes reads as MDY).
	s := e.NewSession()
	mustRead(t, s, "SELECT dmy()")
	f.exec(s, "INSERT INTO t VALUES (100, '03/04/2025')")
	if rows := mustRead(t, s, "SELECT d::text FROM t WHERE id = 100"); rows[0][0] != "2025-03-04" {
		t.Errorf("a date written after the session's own set_config: %v, want 2025-03-04", rows[0][0])
	}
	s.Close()

	// A backend pinned for temporary tables keeps them, and nothing else.
	s = e.NewSession()
	if ran, err := f.local(s, "CREATE TEMP TABLE tt (id int)"); !ran || err != nil {
		t.Fatalf("CREATE TEMP TABLE: ran %v, %v", ran, err)
	}
	mustRead(t, s, "INSERT INTO tt VALUES (1)")
	mustRead(t, s, leakSQL)
	mustRead(t, s, "DEALLOCATE ALL")
	if got := mustRead(t, s, backendStateSQL+", (SELECT count(*) FROM tt)")[0]; fmt.Sprint(got[1:7]) != fmt.Sprint(clean[1:]) || got[7] != int64(1) {
		t.Errorf("a backend pinned for its temporary table: %v, want %v and its row", got, clean)
	}
	s.Close()

	// A session that shows it keeps state keeps its backend as it left
	// it, across its transactions, until it ends.
	s = e.NewSession()
	mustRead(t, s, "SELECT pg_advisory_lock(7)")
	mustRead(t, s, "SELECT dmy()")
	f.exec(s, "SELECT 1")
	if tx, err := s.Begin(ctx); err != nil {
		t.Fatal(err)
	} else {
		tx.Rollback()
	}
	mine := mustRead(t, s, "SELECT current_setting('DateStyle'), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND objid = 7 AND granted)")[0]
	if mine[0] != "ISO, DMY" || mine[1] != int64(1) {
		t.Errorf("a session that keeps state: DateStyle %v, its lock held %v; want ISO, DMY and 1", mine[0], mine[1])
	}
	s.Close()
	// Its backend ends, and its lock with it, a moment after Close.
	deadline := time.Now().Add(10 * time.Second)
	for got := state(); fmt.Sprint(got[1:]) != fmt.Sprint(clean[1:]); got = state() {
		if time.Now().After(deadline) {
			t.Fatalf("after the session that kept state ended: %v, want %v", got, clean)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPoolResetCost prints (asserts nothing) what short autocommit
// transactions, run as a session runs them, cost, when CERTA_RESET_COST
// is set: a point select (Read), a select in a transaction committed
// locally, an insert committed at its position; 2,000 of each, three
// rounds. Wall time, the test process's CPU (certa's and the client's)
// and the PostgreSQL server's (its processes' utime and stime, Linux).
func TestPoolResetCost(t *testing.T) {
	if os.Getenv("CERTA_RESET_COST") == "" {
		t.Skip("set CERTA_RESET_COST to measure")
	}
	const n = 2000
	e, srv := openResetServer(t, Config{})
	f := &tempFixture{t: t, e: e}
	resetDDL(f, "CREATE TABLE kv (id int PRIMARY KEY, v text)")
	f.exec(e.NewSession(), "INSERT INTO kv SELECT g, 'v' FROM generate_series(1, 100) g")
	ctx := context.Background()
	s := e.NewSession()
	defer s.Close()
	id := 1000
	kinds := []struct {
		name string
		run  func(i int)
	}{
		{"point select", func(i int) {
			if err := s.Read(ctx, "SELECT v FROM kv WHERE id = $1", result.Discard, int64(i%100+1)); err != nil {
				t.Fatal(err)
			}
		}},
		{"local commit", func(i int) {
			tx, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := tx.Exec(ctx, "SELECT v FROM kv WHERE id = $1", result.Discard, int64(i%100+1)); err != nil {
				t.Fatal(err)
			}
			if err := tx.CommitLocal(ctx); err != nil {
				t.Fatal(err)
			}
		}},
		{"insert", func(i int) {
			id++
			f.exec(s, fmt.Sprintf("INSERT INTO kv VALUES (%d, 'w')", id))
		}},
	}
	var report []string
	for round := range 3 {
		for _, k := range kinds {
			self, server := selfCPU(), serverCPU(t, srv.PID())
			start := time.Now()
			for i := range n {
				k.run(i)
			}
			d := time.Since(start)
			self, server = selfCPU()-self, serverCPU(t, srv.PID())-server
			report = append(report, fmt.Sprintf("round %d, %d x %-12s wall %7v (%6v each)  certa+client CPU %7v  PostgreSQL CPU %7v  (%v each)",
				round+1, n, k.name, d.Round(time.Millisecond), d/n, self.Round(time.Millisecond), server.Round(time.Millisecond), (self+server)/n))
		}
	}
	t.Log("\n" + strings.Join(report, "\n"))
}

// selfCPU returns the CPU time the test process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// serverCPU returns the CPU time the postmaster pid and its live children
// used so far (Linux's /proc).
func serverCPU(t *testing.T, pid int) time.Duration {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	var ticks int64
	for _, d := range dirs {
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... utime stime: fields 4, 14 and 15.
		_, rest, ok := strings.Cut(string(b), ") ")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) < 13 || d.Name() != strconv.Itoa(pid) && f[1] != strconv.Itoa(pid) {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += u + st
	}
	return time.Duration(ticks) * (time.Second / 100) // USER_HZ
}

// A closed pool hands out no connection, though it has free slots: the
// pool Restore replaced must not go on connecting to the database.
func TestClosedPoolRefuses(t *testing.T) {
	var epoch atomic.Uint64
	p := newPool(Config{DSN: "host=127.0.0.1 port=1 user=nobody dbname=none connect_timeout=1", MaxConns: 4}, &epoch)
	p.close()
	for range 200 {
		if c, err := p.get(context.Background(), nil); c != nil || err != errClosed {
			t.Fatalf("get from a closed pool: %v, %v; want errClosed", c, err)
		}
	}
}
