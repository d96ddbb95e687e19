package clustertest

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

// psql's describe commands work against a node: \dt, \d, \d TABLE, \l.
func TestPsqlDescribe(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	mustExec(t, c.Conn(0), "CREATE TABLE accounts (id integer PRIMARY KEY, owner text NOT NULL, balance integer DEFAULT 0)")
	mustExec(t, c.Conn(0), "CREATE INDEX accounts_owner ON accounts (owner)")
	syncConn(t, c, 1)
	out := psql(t, c, 1, `\dt`, `\d`, `\d accounts`, `\l`)
	for _, want := range []string{
		" public | accounts | table | certa",
		`Table "public.accounts"`,
		" id      | integer |           | not null | ",
		" owner   | text    |           | not null | ",
		" balance | integer |           |          | 0",
		`"accounts_pkey" PRIMARY KEY, btree (id)`,
		`"accounts_owner" btree (owner)`,
		" certa | certa | UTF8",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("psql output:\n%s", out)
	}
}

// psql runs psql with each command as a -c on node i and returns its output.
func psql(t *testing.T, c *testcluster.Cluster, i int, commands ...string) string {
	t.Helper()
	host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
	args := []string{"-X", "-v", "ON_ERROR_STOP=1", "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable"}
	for _, cmd := range commands {
		args = append(args, "-c", cmd)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "psql", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("psql %v: %v\n%s", commands, err, out)
	}
	return string(out)
}
