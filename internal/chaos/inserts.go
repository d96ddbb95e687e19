package chaos

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"certa/internal/pgclient"
)

// inserts does autocommit inserts of unique keys, every other one into a
// table without a primary key (replicated by rowid or by whole row, and
// where nothing refuses a second copy of a row); at the end every
// acknowledged insert must be on every node, once, and no insert that
// certainly failed may be anywhere.
type inserts struct {
	next atomic.Int64
	counts
	mu       sync.Mutex
	outcomes map[int64]Outcome
}

func newInserts() *inserts { return &inserts{outcomes: make(map[int64]Outcome)} }

func (w *inserts) Name() string { return "acked-inserts" }

func (w *inserts) Setup(ctx context.Context, addr string) error {
	if err := execOn(ctx, addr, "CREATE TABLE acked (id bigint PRIMARY KEY)"); err != nil {
		return err
	}
	return execOn(ctx, addr, "CREATE TABLE acked_nokey (id bigint NOT NULL)")
}

func (w *inserts) Step(ctx context.Context, c *client, conn *pgclient.Conn) bool {
	id := w.next.Add(1)
	table := "acked"
	if id%2 == 1 {
		table = "acked_nokey"
	}
	_, err := conn.Exec(ctx, "INSERT INTO "+table+" VALUES ($1)", id)
	o := classify(err)
	w.add(o)
	w.mu.Lock()
	w.outcomes[id] = o
	w.mu.Unlock()
	return err == nil
}

func (w *inserts) Check(ctx context.Context, addrs []string) Report {
	var anomalies []string
	for _, addr := range addrs {
		conn, err := pgclient.Connect(ctx, addr)
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, err))
			continue
		}
		rows, err := conn.Query(ctx, "SELECT id FROM acked UNION ALL SELECT id FROM acked_nokey")
		conn.Close()
		if err != nil {
			anomalies = append(anomalies, fmt.Sprintf("final read on %s: %v", addr, err))
			continue
		}
		present := make(map[int64]bool, len(rows))
		twice := 0
		for _, r := range rows {
			id := toInt64(r[0])
			if present[id] {
				twice++
			}
			present[id] = true
		}
		if twice > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s holds %d inserts more than once", addr, twice))
		}
		w.mu.Lock()
		lost, phantom := 0, 0
		for id, o := range w.outcomes {
			switch {
			case o == OK && !present[id]:
				lost++
			case o == Fail && present[id]:
				phantom++
			}
		}
		w.mu.Unlock()
		if lost > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s lost %d acknowledged inserts", addr, lost))
		}
		if phantom > 0 {
			anomalies = append(anomalies, fmt.Sprintf("%s holds %d inserts that were reported failed", addr, phantom))
		}
	}
	return w.report(anomalies)
}
