package clustertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// messagesScript makes PostgreSQL send notices, warnings and errors with
// every field psql shows in verbose mode: positions (in a statement, in a
// query string of two, in a function's query), context, detail, hint,
// the names of schema, table, column and constraint, and the source
// location.
const messagesScript = `\set VERBOSITY verbose
DROP TABLE IF EXISTS msg_nothing;
DO $$ BEGIN RAISE NOTICE 'hello %', 42; RAISE WARNING 'careful' USING DETAIL = 'a detail', HINT = 'a hint'; END $$;
SELECT 1 + ) AS x;
CREATE TABLE msg_t (id int PRIMARY KEY, v int CONSTRAINT v_positive CHECK (v > 0), w text NOT NULL DEFAULT 'x');
SELECT nope FROM msg_t;
INSERT INTO msg_t VALUES (1, 1);
INSERT INTO msg_t VALUES (1, 2);
INSERT INTO msg_t VALUES (2, -1);
INSERT INTO msg_t VALUES (3, 3, NULL);
SELECT 1 AS one \; SELECT nope FROM msg_t;
CREATE FUNCTION msg_f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT nope FROM msg_t); END $$;
SELECT msg_f();
BEGIN;
SELECT 1/0;
ROLLBACK;
\set VERBOSITY default
SELECT
  1 + 'x';
DROP FUNCTION msg_f();
DROP TABLE msg_t;
`

// What PostgreSQL tells a client besides results (notices, warnings,
// every field of an error) reaches psql through the PostgreSQL engine as
// it does from PostgreSQL itself: the same script gives the same output.
func TestMessagesAsPostgreSQL(t *testing.T) {
	c := startPostgresCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pg := referencePostgres(t)
	run := func(host, port string) string {
		cmd := exec.CommandContext(ctx, "psql", "-X", "-a", "-q", "host="+host+" port="+port+" user=certa dbname=certa sslmode=disable")
		cmd.Env = append(os.Environ(), "PGPASSWORD="+testPassword)
		cmd.Stdin = strings.NewReader(messagesScript)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	host, port, _ := strings.Cut(c.Nodes[0].PGAddr, ":")
	got, want := run(host, port), run("127.0.0.1", fmt.Sprint(pg.Port))
	if got != want {
		t.Fatalf("through certa:\n%s\nPostgreSQL:\n%s", got, want)
	}
	c.WaitConverged(20 * time.Second)
}
