package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

// stringFunctionsScript calls PostgreSQL's string functions the embedded
// engine makes (pg_repeat...) with edge cases: negative and zero counts,
// padding that cuts, characters past ASCII, NULLs, and the calls
// PostgreSQL refuses.
const stringFunctionsScript = `SELECT repeat('ab', 3), repeat('x', 0), repeat('x', -2), lpad('hi', 5), lpad('hi', 5, 'xy'), lpad('hello', 3), rpad('hi', 5, '*'), lpad('hi', 5, ''), lpad('hi', -1);
SELECT left('abcdé', 2), left('abcdé', -2), right('abcdé', 2), right('abcdé', -2), left('abc', 10), right('abc', -10);
SELECT reverse('abcé'), initcap('hello wORLD foo_bar 3rd'), split_part('a,b,c', ',', 2), split_part('a,b,c', ',', -1), split_part('a,b,c', ',', 5), split_part('', ',', 1), split_part('abc', '', 1), split_part('abc', '', 2);
SELECT starts_with('alphabet', 'alph'), starts_with('alphabet', 'x'), ascii('A'), ascii(''), ascii('é'), chr(65), chr(233);
SELECT repeat(NULL, 2), lpad('a', NULL), chr(NULL) IS NULL;
CREATE TABLE sf (id int PRIMARY KEY, s text, n int);
INSERT INTO sf VALUES (1, 'a-b-c', 2), (2, NULL, 1), (3, 'xyz', -1);
SELECT id, split_part(s, '-', n), repeat(s, n), left(s, n), right(s, n), rpad(s, n + 3, '.') FROM sf ORDER BY id;
SELECT split_part('a,b', ',', 0);
SELECT chr(0);
SELECT chr(-1);
SELECT chr(1114112);
SELECT chr(55296);
SELECT repeat('xy', 1000000000);
`

// The string functions of the embedded engine answer and fail as
// PostgreSQL's.
func TestSQLiteStringFunctionsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, stringFunctionsScript)
}
