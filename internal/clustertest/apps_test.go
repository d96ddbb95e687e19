package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcluster"
)

// Applications unchanged against a 3-node cluster on the PostgreSQL
// engine, each writing through one node and reading its data back through
// another (testdata/apps): Django (makemigrations, migrate, ORM CRUD,
// createsuperuser, inspectdb, migrate back to zero), SQLAlchemy with
// Alembic (autogenerate, upgrade, downgrade), Sequelize, GORM, Hibernate
// with Flyway, and pgbench. Their migrations wrap DDL and data changes in
// transaction blocks. .ci/deps installs them.

func TestAppDjango(t *testing.T) {
	runPython(t, runApp, "django", filepath.Join(depsDir, "python", "django"))
}

// Django on the embedded SQLite engine, and on a real PostgreSQL in the
// same test.
func TestAppDjangoSQLite(t *testing.T) {
	runPython(t, runAppSQLite, "django", filepath.Join(depsDir, "python", "django"))
}

func TestAppSQLAlchemyAlembic(t *testing.T) {
	runPython(t, runApp, "sqlalchemy", filepath.Join(depsDir, "python", "alembic"))
}

// SQLAlchemy with Alembic on the embedded SQLite engine (autogenerate
// reflects the tables through the catalog), and on a real PostgreSQL in
// the same test.
func TestAppSQLAlchemyAlembicSQLite(t *testing.T) {
	runPython(t, runAppSQLite, "sqlalchemy", filepath.Join(depsDir, "python", "alembic"))
}

// The same through psycopg2, which sends its parameters inside the SQL
// text (bytea as '\x…'::bytea, dates as quoted literals).
func TestAppSQLAlchemyAlembicPsycopg2SQLite(t *testing.T) {
	needInstalled(t, filepath.Join(depsDir, "python", "psycopg2"))
	runPython(t, runAppSQLite, "sqlalchemy", filepath.Join(depsDir, "python", "alembic"), "SQLALCHEMY_DRIVER=psycopg2")
}

// runPython runs a Python scenario's run.py from a copy of
// testdata/apps/name (scenarios write their migrations there) with run
// (runApp or runAppSQLite), with env added.
func runPython(t *testing.T, run func(*testing.T, string, string, []string, ...string), name, dep string, env ...string) {
	needInstalled(t, dep)
	dir := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "apps", name))); err != nil {
		t.Fatal(err)
	}
	env = append(env, "PYTHONPATH="+abs(t, filepath.Join(depsDir, "python"))+":"+dir)
	run(t, name, dir, env, "python3", "run.py")
}

// Sequelize (testdata/apps/sequelize): sync with a foreign key and a
// many-to-many join table, CRUD and a managed transaction through one
// node, reads (with arrays and decimals) through another, and
// sync({ alter: true }) adding a column.
func TestAppSequelize(t *testing.T) {
	runNodeApp(t, runApp, "sequelize")
}

// Sequelize on the embedded SQLite engine, and on a real PostgreSQL in the
// same test.
func TestAppSequelizeSQLite(t *testing.T) {
	runNodeApp(t, runAppSQLite, "sequelize")
}

// Knex (testdata/apps/knex): migrations in transactions (tables with a
// foreign key, an index and a unique column; a column added and filled),
// queries and a transaction through one node, reads through another, and
// the last migration rolled back.
func TestAppKnex(t *testing.T) {
	runNodeApp(t, runApp, "knex")
}

// Knex on the embedded SQLite engine, and on a real PostgreSQL in the same
// test.
func TestAppKnexSQLite(t *testing.T) {
	runNodeApp(t, runAppSQLite, "knex")
}

// TypeORM (testdata/apps/typeorm): synchronize from entity schemas (a
// many-to-one foreign key, a many-to-many join table, a unique column),
// CRUD, a transaction and the query builder through one node, reads
// through another, and synchronize again adding a column.
func TestAppTypeORM(t *testing.T) {
	runNodeApp(t, runApp, "typeorm")
}

// TypeORM on the embedded SQLite engine, and on a real PostgreSQL in the
// same test.
func TestAppTypeORMSQLite(t *testing.T) {
	runNodeApp(t, runAppSQLite, "typeorm")
}

// runNodeApp runs the Node.js scenario testdata/apps/<name>/run.js with
// run (runApp or runAppSQLite).
func runNodeApp(t *testing.T, run func(*testing.T, string, string, []string, ...string), name string) {
	modules := abs(t, filepath.Join(depsDir, "node", "node_modules"))
	needInstalled(t, filepath.Join(modules, name))
	run(t, name, "", []string{"NODE_PATH=" + modules}, "node", abs(t, filepath.Join("testdata", "apps", name, "run.js")))
}

// GORM (testdata/apps/gorm, a module of its own that go run builds):
// AutoMigrate with a foreign key, an index and a many-to-many join table,
// CRUD and a transaction through one node, reads through another, and an
// AutoMigrate that adds a column.
func TestAppGORM(t *testing.T) {
	runApp(t, "gorm", filepath.Join("testdata", "apps", "gorm"), nil, "go", "run", ".")
}

// GORM on the embedded SQLite engine, and on a real PostgreSQL in the same
// test.
func TestAppGORMSQLite(t *testing.T) {
	runAppSQLite(t, "gorm", filepath.Join("testdata", "apps", "gorm"), nil, "go", "run", ".")
}

// Hibernate 6 with Flyway (testdata/apps/hibernate): Flyway's migrations
// (a sequence, tables with a foreign key and an identity column, a column
// added and filled, each in a transaction, the schema history table on
// a connection of its own), then Hibernate's CRUD through one node and
// reads through another.
func TestAppHibernateFlyway(t *testing.T) {
	runHibernate(t, runApp)
}

func runHibernate(t *testing.T, run func(*testing.T, string, string, []string, ...string)) {
	jars := abs(t, filepath.Join(depsDir, "java", "hibernate"))
	needInstalled(t, filepath.Join(jars, "hibernate-core-6.6.4.Final.jar"))
	dir := abs(t, filepath.Join("testdata", "apps", "hibernate"))
	run(t, "hibernate", "", nil, "java", "-cp", filepath.Join(jars, "*"), filepath.Join(dir, "Scenario.java"), filepath.Join(dir, "db"))
}

// needInstalled fails the test if .ci/deps did not install path.
func needInstalled(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("application not installed (%v): run .ci/deps first", err)
	}
}

// runApp starts a cluster on the PostgreSQL engine and runs a scenario's
// command in dir ("": here) with env and the addresses of the node it
// writes through (NODE_A) and the one it reads through (NODE_B); the
// scenario must say it passed, and every node be alike afterwards.
func runApp(t *testing.T, name, dir string, env []string, command ...string) {
	c := startPostgresCluster(t, 3)
	runAppScenario(t, name, dir, env, c.Nodes[0].PGAddr, c.Nodes[2].PGAddr, command)
	c.WaitConverged(30 * time.Second)
}

// runAppSQLite runs a scenario on a real PostgreSQL first (writing and
// reading through the one server: a scenario wrong there fails the test),
// then on a 3-node cluster on the embedded SQLite engine, writing through
// one node and reading through another; every node must be alike
// afterwards.
func runAppSQLite(t *testing.T, name, dir string, env []string, command ...string) {
	ref := referencePostgres(t)
	addr := "127.0.0.1:" + strconv.Itoa(ref.Port)
	runAppScenario(t, name+" on PostgreSQL", dir, env, addr, addr, command)
	c := testcluster.Start(t, 3, testArgs...)
	runAppScenario(t, name+" on the SQLite engine", dir, env, c.Nodes[0].PGAddr, c.Nodes[2].PGAddr, command)
	c.WaitConverged(30 * time.Second)
}

// runAppScenario runs a scenario's command in dir ("": here) with env and
// the addresses it writes through (NODE_A) and reads through (NODE_B); it
// must say it passed.
func runAppScenario(t *testing.T, name, dir string, env []string, nodeA, nodeB string, command []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], command[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), env...), "NODE_A="+nodeA, "NODE_B="+nodeB)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "scenario passed") {
		t.Fatalf("%s scenario: %v\n%s", name, err, out)
	}
}

// pgbench against a cluster on the PostgreSQL engine: -i (DROP, CREATE
// of tables without primary keys, COPY of 100,000 rows, VACUUM, primary
// keys added) through one node, then a run through another, retrying
// what loses certification (every transaction updates the one branch
// row); every transaction run is in pgbench_history on every node.
func TestAppPgbench(t *testing.T) {
	c := startPostgresCluster(t, 3)
	runPgbench(t, pgserver.Program(t, "pgbench"), c)
}

// The same on the SQLite engine, whose tables without a primary key
// (pgbench_history has none ever) replicate by rowid; first on a real
// PostgreSQL, so a scenario wrong there fails the test.
func TestAppPgbenchSQLite(t *testing.T) {
	pgbench := pgserver.Program(t, "pgbench")
	ref := referencePostgres(t)
	refInfo := "host=127.0.0.1 port=" + strconv.Itoa(ref.Port) + " user=certa dbname=certa sslmode=disable"
	pgbenchRun(t, pgbench, refInfo, "-i", "-s", "1")
	pgbenchRun(t, pgbench, refInfo, "-c", "4", "-T", "2")
	runPgbench(t, pgbench, testcluster.Start(t, 3, testArgs...))
}

// runPgbench runs pgbench -i through node 1 and a 5-second run through
// node 2, and checks that node 3 holds what the run did.
func runPgbench(t *testing.T, pgbench string, c *testcluster.Cluster) {
	conninfo := func(i int) string {
		host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
		return "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable"
	}
	pgbenchRun(t, pgbench, conninfo(0), "-i", "-s", "1")
	c.WaitConverged(30 * time.Second)
	processed := pgbenchRun(t, pgbench, conninfo(1), "-c", "4", "-T", "5", "--max-tries", "100")
	t.Logf("pgbench: %d transactions", processed)
	c.WaitConverged(30 * time.Second)
	conn := syncConn(t, c, 2)
	if n, err := conn.QueryInt(ctxT(t), "SELECT count(*) FROM pgbench_history"); err != nil || n != processed {
		t.Fatalf("pgbench_history holds %d rows, %v; want %d", n, err, processed)
	}
	// Every delta went to its account, teller and branch.
	got, err := conn.Query(ctxT(t), `SELECT (SELECT sum(delta) FROM pgbench_history), (SELECT sum(abalance) FROM pgbench_accounts),
		(SELECT sum(tbalance) FROM pgbench_tellers), (SELECT sum(bbalance) FROM pgbench_branches)`)
	if err != nil {
		t.Fatal(err)
	}
	if r := got[0]; fmt.Sprint(r[0]) != fmt.Sprint(r[1]) || fmt.Sprint(r[0]) != fmt.Sprint(r[2]) || fmt.Sprint(r[0]) != fmt.Sprint(r[3]) {
		t.Fatalf("sums of history, accounts, tellers, branches differ: %v", r)
	}
}

// pgbenchRun runs pgbench with args on conninfo and returns, for a run,
// the transactions processed; a failed transaction fails the test.
func pgbenchRun(t *testing.T, pgbench, conninfo string, args ...string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, pgbench, append(args, conninfo)...).CombinedOutput()
	if err != nil {
		t.Fatalf("pgbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	if args[0] == "-i" {
		return 0
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
	return processed
}

// sysbench's oltp_read_write with its PostgreSQL driver: prepare (tables
// with a SERIAL key, bulk INSERTs of thousands of rows, a secondary index)
// through one node, then a run through another. After prepare every row is
// there on a third node; after the run every node holds the same rows. (A
// run may add rows: it deletes and inserts ids 1..table-size, and a
// SERIAL column's values on a cluster leave gaps, each node handing out
// values from blocks of its own, as Galera's auto_increment_increment
// does.) The same on a real PostgreSQL first, so a scenario wrong there
// fails the test.
func TestAppSysbenchSQLite(t *testing.T) {
	sysbench, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatalf("sysbench not installed (%v): run .ci/deps first", err)
	}
	ref := referencePostgres(t)
	c := testcluster.Start(t, 3, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	run := func(addr, step string, args ...string) string {
		host, port, _ := strings.Cut(addr, ":")
		cmd := exec.CommandContext(ctx, sysbench, append([]string{"oltp_read_write", "--db-driver=pgsql",
			"--pgsql-host=" + host, "--pgsql-port=" + port, "--pgsql-user=certa", "--pgsql-db=certa",
			"--tables=2", "--table-size=5000", step}, args...)...)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword)
		out, err := cmd.CombinedOutput()
		if err != nil || step == "run" && !strings.Contains(string(out), "transactions:") {
			t.Fatalf("sysbench %s on %s: %v\n%s", step, addr, err, out)
		}
		return string(out)
	}
	// counts is the rows of each table and of its distinct ids.
	counts := func(conn *pgclient.Conn) [][]any {
		got, err := conn.Query(ctx, "SELECT (SELECT count(*) FROM sbtest1), (SELECT count(DISTINCT id) FROM sbtest1), (SELECT count(*) FROM sbtest2), (SELECT count(DISTINCT id) FROM sbtest2)")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	refAddr := "127.0.0.1:" + strconv.Itoa(ref.Port)
	run(refAddr, "prepare")
	run(refAddr, "run", "--time=3", "--threads=2")

	run(c.Nodes[0].PGAddr, "prepare")
	if got := fmt.Sprint(counts(syncConn(t, c, 2))); got != "[[5000 5000 5000 5000]]" {
		t.Fatalf("after prepare: %s", got)
	}
	run(c.Nodes[1].PGAddr, "run", "--time=5", "--threads=2")
	c.WaitConverged(30 * time.Second)
	got := counts(syncConn(t, c, 2))[0]
	for i := 0; i < 4; i += 2 {
		if n, distinct := toInt64(got[i]), toInt64(got[i+1]); n < 5000 || n != distinct {
			t.Fatalf("after the run: sbtest%d holds %d rows of %d ids", i/2+1, n, distinct)
		}
	}
}

// TestAppHibernateFlywaySQLite is TestAppHibernateFlyway on the SQLite
// engine.
func TestAppHibernateFlywaySQLite(t *testing.T) {
	runHibernate(t, runAppSQLite)
}
