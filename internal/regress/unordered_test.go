package regress

import "testing"

// The rows of a result whose statement has no ORDER BY are sorted; those
// of an ordered one, and lines that only look like a table, are kept.
func TestUnordered(t *testing.T) {
	output := `--
--
-- a comment
--
(1 row)
SELECT * FROM t;
 a | b 
---+---
 2 | x
 1 | y
(2 rows)

SELECT * FROM t ORDER BY b;
 a | b 
---+---
 2 | x
 1 | y
(2 rows)

SELECT a
  FROM t;
 a 
---
 3
 1
 2
(3 rows)

EXPLAIN (COSTS OFF) SELECT * FROM t;
   QUERY PLAN   
----------------
 Seq Scan on t
   Filter: true
(2 rows)
`
	want := `--
--
-- a comment
--
(1 row)
SELECT * FROM t;
 a | b 
---+---
 1 | y
 2 | x
(2 rows)

SELECT * FROM t ORDER BY b;
 a | b 
---+---
 2 | x
 1 | y
(2 rows)

SELECT a
  FROM t;
 a 
---
 1
 2
 3
(3 rows)

EXPLAIN (COSTS OFF) SELECT * FROM t;
   QUERY PLAN   
----------------
 Seq Scan on t
   Filter: true
(2 rows)
`
	if got := unordered(output); got != want {
		t.Errorf("unordered:\n%s\nwant:\n%s", got, want)
	}
}
