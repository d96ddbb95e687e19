package clustertest

import "testing"

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
