package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Applications unchanged against a 3-node cluster on the PostgreSQL
// engine, each writing through one node and reading its data back through
// another (testdata/apps): Django (makemigrations, migrate, ORM CRUD,
// createsuperuser, inspectdb, migrate back to zero) and SQLAlchemy with
// Alembic (autogenerate, upgrade, downgrade). Their migrations wrap DDL
// and data changes in transaction blocks. .ci/deps installs them.

func TestAppDjango(t *testing.T) {
	runApp(t, "django", filepath.Join(depsDir, "python", "django"))
}

func TestAppSQLAlchemyAlembic(t *testing.T) {
	runApp(t, "sqlalchemy", filepath.Join(depsDir, "python", "alembic"))
}

// runApp copies testdata/apps/name to a temporary directory (scenarios
// write their migrations there), starts a cluster on the PostgreSQL
// engine and runs the scenario's run.py with two nodes' addresses, every
// node alike afterwards.
func runApp(t *testing.T, name, dep string) {
	if _, err := os.Stat(dep); err != nil {
		t.Fatalf("application not installed (%v): run .ci/deps first", err)
	}
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "apps", name))); err != nil {
		t.Fatal(err)
	}
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "run.py")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+abs(t, filepath.Join(depsDir, "python"))+":"+dir,
		"NODE_A="+c.Nodes[0].PGAddr, "NODE_B="+c.Nodes[2].PGAddr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s scenario: %v\n%s", name, err, out)
	}
	if !strings.Contains(string(out), "scenario passed") {
		t.Fatalf("%s scenario did not say it passed:\n%s", name, out)
	}
	c.WaitConverged(30 * time.Second)
}
