package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcluster"
)

// copyCases are COPY FROM runs through psql's \copy: the data file and the
// command's tail (columns and options). Each must load the same rows, or
// fail with the same SQLSTATE, on the embedded engine and on PostgreSQL.
var copyCases = []struct{ data, tail string }{
	{"1\tplain\tt\t2024-01-01 10:00:00+02\t12.5\t\\\\x0102\t2024-02-29\t1.5\tshort\n2\t\\N\tf\t\\N\t7\t\\N\t\\N\t\\N\t\\N\n",
		"(id, name, ok, at, n, b, d, f, v)"},
	{"3\ttab\\there\\nnewline \\\\ back\\x41\\101\n4\t\n", "(id, name)"},
	{"5\t\"quoted\"\r\n6\tcrlf\r\n", "(id, name)"},
	{"7\tend\n\\.\n8\tignored\n", "(id, name)"},
	{"id,name,v\n10,\"a,b\",x\n11,,\n12,\"\",\"\"\n13,\"multi\nline\",\"q\"\"q\"\n", "(id, name, v) WITH (FORMAT csv, HEADER)"},
	{"20|NULL|NULL\n21|x|NULL\n", "(id, name, v) WITH (DELIMITER '|', NULL 'NULL')"},
	{"30,,\"\"\n", "(id, name, v) WITH (FORMAT csv, FORCE_NOT_NULL (name), FORCE_NULL (v))"},
	{"id,name\n40,x\n", "(id, name) WITH (FORMAT csv, HEADER match)"},
	{"id,nom\n41,x\n", "(id, name) WITH (FORMAT csv, HEADER match)"},
	{"50\tx\t1\n", "(id, name)"},                       // extra data: 22P04
	{"51\n", "(id, name)"},                             // missing data: 22P04
	{"52\tx\tyes\tnot a time\n", "(id, name, ok, at)"}, // 22007
	{"53\tx\tmaybe\n", "(id, name, ok)"},               // 22P02
	{"54\t12345678901\n", "(id, v)"},                   // 22001
	{"1\tdup\n", "(id, name)"},                         // 23505, nothing of it stays
	{"55\tok\n56\ta\xffb\n", "(id, name)"},             // 22021
	{"57\tx\n", "(id, nope)"},                          // 42703
	{"58\tx\n", "(id, name) WITH (FORMAT binary)"},     // text where binary is expected: 22P04
}

// TestCopyAgainstPostgreSQL: psql's \copy into a table on a cluster on the
// embedded engine (through node 1) and on PostgreSQL 15 gives the same
// outcome, case by case, and \copy out again (through node 3, in text and
// CSV, with a header) gives the same bytes.
func TestCopyAgainstPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := pgserver.Start(t)
	ref := pg.DSN
	node := func(i int) string {
		host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
		return "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable"
	}
	run := func(conninfo string, cmds ...string) string {
		args := []string{"-X", "-q", "-At", "-v", "VERBOSITY=sqlstate", conninfo}
		for _, cmd := range cmds {
			args = append(args, "-c", cmd)
		}
		cmd := exec.CommandContext(ctx, "psql", args...)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	table := `CREATE TABLE cp (id int PRIMARY KEY, name text, ok boolean, at timestamptz, n numeric(10,2), b bytea,
		d date, f float8, v varchar(10), s bigserial, note text DEFAULT 'dflt')`
	for _, conn := range []string{node(0), ref} {
		if out := run(conn, table); out != "" {
			t.Fatalf("CREATE TABLE: %s", out)
		}
	}
	dir := t.TempDir()
	for i, cc := range copyCases {
		file := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(file, []byte(cc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		cols, opts, _ := strings.Cut(cc.tail, " WITH ")
		cmd := fmt.Sprintf(`\copy cp %s from '%s'`, cols, file)
		if opts != "" {
			cmd += " with " + opts
		}
		got, want := run(node(0), cmd), run(ref, cmd)
		if strings.Contains(got+want, `\copy:`) {
			t.Fatalf("%s: psql refused it: %s", cmd, got+want)
		}
		if sqlstateOf(got) != sqlstateOf(want) {
			t.Errorf("%s\n%q\n  certa:      %s\n  PostgreSQL: %s", cc.tail, cc.data, got, want)
		}
	}
	const cols = "id, name, ok, at, n, b, d, f, v, note, s IS NOT NULL"
	for _, out := range []string{
		`\copy (SELECT ` + cols + ` FROM cp ORDER BY id) to stdout`,
		`\copy (SELECT ` + cols + ` FROM cp ORDER BY id) to stdout with (format csv, header, force_quote (name))`,
		`\copy (SELECT id, name FROM cp WHERE id < 10 ORDER BY id) to stdout with (delimiter '|', null 'NULL')`,
	} {
		got := run(node(2), "SET certa.consistency = 'sync'", "SET TIME ZONE 'UTC'", out)
		want := run(ref, "SET TIME ZONE 'UTC'", out)
		if got != want {
			t.Errorf("%s\n  certa:\n%s\n  PostgreSQL:\n%s", out, got, want)
		}
	}
	c.WaitConverged(30 * time.Second)
}

// sqlstateOf is the SQLSTATE psql printed (VERBOSITY=sqlstate), or "".
func sqlstateOf(out string) string {
	if i := strings.Index(out, "ERROR:  "); i >= 0 {
		return strings.Fields(out[i+len("ERROR:  "):])[0]
	}
	return ""
}

// TestCopyFromPgx: pgx's CopyFrom (binary format) into the embedded engine
// through node 1, read back through node 2; a duplicate key fails it whole.
func TestCopyFromPgx(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	ctx := ctxT(t)
	mustExec(t, c.Conn(0), "CREATE TABLE items (id int PRIMARY KEY, name varchar(40), price numeric(8,2), at timestamptz, ok boolean)")
	ext, err := pgclient.ConnectExtended(ctx, passwordURL(c, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	var rows [][]any
	at := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for i := range 10000 {
		rows = append(rows, []any{i, fmt.Sprint("item ", i), fmt.Sprint(i%100, ".25"), at, i%2 == 0})
	}
	if n, err := ext.CopyFrom(ctx, "items", []string{"id", "name", "price", "at", "ok"}, rows); err != nil || n != 10000 {
		t.Fatalf("CopyFrom: %d rows, %v", n, err)
	}
	if _, err := ext.CopyFrom(ctx, "items", []string{"id", "name"}, [][]any{{20000, "new"}, {1, "dup"}}); pgclient.SQLState(err) != "23505" {
		t.Fatalf("CopyFrom of a duplicate key: %v", err)
	}
	got, err := syncConn(t, c, 1).Query(ctx, "SELECT count(*), sum(price) = 497500, count(*) FILTER (WHERE ok), min(at)::text FROM items")
	if want := "[[10000 true 5000 2024-05-06 07:08:09+00]]"; err != nil || fmt.Sprint(got) != want {
		t.Fatalf("read back: %v %v, want %s", got, err, want)
	}
	c.WaitConverged(30 * time.Second)
}
