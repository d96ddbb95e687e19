package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"certa/internal/testcluster"
)

func TestMain(m *testing.M) { testcluster.Main(m) }

// quick is a short run: the tests check that every workload runs and
// measures, not how fast.
var quick = Config{Clients: 4, Duration: time.Second, Warmup: 200 * time.Millisecond}

var testWorkloads = []Workload{
	OLTP{Kind: "oltp-write", Rows: 500},
	OLTP{Kind: "oltp-read-write", Rows: 500},
	OLTP{Kind: "point-select", Rows: 500},
	TPCC{Warehouses: 2, Scale: 0.02},
	TPCC{Warehouses: 2, Scale: 0.02, Mix: "50/50"},
}

// Every workload runs on a real 3-node certa cluster, with clients spread
// over the nodes: transactions commit, none fails, the lag probe sees the
// other nodes, and TPC-C's consistency conditions hold on every node
// afterwards (the transactions did what TPC-C says).
func TestWorkloadsOnACertaCluster(t *testing.T) {
	c := testcluster.Start(t, 3)
	var addrs []string
	for _, n := range c.Nodes {
		addrs = append(addrs, n.PGAddr)
	}
	target, err := ParseTarget("certa=certa:"+strings.Join(addrs, ","), ProtocolPrepared)
	if err != nil {
		t.Fatal(err)
	}
	simple, err := ParseTarget("certa=certa:"+strings.Join(addrs, ","), ProtocolSimple)
	if err != nil {
		t.Fatal(err)
	}
	// The prepared protocol for all, and the simple one for a workload
	// of each kind.
	runs := []struct {
		target Target
		w      Workload
	}{{simple, testWorkloads[1]}, {simple, testWorkloads[3]}}
	for _, w := range testWorkloads {
		runs = append(runs, struct {
			target Target
			w      Workload
		}{target, w})
	}
	for _, r := range runs {
		target, w := r.target, r.w
		res := setUpAndRun(t, target, w)
		if res.Lag == nil || res.Lag.Samples == 0 {
			t.Errorf("%s: no replication lag measured: %+v", w.Name(), res.Lag)
		}
		if _, ok := w.(TPCC); ok {
			c.WaitConverged(30 * time.Second)
			for node := range c.Nodes {
				checkTPCC(t, target, node)
			}
		}
	}
}

// The same on the SQLite baseline, whose clients each have a connection
// to one file.
func TestWorkloadsOnSQLite(t *testing.T) {
	target, err := ParseTarget("sqlite", ProtocolPrepared)
	if err != nil {
		t.Fatal(err)
	}
	defer target.Close()
	for _, w := range testWorkloads {
		res := setUpAndRun(t, target, w)
		if res.Lag != nil {
			t.Errorf("%s: a lag measured on one node: %+v", w.Name(), res.Lag)
		}
		if _, ok := w.(TPCC); ok {
			checkTPCC(t, target, 0)
		}
	}
}

func setUpAndRun(t *testing.T, target Target, w Workload) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.Setup(ctx, target); err != nil {
		t.Fatalf("%s: setup: %v", w.Name(), err)
	}
	res, err := Run(ctx, target, w, quick)
	if err != nil {
		t.Fatalf("%s: %v", w.Name(), err)
	}
	if res.Txns == 0 || res.Errors != 0 {
		t.Fatalf("%s: %d transactions, %d errors (first: %s)", w.Name(), res.Txns, res.Errors, res.FirstError)
	}
	if res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 || len(res.Distribution) == 0 {
		t.Fatalf("%s: latency %+v", w.Name(), res.Latency)
	}
	if tpcc, ok := w.(TPCC); ok && tpcc.Mix != "100/0" && res.TpmC <= 0 {
		t.Fatalf("%s: no New-Order measured", w.Name())
	}
	t.Logf("%s on %s: %.0f txn/s, p99 %.2f ms, abort rate %.2f%%", w.Name(), target.Name(), res.TPS, res.Latency.P99, 100*res.AbortRate)
	return res
}

// checkTPCC checks TPC-C's consistency conditions 1 to 3 (clause 3.3.2) on
// one node: the warehouse's YTD is its districts'; a district's next order
// id follows its newest order and newest new-order; new-orders per
// district are contiguous.
func checkTPCC(t *testing.T, target Target, node int) {
	t.Helper()
	ctx := context.Background()
	c, err := target.Open(ctx, node, ConsistencyLocal)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, check := range []struct{ what, sql string }{
		{"condition 1: w_ytd = sum(d_ytd)",
			"SELECT COUNT(*) FROM warehouse WHERE w_ytd <> (SELECT SUM(d_ytd) FROM district WHERE d_w_id = w_id)"},
		{"condition 2: d_next_o_id - 1 = max(o_id) = max(no_o_id)",
			`SELECT COUNT(*) FROM district WHERE d_next_o_id - 1 <> (SELECT MAX(o_id) FROM orders WHERE o_w_id = d_w_id AND o_d_id = d_id)
			OR d_next_o_id - 1 <> (SELECT MAX(no_o_id) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)`},
		{"condition 3: new-orders contiguous",
			`SELECT COUNT(*) FROM district WHERE (SELECT MAX(no_o_id) - MIN(no_o_id) + 1 FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)
			<> (SELECT COUNT(*) FROM new_order WHERE no_w_id = d_w_id AND no_d_id = d_id)`},
	} {
		bad, err := queryInt(ctx, c, check.sql)
		if err != nil {
			t.Fatalf("node %d: %s: %v", node, check.what, err)
		}
		if bad != 0 {
			t.Errorf("node %d: TPC-C %s fails for %d rows", node, check.what, bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for spec, want := range map[string]string{
		"certa":                           "certa 3",
		"galera":                          "galera 3",
		"pg=postgres:127.0.0.1:5432":      "pg 1",
		"g2=mysql:mysql://u:p@h:1/db,h:2": "g2 2",
		"x=certa:127.0.0.1:1,127.0.0.1:2": "x 2",
	} {
		tg, err := ParseTarget(spec, ProtocolSimple)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if got := fmt.Sprintf("%s %d", tg.Name(), tg.Nodes()); got != want {
			t.Errorf("%s: got %s, want %s", spec, got, want)
		}
	}
	for _, bad := range []string{"nope", "x=oracle:h:1", "x=certa:", "x"} {
		if _, err := ParseTarget(bad, ProtocolPrepared); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// AtIsolation makes named variants of a server target at each level, and
// leaves a SQLite target alone.
func TestAtIsolation(t *testing.T) {
	pg, err := ParseTarget("pg=postgres:127.0.0.1:1", ProtocolPrepared)
	if err != nil {
		t.Fatal(err)
	}
	v, ok, err := AtIsolation(pg, "serializable")
	if err != nil || !ok || v.Name() != "pg@serializable" || v.(*pgTarget).isolation != "serializable" || pg.(*pgTarget).isolation != "" {
		t.Fatalf("variant %v %v %v", v.Name(), ok, err)
	}
	if _, _, err := AtIsolation(pg, "snapshot"); err == nil {
		t.Fatal("unknown level accepted")
	}
	lite, err := ParseTarget("lite=sqlite:", ProtocolPrepared)
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if v, ok, err := AtIsolation(lite, "serializable"); err != nil || ok || v != lite {
		t.Fatalf("sqlite: %v %v", ok, err)
	}
}
