package clustertest

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcluster"
)

// hiddenSetup makes what a client's catalog reads then find: a table, its
// own trigger and function, a comment.
var hiddenSetup = []string{
	"CREATE TABLE h (id int PRIMARY KEY, v text)",
	"CREATE FUNCTION stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v = 'stamped'; RETURN NEW; END $$",
	"CREATE TRIGGER mine BEFORE INSERT ON h FOR EACH ROW EXECUTE FUNCTION stamp()",
	"INSERT INTO h VALUES (1, 'a')",
	"CREATE SEQUENCE hs",
}

// hiddenQueries read the catalogs where certa's own objects would show:
// psql's \d commands and plain queries, as tools and the regression suite
// send them.
var hiddenQueries = []string{
	`\dn`, `\dy`, `\df`, `\d h`,
	"SELECT nspname FROM pg_namespace ORDER BY 1",
	"SELECT count(*) FROM pg_proc",
	"SELECT count(*) FROM pg_catalog.pg_type",
	"SELECT count(*) FROM pg_class c WHERE c.relnamespace <> 'pg_toast'::regnamespace",
	"SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class WHERE relname = 'h'",
	"SELECT t.tgname, t.tgfoid::regproc FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relname = 'h'",
	"SELECT count(*) FROM pg_event_trigger",
	"SELECT name, statement FROM pg_cursors",
	"SELECT n.tableoid::regclass, count(*) FROM pg_namespace n GROUP BY 1",
	"SELECT trigger_name, action_statement FROM information_schema.triggers",
	"SELECT count(*) FROM information_schema.routines WHERE routine_schema NOT IN ('pg_catalog', 'information_schema')",
	"SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
	"SELECT rolname FROM pg_roles WHERE rolname IN ('certa_applier', 'certa_roles')",
	"SELECT count(*) FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace)",
	// An error after a rewritten relation: psql's LINE and caret.
	"SELECT c.relname FROM pg_class c, pg_namespace n WHERE c.relnamespace = n.oid AND nope",
}

// certa's own objects (its schema, functions, triggers, event triggers,
// roles and prepared statements) are not in a client's catalog reads:
// each of hiddenQueries, through psql, prints on node 2 of a cluster
// what it prints on a plain PostgreSQL given the same statements, errors
// and their positions too; a client's parameterized statements, which
// certa prepares on the backend, are not in pg_prepared_statements; and
// pg_dump of the cluster has none of certa's objects and restores into
// PostgreSQL.
func TestCertaObjectsHidden(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	pg := pgserver.Start(t)
	for _, sql := range hiddenSetup {
		psqlAt(t, ctx, pg.DSN, sql)
		mustExec(t, c.Conn(0), sql)
	}
	for _, q := range hiddenQueries {
		want := psqlAt(t, ctx, pg.DSN, q)
		if got := psqlAt(t, ctx, nodeDSN(c, 1), q); got != want {
			t.Errorf("%s\n  certa:\n%s\n  PostgreSQL:\n%s", q, got, want)
		}
	}

	// The text of a client's PREPARE and DECLARE is the client's, with
	// its ';', as psql sent it.
	session := []string{"PREPARE q1 AS SELECT 1 AS a;", "BEGIN", "DECLARE c CURSOR FOR SELECT 2 ;",
		"SELECT name, statement FROM pg_prepared_statements", "SELECT name, statement FROM pg_cursors", "COMMIT"}
	if got, want := psqlAt(t, ctx, nodeDSN(c, 1), session...), psqlAt(t, ctx, pg.DSN, session...); got != want {
		t.Errorf("statements kept:\n  certa:\n%s\n  PostgreSQL:\n%s", got, want)
	}

	// The locks of a transaction that changed the schema and wrote are
	// the client's own: not certa's tables', nor every sequence's.
	session = []string{"BEGIN", "ALTER TABLE h ADD COLUMN w int", "INSERT INTO h VALUES (2, 'b')",
		`SELECT relation::regclass, mode FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'
			AND relation::regclass::text NOT LIKE 'pg\_%' ORDER BY relation::regclass::text, mode`,
		"ROLLBACK"}
	if got, want := psqlAt(t, ctx, nodeDSN(c, 1), session...), psqlAt(t, ctx, pg.DSN, session...); got != want {
		t.Errorf("locks of a transaction:\n  certa:\n%s\n  PostgreSQL:\n%s", got, want)
	}

	ext, err := pgclient.ConnectExtended(ctx, nodeDSN(c, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if _, err := ext.Query(ctx, "SELECT v FROM h WHERE id = $1", 1); err != nil {
		t.Fatal(err)
	}
	if got := values(t, ext, "SELECT count(*), count(*) FROM pg_prepared_statements"); got != "0=0" {
		t.Errorf("pg_prepared_statements of a client: %s, want none", got)
	}

	host, port, _ := strings.Cut(c.Nodes[1].PGAddr, ":")
	dump := exec.CommandContext(ctx, pgserver.Program(t, "pg_dump"), "-h", host, "-p", port, "-U", "certa", "certa")
	var stderr bytes.Buffer
	dump.Stderr = &stderr
	out, err := dump.Output()
	if err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, stderr.String())
	}
	for _, certas := range []string{"SCHEMA certa", "certa.", "certa_capture", "EVENT TRIGGER"} {
		if bytes.Contains(out, []byte(certas)) {
			t.Errorf("pg_dump's output has %q:\n%s", certas, out)
		}
	}
	psqlAt(t, ctx, pg.DSN, "CREATE ROLE certa_client")
	psqlAt(t, ctx, pg.DSN, "CREATE DATABASE restored")
	restore := exec.CommandContext(ctx, pgserver.Program(t, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
		"-p", strconv.Itoa(pg.Port), "-U", "postgres", "-d", "restored", "-f", "-")
	restore.Stdin = bytes.NewReader(out)
	if got, err := restore.CombinedOutput(); err != nil {
		t.Fatalf("restoring pg_dump's output into PostgreSQL: %v\n%s\n%s", err, got, out)
	}
	if got := psqlAt(t, ctx, strings.Replace(pg.DSN, "/postgres?", "/restored?", 1), "SELECT id, v FROM h"); got != "1|stamped\n" {
		t.Errorf("restored rows: %q", got)
	}
}

// nodeDSN is a connection string for psql to node i, reading in sync.
func nodeDSN(c *testcluster.Cluster, i int) string {
	host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
	return "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable options='-c certa.consistency=sync'"
}

// psqlAt runs commands (SQL or meta-commands) in one psql session on dsn
// and returns what it prints, errors included.
func psqlAt(t *testing.T, ctx context.Context, dsn string, commands ...string) string {
	t.Helper()
	args := []string{"-X", "-At", "-d", dsn}
	for _, c := range commands {
		args = append(args, "-c", c)
	}
	out, _ := exec.CommandContext(ctx, pgserver.Program(t, "psql"), args...).CombinedOutput()
	return string(out)
}
