package chaos

import (
	"context"
	"sync"
	"time"

	"certa/internal/pgclient"
)

// Workload is one kind of load with its checker. A workload keeps its own
// history; its methods are safe for concurrent use by its clients.
type Workload interface {
	Name() string
	// Setup creates the workload's tables through addr.
	Setup(ctx context.Context, addr string) error
	// Step runs one operation as client c on conn within ctx and records
	// it. It returns false if the session may be unusable after an error
	// (the client then reconnects, to a random node).
	Step(ctx context.Context, c *client, conn *pgclient.Conn) bool
	// Check checks the history, after load stopped and the cluster
	// converged; addrs are every node's client address.
	Check(ctx context.Context, addrs []string) Report
}

// Report is a workload's tally and verdict.
type Report struct {
	OK, Failed, Indeterminate int
	Anomalies                 []string // empty: none found
}

// counts is a thread-safe tally of outcomes.
type counts struct {
	mu          sync.Mutex
	ok, fail, n int
}

func (c *counts) add(o Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch o {
	case OK:
		c.ok++
	case Fail:
		c.fail++
	default:
		c.n++
	}
}

func (c *counts) report(anomalies []string) Report {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Report{OK: c.ok, Failed: c.fail, Indeterminate: c.n, Anomalies: anomalies}
}

// runClients runs clients of w against addrs until ctx ends.
func runClients(ctx context.Context, w Workload, addrs []string, clients int, seed uint64) {
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := newClient(addrs, seed+uint64(i)*7919)
			defer c.close()
			for ctx.Err() == nil {
				conn, err := c.get(ctx)
				if err != nil {
					backoff(ctx)
					continue
				}
				sctx, cancel := stepContext()
				ok := w.Step(sctx, c, conn)
				cancel()
				if !ok {
					c.drop()
					backoff(ctx)
				}
			}
		}()
	}
	wg.Wait()
}

// stepContext bounds one operation: opTimeout, but never cut short by the
// end of the run (the outcome of an operation cut short would be lost).
func stepContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), opTimeout)
}

// backoff slows a client down after an error, so a refusing cluster is not
// hammered.
func backoff(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(100 * time.Millisecond):
	}
}

// withConn runs f on a new connection to addr.
func withConn(ctx context.Context, addr string, f func(*pgclient.Conn) error) error {
	conn, err := pgclient.Connect(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	return f(conn)
}

// execOn runs one statement on a new connection to addr.
func execOn(ctx context.Context, addr, sql string) error {
	return withConn(ctx, addr, func(conn *pgclient.Conn) error {
		_, err := conn.Exec(ctx, sql)
		return err
	})
}

// keyEpoch is how long the list-append and register workloads use the same
// keys before moving to fresh ones, so that a key's history stays short.
const keyEpoch = 30 * time.Second

// epoch is the number of the key epoch now, counted from start.
func epoch(start time.Time) int { return int(time.Since(start) / keyEpoch) }
