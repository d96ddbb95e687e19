package clustertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// psql against a cluster that requires SCRAM-SHA-256: DDL, writes and
// reads, a transaction that loses to a commit made meanwhile by another
// psql (40001), and the describe commands \dt, \d, \d TABLE, \l; \d
// shows identity columns, foreign keys and the keys that reference a
// table as PostgreSQL 15 does.
func TestPsql(t *testing.T) { forEachEngine(t, testPsql) }

func testPsql(t *testing.T, start startFunc) {
	c := startWithPassword(t, start)
	out := psql(t, c, 0, "CREATE TABLE accounts (id integer PRIMARY KEY, owner text NOT NULL, balance integer DEFAULT 0)",
		"CREATE INDEX accounts_owner ON accounts (owner)",
		"INSERT INTO accounts (id, owner) VALUES (1, 'ann'), (2, 'bob')")
	if !strings.Contains(out, "INSERT 0 2") {
		t.Fatalf("psql output:\n%s", out)
	}
	// The other psql runs (\!) while the first one's transaction is open.
	other := psqlCommand(c, 1, "SET certa.consistency = 'sync'", "UPDATE accounts SET balance = 5 WHERE id = 1")
	out = psqlUnchecked(t, c, 2, "SET certa.consistency = 'sync'", "BEGIN", "UPDATE accounts SET balance = balance + 1 WHERE id = 1",
		`\! `+other, "COMMIT", "SELECT owner, balance FROM accounts ORDER BY id")
	for _, want := range []string{"UPDATE 1", "ERROR:  could not serialize access", " ann   |       5", " bob   |       0"} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q", want)
		}
	}
	out = psql(t, c, 1, `\dt`, `\d`, `\d accounts`, `\l`)
	for _, want := range []string{
		" public | accounts | table | certa",
		`Table "public.accounts"`,
		" id      | integer |           | not null | ",
		" owner   | text    |           | not null | ",
		" balance | integer |           |          | 0",
		`"accounts_pkey" PRIMARY KEY, btree (id)`,
		`"accounts_owner" btree (owner)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q", want)
		}
	}
	// \l: database certa, in UTF8 (its owner is the engine's: certa over
	// SQLite, postgres over PostgreSQL).
	if !listsDatabase(out, "certa", "UTF8") {
		t.Errorf("psql \\l lacks database certa in UTF8")
	}
	if t.Failed() {
		t.Logf("psql output:\n%s", out)
	}
	psql(t, c, 0, "CREATE TABLE entries (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, account int REFERENCES accounts ON DELETE CASCADE, note text)")
	out = psql(t, c, 1, `\d entries`, `\d accounts`)
	for _, want := range []string{
		" id      | integer |           | not null | generated always as identity",
		"Foreign-key constraints:\n" +
			`    "entries_account_fkey" FOREIGN KEY (account) REFERENCES accounts(id) ON DELETE CASCADE`,
		"Referenced by:\n" +
			`    TABLE "entries" CONSTRAINT "entries_account_fkey" FOREIGN KEY (account) REFERENCES accounts(id) ON DELETE CASCADE`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q", want)
		}
	}
	out = psqlUnchecked(t, c, 2, "INSERT INTO entries (id, account) VALUES (5, 1)")
	if !strings.Contains(out, `ERROR:  cannot insert a non-DEFAULT value into column "id"`) ||
		!strings.Contains(out, "HINT:  Use OVERRIDING SYSTEM VALUE to override.") {
		t.Errorf("psql output of an explicit id:\n%s", out)
	}
	if t.Failed() {
		t.Logf("psql output:\n%s", out)
	}
}

// psql runs psql with each command as a -c on node i of a
// startWithPassword cluster, stopping at the first error, and returns its
// output.
func psql(t *testing.T, c *testcluster.Cluster, i int, commands ...string) string {
	t.Helper()
	out, err := runPsql(c, i, true, commands...)
	if err != nil {
		t.Fatalf("psql %v: %v\n%s", commands, err, out)
	}
	return out
}

// psqlUnchecked is psql going on after errors.
func psqlUnchecked(t *testing.T, c *testcluster.Cluster, i int, commands ...string) string {
	t.Helper()
	out, _ := runPsql(c, i, false, commands...)
	return out
}

func runPsql(c *testcluster.Cluster, i int, stopOnError bool, commands ...string) (string, error) {
	args := psqlArgs(c, i, stopOnError, commands...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "psql", args...)
	cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func psqlArgs(c *testcluster.Cluster, i int, stopOnError bool, commands ...string) []string {
	host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
	// sync: what an earlier run wrote through another node is there.
	args := []string{"-X", "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable options='-c certa.consistency=sync'"}
	if stopOnError {
		args = append(args, "-v", "ON_ERROR_STOP=1")
	}
	for _, cmd := range commands {
		args = append(args, "-c", cmd)
	}
	return args
}

// psqlCommand is a shell command line running psql on node i.
func psqlCommand(c *testcluster.Cluster, i int, commands ...string) string {
	var quoted []string
	for _, a := range psqlArgs(c, i, true, commands...) {
		quoted = append(quoted, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return "PGPASSWORD='" + testPassword + "' psql " + strings.Join(quoted, " ")
}

// listsDatabase tells whether psql's \l output has a row for database name
// with the encoding.
func listsDatabase(out, name, encoding string) bool {
	for _, line := range strings.Split(out, "\n") {
		cols := strings.Split(line, "|")
		if len(cols) > 2 && strings.TrimSpace(cols[0]) == name && strings.TrimSpace(cols[2]) == encoding {
			return true
		}
	}
	return false
}
