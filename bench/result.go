package bench

import (
	"cmp"
	"slices"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Result is what one run measured. Latencies are in milliseconds: a
// transaction's latency runs from its first BEGIN to its successful COMMIT,
// retries after conflicts included, as the application sees it.
type Result struct {
	Target      string  `json:"target"`
	Nodes       int     `json:"nodes"`
	Workload    string  `json:"workload"`
	Clients     int     `json:"clients"`
	Consistency string  `json:"consistency"`
	Durability  string  `json:"durability"`
	Seconds     float64 `json:"seconds"` // measured time
	Txns        int64   `json:"txns"`    // committed transactions
	TPS         float64 `json:"tps"`
	TpmC        float64 `json:"tpmc,omitempty"` // tpcc: New-Order transactions per minute
	Aborts      int64   `json:"aborts"`         // conflicts (retried)
	AbortsPerS  float64 `json:"aborts_per_s"`
	AbortRate   float64 `json:"abort_rate"` // aborts / (txns + aborts)
	Errors      int64   `json:"errors"`     // other failures (not retried)
	FirstError  string  `json:"first_error,omitempty"`
	// AbortReasons counts the conflicts by the server's message, most
	// frequent first: what to fix when the abort rate is high.
	AbortReasons []Reason `json:"abort_reasons,omitempty"`
	Latency      Latency  `json:"latency_ms"`
	Kinds        []Kind   `json:"kinds"`
	// Distribution is the latency at a range of percentiles, for charts.
	Distribution []Point `json:"distribution"`
	Lag          *Lag    `json:"replication_lag_ms,omitempty"`
	// ReadSets: a certa cluster's serializable commits' read sets.
	ReadSets *ReadSets `json:"read_sets,omitempty"`
}

// Latency summarises a latency histogram, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// Kind is what one type of transaction measured.
type Kind struct {
	Kind    string  `json:"kind"`
	Txns    int64   `json:"txns"`
	Aborts  int64   `json:"aborts"`
	Latency Latency `json:"latency_ms"`
}

// Reason is one message a conflict came with, and how often.
type Reason struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// Point is the latency (ms) at a percentile.
type Point struct {
	Percentile float64 `json:"percentile"`
	Ms         float64 `json:"ms"`
}

// distributionPercentiles are the points of Result.Distribution.
var distributionPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 97, 99, 99.5, 99.9, 99.99, 100}

// Histograms record microseconds from 1 µs to 10 minutes, to 3 digits.
func newHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3)
}

func summarise(h *hdrhistogram.Histogram) Latency {
	if h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	return Latency{
		P50: ms(h.ValueAtQuantile(50)), P95: ms(h.ValueAtQuantile(95)), P99: ms(h.ValueAtQuantile(99)),
		Max: ms(h.Max()), Mean: h.Mean() / 1000,
	}
}

// recorder is one client's measurements; only its client writes to it.
type recorder struct {
	latency  map[string]*hdrhistogram.Histogram // by transaction kind
	aborts   map[string]int64
	reasons  map[string]int64 // abort messages
	errors   int64
	firstErr error
}

func newRecorder() *recorder {
	return &recorder{latency: map[string]*hdrhistogram.Histogram{}, aborts: map[string]int64{}, reasons: map[string]int64{}}
}

func (r *recorder) done(kind string, d time.Duration) {
	h := r.latency[kind]
	if h == nil {
		h = newHistogram()
		r.latency[kind] = h
	}
	h.RecordValue(max(1, d.Microseconds()))
}

func (r *recorder) abort(kind string, err error) {
	r.aborts[kind]++
	r.reasons[err.Error()]++
}

func (r *recorder) fail(err error) {
	r.errors++
	if r.firstErr == nil {
		r.firstErr = err
	}
}

// newResult merges the clients' recorders.
func newResult(t Target, w Workload, cfg Config, elapsed time.Duration, recs []*recorder) *Result {
	res := &Result{
		Target: t.Name(), Nodes: t.Nodes(), Workload: w.Name(), Clients: cfg.Clients,
		Consistency: cfg.Consistency, Durability: t.Durability(), Seconds: elapsed.Seconds(),
	}
	all := newHistogram()
	kinds := map[string]*hdrhistogram.Histogram{}
	aborts := map[string]int64{}
	reasons := map[string]int64{}
	for _, r := range recs {
		for k, h := range r.latency {
			if kinds[k] == nil {
				kinds[k] = newHistogram()
			}
			kinds[k].Merge(h)
			all.Merge(h)
		}
		for k, n := range r.aborts {
			aborts[k] += n
			res.Aborts += n
		}
		for m, n := range r.reasons {
			reasons[m] += n
		}
		res.Errors += r.errors
		if r.firstErr != nil && res.FirstError == "" {
			res.FirstError = r.firstErr.Error()
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	for k := range aborts {
		if kinds[k] == nil {
			names = append(names, k)
			kinds[k] = newHistogram()
		}
	}
	for m, n := range reasons {
		res.AbortReasons = append(res.AbortReasons, Reason{m, n})
	}
	slices.SortFunc(res.AbortReasons, func(a, b Reason) int { return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Message, b.Message)) })
	slices.Sort(names)
	for _, k := range names {
		res.Kinds = append(res.Kinds, Kind{Kind: k, Txns: kinds[k].TotalCount(), Aborts: aborts[k], Latency: summarise(kinds[k])})
	}
	res.Txns = all.TotalCount()
	res.TPS = float64(res.Txns) / res.Seconds
	res.AbortsPerS = float64(res.Aborts) / res.Seconds
	if res.Txns+res.Aborts > 0 {
		res.AbortRate = float64(res.Aborts) / float64(res.Txns+res.Aborts)
	}
	if h := kinds["new-order"]; h != nil {
		res.TpmC = float64(h.TotalCount()) / res.Seconds * 60
	}
	res.Latency = summarise(all)
	if all.TotalCount() > 0 {
		for _, p := range distributionPercentiles {
			res.Distribution = append(res.Distribution, Point{p, float64(all.ValueAtQuantile(p)) / 1000})
		}
	}
	return res
}
