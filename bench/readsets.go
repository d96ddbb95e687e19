package bench

import (
	"context"
	"fmt"
	"strconv"
)

// ReadSets is what a certa cluster's nodes counted of serializable
// commits during the measured time: how many write sets carried a
// transaction's reads, the bytes those reads took per write set, and the
// aborts caused only by a Bloom filter's false positive.
type ReadSets struct {
	Commits              int64   `json:"commits"`
	BytesPerCommit       float64 `json:"bytes_per_commit"`
	FilterFalsePositives int64   `json:"filter_false_positives"`
}

// readSetCounters are the counters ReadSets comes from, by SHOW name.
var readSetCounters = []string{"certa.read_sets", "certa.read_set_bytes", "certa.read_filter_false_positives"}

// readSetTotals sums readSetCounters over t's nodes; ok is false for a
// target that is no certa cluster.
func readSetTotals(ctx context.Context, t Target) (totals []int64, ok bool, err error) {
	pt, isPG := t.(*pgTarget)
	if !isPG || !pt.certa {
		return nil, false, nil
	}
	totals = make([]int64, len(readSetCounters))
	for node := range t.Nodes() {
		c, err := t.Open(ctx, node, ConsistencyLocal)
		if err != nil {
			return nil, false, err
		}
		for i, name := range readSetCounters {
			rows, err := c.Query(ctx, "SHOW "+name)
			if err == nil && (len(rows) != 1 || len(rows[0]) != 1) {
				err = fmt.Errorf("SHOW %s: %d rows", name, len(rows))
			}
			if err != nil {
				c.Close()
				return nil, false, err
			}
			n, err := strconv.ParseInt(asString(rows[0][0]), 10, 64)
			if err != nil {
				c.Close()
				return nil, false, fmt.Errorf("SHOW %s: %w", name, err)
			}
			totals[i] += n
		}
		c.Close()
	}
	return totals, true, nil
}

// readSetsBetween is ReadSets from the totals before and after a run.
func readSetsBetween(before, after []int64) *ReadSets {
	rs := &ReadSets{Commits: after[0] - before[0], FilterFalsePositives: after[2] - before[2]}
	if rs.Commits > 0 {
		rs.BytesPerCommit = float64(after[1]-before[1]) / float64(rs.Commits)
	}
	return rs
}
