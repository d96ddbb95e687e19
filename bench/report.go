package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable prints results as a table a person reads, then, for every
// workload and client count, the first target's throughput and p99
// latency as ratios to each other target's.
func WriteTable(w io.Writer, results []*Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tnodes\tworkload\tclients\ttxn/s\ttpmC\tp50 ms\tp95 ms\tp99 ms\taborts/s\tabort %\terrors\tlag p50 ms\tlag p99 ms\t")
	for _, r := range results {
		tpmc, lag50, lag99 := "-", "-", "-"
		if r.TpmC > 0 {
			tpmc = fmt.Sprintf("%.0f", r.TpmC)
		}
		if r.Lag != nil && r.Lag.Samples > 0 {
			lag50, lag99 = fmt.Sprintf("%.2f", r.Lag.P50), fmt.Sprintf("%.2f", r.Lag.P99)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%.0f\t%s\t%.2f\t%.2f\t%.2f\t%.1f\t%.2f\t%d\t%s\t%s\t\n",
			r.Target, r.Nodes, r.Workload, r.Clients, r.TPS, tpmc, r.Latency.P50, r.Latency.P95, r.Latency.P99,
			r.AbortsPerS, 100*r.AbortRate, r.Errors, lag50, lag99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s %s %d clients: first error: %s\n", r.Target, r.Workload, r.Clients, r.FirstError)
		}
	}
	for _, r := range results {
		if line := detailLine(r); line != "" {
			fmt.Fprintf(w, "%s %s %d clients: %s\n", r.Target, r.Workload, r.Clients, line)
		}
	}
	for _, line := range Ratios(results) {
		fmt.Fprintln(w, line)
	}
	return nil
}

// Ratios compares, for every workload and client count, the first
// target's result with each other target's.
func Ratios(results []*Result) []string {
	if len(results) == 0 {
		return nil
	}
	first := results[0].Target
	type key struct {
		workload string
		clients  int
	}
	subject := map[key]*Result{}
	for _, r := range results {
		if r.Target == first {
			subject[key{r.Workload, r.Clients}] = r
		}
	}
	var lines []string
	for _, r := range results {
		s := subject[key{r.Workload, r.Clients}]
		if r.Target == first || s == nil || r.TPS == 0 {
			continue
		}
		line := fmt.Sprintf("%s/%s %s %d clients: throughput %.2fx", first, r.Target, r.Workload, r.Clients, s.TPS/r.TPS)
		if r.Latency.P99 > 0 {
			line += fmt.Sprintf(", p99 latency %.2fx", s.Latency.P99/r.Latency.P99)
		}
		if r.AbortRate > 0 || s.AbortRate > 0 {
			line += fmt.Sprintf(", abort rate %.2f%% vs %.2f%%", 100*s.AbortRate, 100*r.AbortRate)
		}
		lines = append(lines, line)
	}
	return lines
}

// WriteJSON writes results as a JSON array.
func WriteJSON(w io.Writer, results []*Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(results)
}

// WriteCSV writes one row per result and transaction kind ("all" first).
func WriteCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"target", "nodes", "workload", "clients", "consistency", "kind", "seconds", "txns", "txn_per_s",
		"tpmc", "aborts", "aborts_per_s", "abort_rate", "errors", "p50_ms", "p95_ms", "p99_ms", "max_ms", "mean_ms",
		"lag_p50_ms", "lag_p99_ms", "lag_max_ms"})
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	for _, r := range results {
		lag := []string{"", "", ""}
		if r.Lag != nil {
			lag = []string{f(r.Lag.P50), f(r.Lag.P99), f(r.Lag.Max)}
		}
		row := func(kind string, txns, aborts int64, l Latency, tpmc float64, errs int64) {
			cw.Write(append([]string{r.Target, strconv.Itoa(r.Nodes), r.Workload, strconv.Itoa(r.Clients), r.Consistency, kind,
				f(r.Seconds), strconv.FormatInt(txns, 10), f(float64(txns) / r.Seconds), f(tpmc),
				strconv.FormatInt(aborts, 10), f(float64(aborts) / r.Seconds), f(rate(aborts, txns)), strconv.FormatInt(errs, 10),
				f(l.P50), f(l.P95), f(l.P99), f(l.Max), f(l.Mean)}, lag...))
		}
		row("all", r.Txns, r.Aborts, r.Latency, r.TpmC, r.Errors)
		if len(r.Kinds) > 1 {
			for _, k := range r.Kinds {
				row(k.Kind, k.Txns, k.Aborts, k.Latency, 0, 0)
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

func rate(aborts, txns int64) float64 {
	if aborts+txns == 0 {
		return 0
	}
	return float64(aborts) / float64(aborts+txns)
}

// detailLine says, for a run with aborts or read sets, the abort rate of
// each transaction type and what the read sets of serializable commits
// took; "" if there is nothing to say.
func detailLine(r *Result) string {
	var parts []string
	if r.Aborts > 0 && len(r.Kinds) > 1 {
		kinds := "aborts by type:"
		for _, k := range r.Kinds {
			kinds += fmt.Sprintf(" %s %.2f%%", k.Kind, 100*rate(k.Aborts, k.Txns))
		}
		parts = append(parts, kinds)
	}
	if rs := r.ReadSets; rs != nil && rs.Commits > 0 {
		parts = append(parts, fmt.Sprintf("read sets: %d serializable commits, %.0f bytes each, %d filter false positives",
			rs.Commits, rs.BytesPerCommit, rs.FilterFalsePositives))
	}
	return strings.Join(parts, "; ")
}
