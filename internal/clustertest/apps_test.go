package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/pgserver"
)

// Applications unchanged against a 3-node cluster on the PostgreSQL
// engine, each writing through one node and reading its data back through
// another (testdata/apps): Django (makemigrations, migrate, ORM CRUD,
// createsuperuser, inspectdb, migrate back to zero), SQLAlchemy with
// Alembic (autogenerate, upgrade, downgrade), Sequelize, GORM, Hibernate
// with Flyway, and pgbench. Their
// migrations wrap DDL and data changes in transaction blocks. .ci/deps
// installs them.

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

// Sequelize (testdata/apps/sequelize): sync with a foreign key and a
// many-to-many join table, CRUD and a managed transaction through one
// node, reads (with arrays and decimals) through another, and
// sync({ alter: true }) adding a column.
func TestAppSequelize(t *testing.T) {
	modules := abs(t, filepath.Join(depsDir, "node", "node_modules"))
	if _, err := os.Stat(filepath.Join(modules, "sequelize")); err != nil {
		t.Fatalf("sequelize not installed (%v): run .ci/deps first", err)
	}
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", abs(t, filepath.Join("testdata", "apps", "sequelize", "run.js")))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules, "NODE_A="+c.Nodes[0].PGAddr, "NODE_B="+c.Nodes[2].PGAddr)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scenario passed") {
		t.Fatalf("sequelize scenario: %v\n%s", err, out)
	}
	c.WaitConverged(30 * time.Second)
}

// GORM (testdata/apps/gorm, a module of its own that go run builds):
// AutoMigrate with a foreign key, an index and a many-to-many join table,
// CRUD and a transaction through one node, reads through another, and an
// AutoMigrate that adds a column.
func TestAppGORM(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir = filepath.Join("testdata", "apps", "gorm")
	cmd.Env = append(os.Environ(), "NODE_A="+c.Nodes[0].PGAddr, "NODE_B="+c.Nodes[2].PGAddr)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scenario passed") {
		t.Fatalf("gorm scenario: %v\n%s", err, out)
	}
	c.WaitConverged(30 * time.Second)
}

// Hibernate 6 with Flyway (testdata/apps/hibernate): Flyway's migrations
// (a sequence, tables with a foreign key and an identity column, a column
// added and filled, each in a transaction, the schema history table on
// a connection of its own), then Hibernate's CRUD through one node and
// reads through another.
func TestAppHibernateFlyway(t *testing.T) {
	jars := abs(t, filepath.Join(depsDir, "java", "hibernate"))
	if _, err := os.Stat(filepath.Join(jars, "hibernate-core-6.6.4.Final.jar")); err != nil {
		t.Fatalf("Hibernate not installed (%v): run .ci/deps first", err)
	}
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := abs(t, filepath.Join("testdata", "apps", "hibernate"))
	cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(jars, "*"), filepath.Join(dir, "Scenario.java"), filepath.Join(dir, "db"))
	cmd.Env = append(os.Environ(), "NODE_A="+c.Nodes[0].PGAddr, "NODE_B="+c.Nodes[2].PGAddr)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scenario passed") {
		t.Fatalf("hibernate scenario: %v\n%s", err, out)
	}
	c.WaitConverged(30 * time.Second)
}

// pgbench against a cluster on the PostgreSQL engine: -i (DROP, CREATE
// of tables without primary keys, COPY of 100,000 rows, VACUUM, primary
// keys added) through one node, then a run through another, retrying
// what loses certification (every transaction updates the one branch
// row); every transaction run is in pgbench_history on every node.
func TestAppPgbench(t *testing.T) {
	c := startPostgresCluster(t, 3)
	pgbench := pgserver.Program(t, "pgbench")
	conninfo := func(i int) string {
		host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
		return "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, pgbench, "-i", "-s", "1", conninfo(0)).CombinedOutput(); err != nil {
		t.Fatalf("pgbench -i: %v\n%s", err, out)
	}
	c.WaitConverged(30 * time.Second)
	out, err := exec.CommandContext(ctx, pgbench, "-c", "4", "-T", "5", "--max-tries", "100", conninfo(1)).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench: %v\n%s", err, out)
	}
	var processed, failed int64 = -1, -1
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "number of transactions actually processed: "); ok {
			processed, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "number of failed transactions: "); ok {
			failed, _ = strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	if processed <= 0 || failed != 0 {
		t.Fatalf("pgbench processed %d, failed %d:\n%s", processed, failed, out)
	}
	t.Logf("pgbench: %d transactions", processed)
	c.WaitConverged(30 * time.Second)
	if n, err := syncConn(t, c, 2).QueryInt(ctxT(t), "SELECT count(*) FROM pgbench_history"); err != nil || n != processed {
		t.Fatalf("pgbench_history holds %d rows, %v; want %d", n, err, processed)
	}
}
