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
// location; syntax errors at a statement's semicolon, where a query
// string of several statements with one PostgreSQL cannot parse runs
// none of them; the warnings of COMMIT, ROLLBACK and BEGIN that have no
// transaction to end, or one already; the notices of deferred triggers,
// which fire at COMMIT; the notices of a schema statement (CREATE
// FUNCTION's of a %TYPE), once, on its own and in a block; a function's
// DROP ... IF EXISTS of what is not there.
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
CREATE FUNCTION msg_typed(msg_t.w%TYPE) RETURNS msg_t.id%TYPE LANGUAGE sql AS 'SELECT 1';
BEGIN;
CREATE FUNCTION msg_typed2(msg_t.w%TYPE) RETURNS int LANGUAGE sql AS 'SELECT 2';
COMMIT;
CREATE FUNCTION msg_temp() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DROP TABLE IF EXISTS msg_tmp CASCADE; CREATE TEMP TABLE msg_tmp AS SELECT 1 AS a; END $$;
SELECT msg_temp();
SELECT msg_temp();
DROP FUNCTION msg_temp();
BEGIN;
SELECT 1/0;
ROLLBACK;
\set VERBOSITY default
SELECT
  1 + 'x';
SELECT 1 + ;
SELECT 1 AS one \; SELECT 2 +;
INSERT INTO msg_t VALUES (7, 7) \; SELEC 1;
SELECT count(*) FROM msg_t WHERE id = 7;
COMMIT;
ROLLBACK;
BEGIN;
BEGIN;
COMMIT;
SELECT 1 AS a \; COMMIT;
CREATE FUNCTION msg_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'deferred % of %', TG_OP, NEW.id; RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER msg_late AFTER INSERT ON msg_t INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION msg_note();
INSERT INTO msg_t VALUES (8, 8);
BEGIN;
INSERT INTO msg_t VALUES (9, 9);
SELECT 'before commit';
COMMIT;
SET plpgsql.extra_errors TO 'shadowed_variables';
CREATE OR REPLACE FUNCTION msg_shadow(f1 int) RETURNS int AS $$ DECLARE f1 int; BEGIN RETURN 1; END $$ LANGUAGE plpgsql;
RESET plpgsql.extra_errors;
SET plpgsql.extra_warnings TO 'shadowed_variables';
CREATE FUNCTION msg_shadow(f1 int) RETURNS int AS $$ DECLARE f1 int; BEGIN RETURN 1; END $$ LANGUAGE plpgsql;
BEGIN;
CREATE OR REPLACE FUNCTION msg_shadow(f1 int) RETURNS int AS $$ DECLARE f1 int; BEGIN RETURN 2; END $$ LANGUAGE plpgsql;
COMMIT;
RESET plpgsql.extra_warnings;
DROP FUNCTION msg_shadow(int);
SELECT 1 + \gdesc
BEGIN;
bogus;
;
\gdesc
ROLLBACK;
DROP FUNCTION msg_f();
DROP FUNCTION msg_typed(text), msg_typed2(text);
DROP TABLE msg_t;
DROP FUNCTION msg_note();
`

// What PostgreSQL tells a client besides results (notices, warnings,
// every field of an error) reaches psql through the PostgreSQL engine as
// it does from PostgreSQL itself: the same script gives the same output.
func TestMessagesAsPostgreSQL(t *testing.T) { samePsqlOutput(t, messagesScript) }

// implicitScript sends queries of several statements that control
// transactions: the statements outside a block up to a COMMIT or
// ROLLBACK are one transaction (an implicit block), which BEGIN makes
// explicit, COMMIT or ROLLBACK ends with a warning, an error rolls back,
// and AND CHAIN, savepoints and VACUUM fail in.
const implicitScript = `CREATE TABLE ti (a int);
INSERT INTO ti VALUES (1) \; COMMIT \; INSERT INTO ti VALUES (2);
INSERT INTO ti VALUES (3) \; COMMIT AND CHAIN;
INSERT INTO ti VALUES (4) \; ROLLBACK \; INSERT INTO ti VALUES (5);
INSERT INTO ti VALUES (6) \; BEGIN \; INSERT INTO ti VALUES (7);
ROLLBACK;
INSERT INTO ti VALUES (8) \; SAVEPOINT a \; INSERT INTO ti VALUES (9);
INSERT INTO ti VALUES (10) \; BEGIN ISOLATION LEVEL SERIALIZABLE;
COMMIT;
INSERT INTO ti VALUES (11) \; BEGIN \; INSERT INTO ti VALUES (12) \; COMMIT \; INSERT INTO ti VALUES (13) \; SELECT 1/0;
BEGIN \; INSERT INTO ti VALUES (14);
COMMIT \; INSERT INTO ti VALUES (15) \; SELECT 1/0;
SELECT 1 \; ROLLBACK \; ROLLBACK;
INSERT INTO ti VALUES (16) \; VACUUM ti;
INSERT INTO ti VALUES (17) \; COMMIT;
BEGIN \; INSERT INTO ti VALUES (18) \; COMMIT AND CHAIN \; INSERT INTO ti VALUES (19) \; ROLLBACK;
SELECT a FROM ti ORDER BY a;
DROP TABLE ti;
`

// Queries of several statements run in implicit blocks as PostgreSQL
// runs them (they ran one by one when one controlled transactions: an
// INSERT before a failing COMMIT AND CHAIN or VACUUM stayed).
func TestImplicitBlocksAsPostgreSQL(t *testing.T) { samePsqlOutput(t, implicitScript) }

// settingsScript changes reported parameters (ParameterStatus) every way
// a session can: SET, RESET to the startup packet's value, a block's
// ROLLBACK (also of a session whose backend is its own for good: it
// holds a prepared statement), RESET ALL; and SET LOCAL and SET
// TRANSACTION outside a block, which warn. psql reads string literals by the
// standard_conforming_strings it was last told, so a missed report shows
// as another string.
const settingsScript = `SHOW datestyle;
SELECT '2001-02-03 04:05'::timestamptz AS t;
SET datestyle = iso;
SET intervalstyle = sql_standard;
SELECT '2001-02-03 04:05'::timestamptz AS t, interval '1 day 2 hours' AS i;
RESET datestyle;
SELECT '2001-02-03 04:05'::timestamptz AS t, interval '1 day 2 hours' AS i;
BEGIN;
SET TIME ZONE 'Asia/Tokyo';
SET datestyle = 'German';
SELECT '2001-02-03 04:05'::timestamptz AS t;
ROLLBACK;
SHOW timezone;
SELECT '2001-02-03 04:05'::timestamptz AS t;
SET standard_conforming_strings = off;
SET escape_string_warning = off;
SELECT 'a\b' AS s, 'it\'s' AS q;
RESET ALL;
SHOW datestyle;
SHOW timezone;
SHOW intervalstyle;
SELECT 'a\b' AS s, '2001-02-03 04:05'::timestamptz AS t, interval '1 day 2 hours' AS i;
SET LOCAL work_mem = '1MB';
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
SHOW work_mem;
PREPARE kept AS SELECT 1;
BEGIN;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
ROLLBACK;
SELECT name, setting FROM pg_settings WHERE name IN ('enable_hashjoin', 'enable_mergejoin') ORDER BY 1;
BEGIN;
SET enable_hashjoin = off;
COMMIT;
SELECT name, setting FROM pg_settings WHERE name IN ('enable_hashjoin', 'enable_mergejoin') ORDER BY 1;
SET enable_mergejoin = off;
RESET ALL;
SELECT name, setting FROM pg_settings WHERE name IN ('enable_hashjoin', 'enable_mergejoin') ORDER BY 1;
SET enable_hashjoin = off;
BEGIN;
RESET ALL;
SHOW enable_hashjoin;
ROLLBACK;
SHOW enable_hashjoin;
BEGIN;
RESET ALL;
COMMIT;
SELECT name, setting FROM pg_settings WHERE name = 'enable_hashjoin';
DECLARE held CURSOR WITH HOLD FOR SELECT 1;
CREATE TEMP TABLE discarded (a int);
CREATE SEQUENCE discarded_seq;
SELECT nextval('discarded_seq');
SET enable_hashjoin = off;
BEGIN;
DISCARD ALL;
ROLLBACK;
DISCARD ALL;
SELECT name FROM pg_prepared_statements;
SELECT name FROM pg_cursors;
SHOW enable_hashjoin;
SHOW datestyle;
SELECT count(*) FROM pg_class WHERE relname = 'discarded';
SELECT currval('discarded_seq');
DROP SEQUENCE discarded_seq;
`

// Run-time parameters behave through the PostgreSQL engine as in
// PostgreSQL: RESET returns to what the client's startup packet asked for
// (PGDATESTYLE, PGTZ), not to the server's default, and every change of a
// reported parameter reaches the client (psql parses strings by it).
// RESET ALL and DISCARD ALL (which poolers send) reset also a session
// whose backend is its own for good (a prepared statement).
func TestSessionSettingsAsPostgreSQL(t *testing.T) {
	samePsqlOutput(t, settingsScript, "PGDATESTYLE=Postgres, MDY", "PGTZ=America/New_York")
}

// samePsqlOutput runs script with psql (psqlScript) through node 1 of a
// 3-node cluster on the PostgreSQL engine and on a plain PostgreSQL, and
// fails unless both print the same; then the nodes must converge.
func samePsqlOutput(t *testing.T, script string, env ...string) {
	t.Helper()
	c := startPostgresCluster(t, 3)
	pg := referencePostgres(t)
	got := psqlScript(t, c.Nodes[0].PGAddr, script, env...)
	if want := psqlScript(t, fmt.Sprintf("127.0.0.1:%d", pg.Port), script, env...); got != want {
		t.Fatalf("through certa:\n%s\nPostgreSQL:\n%s", got, want)
	}
	c.WaitConverged(20 * time.Second)
}

// psqlScript runs script with psql (echoing it, as pg_regress does) on
// the server at addr, with env added to the environment, and returns
// what psql printed.
func psqlScript(t *testing.T, addr, script string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, port, _ := strings.Cut(addr, ":")
	cmd := exec.CommandContext(ctx, "psql", "-X", "-a", "-q", "host="+host+" port="+port+" user=certa dbname=certa sslmode=disable")
	cmd.Env = append(append(os.Environ(), "PGPASSWORD="+testPassword), env...)
	cmd.Stdin = strings.NewReader(script)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// copyScript has COPY FROM stdin that PostgreSQL refuses before it asks
// for data (no data follows them in the script) and ones it takes, and
// COPYs whose triggers send notices (once: not also for the probe of a
// COPY FROM).
const copyScript = `CREATE TABLE cp_t (a int PRIMARY KEY, b int GENERATED ALWAYS AS (a * 2) STORED);
COPY cp_t (a, b) FROM stdin;
COPY cp_t FROM stdin WHERE b <> 10;
COPY cp_nope FROM stdin;
SELECT count(*) FROM cp_t;
COPY cp_t FROM stdin;
1
2
\.
COPY cp_t FROM stdin WHERE a > 3;
3
4
\.
SELECT * FROM cp_t ORDER BY a;
CREATE FUNCTION cp_note() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE '% % %', TG_WHEN, TG_OP, TG_LEVEL; RETURN NULL; END $$;
CREATE TRIGGER cp_row AFTER INSERT OR UPDATE ON cp_t FOR EACH ROW EXECUTE FUNCTION cp_note();
CREATE TRIGGER cp_stmt BEFORE INSERT ON cp_t FOR EACH STATEMENT EXECUTE FUNCTION cp_note();
COPY cp_t FROM stdin;
5
\.
COPY (INSERT INTO cp_t VALUES (6) RETURNING a) TO stdout;
COPY (UPDATE cp_t SET a = a + 10 WHERE a > 4 RETURNING a, b) TO stdout;
DROP TRIGGER cp_row ON cp_t;
DROP TRIGGER cp_stmt ON cp_t;
SELECT 0\; COPY cp_t (a) FROM stdin\; COPY cp_t (a) FROM stdin\; SELECT 1;
7
\.
8
\.
COPY cp_t (a) FROM stdin\; COPY cp_t (a) FROM stdin;
9
\.
x
\.
SELECT a FROM cp_t ORDER BY a;
DROP TABLE cp_t;
DROP FUNCTION cp_note();
`

// A COPY FROM stdin that PostgreSQL refuses fails before the client is
// asked for data: psql running a script then goes on with the next
// statement, as with PostgreSQL, rather than send the script's next
// lines as the COPY's data. Notices a COPY's triggers send reach psql.
// A query of several statements may hold several COPYs (psql's \;), the
// whole query failing with one.
func TestCopyScriptAsPostgreSQL(t *testing.T) { samePsqlOutput(t, copyScript) }

// rulesScript writes through rules whose actions answer rows: a DO
// INSTEAD SELECT, a DO ALSO SELECT, and a rule of several actions, on
// their own and in a block. PostgreSQL returns those rows to a simple
// Query (psql) and not through Parse/Bind/Execute.
const rulesScript = `CREATE TABLE rl_src (i int PRIMARY KEY);
INSERT INTO rl_src VALUES (1), (2);
CREATE TABLE rl_instead (a int);
CREATE RULE rl_instead_ins AS ON INSERT TO rl_instead DO INSTEAD SELECT i FROM rl_src ORDER BY i;
CREATE TABLE rl_also (a int PRIMARY KEY);
CREATE RULE rl_also_ins AS ON INSERT TO rl_also DO ALSO SELECT new.a * 10 AS tenfold;
CREATE TABLE rl_multi (a int PRIMARY KEY);
CREATE RULE rl_multi_ins AS ON INSERT TO rl_multi DO ALSO (SELECT 'one' AS first; INSERT INTO rl_src VALUES (new.a + 100));
INSERT INTO rl_instead VALUES (5);
INSERT INTO rl_also VALUES (5);
INSERT INTO rl_multi VALUES (5);
BEGIN;
INSERT INTO rl_instead VALUES (6);
INSERT INTO rl_also VALUES (6) RETURNING a;
WITH t AS (DELETE FROM rl_also WHERE a = 5 RETURNING *) INSERT INTO rl_instead SELECT * FROM t;
COMMIT;
SELECT * FROM rl_src ORDER BY i;
SELECT * FROM rl_also ORDER BY a;
DROP TABLE rl_src, rl_instead, rl_also, rl_multi;
`

// Rows a rule's action answers reach psql through the PostgreSQL engine
// as from PostgreSQL: certa runs a statement sent in a simple Query as
// one, not through the extended protocol, which drops them.
func TestRuleResultsAsPostgreSQL(t *testing.T) { samePsqlOutput(t, rulesScript) }

// explainScript runs EXPLAIN ANALYZE of writes to a table with triggers
// of the client's (named to sort before and after certa's capture
// trigger) in each of EXPLAIN's formats, on its own and in a block, and
// through a function that returns its lines (as the regression suite's
// explain_filter functions do).
const explainScript = `CREATE TABLE ex_t (id int PRIMARY KEY, v int);
INSERT INTO ex_t VALUES (1, 1), (2, 2);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) UPDATE ex_t SET v = 3 WHERE id = 1;
CREATE FUNCTION ex_note() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE TRIGGER audit AFTER UPDATE ON ex_t FOR EACH ROW EXECUTE FUNCTION ex_note();
CREATE TRIGGER zz AFTER INSERT OR UPDATE ON ex_t FOR EACH ROW EXECUTE FUNCTION ex_note();
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) UPDATE ex_t SET v = 4 WHERE id = 1;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) UPDATE ex_t SET v = 5 WHERE id = 1;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT YAML) INSERT INTO ex_t VALUES (3, 3);
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT XML) UPDATE ex_t SET v = 6 WHERE id = 2;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) DELETE FROM ex_t WHERE id = 3;
COMMIT;
DROP TRIGGER audit ON ex_t;
DROP TRIGGER zz ON ex_t;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON) UPDATE ex_t SET v = 7 WHERE id = 2;
CREATE FUNCTION ex_lines(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE ln text;
BEGIN
	FOR ln IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
		RETURN NEXT ln;
	END LOOP;
END $$;
SELECT ex_lines('UPDATE ex_t SET v = 8');
SELECT * FROM ex_t ORDER BY id;
`

// EXPLAIN ANALYZE shows the client's triggers, as PostgreSQL does, and
// not certa's capture trigger, in every format.
func TestExplainAsPostgreSQL(t *testing.T) { samePsqlOutput(t, explainScript) }
