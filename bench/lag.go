package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Lag is the replication lag seen during a run, in milliseconds: how long
// after a commit on the first node was acknowledged the other nodes showed
// it to a reader at local consistency (one round trip of polling included).
type Lag struct {
	P50      float64 `json:"p50"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
	Samples  int64   `json:"samples"`
	TimedOut int64   `json:"timed_out"` // samples not seen within lagGiveUp
}

const (
	lagEvery  = 200 * time.Millisecond // one probe commit per interval
	lagPoll   = time.Millisecond       // how often the other nodes are read
	lagGiveUp = 10 * time.Second
)

// lagProbe commits a counter on node 0 every lagEvery and measures when
// each other node shows it. It works the same on any multi-node target.
type lagProbe struct {
	writer    Conn
	readers   []Conn
	measuring atomic.Bool
	hist      *hdrhistogram.Histogram
	timedOut  int64
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

func startLagProbe(ctx context.Context, t Target) (*lagProbe, error) {
	p := &lagProbe{hist: newHistogram()}
	var err error
	if p.writer, err = t.Open(ctx, 0, ConsistencyLocal); err != nil {
		return nil, fmt.Errorf("lag probe: %w", err)
	}
	for i := 1; i < t.Nodes(); i++ {
		c, err := t.Open(ctx, i, ConsistencyLocal)
		if err != nil {
			p.close()
			return nil, fmt.Errorf("lag probe: %w", err)
		}
		p.readers = append(p.readers, c)
	}
	for _, sql := range []string{
		"DROP TABLE IF EXISTS bench_lag",
		"CREATE TABLE bench_lag (id integer PRIMARY KEY, seq bigint NOT NULL)",
		"INSERT INTO bench_lag VALUES (1, 0)",
	} {
		if _, err := p.writer.Exec(ctx, sql); err != nil {
			p.close()
			return nil, fmt.Errorf("lag probe: %w", err)
		}
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.wg.Add(1)
	go p.run(ctx)
	return p, nil
}

func (p *lagProbe) measure() { p.measuring.Store(true) }

// stop ends the probe and returns what it measured.
func (p *lagProbe) stop() *Lag {
	p.cancel()
	p.wg.Wait()
	p.close()
	l := summarise(p.hist)
	return &Lag{P50: l.P50, P99: l.P99, Max: l.Max, Samples: p.hist.TotalCount(), TimedOut: p.timedOut}
}

func (p *lagProbe) close() {
	p.writer.Close()
	for _, c := range p.readers {
		c.Close()
	}
}

func (p *lagProbe) run(ctx context.Context) {
	defer p.wg.Done()
	tick := time.NewTicker(lagEvery)
	defer tick.Stop()
	for seq := int64(1); ; seq++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if _, err := p.writer.Exec(ctx, "UPDATE bench_lag SET seq = $1 WHERE id = 1", seq); err != nil {
			continue // a conflict or a busy node: the next probe will do
		}
		acked := time.Now()
		for _, r := range p.readers {
			seen := p.waitFor(ctx, r, seq, acked)
			if !p.measuring.Load() || ctx.Err() != nil {
				continue
			}
			if seen < 0 {
				p.timedOut++
			} else {
				p.hist.RecordValue(max(1, seen.Microseconds()))
			}
		}
	}
}

// waitFor polls r until it shows seq, and returns how long after acked it
// did; -1 if not within lagGiveUp.
func (p *lagProbe) waitFor(ctx context.Context, r Conn, seq int64, acked time.Time) time.Duration {
	for time.Since(acked) < lagGiveUp && ctx.Err() == nil {
		if got, err := queryInt(ctx, r, "SELECT seq FROM bench_lag WHERE id = 1"); err == nil && got >= seq {
			return time.Since(acked)
		}
		time.Sleep(lagPoll)
	}
	return -1
}
