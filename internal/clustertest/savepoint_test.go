package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

// Savepoints through the wire, as GORM's nested transactions use them, and
// every node ends with exactly the rows PostgreSQL would keep (the same
// statements on PostgreSQL 15 keep 1,3,4,5,7,8,9 and 10=x).
func TestSavepointsNestedTransactions(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	// b reads with 'sync': its transaction must start after a's commit
	// is applied on its node, or that apply parks it and, as it has seen
	// an error, it could not be re-run.
	a, b, other := c.Conn(0), syncConn(t, c, 1), c.Conn(0)
	mustExec(t, a, "CREATE TABLE items (id integer PRIMARY KEY, v text)")
	mustExec(t, a, "INSERT INTO items VALUES (10, 'x')")

	// GORM: db.Transaction(func(tx) { tx.Create(1); tx.Transaction(func(tx2)
	// { tx2.Create(2); return err }); tx.Create(3) }).
	for _, s := range [][2]string{
		{"BEGIN", "BEGIN"},
		{"INSERT INTO items VALUES (1, 'a')", "INSERT 0 1"},
		{"SAVEPOINT sp1", "SAVEPOINT"},
		{"INSERT INTO items VALUES (2, 'b')", "INSERT 0 1"},
		{"ROLLBACK TO SAVEPOINT sp1", "ROLLBACK"},
		{"INSERT INTO items VALUES (3, 'c')", "INSERT 0 1"},
		{"COMMIT", "COMMIT"},
	} {
		if tag := mustExec(t, a, s[0]); tag != s[1] {
			t.Fatalf("%s: tag %q, want %q", s[0], tag, s[1])
		}
	}

	// A failed statement, recovered with ROLLBACK TO, on another node.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "INSERT INTO items VALUES (4, 'd')")
	mustExec(t, b, "SAVEPOINT s")
	mustFail(t, b, "23505", "INSERT INTO items VALUES (10, 'dup')")
	mustFail(t, b, "25P02", "INSERT INTO items VALUES (6, 'ignored')")
	mustFail(t, b, "3B001", "ROLLBACK TO SAVEPOINT nosuch")
	mustExec(t, b, "ROLLBACK TO SAVEPOINT s")
	mustExec(t, b, "INSERT INTO items VALUES (5, 'e')")
	mustExec(t, b, "RELEASE SAVEPOINT s")
	if tag := mustExec(t, b, "COMMIT"); tag != "COMMIT" {
		t.Fatalf("COMMIT after recovering: tag %q", tag)
	}

	// A block that failed without a savepoint: COMMIT answers ROLLBACK and
	// keeps nothing.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "INSERT INTO items VALUES (6, 'f')")
	mustFail(t, b, "23505", "INSERT INTO items VALUES (10, 'dup')")
	if tag := mustExec(t, b, "COMMIT"); tag != "ROLLBACK" {
		t.Fatalf("COMMIT of a failed block: tag %q, want ROLLBACK", tag)
	}
	mustFail(t, b, "25P01", "SAVEPOINT outside")

	// Another writer on the same node parks the transaction between its
	// statements; its savepoint still holds.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "INSERT INTO items VALUES (7, 'g')")
	mustExec(t, a, "SAVEPOINT p")
	mustExec(t, a, "UPDATE items SET v = 'changed' WHERE id = 10")
	mustExec(t, other, "INSERT INTO items VALUES (8, 'h')")
	mustExec(t, a, "ROLLBACK TO p")
	mustExec(t, a, "INSERT INTO items VALUES (9, 'i')")
	if tag := mustExec(t, a, "COMMIT"); tag != "COMMIT" {
		t.Fatalf("COMMIT: tag %q", tag)
	}

	want := "1=a,3=c,4=d,5=e,7=g,8=h,9=i,10=x"
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, v FROM items ORDER BY id"); got != want {
			t.Errorf("node %d holds %s, want %s", i, got, want)
		}
	}
}
