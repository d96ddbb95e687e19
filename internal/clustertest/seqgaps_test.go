package clustertest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"certa/internal/testcluster"
)

// sequenceGapsScript has statements that take sequence values and fail:
// as in PostgreSQL, the values stay taken (currval tells the last one) and
// the next statement takes the next (PostgreSQL's constraints test, whose
// third INSERT succeeds because the second failed with 2). They fail by
// dividing by zero in a CHECK: the embedded engine tells a violated
// CHECK's failing row only where every value is a constant, not one of
// nextval.
const sequenceGapsScript = `CREATE SEQUENCE gap_seq;
CREATE TABLE gap_t (x int DEFAULT nextval('gap_seq'), y text DEFAULT '-',
	z int DEFAULT -1 * currval('gap_seq'), CHECK (100 / (x - 2) <> 0), CHECK (x + z = 0),
	CHECK (100 / (length(y) - 4) <> 0));
SELECT nextval('gap_seq');
INSERT INTO gap_t (y) VALUES ('a');
SELECT currval('gap_seq');
INSERT INTO gap_t (y) VALUES ('b');
INSERT INTO gap_t (y) SELECT 'c' FROM generate_series(1, 3);
INSERT INTO gap_t (y) VALUES ('d');
SELECT currval('gap_seq');
BEGIN;
INSERT INTO gap_t (y) VALUES ('e');
SAVEPOINT s;
INSERT INTO gap_t (y) SELECT 'f' || repeat('x', g) FROM generate_series(1, 5) g;
ROLLBACK TO SAVEPOINT s;
SELECT currval('gap_seq');
INSERT INTO gap_t (y) VALUES ('g');
COMMIT;
SELECT currval('gap_seq'), nextval('gap_seq');
SELECT * FROM gap_t ORDER BY x;
`

// A statement that failed keeps the sequence values it took, on both
// engines, as PostgreSQL's does.
func TestFailedStatementsKeepSequenceValues(t *testing.T) {
	forEachEngine(t, func(t *testing.T, start startFunc) {
		sameAsPostgreSQL(t, start(t, 1).Nodes[0].PGAddr, sequenceGapsScript)
	})
}

// sequenceRestartScript restarts sequences, as test fixtures do between
// runs (PostgreSQL's constraints test).
const sequenceRestartScript = `CREATE TABLE rs (id serial PRIMARY KEY, v text);
INSERT INTO rs (v) VALUES ('a'), ('b');
ALTER SEQUENCE rs_id_seq RESTART WITH 100;
INSERT INTO rs (v) VALUES ('c');
DELETE FROM rs;
ALTER SEQUENCE rs_id_seq RESTART WITH 4;
INSERT INTO rs (v) VALUES ('d'), ('e');
ALTER SEQUENCE IF EXISTS nope RESTART WITH 3;
ALTER SEQUENCE rs_id_seq RESTART WITH 5000000000;
SELECT * FROM rs ORDER BY id;
`

// ALTER SEQUENCE ... RESTART WITH moves the sequence, as in PostgreSQL.
// On the embedded engine every node then reserves its values from there,
// also one that held values from before. (On the PostgreSQL engine each
// node hands out values of its own blocks, and one whose block the new
// value precedes starts that block again: values it handed out before
// come again, as they would in PostgreSQL after a RESTART below them.)
func TestSequenceRestart(t *testing.T) {
	forEachEngine(t, func(t *testing.T, start startFunc) {
		sameAsPostgreSQL(t, start(t, 1).Nodes[0].PGAddr, sequenceRestartScript)
	})
	t.Run("nodes", func(t *testing.T) {
		c := testcluster.Start(t, 3, testArgs...)
		psql(t, c, 0, "CREATE TABLE rs3 (id serial PRIMARY KEY)", "INSERT INTO rs3 DEFAULT VALUES")
		psql(t, c, 1, "INSERT INTO rs3 DEFAULT VALUES")
		psql(t, c, 0, "ALTER SEQUENCE rs3_id_seq RESTART WITH 1000000")
		for node := range 3 {
			out := psql(t, c, node, "INSERT INTO rs3 DEFAULT VALUES RETURNING id")
			fields := strings.Fields(out)
			if len(fields) < 3 {
				t.Fatalf("node %d: %q", node+1, out)
			}
			if id, err := strconv.Atoi(fields[2]); err != nil || id < 1000000 {
				t.Errorf("node %d took %s after RESTART WITH 1000000:\n%s", node+1, fields[2], out)
			}
		}
	})
}

// A table's first rows, written on the node that made the table, take
// its sequence's first values (1, 2, 3, as in PostgreSQL): that node
// reserves the first block, the others theirs after it. Fixtures that
// insert parents and then children with literal parent ids rely on it.
func TestSequencesStartWhereTheTableWasMade(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	for _, node := range []int{2, 1} {
		var cmds []string
		for i := range 4 {
			name := fmt.Sprintf("first_%d_%d", node, i)
			cmds = append(cmds, "CREATE TABLE "+name+" (id serial PRIMARY KEY, v text)", "INSERT INTO "+name+" (v) VALUES ('a') RETURNING id")
		}
		out := psql(t, c, node, cmds...)
		if got := strings.Count(out, "\n  1\n"); got != 4 {
			t.Errorf("node %d: %d of 4 tables' first rows took 1:\n%s", node+1, got, out)
		}
	}
}
