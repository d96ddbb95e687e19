package clustertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// The drivers people use run one scenario each (testdata/drivers) against
// a 3-node cluster that requires SCRAM-SHA-256: parameterised inserts and
// selects over every supported type including NULLs, a prepared statement
// reused many times, an explicit transaction that loses to a concurrent
// commit with 40001, its retry, and a cancelled statement (57014).
// .ci/deps installs the drivers into .ci/deps.d.

// depsDir is where .ci/deps installs the drivers.
var depsDir = filepath.Join("..", "..", ".ci", "deps.d")

// Each runs over both engines; the scenario is told which by CERTA_ENGINE
// (over PostgreSQL it also checks types certa has none of: arrays...).
func TestDriverPsycopg(t *testing.T) {
	forEachEngineName(t, func(t *testing.T, engine string) {
		runScenario(t, engine, []string{"PYTHONPATH=" + abs(t, filepath.Join(depsDir, "python"))},
			filepath.Join(depsDir, "python", "psycopg"), "python3", "scenario.py")
	})
}

func TestDriverNodePostgres(t *testing.T) {
	forEachEngineName(t, func(t *testing.T, engine string) {
		runScenario(t, engine, []string{"NODE_PATH=" + abs(t, filepath.Join(depsDir, "node", "node_modules"))},
			filepath.Join(depsDir, "node", "node_modules", "pg"), "node", "scenario.js")
	})
}

func TestDriverPgJDBC(t *testing.T) {
	forEachEngineName(t, func(t *testing.T, engine string) {
		jar := filepath.Join(depsDir, "java", "postgresql-42.7.4.jar")
		runScenario(t, engine, nil, jar, "java", "-cp", abs(t, jar), "Scenario.java")
	})
}

// forEachEngineName runs test once per engine, as subtests named after it.
func forEachEngineName(t *testing.T, test func(t *testing.T, engine string)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) { test(t, engine) })
	}
}

// engineArgs are the arguments of a node on engine.
func engineArgs(t *testing.T, engine string) []string {
	if engine == "postgres" {
		letPostgresIn(t)
	}
	return []string{"--engine", engine}
}

// runScenario starts a cluster on engine (with peer TLS) and runs the
// command (its last argument the scenario file in testdata/drivers) with
// two nodes' addresses.
func runScenario(t *testing.T, engine string, env []string, dep string, command ...string) {
	if _, err := os.Stat(dep); err != nil {
		t.Fatalf("driver not installed (%v): run .ci/deps first", err)
	}
	script := filepath.Join("testdata", "drivers", command[len(command)-1])
	if _, err := os.Stat(script); err != nil { // also tells go test's cache to watch it
		t.Fatal(err)
	}
	command[len(command)-1] = abs(t, script)
	const password = "driver-s3cret"
	// As in production: peer TLS between the nodes, and a password.
	args := append(engineArgs(t, engine), "--users-file", usersFile(t, "certa", password))
	args = append(args, testArgs...)
	c := testcluster.StartPeerTLS(t, 3, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, command[0], append(command[1:], c.Nodes[0].PGAddr, c.Nodes[1].PGAddr)...)
	cmd.Env = append(append(os.Environ(), env...), "CERTA_PASSWORD="+password, "CERTA_ENGINE="+engine)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(command, " "), err, out)
	}
	t.Logf("%s", out)
}

// usersFile writes a users file with one user, made by `certa passwd`.
func usersFile(t *testing.T, user, password string) string {
	cmd := exec.Command(testcluster.Binary(t), "passwd", user)
	cmd.Stdin = strings.NewReader(password + "\n")
	line, err := cmd.Output()
	if err != nil {
		t.Fatalf("certa passwd: %v", err)
	}
	path := filepath.Join(t.TempDir(), "users")
	if err := os.WriteFile(path, line, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func abs(t *testing.T, path string) string {
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
