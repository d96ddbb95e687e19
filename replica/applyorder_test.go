package replica

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// applyOrderCase is a log (see logspec_test.go), what the node's clients
// are told of each write set in log order ("seqno decision"; "-": nothing,
// as for other nodes' write sets), and the engine's Apply calls.
type applyOrderCase struct {
	name      string
	horizon   uint64 // 0: the default
	log       []string
	decisions []string
	applies   []string
}

var applyOrderCases = []applyOrderCase{{
	name:      "disjoint write sets all pass, applied one batch per Apply call",
	log:       []string{"t/1@0", "t/2@0 ; t/3@1"},
	decisions: []string{"1 pass", "2 pass", "3 pass"},
	applies:   []string{"[1] up to 1", "[2 3] up to 3"},
}, {
	name:      "first committer wins; a snapshot that saw the winner passes",
	log:       []string{"t/1@0", "t/1@0", "t/1@1", "t/1@1"},
	decisions: []string{"1 pass", "2 conflict t@1", "3 pass", "4 conflict t@3"},
	applies:   []string{"[1] up to 1", "[] up to 2", "[3] up to 3", "[] up to 4"},
}, {
	name:      "a conflict within one entry's batch",
	log:       []string{"t/1@0 + t/1@0 + t/2@0"},
	decisions: []string{"1 pass", "2 conflict t@1", "3 pass"},
	applies:   []string{"[1 3] up to 3"},
}, {
	name:      "a conflict between entries of one Apply call",
	log:       []string{"u/9@0 ; t/1,t/2@0 ; t/2,t/3@1 ; t/3@2"},
	decisions: []string{"1 pass", "2 pass", "3 conflict t@2", "4 pass"},
	applies:   []string{"[1 2 4] up to 4"},
}, {
	name: "other nodes' write sets are certified and applied alike, and nobody here is told",
	log: []string{
		"t/1@0 from n2",
		"t/1@0",
		"t/2@0 from n2 + t/1@1 from n3",
		"t/2@0 from n2",
	},
	decisions: []string{"1 -", "2 conflict t@1", "3 -", "4 -", "5 -"},
	applies:   []string{"[1] up to 1", "[] up to 2", "[3 4] up to 4", "[] up to 5"},
}, {
	name:      "a schema change fails the write sets of its table read before it",
	log:       []string{"t/1@0", "ddl t", "t/2@1 + u/1@1", "t/3@2 + t/1@0"},
	decisions: []string{"1 pass", "2 pass", "3 schema changed t", "4 pass", "5 pass", "6 schema changed t"},
	applies:   []string{"[1] up to 1", "[2] up to 2", "[4] up to 4", "[5] up to 6"},
}, {
	name:      "a schema change of no named table changes every table",
	log:       []string{"ddl", "t/1@0 ; u/1,v/1@0", "u/2@1"},
	decisions: []string{"1 pass", "2 schema changed t", "3 schema changed u", "4 pass"},
	applies:   []string{"[1] up to 1", "[] up to 3", "[4] up to 4"},
}, {
	name:      "a DDL passes whatever came before it",
	log:       []string{"t/1@0", "ddl t ; ddl t", "t/1@0"},
	decisions: []string{"1 pass", "2 pass", "3 pass", "4 schema changed t"},
	applies:   []string{"[1] up to 1", "[2 3] up to 3", "[] up to 4"},
}, {
	name:      "snapshots older than the horizon are too old",
	horizon:   2,
	log:       []string{"t/1@0", "t/2@0", "t/3@0", "t/4@2", "t/1@3"},
	decisions: []string{"1 pass", "2 pass", "3 too old", "4 pass", "5 pass"},
	applies:   []string{"[1] up to 1", "[2] up to 2", "[] up to 3", "[4] up to 4", "[5] up to 5"},
}, {
	name:      "a snapshot not before the write set's position is invalid",
	log:       []string{"t/1@1", "t/2@0 + t/3@3"},
	decisions: []string{"1 invalid", "2 pass", "3 invalid"},
	applies:   []string{"[] up to 1", "[2] up to 3"},
}, {
	name:      "member entries take no seqno, and alone reach no engine",
	log:       []string{"member n2", "t/1@0 ; member n3 ; t/2@1", "member n4", "t/3@2"},
	decisions: []string{"1 pass", "2 pass", "3 pass"},
	applies:   []string{"[1 2] up to 2", "[3] up to 3"},
}}

// A list of log entries fed to the state machine (through memlog) gives
// the expected certification decisions, told to the origin's sessions, and
// the engine gets Apply batches in log order with the right seqnos.
// (TestReplayAfterRestart feeds the same logs grouped otherwise.)
func TestApplyOrder(t *testing.T) {
	for _, c := range applyOrderCases {
		t.Run(c.name, func(t *testing.T) {
			l := parseLog(t, c.log)
			run := runCore(t, c.horizon, l, 0, nil, 0)
			if !slices.Equal(run.decisions, c.decisions) {
				t.Errorf("decisions:\n got %q\nwant %q", run.decisions, c.decisions)
			}
			if got := formatCalls(run.calls); !slices.Equal(got, c.applies) {
				t.Errorf("engine Apply calls:\n got %q\nwant %q", got, c.applies)
			}
			last := uint64(len(l.writeSets))
			if got := run.node.sm.applied.get(); got != last {
				t.Errorf("applied seqno %d, want %d", got, last)
			}
		})
	}
}

// The notation of these tests reads as documented.
func TestParseLog(t *testing.T) {
	l := parseLog(t, []string{"t/1,u/2@3 from n2 + ddl t ; member n9", "ddl"})
	if len(l.calls) != 2 || len(l.calls[0]) != 2 || len(l.calls[1]) != 1 || len(l.writeSets) != 3 {
		t.Fatalf("calls %d, entries %d, write sets %d", len(l.calls), len(l.calls[0]), len(l.writeSets))
	}
	ws := l.writeSets[0]
	if ws.Origin != "n2" || ws.Snapshot != 3 || len(ws.Keys) != 2 || !reflect.DeepEqual(ws.Tables, []string{"t", "u"}) || ws.TxID != 1 {
		t.Fatalf("first write set %+v", ws)
	}
	if ddl := l.writeSets[1]; !ddl.IsDDL() || !reflect.DeepEqual(ddl.Tables, []string{"t"}) || ddl.Origin != "n1" {
		t.Fatalf("second write set %+v", ddl)
	}
	if global := l.writeSets[2]; !global.IsDDL() || len(global.Tables) != 0 || !strings.HasPrefix(global.DDL, "ddl") {
		t.Fatalf("third write set %+v", global)
	}
}
