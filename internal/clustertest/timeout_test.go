package clustertest

import (
	"testing"
	"time"

	"certa/internal/pgclient"
)

// statement_timeout cancels a long statement with 57014 and the session
// goes on; idle_in_transaction (set by flag) ends an idle transaction's
// connection with 25P03 and rolls it back.
func TestTimeouts(t *testing.T) { forEachEngine(t, testTimeouts) }

func testTimeouts(t *testing.T, startCluster startFunc) {
	c := startCluster(t, 3, "--idle-in-transaction-timeout", "300ms")
	a := c.Conn(0)
	mustExec(t, a, "CREATE TABLE tt (id integer PRIMARY KEY, v integer)")
	mustExec(t, a, "SET statement_timeout = '200ms'")
	const forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
	start := time.Now()
	mustFail(t, a, "57014", forever)
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("statement_timeout of 200ms took %s", d)
	}
	mustExec(t, a, "SET statement_timeout = 0")
	mustExec(t, a, "INSERT INTO tt VALUES (1, 1)")

	b := c.Conn(1)
	mustExec(t, b, "BEGIN")
	mustExec(t, b, "UPDATE tt SET v = 2 WHERE id = 1")
	time.Sleep(600 * time.Millisecond) // the stimulus: stay idle longer than the timeout
	if _, err := b.Exec(ctxT(t), "SELECT 1"); pgclient.SQLState(err) != "25P03" {
		t.Fatalf("after idling in a transaction: %v, want 25P03", err)
	}
	got, err := syncConn(t, c, 1).QueryInt(ctxT(t), "SELECT v FROM tt WHERE id = 1")
	if err != nil || got != 1 {
		t.Fatalf("after the idle transaction ended: v = %d, %v (want 1: rolled back)", got, err)
	}
}
