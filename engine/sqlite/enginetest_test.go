package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

	"certa/engine"
	"certa/engine/enginetest"
	"certa/engine/sqlite"
)

// The SQLite engine passes the engine conformance suite.
func TestConformance(t *testing.T) {
	enginetest.Run(t, &factory{paths: map[engine.Engine]string{}})
}

// factory opens SQLite engines in the default Config, each on a file in a
// test's temporary directory.
type factory struct {
	mu    sync.Mutex
	paths map[engine.Engine]string
}

func (f *factory) Open(t *testing.T) engine.Engine {
	return f.open(t, filepath.Join(t.TempDir(), "db.sqlite"))
}

func (f *factory) Reopen(t *testing.T, e engine.Engine) engine.Engine {
	f.mu.Lock()
	path, ok := f.paths[e]
	f.mu.Unlock()
	if !ok {
		t.Fatalf("Reopen of an engine the factory did not open")
	}
	return f.open(t, path)
}

func (f *factory) open(t *testing.T, path string) engine.Engine {
	t.Helper()
	e, err := sqlite.Open(sqlite.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.paths[e] = path
	f.mu.Unlock()
	t.Cleanup(func() {
		e.Close()
		f.mu.Lock()
		delete(f.paths, e)
		f.mu.Unlock()
	})
	return e
}
