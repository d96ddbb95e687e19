package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

// havingScript has queries with HAVING and no GROUP BY, which PostgreSQL
// runs as one group (also of no rows), and columns read outside the
// aggregates of a grouped query, and positions that are not in the select
// list, and ORDER BY ... USING (PostgreSQL's regression tests
// select_having, select_implicit and select_distinct_on, and more).
const havingScript = `CREATE TABLE hv (a int, b int, c text);
INSERT INTO hv VALUES (0, 1, 'XXXX'), (1, 2, 'AAAA'), (2, 2, 'AAAA');
SELECT min(a), max(a) FROM hv HAVING min(a) = max(a);
SELECT min(a), max(a) FROM hv HAVING min(a) < max(a);
SELECT a FROM hv HAVING min(a) < max(a);
SELECT 1 AS one FROM hv HAVING a > 1;
SELECT 1 AS one FROM hv HAVING 1 > 2;
SELECT 1 AS one FROM hv HAVING 1 < 2;
SELECT 1 AS one FROM hv WHERE 1/a = 1 HAVING 1 < 2;
SELECT 1 AS one FROM hv WHERE a > 100 HAVING 1 < 2;
SELECT 'x', 2 + 3 FROM hv HAVING count(*) > 2;
SELECT FROM hv HAVING true;
SELECT NULL::int AS n FROM hv HAVING true;
SELECT b, c FROM hv GROUP BY b;
SELECT b, count(*) FROM hv GROUP BY b HAVING c = 'AAAA' ORDER BY b;
SELECT count(*) FROM hv GROUP BY a ORDER BY b;
SELECT c, count(*) FROM hv GROUP BY 3;
SELECT c, count(*) FROM hv GROUP BY 0;
SELECT c, count(*) FROM hv GROUP BY 1 ORDER BY 3;
SELECT c FROM hv ORDER BY 2;
SELECT x.b, count(*) FROM hv x, hv y WHERE x.a = y.a GROUP BY x.b ORDER BY b;
SELECT 1 UNION SELECT 2 ORDER BY 1;
SELECT * FROM hv ORDER BY c USING <, b USING >, a USING <;
SELECT DISTINCT ON (c) c, b, a FROM hv ORDER BY c USING >, a USING >;
SELECT * FROM hv ORDER BY b USING OPERATOR(pg_catalog.>) NULLS LAST, a;
`

// HAVING without GROUP BY makes one group, as in PostgreSQL; a column
// read outside the aggregates fails at the reference.
func TestHavingAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	sameAsPostgreSQL(t, c.Nodes[0].PGAddr, havingScript)
}
