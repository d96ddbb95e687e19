package clustertest

import (
	"testing"

	"certa/internal/pgclient"
)

// Rows read FOR UPDATE certify as if written: a concurrent commit to them,
// on any node, makes the reader's COMMIT fail with 40001; and the reader
// committing first makes a concurrent writer of them fail.
func TestSelectForUpdateCertifies(t *testing.T) {
	forEachEngine(t, testSelectForUpdateCertifies)
}

func testSelectForUpdateCertifies(t *testing.T, start startFunc) {
	c := start(t, 3)
	a, b := c.Conn(0), syncConn(t, c, 1) // b's statements see every earlier commit
	mustExec(t, a, "CREATE TABLE acc (id integer PRIMARY KEY, balance integer)")
	mustExec(t, a, "INSERT INTO acc VALUES (1, 100), (2, 100)")

	// The writer commits first: the reader fails.
	mustExec(t, a, "BEGIN")
	if got := values(t, a, "SELECT id, balance FROM acc WHERE id = 1 FOR UPDATE"); got != "1=100" {
		t.Fatalf("read %q", got)
	}
	mustExec(t, b, "UPDATE acc SET balance = balance - 10 WHERE id = 1")
	mustFail(t, a, "40001", "COMMIT")

	// The reader commits first (it wrote nothing else): the writer, whose
	// transaction had written before, fails (at its next statement if its
	// node applied the reader's commit by then, else at COMMIT). A writer
	// that had only read could still move its snapshot past the reader's
	// commit, since nothing it read changed, and commit after it.
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE acc SET balance = 50 WHERE id = 1")
	mustExec(t, a, "BEGIN")
	values(t, a, "SELECT id, balance FROM acc WHERE id = 2 FOR UPDATE")
	mustExec(t, a, "COMMIT")
	_, err := b.Exec(ctxT(t), "UPDATE acc SET balance = 0 WHERE id = 2")
	if err == nil {
		_, err = b.Exec(ctxT(t), "COMMIT")
	} else {
		b.Exec(ctxT(t), "ROLLBACK")
	}
	if pgclient.SQLState(err) != "40001" {
		t.Fatalf("writer after a FOR UPDATE commit: %v, want 40001", err)
	}

	// A row read FOR SHARE is not locked.
	mustExec(t, a, "BEGIN")
	values(t, a, "SELECT id, balance FROM acc WHERE id = 2 FOR SHARE")
	mustExec(t, b, "UPDATE acc SET balance = 1 WHERE id = 2")
	mustExec(t, a, "COMMIT")
}
