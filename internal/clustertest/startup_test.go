package clustertest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"certa/internal/testcluster"
)

// psqlWith runs commands in one psql session on node i with extra
// environment (PGOPTIONS); it returns the output and psql's error.
func psqlWith(c *testcluster.Cluster, i int, env []string, cmds ...string) (string, error) {
	host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
	args := []string{"-X", "-q", "-v", "ON_ERROR_STOP=1", "-At", fmt.Sprintf("host=%s port=%s user=certa dbname=certa sslmode=disable", host, port)}
	for _, cmd := range cmds {
		args = append(args, "-c", cmd)
	}
	cmd := exec.Command("psql", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The run-time parameters of the startup packet apply to the session, as
// in PostgreSQL: PGOPTIONS' -c name=value and libpq's options (Django's
// OPTIONS: {'options': '-c search_path=...'}); a bad one fails the
// connection.
func TestStartupOptions(t *testing.T) {
	forEachEngine(t, func(t *testing.T, start startFunc) {
		c := start(t, 1)
		// psql's own application_name comes after the options and wins,
		// as in PostgreSQL.
		out, err := psqlWith(c, 0, []string{"PGOPTIONS=-c statement_timeout=250 -c application_name=from\\ options"},
			"SHOW application_name", "SELECT 1")
		if err != nil || out != "psql\n1\n" {
			t.Fatalf("psql with PGOPTIONS: %v\n%s", err, out)
		}
		// The timeout holds: a query longer than it is cancelled.
		slow := "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000000) SELECT count(*) FROM n"
		if out, err := psqlWith(c, 0, []string{"PGOPTIONS=-c statement_timeout=250"}, slow); err == nil || !strings.Contains(out, "cancel") {
			t.Fatalf("a slow query under statement_timeout=250 from the options: %v\n%s", err, out)
		}
		if out, err := psqlWith(c, 0, []string{"PGOPTIONS=-Z 10"}, "SELECT 1"); err == nil || !strings.Contains(out, "invalid command-line argument") {
			t.Fatalf("a bad option: %v\n%s", err, out)
		}
	})
}

// Over the PostgreSQL engine, PostgreSQL reads the startup parameters:
// a search_path from the options names two schemas, and rows written
// through it land in the first, on every node.
func TestStartupSearchPathPostgres(t *testing.T) {
	c := startPostgresCluster(t, 2)
	mustExec(t, c.Conn(0), "CREATE SCHEMA app")
	mustExec(t, c.Conn(0), "CREATE TABLE app.items (id int PRIMARY KEY)")
	mustExec(t, c.Conn(0), "CREATE TABLE public.items (id int PRIMARY KEY)")
	out, err := psqlWith(c, 1, []string{"PGOPTIONS=-c search_path=app,public"},
		"SHOW search_path", "INSERT INTO items VALUES (1)", "BEGIN", "INSERT INTO items VALUES (2)", "COMMIT")
	if err != nil || out != "app,public\n" {
		t.Fatalf("psql: %v\n%s", err, out)
	}
	if got := values(t, syncConn(t, c, 0), "SELECT (SELECT count(*) FROM app.items), (SELECT count(*) FROM public.items)"); got != "2=0" {
		t.Fatalf("node 1: app.items and public.items hold %q rows, want 2=0", got)
	}
	if out, err := psqlWith(c, 1, []string{"PGOPTIONS=-c no_such_setting=1"}, "SELECT 1"); err == nil || !strings.Contains(out, "unrecognized configuration parameter") {
		t.Fatalf("an unknown parameter: %v\n%s", err, out)
	}
}
