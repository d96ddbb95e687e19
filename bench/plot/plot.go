// Package plot draws `certa bench` results as PNG charts: throughput
// against clients, and the latency distribution, one line per target. It
// is the only package of ours that imports gonum/plot.
package plot

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"certa/bench"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Write draws the charts of results into dir and returns the files'
// paths: per workload, <workload>-throughput.png (committed transactions
// per second against clients) and <workload>-latency-<n>clients.png (the
// latency at each percentile, at every client count measured).
func Write(dir string, results []*bench.Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	for _, workload := range distinct(results, func(r *bench.Result) string { return r.Workload }) {
		of := filterBy(results, func(r *bench.Result) bool { return r.Workload == workload })
		file := filepath.Join(dir, workload+"-throughput.png")
		if err := throughput(file, workload, of); err != nil {
			return files, err
		}
		files = append(files, file)
		for _, clients := range distinct(of, func(r *bench.Result) int { return r.Clients }) {
			file := filepath.Join(dir, fmt.Sprintf("%s-latency-%dclients.png", workload, clients))
			drawn, err := latency(file, fmt.Sprintf("%s, %d clients", workload, clients),
				filterBy(of, func(r *bench.Result) bool { return r.Clients == clients }))
			if err != nil {
				return files, err
			}
			if drawn {
				files = append(files, file)
			}
		}
	}
	return files, nil
}

func throughput(file, workload string, results []*bench.Result) error {
	p := plot.New()
	p.Title.Text = workload + ": throughput"
	p.X.Label.Text = "clients"
	p.Y.Label.Text = "committed transactions per second"
	p.Y.Min = 0
	var lines []any
	for _, target := range distinct(results, func(r *bench.Result) string { return r.Target }) {
		var pts plotter.XYs
		for _, r := range filterBy(results, func(r *bench.Result) bool { return r.Target == target }) {
			pts = append(pts, plotter.XY{X: float64(r.Clients), Y: r.TPS})
		}
		slices.SortFunc(pts, func(a, b plotter.XY) int { return int(a.X - b.X) })
		lines = append(lines, target, pts)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return p.Save(16*vg.Centimeter, 11*vg.Centimeter, file)
}

// nines places a percentile on a log scale of 1/(1-p): 90, 99 and 99.9
// are equally far apart, so the tail is readable.
func nines(percentile float64) float64 { return -math.Log10(1 - percentile/100) }

// latency draws the chart unless no result has a latency to show.
func latency(file, title string, results []*bench.Result) (drawn bool, err error) {
	p := plot.New()
	p.Title.Text = title + ": latency distribution"
	p.X.Label.Text = "percentile"
	p.Y.Label.Text = "latency (ms, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var ticks []plot.Tick
	for _, pc := range []float64{0, 50, 90, 99, 99.9, 99.99} {
		ticks = append(ticks, plot.Tick{Value: nines(pc), Label: fmt.Sprint(pc)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	var lines []any
	for _, r := range results {
		var pts plotter.XYs
		for _, pt := range r.Distribution {
			if pt.Percentile < 100 && pt.Ms > 0 {
				pts = append(pts, plotter.XY{X: nines(pt.Percentile), Y: pt.Ms})
			}
		}
		if len(pts) > 0 {
			lines = append(lines, r.Target, pts)
		}
	}
	if len(lines) == 0 {
		return false, nil
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return false, err
	}
	p.Legend.Top, p.Legend.Left = true, true
	return true, p.Save(16*vg.Centimeter, 11*vg.Centimeter, file)
}

func distinct[T comparable](results []*bench.Result, key func(*bench.Result) T) []T {
	var out []T
	for _, r := range results {
		if k := key(r); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func filterBy(results []*bench.Result, keep func(*bench.Result) bool) []*bench.Result {
	var out []*bench.Result
	for _, r := range results {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}
