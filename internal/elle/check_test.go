package elle

import (
	"maps"
	"slices"
	"testing"
)

func ap(key string, v int) Op { return Op{Kind: Append, Key: key, Value: v} }

func rd(key string, vs ...int) Op { return Op{Kind: Read, Key: key, Read: vs} }

func ok(ops ...Op) Txn   { return Txn{Ops: ops, Outcome: OK} }
func fail(ops ...Op) Txn { return Txn{Ops: ops, Outcome: Fail} }
func info(ops ...Op) Txn { return Txn{Ops: ops, Outcome: Info} }

// TestHandMadeHistories runs one small history per anomaly and checks that
// exactly the expected anomalies come out, with the expected transactions.
func TestHandMadeHistories(t *testing.T) {
	tests := []struct {
		name string
		h    []Txn
		want map[string]int
		// txns are the transactions of the first anomaly of kind, sorted.
		kind string
		txns []int
	}{
		{
			name: "serial",
			h: []Txn{
				ok(ap("x", 1), ap("y", 1)),
				ok(rd("x", 1), ap("x", 2)),
				ok(rd("x", 1, 2), rd("y", 1)),
			},
		},
		{
			name: "own appends read back",
			h: []Txn{
				ok(ap("x", 1)),
				ok(rd("x", 1), ap("x", 2), rd("x", 1, 2), ap("x", 3), rd("x", 1, 2, 3)),
				ok(ap("x", 4), rd("x", 1, 2, 3, 4)),
				ok(rd("x", 1, 2, 3, 4)),
			},
		},
		{
			name: "failed and unobserved indeterminate transactions are ignored",
			h: []Txn{
				ok(ap("x", 1)),
				fail(rd("x", 9, 9), ap("x", 2)),
				info(rd("x", 7), ap("x", 3)),
				ok(rd("x", 1)),
			},
		},
		{
			name: "write skew is G2-item",
			h: []Txn{
				ok(rd("x"), rd("y"), ap("x", 1)),
				ok(rd("x"), rd("y"), ap("y", 1)),
				ok(rd("x", 1), rd("y", 1)),
			},
			want: map[string]int{G2Item: 1},
			kind: G2Item, txns: []int{0, 1},
		},
		{
			name: "G0 dirty write",
			h: []Txn{
				ok(ap("x", 1), ap("y", 1)),
				ok(ap("x", 2), ap("y", 2)),
				ok(rd("x", 1, 2), rd("y", 2, 1)),
			},
			want: map[string]int{G0: 1},
			kind: G0, txns: []int{0, 1},
		},
		{
			name: "G1a aborted read",
			h: []Txn{
				fail(ap("x", 1)),
				ok(rd("x", 1)),
			},
			want: map[string]int{G1a: 1},
			kind: G1a, txns: []int{0, 1},
		},
		{
			name: "G1b intermediate read",
			h: []Txn{
				ok(ap("x", 1), ap("x", 2)),
				ok(rd("x", 1)),
				ok(rd("x", 1, 2)),
			},
			want: map[string]int{G1b: 1},
			kind: G1b, txns: []int{0, 1},
		},
		{
			name: "G1c circular information flow",
			h: []Txn{
				ok(ap("x", 1), rd("y", 1)),
				ok(ap("y", 1), rd("x", 1)),
			},
			want: map[string]int{G1c: 1},
			kind: G1c, txns: []int{0, 1},
		},
		{
			name: "lost update is G-single",
			h: []Txn{
				ok(rd("x"), ap("x", 1)),
				ok(rd("x"), ap("x", 2)),
				ok(rd("x", 1, 2)),
			},
			want: map[string]int{GSingle: 1},
			kind: GSingle, txns: []int{0, 1},
		},
		{
			name: "read skew is G-single",
			h: []Txn{
				ok(ap("x", 1), ap("y", 1)),
				ok(rd("x"), rd("y", 1)),
				ok(rd("x", 1)),
			},
			want: map[string]int{GSingle: 1},
			kind: GSingle, txns: []int{0, 1},
		},
		{
			name: "observed indeterminate write takes part in cycles",
			h: []Txn{
				info(ap("x", 1), ap("y", 1)),
				ok(rd("x"), rd("y", 1)),
				ok(rd("x", 1)),
			},
			want: map[string]int{GSingle: 1},
			kind: GSingle, txns: []int{0, 1},
		},
		{
			name: "G-single over three transactions",
			h: []Txn{
				ok(ap("x", 1), ap("z", 1)),
				ok(rd("x", 1), ap("y", 1)),
				ok(rd("y", 1), rd("z")),
				ok(rd("z", 1)),
			},
			// T2 -rw-> T0 -wr-> T1 -wr-> T2.
			want: map[string]int{GSingle: 1},
			kind: GSingle, txns: []int{0, 1, 2},
		},
		{
			name: "write skew over four transactions is G2-item",
			h: []Txn{
				ok(ap("x", 1)),
				ok(rd("x", 1), ap("y", 1)),
				ok(rd("y", 1), rd("z")),
				ok(rd("x"), ap("z", 1)),
				ok(rd("z", 1)),
			},
			// T3 read x empty before T0's 1: T3 -rw-> T0 -wr-> T1 -wr-> T2
			// -rw-> T3 has two rw edges; no cycle has one.
			want: map[string]int{G2Item: 1},
			kind: G2Item, txns: []int{0, 1, 2, 3},
		},
		{
			name: "incompatible order",
			h: []Txn{
				ok(ap("x", 1)),
				ok(ap("x", 2)),
				ok(rd("x", 1, 2)),
				ok(rd("x", 2, 1)),
			},
			want: map[string]int{IncompatibleOrder: 1},
			kind: IncompatibleOrder, txns: []int{2, 3},
		},
		{
			name: "duplicate elements",
			h: []Txn{
				ok(ap("x", 1)),
				ok(rd("x", 1, 1)),
			},
			want: map[string]int{DuplicateElements: 1},
			kind: DuplicateElements, txns: []int{1},
		},
		{
			name: "duplicate after a clean read of the same list",
			h: []Txn{
				ok(ap("x", 1)),
				ok(ap("x", 2)),
				ok(rd("x", 1, 2)),
				ok(rd("x", 1, 2, 1)),
			},
			want: map[string]int{DuplicateElements: 1},
			kind: DuplicateElements, txns: []int{3},
		},
		{
			name: "aborted append read past a clean prefix",
			h: []Txn{
				ok(ap("x", 1)),
				fail(ap("x", 2)),
				ok(rd("x", 1)),
				ok(rd("x", 1, 2)),
			},
			want: map[string]int{G1a: 1},
			kind: G1a, txns: []int{1, 3},
		},
		{
			name: "internal: own append not read",
			h: []Txn{
				ok(ap("x", 1), rd("x")),
			},
			want: map[string]int{Internal: 1},
			kind: Internal, txns: []int{0},
		},
		{
			name: "internal: non-repeatable read",
			h: []Txn{
				ok(ap("x", 1)),
				ok(ap("x", 2)),
				ok(rd("x", 1), rd("x", 1, 2)),
			},
			want: map[string]int{Internal: 1},
			kind: Internal, txns: []int{2},
		},
		{
			name: "garbage read",
			h: []Txn{
				ok(ap("x", 1)),
				ok(rd("x", 1, 7)),
			},
			want: map[string]int{GarbageRead: 1},
			kind: GarbageRead, txns: []int{1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Check(tt.h)
			want := tt.want
			if want == nil {
				want = map[string]int{}
			}
			if got := res.Counts(); !maps.Equal(got, want) {
				t.Fatalf("counts = %v, want %v\n%s", got, want, res)
			}
			if tt.kind == "" {
				return
			}
			a := res.Anomalies[tt.kind][0]
			if got := slices.Sorted(slices.Values(a.Txns)); !slices.Equal(got, tt.txns) {
				t.Errorf("%s transactions = %v, want %v\n%s", tt.kind, got, tt.txns, res)
			}
			if a.Explanation == "" {
				t.Errorf("%s has no explanation", tt.kind)
			}
		})
	}
}

// TestCycleEdges checks the edges reported for each cycle kind: their kinds
// match the definition and they close a cycle.
func TestCycleEdges(t *testing.T) {
	tests := []struct {
		kind string
		h    []Txn
		want []DepKind
	}{
		{G0, []Txn{ok(ap("x", 1), ap("y", 1)), ok(ap("x", 2), ap("y", 2)), ok(rd("x", 1, 2), rd("y", 2, 1))}, []DepKind{WW, WW}},
		{G1c, []Txn{ok(ap("x", 1), rd("y", 1)), ok(ap("y", 1), rd("x", 1))}, []DepKind{WR, WR}},
		{GSingle, []Txn{ok(rd("x"), ap("x", 1)), ok(rd("x"), ap("x", 2)), ok(rd("x", 1, 2))}, []DepKind{RW, WW}},
		{G2Item, []Txn{ok(rd("x"), rd("y"), ap("x", 1)), ok(rd("x"), rd("y"), ap("y", 1)), ok(rd("x", 1), rd("y", 1))}, []DepKind{RW, RW}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			res := Check(tt.h)
			as := res.Anomalies[tt.kind]
			if len(as) != 1 {
				t.Fatalf("want one %s, got\n%s", tt.kind, res)
			}
			cyc := as[0].Cycle
			var kinds []DepKind
			for i, e := range cyc {
				kinds = append(kinds, e.Kind)
				if next := cyc[(i+1)%len(cyc)]; e.To != next.From {
					t.Errorf("edge %d ends at T%d, next starts at T%d", i, e.To, next.From)
				}
				if e.Why == "" || e.Key == "" {
					t.Errorf("edge %d has no key or explanation: %+v", i, e)
				}
			}
			if !slices.Equal(kinds, tt.want) {
				t.Errorf("edge kinds = %v, want %v\n%s", kinds, tt.want, res)
			}
		})
	}
}

func TestExplanation(t *testing.T) {
	res := Check([]Txn{
		ok(rd("x"), ap("x", 1)),
		ok(rd("x"), ap("x", 2)),
		ok(rd("x", 1, 2)),
	})
	want := "G-single: 1\n" +
		"  T1 -rw-> T0 -ww-> T1: T1 read x = [] and T0 appended 1 as the first element; " +
		"T0 appended 1 to x, then T1 appended 2"
	if got := res.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestValid(t *testing.T) {
	writeSkew := Check([]Txn{
		ok(rd("x"), rd("y"), ap("x", 1)),
		ok(rd("x"), rd("y"), ap("y", 1)),
		ok(rd("x", 1), rd("y", 1)),
	})
	if writeSkew.Valid() {
		t.Error("write skew is valid for serializability")
	}
	if !writeSkew.Valid(G2Item) {
		t.Error("write skew is not valid for snapshot isolation")
	}
	lostUpdate := Check([]Txn{
		ok(rd("x"), ap("x", 1)),
		ok(rd("x"), ap("x", 2)),
		ok(rd("x", 1, 2)),
	})
	if lostUpdate.Valid(G2Item) {
		t.Error("lost update is valid for snapshot isolation")
	}
	if empty := Check(nil); !empty.Valid() || empty.String() != "valid" {
		t.Errorf("empty history: %s", empty)
	}
}
