package bench

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
)

func testResults() []*Result {
	return []*Result{
		{Target: "certa", Nodes: 3, Workload: "oltp-write", Clients: 8, Seconds: 10, Txns: 30000, TPS: 3000, Aborts: 100,
			AbortRate: 100.0 / 30100, Latency: Latency{P50: 2, P99: 10},
			Kinds: []Kind{{Kind: "write", Txns: 30000, Aborts: 100}}, Lag: &Lag{P50: 1, P99: 3, Samples: 100}},
		{Target: "galera", Nodes: 3, Workload: "oltp-write", Clients: 8, Seconds: 10, Txns: 10000, TPS: 1000,
			Latency: Latency{P50: 5, P99: 20}, Kinds: []Kind{{Kind: "write", Txns: 10000}}},
		{Target: "galera", Nodes: 3, Workload: "oltp-write", Clients: 32, Seconds: 10, Txns: 10000, TPS: 1000},
	}
}

// The first target is compared with the others at the same workload and
// client count, and only there.
func TestRatiosCompareTheFirstTargetWithTheOthers(t *testing.T) {
	got := Ratios(testResults())
	want := []string{"certa/galera oltp-write 8 clients: throughput 3.00x, p99 latency 0.50x, abort rate 0.33% vs 0.00%"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestWriteTableCSVAndJSON(t *testing.T) {
	var table, csvOut, jsonOut bytes.Buffer
	if err := WriteTable(&table, testResults()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "throughput 3.00x") || !strings.Contains(table.String(), "3000") {
		t.Errorf("table:\n%s", table.String())
	}
	if err := WriteCSV(&csvOut, testResults()); err != nil {
		t.Fatal(err)
	}
	records, err := csv.NewReader(&csvOut).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// A header, then one row per result (one kind each: no per-kind rows).
	if len(records) != 4 || records[1][0] != "certa" || records[1][8] != "3000" || records[1][19] != "1" {
		t.Errorf("csv: %v", records)
	}
	if err := WriteJSON(&jsonOut, testResults()); err != nil {
		t.Fatal(err)
	}
	var back []Result
	if err := json.Unmarshal(jsonOut.Bytes(), &back); err != nil || len(back) != 3 || back[0].Lag.P99 != 3 {
		t.Errorf("json round trip: %v %+v", err, back)
	}
}

// A run with aborts says each transaction type's abort rate, and a certa
// run with serializable commits what their read sets took.
func TestDetailLine(t *testing.T) {
	r := &Result{Aborts: 3, Kinds: []Kind{{Kind: "new-order", Txns: 97, Aborts: 3}, {Kind: "payment", Txns: 50}},
		ReadSets: &ReadSets{Commits: 10, BytesPerCommit: 41.5, FilterFalsePositives: 1}}
	want := "aborts by type: new-order 3.00% payment 0.00%; read sets: 10 serializable commits, 42 bytes each, 1 filter false positives"
	if got := detailLine(r); got != want {
		t.Fatalf("got %q\nwant %q", got, want)
	}
	if got := detailLine(&Result{Kinds: []Kind{{Kind: "a"}, {Kind: "b"}}}); got != "" {
		t.Fatalf("no aborts, no read sets: %q", got)
	}
}
