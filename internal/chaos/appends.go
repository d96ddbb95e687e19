package chaos

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"certa/internal/elle"
	"certa/internal/pgclient"
)

// appends runs list-append transactions over a few hot keys; the history
// is checked for anomalies with elle (snapshot isolation allows G2-item,
// write skew, and nothing else; serializable transactions allow none).
//
// Clients move to fresh keys every keyEpoch, as the register workload's
// do: a read returns the whole list, so with the same keys for a whole
// 20-minute soak the lists grew to thousands of elements, and the history
// of what reads returned to gigabytes (and every write set to 25 KB).
type appends struct {
	// serializable: every transaction is SERIALIZABLE, and the history
	// must have no anomaly at all (not even G2-item), in table table.
	serializable bool
	table        string
	start        time.Time
	next         atomic.Int64 // the next value appended, unique across the run
	counts
	mu      sync.Mutex
	history []elle.Txn
}

// appendsHot is how many keys are in use at a time.
const appendsHot = 6

func newAppends() *appends { return &appends{table: "lists", start: time.Now()} }

// newSerializableAppends is the list-append workload of serializable
// transactions, on a table of its own.
func newSerializableAppends() *appends {
	return &appends{serializable: true, table: "lists_serializable", start: time.Now()}
}

func (w *appends) Name() string {
	if w.serializable {
		return "list-append-serializable"
	}
	return "list-append"
}

func (w *appends) Setup(ctx context.Context, addr string) error {
	return execOn(ctx, addr, "CREATE TABLE "+w.table+" (k integer PRIMARY KEY, v text NOT NULL)")
}

func (w *appends) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	var ops []elle.Op
	for range 1 + c.rng.IntN(4) {
		k := epoch(w.start)*appendsHot + c.rng.IntN(appendsHot)
		if c.rng.IntN(2) == 0 {
			ops = append(ops, elle.Op{Kind: elle.Read, Key: strconv.Itoa(k)})
		} else {
			ops = append(ops, elle.Op{Kind: elle.Append, Key: strconv.Itoa(k), Value: int(w.next.Add(1))})
		}
	}
	o := w.run(ctx, conn, ops)
	w.add(o)
	if o != OK {
		for i := range ops {
			ops[i].Read = nil // unknown
		}
	}
	w.mu.Lock()
	w.history = append(w.history, elle.Txn{Ops: ops, Outcome: elle.Outcome(o)})
	w.mu.Unlock()
	return o == OK
}

// run executes ops in one transaction, filling in what the reads saw.
func (w *appends) run(ctx context.Context, conn *pgclient.Conn, ops []elle.Op) Outcome {
	begin := "BEGIN"
	if w.serializable {
		begin = "BEGIN ISOLATION LEVEL SERIALIZABLE"
	}
	if _, err := conn.Exec(ctx, begin); err != nil {
		return Fail
	}
	for i, op := range ops {
		k, _ := strconv.Atoi(op.Key)
		if op.Kind == elle.Append {
			_, err := conn.Exec(ctx, "INSERT INTO "+w.table+" AS l VALUES ($1, $2) ON CONFLICT (k) DO UPDATE SET v = l.v || ',' || excluded.v",
				k, strconv.Itoa(op.Value))
			if err != nil {
				return Fail
			}
			continue
		}
		rows, err := conn.Query(ctx, "SELECT v FROM "+w.table+" WHERE k = $1", k)
		if err != nil {
			return Fail
		}
		ops[i].Read = []int{}
		if len(rows) == 1 {
			for _, s := range strings.Split(fmt.Sprint(rows[0][0]), ",") {
				n, err := strconv.Atoi(s)
				if err != nil {
					return Fail
				}
				ops[i].Read = append(ops[i].Read, n)
			}
		}
	}
	_, err := conn.Exec(ctx, "COMMIT")
	return classify(err)
}

func (w *appends) Check(ctx context.Context, addrs []string) Report {
	w.mu.Lock()
	res := elle.Check(w.history)
	w.mu.Unlock()
	allowed := []string{elle.G2Item} // snapshot isolation
	if w.serializable {
		allowed = nil
	}
	var anomalies []string
	if !res.Valid(allowed...) {
		for kind, list := range res.Anomalies {
			if slices.Contains(allowed, kind) {
				continue
			}
			for _, a := range list {
				anomalies = append(anomalies, a.String())
			}
		}
	}
	return w.report(anomalies)
}
