package postgres

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/engine/enginetest"
	"certa/engine/postgres/pgproc"
)

// The PostgreSQL engine passes the engine conformance suite, each engine
// on a database of its own in one server.
func TestConformance(t *testing.T) {
	enginetest.Run(t, &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}})
}

// startOneServer starts a PostgreSQL server for the test.
func startOneServer(t *testing.T) *pgproc.Server {
	t.Helper()
	if _, _, err := pgproc.FindBinDir(""); err != nil {
		t.Fatalf("this test needs PostgreSQL (.ci/deps installs it): %v", err)
	}
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// t.TempDir's directory and its parent, the test's own: never
		// one above (a shared /tmp must keep its mode).
		for _, d := range []string{dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o711); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := pgproc.Start(pgproc.Config{DataDir: filepath.Join(dir, "pg")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

type factory struct {
	srv *pgproc.Server
	mu  sync.Mutex
	n   int
	dbs map[engine.Engine]string
}

func (f *factory) Open(t *testing.T) engine.Engine {
	f.mu.Lock()
	f.n++
	db := fmt.Sprintf("db%d", f.n)
	f.mu.Unlock()
	admin, err := pgconn.Connect(context.Background(), f.srv.DSN("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, admin, "CREATE DATABASE "+db)
	admin.Close(context.Background())
	return f.open(t, db)
}

func (f *factory) Reopen(t *testing.T, e engine.Engine) engine.Engine {
	f.mu.Lock()
	db, ok := f.dbs[e]
	f.mu.Unlock()
	if !ok {
		t.Fatalf("Reopen of an engine the factory did not open")
	}
	return f.open(t, db)
}

func (f *factory) open(t *testing.T, db string) engine.Engine {
	t.Helper()
	e, err := Open(context.Background(), Config{DSN: f.srv.DSN(db), NodeID: "n1", BinDir: f.srv.BinDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.dbs[e] = db
	f.mu.Unlock()
	t.Cleanup(func() { e.Close() })
	return e
}
