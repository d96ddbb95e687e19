package clustertest

import (
	"fmt"
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

// A SELECT ... FOR UPDATE, which certa runs rewritten to learn the rows it
// locks, answers as the same SELECT without the lock: the same column
// types (cid, tid and xid among them, which psql aligns by type) and
// values, through the simple protocol (text) and the extended one (pgx
// asks binary for the columns whose type it knows).
func TestSelectForUpdateKeepsColumns(t *testing.T) {
	c := startPostgresCluster(t, 3)
	simple := c.Conn(0)
	extended, err := pgclient.ConnectExtended(ctxT(t), "postgres://certa@"+c.Nodes[0].PGAddr+"/certa?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer extended.Close()
	mustExec(t, simple, "CREATE TABLE lk (id integer PRIMARY KEY, name text, tags text[], at timestamptz)")
	mustExec(t, simple, "INSERT INTO lk VALUES (1, 'a', '{x,y}', '2026-01-02 03:04:05+00'), (2, NULL, NULL, NULL)")
	const cols = "SELECT ctid, cmin, xmin, id, name, tags, at FROM lk ORDER BY id"
	for name, conn := range map[string]*pgclient.Conn{"simple": simple, "extended": extended} {
		mustExec(t, conn, "BEGIN")
		plain, err := conn.QueryDescribed(ctxT(t), cols)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		locked, err := conn.QueryDescribed(ctxT(t), cols+" FOR UPDATE")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fmt.Sprint(locked.OIDs) != fmt.Sprint(plain.OIDs) || fmt.Sprint(locked.Names) != fmt.Sprint(plain.Names) {
			t.Errorf("%s: FOR UPDATE describes %v %v, without it %v %v", name, locked.Names, locked.OIDs, plain.Names, plain.OIDs)
		}
		if fmt.Sprint(locked.Rows) != fmt.Sprint(plain.Rows) {
			t.Errorf("%s: FOR UPDATE returns %v, without it %v", name, locked.Rows, plain.Rows)
		}
		decoded, err := conn.Query(ctxT(t), cols+" FOR UPDATE")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, _ := conn.Query(ctxT(t), cols)
		if fmt.Sprint(decoded) != fmt.Sprint(want) {
			t.Errorf("%s: FOR UPDATE decodes to %v, without it %v", name, decoded, want)
		}
		mustExec(t, conn, "COMMIT")
	}

	// The lock still certifies: a commit of a locked row meanwhile fails
	// the reader, whose rows came in binary.
	mustExec(t, extended, "BEGIN")
	if _, err := extended.Query(ctxT(t), cols+" FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, syncConn(t, c, 1), "UPDATE lk SET name = 'b' WHERE id = 2")
	mustFail(t, extended, "40001", "COMMIT")
}
