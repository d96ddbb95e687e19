// Package bench is the workload driver behind `certa bench`: concurrent
// clients run a workload's transactions against a target (a certa cluster,
// PostgreSQL, MariaDB or MariaDB Galera, a local SQLite file) for a fixed
// time after a warm-up, and a Result holds throughput, latency histograms,
// aborts and, for clusters, the replication lag seen during the run.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one benchmark run.
type Config struct {
	Clients     int           // concurrent clients, spread over the target's nodes (default 8)
	Duration    time.Duration // measured time (default 10s)
	Warmup      time.Duration // unmeasured time before it (default 2s)
	Consistency string        // read consistency of every session (default ConsistencyLocal)
}

func (c *Config) setDefaults() {
	if c.Clients == 0 {
		c.Clients = 8
	}
	if c.Duration == 0 {
		c.Duration = 10 * time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = 2 * time.Second
	}
	if c.Consistency == "" {
		c.Consistency = ConsistencyLocal
	}
}

// Validate reports the first invalid setting.
func (c Config) Validate() error {
	c.setDefaults()
	switch {
	case c.Clients < 1 || c.Clients > 1024:
		return errors.New("bench: clients must be between 1 and 1024")
	case c.Duration <= 0 || c.Warmup < 0:
		return errors.New("bench: duration must be positive and warm-up not negative")
	case c.Consistency != ConsistencyLocal && c.Consistency != ConsistencySync:
		return fmt.Errorf("bench: consistency %q: want local or sync", c.Consistency)
	}
	return nil
}

// Workload is a kind of load: its tables and the transactions clients run.
type Workload interface {
	// Name is the workload's name in reports ("oltp-write", "tpcc", ...).
	Name() string
	// Setup creates the workload's tables on t and loads them, replacing
	// any an earlier run left.
	Setup(ctx context.Context, t Target) error
	// Next returns the next transaction client should run.
	Next(rng *rand.Rand, client int) Txn
}

// Txn is one transaction of a workload.
type Txn struct {
	Kind string // its type, for per-type latency ("new-order", "point-select")
	// Run runs the whole transaction on c, BEGIN to COMMIT. When it fails,
	// the runner rolls back; a conflict is retried with the same Txn.
	Run func(ctx context.Context, c Conn) error
}

// maxConsecutiveErrors stops a client whose connection is evidently gone.
const maxConsecutiveErrors = 100

// Run runs w's transactions on t with cfg.Clients clients for the warm-up
// and then the measured duration, and returns what was measured. The
// tables must have been set up (w.Setup).
func Run(ctx context.Context, t Target, w Workload, cfg Config) (*Result, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	conns := make([]Conn, cfg.Clients)
	for i := range conns {
		c, err := t.Open(ctx, i, cfg.Consistency)
		if err != nil {
			for _, c := range conns[:i] {
				c.Close()
			}
			return nil, fmt.Errorf("open client %d: %w", i, err)
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()

	var lag *lagProbe
	if t.Nodes() > 1 {
		var err error
		if lag, err = startLagProbe(ctx, t); err != nil {
			return nil, err
		}
	}

	var measuring atomic.Bool
	stop := make(chan struct{})
	recs := make([]*recorder, cfg.Clients)
	var wg sync.WaitGroup
	for i, c := range conns {
		recs[i] = newRecorder()
		wg.Add(1)
		go func() {
			defer wg.Done()
			runClient(ctx, t, w, c, i, recs[i], &measuring, stop)
		}()
	}
	sleep(ctx, cfg.Warmup)
	if lag != nil {
		lag.measure()
	}
	readsBefore, certa, err := readSetTotals(ctx, t)
	measuring.Store(true)
	start := time.Now()
	sleep(ctx, cfg.Duration)
	measuring.Store(false)
	elapsed := time.Since(start)
	var readsAfter []int64
	if certa && err == nil {
		readsAfter, _, err = readSetTotals(ctx, t)
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("read set counters: %w", err)
	}

	res := newResult(t, w, cfg, elapsed, recs)
	if certa {
		res.ReadSets = readSetsBetween(readsBefore, readsAfter)
	}
	if lag != nil {
		res.Lag = lag.stop()
	}
	return res, ctx.Err()
}

// runClient runs transactions on c until stop closes, recording those that
// end while measuring.
func runClient(ctx context.Context, t Target, w Workload, c Conn, client int, rec *recorder, measuring *atomic.Bool, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(client), uint64(time.Now().UnixNano())))
	failures := 0
	for {
		txn := w.Next(rng, client)
		start := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			err := txn.Run(ctx, c)
			if err == nil {
				failures = 0
				if measuring.Load() {
					rec.done(txn.Kind, time.Since(start))
				}
				break
			}
			c.Exec(ctx, "ROLLBACK")
			if ctx.Err() != nil {
				return
			}
			if t.IsConflict(err) {
				if measuring.Load() {
					rec.abort(txn.Kind, err)
				}
				continue // the same transaction again, as an application would
			}
			if measuring.Load() {
				rec.fail(err)
			}
			if failures++; failures >= maxConsecutiveErrors {
				rec.fail(fmt.Errorf("client %d stopped after %d errors in a row: %w", client, failures, err))
				return
			}
			break
		}
	}
}

// errNoRows is a query that returned no row where one was expected.
var errNoRows = errors.New("bench: no rows")

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
