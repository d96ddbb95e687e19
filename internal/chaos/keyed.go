package chaos

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"certa/internal/pgclient"
)

// keyed walks the paths issue 16 found unguarded: multi-row inserts into a
// table with a composite text and integer key, some of which try to store a
// NULL key (they must fail, whole, with 23502), larger transactions of
// keyedBlock rows made by INSERT ... SELECT, inserts whose key a BIGSERIAL
// generates (RETURNING it), and schema changes (CREATE and DROP INDEX) in
// the middle of the writes. At the end every acknowledged insert must be on
// every node with all its rows, no insert that failed may have left a row,
// no row may hold a NULL key, and no generated key may have been returned
// twice.
type keyed struct {
	next atomic.Int64
	counts
	mu        sync.Mutex
	outcomes  map[int64]keyedOp // by the insert's first id
	generated map[int64]int     // generated keys returned, and how often
}

// keyedOp is one insert: rows first .. first+rows-1, and its outcome.
type keyedOp struct {
	rows     int64
	nullKey  bool
	outcome  Outcome
	sqlstate string
}

// keyedBlock is the size of the large transactions.
const keyedBlock = 5000

func newKeyed() *keyed {
	return &keyed{outcomes: make(map[int64]keyedOp), generated: make(map[int64]int)}
}

func (w *keyed) Name() string { return "keys-and-ddl" }

func (w *keyed) Setup(ctx context.Context, addr string) error {
	if err := execOn(ctx, addr, "CREATE TABLE keyed (a text, b integer, n integer, PRIMARY KEY (a, b))"); err != nil {
		return err
	}
	return execOn(ctx, addr, "CREATE TABLE generated (id bigserial PRIMARY KEY, n integer)")
}

func (w *keyed) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	switch p := c.rng.IntN(100); {
	case p < 4: // a schema change while the others write
		sql := "CREATE INDEX IF NOT EXISTS keyed_n ON keyed (n)"
		if c.rng.IntN(2) == 0 {
			sql = "DROP INDEX IF EXISTS keyed_n"
		}
		_, err := conn.Exec(ctx, sql)
		return err == nil || pgclient.SQLState(err) != ""
	case p < 20:
		rows, err := conn.Query(ctx, "INSERT INTO generated (n) VALUES (1) RETURNING id")
		o := classify(err)
		w.add(o)
		if err == nil && len(rows) == 1 {
			w.mu.Lock()
			w.generated[toInt64(rows[0][0])]++
			w.mu.Unlock()
		}
		return err == nil || pgclient.SQLState(err) != ""
	case p < 23:
		first := w.next.Add(keyedBlock) - keyedBlock + 1
		sql := fmt.Sprintf(`WITH RECURSIVE s(i) AS (SELECT %d UNION ALL SELECT i + 1 FROM s WHERE i < %d)
			INSERT INTO keyed SELECT 'k' || i, i, i %% 97 FROM s`, first, first+keyedBlock-1)
		return w.record(conn.Exec(ctx, sql))(first, keyedOp{rows: keyedBlock})
	default:
		n := 1 + c.rng.IntN(4)
		first := w.next.Add(int64(n)) - int64(n) + 1
		null := c.rng.IntN(10) == 0
		vals := make([]string, n)
		for i := range vals {
			id := first + int64(i)
			b := fmt.Sprint(id)
			if null && i == n-1 {
				b = "NULL" // the last row: the others must not stay either
			}
			vals[i] = fmt.Sprintf("('k%d', %s, %d)", id, b, id%97)
		}
		sql := "INSERT INTO keyed VALUES " + strings.Join(vals, ", ")
		return w.record(conn.Exec(ctx, sql))(first, keyedOp{rows: int64(n), nullKey: null})
	}
}

// record returns the function that records an insert with the result of
// its statement, and whether the session is still usable.
func (w *keyed) record(_ string, err error) func(first int64, op keyedOp) bool {
	return func(first int64, op keyedOp) bool {
		op.outcome, op.sqlstate = classify(err), pgclient.SQLState(err)
		w.add(op.outcome)
		w.mu.Lock()
		w.outcomes[first] = op
		w.mu.Unlock()
		return err == nil || op.sqlstate != ""
	}
}

func (w *keyed) Check(ctx context.Context, addrs []string) Report {
	var anomalies []string
	w.mu.Lock()
	defer w.mu.Unlock()
	for first, op := range w.outcomes {
		if op.nullKey && op.outcome == OK {
			anomalies = append(anomalies, fmt.Sprintf("an insert with a NULL key at id %d was acknowledged", first))
		}
		if op.nullKey && op.outcome == Fail && op.sqlstate != "23502" && op.sqlstate != "40001" && op.sqlstate != "57P03" &&
			op.sqlstate != "55P03" && // a lock it waited for (PostgreSQL engine) can stop it first
			!lostBackend(op.sqlstate) && // as can its backend's end (PostgreSQL engine: crash-backend, kill-postgres)
			!strings.HasPrefix(op.sqlstate, "53") { // as can a full disk (53100)
			anomalies = append(anomalies, fmt.Sprintf("an insert with a NULL key at id %d failed with %s, not 23502", first, op.sqlstate))
		}
	}
	for id, n := range w.generated {
		if n > 1 {
			anomalies = append(anomalies, fmt.Sprintf("generated key %d was returned %d times", id, n))
		}
	}
	for _, addr := range addrs {
		conn, err := pgclient.Connect(ctx, addr)
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, err))
			continue
		}
		gen, gerr := conn.Query(ctx, "SELECT id FROM generated")
		rows, err := conn.Query(ctx, "SELECT b FROM keyed")
		conn.Close()
		if gerr != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, gerr))
			continue
		}
		stored := make(map[int64]bool, len(gen))
		for _, r := range gen {
			stored[toInt64(r[0])] = true
		}
		missing := 0
		for id := range w.generated {
			if !stored[id] {
				missing++
			}
		}
		if missing > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s lost %d acknowledged inserts of generated keys", addr, missing))
		}
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, err))
			continue
		}
		present := make(map[int64]bool, len(rows))
		nulls := 0
		for _, r := range rows {
			if r[0] == nil {
				nulls++
				continue
			}
			present[toInt64(r[0])] = true
		}
		lost, phantom := 0, 0
		for first, op := range w.outcomes {
			for id := first; id < first+op.rows; id++ {
				switch {
				case op.outcome == OK && !present[id] && !(op.nullKey && id == first+op.rows-1):
					lost++
				case (op.outcome == Fail || op.nullKey) && present[id]:
					// A NULL-key insert must fail whole, whether or not
					// its client heard the answer.
					phantom++
				}
			}
		}
		if nulls > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s holds %d rows with a NULL key", addr, nulls))
		}
		if lost > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s lost %d rows of acknowledged inserts", addr, lost))
		}
		if phantom > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s holds %d rows of inserts that were reported failed", addr, phantom))
		}
	}
	return w.report(anomalies)
}
