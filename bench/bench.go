// Package bench is the workload driver behind `certa bench`: concurrent
// clients doing autocommit single-row UPDATEs and INSERTs on a preloaded
// table, against a certa cluster and against a local SQLite file as the
// no-replication baseline, reporting throughput, latency percentiles and
// conflicts.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config describes one benchmark run.
type Config struct {
	Clients  int           // concurrent clients (default 8)
	Duration time.Duration // measured time (default 10s)
	Warmup   time.Duration // unmeasured time before it (default 2s)
	Rows     int           // rows preloaded (default 10000)
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
	if c.Rows == 0 {
		c.Rows = 10000
	}
}

// Client is one connection of a benchmark target. A Client is used by one
// goroutine.
type Client interface {
	Exec(ctx context.Context, sql string, args ...any) error
	Close()
}

// Target opens clients; client i of a run gets Open(i).
type Target interface {
	Open(ctx context.Context, i int) (Client, error)
	// IsConflict reports whether err is a serialization failure (retryable).
	IsConflict(err error) bool
}

// Result is what one run measured.
type Result struct {
	Commits   int
	Conflicts int
	Errors    int
	FirstErr  error
	Elapsed   time.Duration
	P50, P99  time.Duration
}

// CommitsPerSec is the throughput of successful commits.
func (r Result) CommitsPerSec() float64 { return float64(r.Commits) / r.Elapsed.Seconds() }

// ConflictsPerSec is the rate of 40001 answers.
func (r Result) ConflictsPerSec() float64 { return float64(r.Conflicts) / r.Elapsed.Seconds() }

func (r Result) String() string {
	s := fmt.Sprintf("%8.0f commits/s  p50 %6.2fms  p99 %6.2fms  conflicts %.1f/s  errors %d",
		r.CommitsPerSec(), ms(r.P50), ms(r.P99), r.ConflictsPerSec(), r.Errors)
	if r.FirstErr != nil {
		s += fmt.Sprintf(" (first: %v)", r.FirstErr)
	}
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Setup creates and preloads the benchmark table through one client.
func Setup(ctx context.Context, t Target, cfg Config) error {
	cfg.setDefaults()
	c, err := t.Open(ctx, 0)
	if err != nil {
		return err
	}
	defer c.Close()
	c.Exec(ctx, "DROP TABLE IF EXISTS bench_kv")
	if err := c.Exec(ctx, "CREATE TABLE bench_kv (id integer PRIMARY KEY, v integer NOT NULL, pad text)"); err != nil {
		return fmt.Errorf("create table: %w", err)
	}
	const chunk = 500
	for start := 0; start < cfg.Rows; start += chunk {
		sql := "INSERT INTO bench_kv (id, v, pad) VALUES "
		for i := start; i < min(start+chunk, cfg.Rows); i++ {
			if i > start {
				sql += ","
			}
			sql += fmt.Sprintf("(%d, 0, 'preloaded row padding')", i)
		}
		if err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	return nil
}

// Run runs the workload: every client alternates single-row UPDATEs of a
// random preloaded row and INSERTs of new rows, each its own transaction.
func Run(ctx context.Context, t Target, cfg Config) (Result, error) {
	cfg.setDefaults()
	clients := make([]Client, cfg.Clients)
	for i := range clients {
		c, err := t.Open(ctx, i)
		if err != nil {
			for _, c := range clients[:i] {
				c.Close()
			}
			return Result{}, fmt.Errorf("open client %d: %w", i, err)
		}
		clients[i] = c
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()

	var measuring atomic.Bool
	var nextID atomic.Int64
	nextID.Store(int64(cfg.Rows) + 1_000_000*rand.Int64N(1000))
	stop := make(chan struct{})
	type stats struct {
		lat               []time.Duration
		conflicts, errors int
		firstErr          error
	}
	per := make([]stats, cfg.Clients)
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &per[i]
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				start := time.Now()
				if n%2 == 0 {
					err = c.Exec(ctx, "UPDATE bench_kv SET v = v + 1 WHERE id = $1", rng.IntN(cfg.Rows))
				} else {
					err = c.Exec(ctx, "INSERT INTO bench_kv (id, v, pad) VALUES ($1, 1, 'inserted by bench')", nextID.Add(1))
				}
				d := time.Since(start)
				if !measuring.Load() {
					continue
				}
				switch {
				case err == nil:
					st.lat = append(st.lat, d)
				case t.IsConflict(err):
					st.conflicts++
				default:
					st.errors++
					if st.firstErr == nil {
						st.firstErr = err
					}
					if errors.Is(err, context.Canceled) {
						return
					}
				}
			}
		}()
	}
	sleep(ctx, cfg.Warmup)
	measuring.Store(true)
	start := time.Now()
	sleep(ctx, cfg.Duration)
	measuring.Store(false)
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()

	var res Result
	var all []time.Duration
	for _, st := range per {
		all = append(all, st.lat...)
		res.Conflicts += st.conflicts
		res.Errors += st.errors
		if res.FirstErr == nil {
			res.FirstErr = st.firstErr
		}
	}
	res.Commits, res.Elapsed = len(all), elapsed
	if len(all) > 0 {
		slices.Sort(all)
		res.P50 = all[len(all)/2]
		res.P99 = all[len(all)*99/100]
	}
	return res, ctx.Err()
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
