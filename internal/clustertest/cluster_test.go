package clustertest

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

func TestWritesOnEveryNodeSeenEverywhere(t *testing.T) {
	forEachEngine(t, testWritesOnEveryNodeSeenEverywhere)
}

func testWritesOnEveryNodeSeenEverywhere(t *testing.T, start startFunc) {
	c := start(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE kv (k integer PRIMARY KEY, v text)")
	// At the default consistency another node may not have applied the
	// CREATE yet; a sync session waits until it has.
	for i := range c.Nodes {
		if tag := mustExec(t, syncConn(t, c, i), "INSERT INTO kv VALUES ($1, $2)", i, fmt.Sprintf("from n%d", i+1)); tag != "INSERT 0 1" {
			t.Fatalf("tag %q", tag)
		}
	}
	for i := range c.Nodes {
		got := values(t, syncConn(t, c, i), "SELECT k, v FROM kv ORDER BY k")
		if want := "0=from n1,1=from n2,2=from n3"; got != want {
			t.Fatalf("node %d sees %q, want %q", i, got, want)
		}
	}
}

func TestCausalToken(t *testing.T) { forEachEngine(t, testCausalToken) }

func testCausalToken(t *testing.T, start startFunc) {
	c := start(t, 3)
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE kv (k integer PRIMARY KEY, v integer)")
	mustExec(t, a, "INSERT INTO kv VALUES (1, 42)")
	token, err := a.QueryString(ctxT(t), "SHOW certa.last_commit_seqno")
	if err != nil || token == "0" {
		t.Fatalf("last_commit_seqno = %q, %v", token, err)
	}
	b := c.Conn(2)
	mustExec(t, b, "SET certa.wait_for = "+token)
	if v, err := b.QueryInt(ctxT(t), "SELECT v FROM kv WHERE k = 1"); err != nil || v != 42 {
		t.Fatalf("read after wait_for: %d, %v", v, err)
	}
	mustFail(t, b, "22023", "SET certa.consistency = 'eventual'")
	mustFail(t, b, "42704", "SET certa.nonsense = 1")
}

func TestLostUpdateRefused(t *testing.T) { forEachEngine(t, testLostUpdateRefused) }

func testLostUpdateRefused(t *testing.T, start startFunc) {
	for _, cross := range []bool{false, true} {
		t.Run(fmt.Sprintf("cross_node=%v", cross), func(t *testing.T) {
			c := start(t, 3)
			setup := c.Conn(0)
			mustExec(t, setup, "CREATE TABLE counter (id integer PRIMARY KEY, n integer)")
			mustExec(t, setup, "INSERT INTO counter VALUES (1, 0)")
			t1 := syncConn(t, c, 0)
			t2 := syncConn(t, c, 0)
			if cross {
				t2 = syncConn(t, c, 1)
			}
			mustExec(t, t1, "BEGIN")
			mustExec(t, t2, "BEGIN")
			n1, _ := t1.QueryInt(ctxT(t), "SELECT n FROM counter WHERE id = 1")
			n2, _ := t2.QueryInt(ctxT(t), "SELECT n FROM counter WHERE id = 1")
			mustExec(t, t1, "UPDATE counter SET n = $1 WHERE id = 1", n1+1)
			mustExec(t, t1, "COMMIT")
			// T2 read the old value: its update, or at the latest its
			// commit, must be refused with 40001.
			_, err := t2.Exec(ctxT(t), "UPDATE counter SET n = $1 WHERE id = 1", n2+1)
			if err == nil {
				_, err = t2.Exec(ctxT(t), "COMMIT")
			} else {
				mustExec(t, t2, "ROLLBACK")
			}
			if code := pgclient.SQLState(err); code != "40001" {
				t.Fatalf("second writer: want 40001, got %v", err)
			}
			// certa names the table; PostgreSQL's own refusal (the same
			// node, over the PostgreSQL engine) names the cause.
			if msg := err.Error(); !strings.Contains(msg, "counter") && !strings.Contains(msg, "changed") && !strings.Contains(msg, "concurrent update") {
				t.Errorf("error does not explain the conflict: %v", err)
			}
			if n, _ := syncConn(t, c, 2).QueryInt(ctxT(t), "SELECT n FROM counter WHERE id = 1"); n != 1 {
				t.Fatalf("counter = %d, want 1", n)
			}
		})
	}
}

// Clients on every node increment one counter with autocommit UPDATEs at
// once. Each acknowledged increment must be in the counter exactly once:
// a lost certification is retried by the server on a fresh snapshot (the
// statement runs again), never by applying the old write set, and a
// statement refused with 40001 after its retries changed nothing.
func TestAutocommitRetryLosesNoIncrement(t *testing.T) {
	forEachEngine(t, testAutocommitRetryLosesNoIncrement)
}

func testAutocommitRetryLosesNoIncrement(t *testing.T, start startFunc) {
	c := start(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE counter (id integer PRIMARY KEY, n integer NOT NULL)")
	mustExec(t, c.Conn(0), "INSERT INTO counter VALUES (1, 0)")
	const clientsPerNode, increments = 2, 40
	var (
		wg             sync.WaitGroup
		mu             sync.Mutex
		acked, refused int
		unexpected     []error
	)
	for node := range c.Nodes {
		for range clientsPerNode {
			conn := syncConn(t, c, node) // sync: the table exists here too
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range increments {
					_, err := conn.Exec(ctxT(t), "UPDATE counter SET n = n + 1 WHERE id = 1")
					mu.Lock()
					switch {
					case err == nil:
						acked++
					case pgclient.SQLState(err) == "40001":
						refused++
					default:
						unexpected = append(unexpected, err)
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(unexpected) > 0 {
		t.Fatalf("%d unexpected errors, first: %v", len(unexpected), unexpected[0])
	}
	t.Logf("%d increments acknowledged, %d refused with 40001 after retries", acked, refused)
	if acked == 0 {
		t.Fatal("no increment acknowledged")
	}
	for i := range c.Nodes {
		if n, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT n FROM counter WHERE id = 1"); err != nil || n != int64(acked) {
			t.Fatalf("node %d: counter = %d, %v; want %d (the acknowledged increments)", i, n, err, acked)
		}
	}
}

func TestDDL(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	a := c.Conn(1)
	if tag := mustExec(t, a, "CREATE TABLE t (id integer PRIMARY KEY, v text)"); tag != "CREATE TABLE" {
		t.Fatalf("tag %q", tag)
	}
	mustExec(t, a, "CREATE INDEX t_v ON t (v)")
	mustExec(t, a, "ALTER TABLE t ADD COLUMN w integer")
	mustExec(t, a, "INSERT INTO t VALUES (1, 'x', 7)")
	for i := range c.Nodes {
		if v, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT w FROM t WHERE id = 1"); err != nil || v != 7 {
			t.Fatalf("node %d: %d, %v", i, v, err)
		}
	}
	// No primary key: the table takes rows (by rowid), keeps them when
	// ALTER TABLE gives it a key, and every node has them.
	mustExec(t, a, "CREATE TABLE nopk (a integer, b text)")
	mustExec(t, a, "INSERT INTO nopk VALUES (1, 'x'), (2, 'y')")
	mustExec(t, syncConn(t, c, 2), "UPDATE nopk SET b = 'z' WHERE a = 2")
	mustExec(t, a, "ALTER TABLE nopk ADD PRIMARY KEY (a)")
	mustExec(t, a, "INSERT INTO nopk VALUES (3, 'x')")
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT a, b FROM nopk ORDER BY a"); got != "1=x,2=z,3=x" {
			t.Fatalf("node %d: %s", i, got)
		}
	}
	// TRUNCATE empties the table on every node.
	if tag := mustExec(t, a, "TRUNCATE t"); tag != "TRUNCATE TABLE" {
		t.Fatalf("tag %q", tag)
	}
	for i := range c.Nodes {
		if n, err := syncConn(t, c, i).QueryInt(ctxT(t), "SELECT count(*) FROM t"); err != nil || n != 0 {
			t.Fatalf("node %d after TRUNCATE: %d rows, %v", i, n, err)
		}
	}
	mustExec(t, a, "DROP TABLE t")
	for i := range c.Nodes {
		mustFail(t, syncConn(t, c, i), "42P01", "SELECT * FROM t")
	}
}
