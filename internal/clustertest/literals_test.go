package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

// literalsScript has string constants that their types do not read: in
// casts, compared with columns (an empty table, an IN list that matched
// before, a COALESCE never reaching them), out of range. PostgreSQL's
// parser fails on each, at the constant (LINE and the caret). (The
// embedded engine gives the place only where the statement has one such
// constant of that text.)
const literalsScript = `SELECT 'foo'::int;
SELECT 1 + 'foo'::int4 AS x;
SELECT int4 'bar';
SELECT '99999999999'::int4;
SELECT ' 12 '::int8, '1.5'::numeric;
SELECT 'abc'::numeric;
SELECT '1e400'::float8;
SELECT 'tru'::boolean;
SELECT '2024-13-01'::date;
SELECT '2024-02-30'::date;
SELECT 'ok' AS label, 'x'::int;
CREATE TABLE lit_t (a int, n numeric, f float8, b boolean);
SELECT * FROM lit_t WHERE a = 'zz';
SELECT * FROM lit_t WHERE n = 'zz';
SELECT * FROM lit_t WHERE f = '1e999';
INSERT INTO lit_t VALUES (1, 1.5, 2.5, true);
SELECT * FROM lit_t WHERE a = 'zz';
SELECT * FROM lit_t WHERE a = ' 1 ';
SELECT * FROM lit_t WHERE a IN ('1', 'q');
SELECT coalesce(a, 'r') FROM lit_t;
SELECT * FROM lit_t WHERE a = '99999999999';
SELECT * FROM lit_t WHERE b = 'maybe';
SELECT * FROM lit_t
  WHERE n = '1.5x';
INSERT INTO lit_t VALUES ('34.5', 1, 1, true);
INSERT INTO lit_t (b, a) VALUES ('t', 1), ('f', '3000000000');
INSERT INTO lit_t (a, f) VALUES (2, 'abc');
INSERT INTO lit_t VALUES (1, '1.5x', 1, 'maybe');
INSERT INTO lit_t VALUES (1, 1, 1, 'maybe');
INSERT INTO lit_t VALUES ('   ');
INSERT INTO lit_t VALUES ('- 1234');
SELECT * FROM lit_t ORDER BY a;
SELECT * FROM (TABLE lit_t) AS s (a, b, c, d, e);
SELECT * FROM (SELECT 1) AS s (a, b);
`

// Constants the embedded engine cannot read fail as PostgreSQL's do:
// the same message, at the same place.
func TestLiteralErrorsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, literalsScript)
}

// uniqueScript inserts rows whose keys are taken, by rows before them,
// by a row of the same statement, on one column and on two.
const uniqueScript = `CREATE TABLE u_t (id int PRIMARY KEY, code text UNIQUE, n int);
INSERT INTO u_t VALUES (1, 'a', 1);
INSERT INTO u_t VALUES (1, 'b', 2);
INSERT INTO u_t VALUES (2, 'a', 2);
INSERT INTO u_t VALUES (3, 'c', 1), (4, 'c', 2);
INSERT INTO u_t (code, id) VALUES ('d', '01');
INSERT INTO u_t (n, id, code) VALUES (5, -7, 'e'), (6, -7, 'f');
CREATE TABLE u2 (a bigint, b text, PRIMARY KEY (a, b));
INSERT INTO u2 VALUES (1, 'x y'), (1, 'y');
INSERT INTO u2 VALUES (2, 'z'), (1, 'x y');
CREATE TABLE u3 (id serial PRIMARY KEY, "Code" text UNIQUE);
INSERT INTO u3 ("Code") VALUES ('q'), ('q');
CREATE TABLE u4 (g uuid UNIQUE);
INSERT INTO u4 VALUES ('11111111-1111-1111-1111-111111111111');
INSERT INTO u4 VALUES ('{11111111-1111-1111-1111-111111111111}');
INSERT INTO u4 VALUES ('A0EEBC999C0B4EF8BB6D6BB9BD380A11'), ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11');
SELECT * FROM u_t ORDER BY id;
`

// A unique violation of an INSERT's VALUES tells the key, as
// PostgreSQL's DETAIL does.
func TestUniqueViolationsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, uniqueScript)
}

// failingRowScript violates CHECK and NOT NULL constraints with rows
// whose every value is known (constants, constant defaults, NULL), in
// column order and not.
const failingRowScript = `CREATE TABLE fr (id int PRIMARY KEY, name text NOT NULL, ok boolean DEFAULT true,
	qty int DEFAULT 0 CHECK (qty >= 0), note text DEFAULT 'none', CHECK (name <> 'bad'));
INSERT INTO fr VALUES (1, 'a', false, -1, 'x');
INSERT INTO fr (name, id) VALUES ('bad', 2);
INSERT INTO fr (id, qty) VALUES (3, 5);
INSERT INTO fr VALUES (4, NULL);
INSERT INTO fr (id, name, qty) VALUES (6, 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy', -2);
INSERT INTO fr VALUES (7, 'ok', 't', '-3');
UPDATE fr SET qty = -1;
SELECT count(*) FROM fr;
`

// A violated CHECK or NOT NULL constraint of an INSERT of one row tells
// the row, as PostgreSQL's DETAIL does. (The embedded engine tells it
// only where every value is a constant, a constant default or NULL.)
func TestFailingRowsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, failingRowScript)
}

// commentsScript has block comments inside block comments, with
// statements and semicolons in them, as PostgreSQL's own regression
// test comments.sql does: psql sends the whole as one statement.
const commentsScript = `/* A block comment around a statement with its own:
SELECT /* embedded */ 'embedded' AS x2;
*/
SELECT -- and after it...
/* Nested.
/* Second level, with a quote ' and a statement;
SELECT 'deeper' AS n2;
*/
*/
'nested example' AS sixth;
SELECT /* a /* b */ c */ 1 AS one;
/* and an empty statement */;
`

// Block comments nest, as in PostgreSQL.
func TestNestedCommentsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, commentsScript)
}

// missingColumnsScript names columns and tables that are not there:
// unqualified, qualified by a table of the statement, by none, and by a
// table's name where the statement gave it an alias.
const missingColumnsScript = `CREATE TABLE mc_t (id int PRIMARY KEY, a int);
DELETE FROM mc_t dt WHERE mc_t.a > 25;
SELECT nope FROM mc_t;
SELECT dt.nope FROM mc_t dt;
SELECT x.a FROM mc_t;
SELECT a FROM mc_t WHERE zz = 1;
UPDATE mc_t SET a = 1 WHERE b = 2;
SELECT s.q FROM (SELECT 1 AS p) s;
WITH w AS (SELECT 1 AS k) SELECT w.j FROM w;
SELECT * FROM mc_t t1 JOIN mc_t t2 ON t1.a = t3.a;
SELECT (SELECT dt.zz FROM mc_t d2) FROM mc_t dt;
`

// A column or table a statement names that is not there fails as in
// PostgreSQL: the same SQLSTATE and message, at the reference.
func TestMissingColumnsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, missingColumnsScript)
}
