package clustertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"certa/internal/pgserver"
)

// readOnlyScript tries each way PostgreSQL makes a transaction read-only,
// and each kind of write in one; the rows written where writing is
// allowed end in the last SELECT.
const readOnlyScript = `
SHOW transaction_read_only;
BEGIN READ ONLY; INSERT INTO ro VALUES (1, 1); ROLLBACK;
BEGIN READ ONLY; UPDATE ro SET v = 2; ROLLBACK;
BEGIN READ ONLY; DELETE FROM ro; ROLLBACK;
BEGIN READ ONLY; SELECT * FROM ro FOR UPDATE; ROLLBACK;
BEGIN READ ONLY; SELECT * FROM ro FOR SHARE; ROLLBACK;
BEGIN READ ONLY; SELECT nextval('ros'); ROLLBACK;
BEGIN READ ONLY; CREATE TABLE x (id int); ROLLBACK;
BEGIN READ ONLY; SHOW transaction_read_only; SELECT count(*) FROM ro; COMMIT;
BEGIN READ ONLY; SET TRANSACTION READ WRITE; INSERT INTO ro VALUES (2, 2); COMMIT;
BEGIN READ ONLY; SELECT 1; SET TRANSACTION READ WRITE; ROLLBACK;
BEGIN; INSERT INTO ro VALUES (3, 3); SET TRANSACTION READ ONLY; INSERT INTO ro VALUES (4, 4); COMMIT;
BEGIN; INSERT INTO ro VALUES (5, 5); SET TRANSACTION READ ONLY; SHOW transaction_read_only; COMMIT;
SET default_transaction_read_only = on;
SHOW transaction_read_only;
INSERT INTO ro VALUES (6, 6);
TRUNCATE ro;
BEGIN READ WRITE; INSERT INTO ro VALUES (7, 7); COMMIT;
SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE;
INSERT INTO ro VALUES (8, 8);
SET default_transaction_read_only = maybe;
BEGIN READ ONLY; COMMIT AND CHAIN; SHOW transaction_read_only; INSERT INTO ro VALUES (9, 9); ROLLBACK AND CHAIN;
  SHOW transaction_read_only; ROLLBACK;
BEGIN READ WRITE; SET TRANSACTION READ ONLY; COMMIT AND CHAIN; SHOW transaction_read_only; COMMIT;
SET default_transaction_read_only = on;
START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE; INSERT INTO ro VALUES (10, 10);
  COMMIT AND CHAIN; SHOW transaction_read_only; INSERT INTO ro VALUES (11, 11); COMMIT;
RESET default_transaction_read_only;
COMMIT AND CHAIN;
SELECT id, v FROM ro ORDER BY id;
`

// readOnlyPinnedScript runs where a temporary table keeps the session on
// one PostgreSQL backend (PostgreSQL engine), which the session's
// default_transaction_read_only reaches: BEGIN READ WRITE still writes.
const readOnlyPinnedScript = `
CREATE TEMP TABLE pin (a int);
SET default_transaction_read_only = on;
START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE;
SHOW transaction_read_only;
INSERT INTO ro VALUES (12, 12);
COMMIT AND CHAIN;
INSERT INTO ro VALUES (13, 13);
COMMIT;
INSERT INTO ro VALUES (14, 14);
SELECT id, v FROM ro WHERE id >= 12 ORDER BY id;
`

// Read-only transactions refuse every write with PostgreSQL's 25006, on
// both engines, as a real PostgreSQL 15 does with the same psql script;
// the writes allowed replicate.
func TestReadOnlyTransactionsAsPostgreSQL(t *testing.T) {
	pg := pgserver.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(conninfo, script string) string {
		cmd := exec.CommandContext(ctx, "psql", "-X", "-q", "-At", "-v", "VERBOSITY=sqlstate", conninfo)
		cmd.Stdin = strings.NewReader(script)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	setup := "CREATE TABLE ro (id int PRIMARY KEY, v int);\nCREATE SEQUENCE ros;\n"
	if out := run(pg.DSN, setup); out != "" {
		t.Fatalf("setup on PostgreSQL: %s", out)
	}
	want := run(pg.DSN, readOnlyScript)
	if !strings.Contains(want, "25006") || !strings.HasSuffix(want, "2|2\n5|5\n7|7\n8|8\n10|10\n11|11\n") {
		t.Fatalf("PostgreSQL's own output is not what this test expects:\n%s", want)
	}
	wantPinned := run(pg.DSN, readOnlyPinnedScript)
	if !strings.HasSuffix(wantPinned, "25006\n12|12\n13|13\n") {
		t.Fatalf("PostgreSQL's own output is not what this test expects:\n%s", wantPinned)
	}
	forEachEngine(t, func(t *testing.T, start startFunc) {
		c := start(t, 3)
		node := func(i int) string {
			host, port, _ := strings.Cut(c.Nodes[i].PGAddr, ":")
			return "host=" + host + " port=" + port + " user=certa dbname=certa sslmode=disable"
		}
		if out := run(node(0), setup); out != "" {
			t.Fatalf("setup: %s", out)
		}
		if got := run(node(0), readOnlyScript); got != want {
			t.Fatalf("through certa:\n%s\nPostgreSQL:\n%s", got, want)
		}
		if got := values(t, syncConn(t, c, 2), "SELECT id, v FROM ro ORDER BY id"); got != "2=2,5=5,7=7,8=8,10=10,11=11" {
			t.Fatalf("node 3 holds %s", got)
		}
		if !strings.HasSuffix(t.Name(), "/postgres") {
			return
		}
		if got := run(node(0), readOnlyPinnedScript); got != wantPinned {
			t.Fatalf("a pinned session through certa:\n%s\nPostgreSQL:\n%s", got, wantPinned)
		}
	})
}
