package replica

import (
	"context"
	"slices"
	"strings"
	"testing"

	"certa/certify"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Which transactions are serializable: BEGIN's level, else
// default_transaction_isolation (however set); SET TRANSACTION ISOLATION
// LEVEL only before the first query. A serializable transaction's engine
// transaction records its reads from its first statement on; SHOW says
// the level asked for (as PostgreSQL's READ UNCOMMITTED, run as READ
// COMMITTED), and whether the block is DEFERRABLE.
func TestIsolationLevels(t *testing.T) {
	s, e := newTestSession()
	show := func() string {
		t.Helper()
		buf := &result.Buffer{}
		if err := s.Query(context.Background(), "SHOW transaction_isolation", buf); err != nil {
			t.Fatal(err)
		}
		return buf.Rows[0][0].(string)
	}
	runSteps(t, s, []sessionStep{
		{"BEGIN ISOLATION LEVEL SERIALIZABLE", "BEGIN", 'T'},
		{"INSERT INTO t VALUES (1)", "INSERT 0 1", 'T'},
		{"SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET", 'T'},
		{"INSERT INTO t VALUES (2)", "INSERT 0 1", 'T'},
		{"COMMIT", "COMMIT", 'I'},
		{"SET default_transaction_isolation = 'sometimes'", "!22023", 'I'},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE", "SET", 'I'},
		{"INSERT INTO t VALUES (3)", "INSERT 0 1", 'I'},
		{"BEGIN ISOLATION LEVEL READ COMMITTED", "BEGIN", 'T'},
		{"INSERT INTO t VALUES (4)", "INSERT 0 1", 'T'},
		{"COMMIT", "COMMIT", 'I'},
	})
	want := [][]string{
		{"track reads", "INSERT INTO t VALUES (2)"},
		{"track reads", "INSERT INTO t VALUES (3)"},
		{"INSERT INTO t VALUES (4)"},
	}
	if !slices.EqualFunc(e.committed, want, slices.Equal) {
		t.Fatalf("committed %q, want %q", e.committed, want)
	}
	if got := show(); got != "serializable" {
		t.Fatalf("SHOW transaction_isolation with the default serializable: %s", got)
	}
	runSteps(t, s, []sessionStep{{"BEGIN ISOLATION LEVEL READ COMMITTED", "BEGIN", 'T'}})
	if got := show(); got != "read committed" {
		t.Fatalf("SHOW transaction_isolation in a READ COMMITTED block: %s", got)
	}
	runSteps(t, s, []sessionStep{
		{"COMMIT", "COMMIT", 'I'},
		{"BEGIN ISOLATION LEVEL SERIALIZABLE, READ ONLY, DEFERRABLE", "BEGIN", 'T'},
		{"SET TRANSACTION NOT DEFERRABLE", "SET", 'T'},
		{"SET transaction_deferrable = on", "SET", 'T'},
		{"SELECT 1", "INSERT 0 1", 'T'}, // the fake engine's tag
	})
	if !s.modes.deferrable || !s.modes.readOnly || !s.modes.serializable() {
		t.Fatalf("modes of the block: %+v", s.modes)
	}
	runSteps(t, s, []sessionStep{
		{"SET TRANSACTION NOT DEFERRABLE", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
	})
}

// A read conflict found by a filter alone, on a key the transaction did
// not read, is counted as the filter's false positive and its DETAIL says
// so; one on a key it read, or found at an exact grain, is left as it is.
func TestExplainReadConflict(t *testing.T) {
	// A row that came into an index range is said as its table and column.
	e := sqlerr.As(readConflict(certify.Result{Reason: certify.ReadChanged, Table: writeset.IndexTable("items", "tag"),
		Key: writeset.IndexKey("items", "tag", "red-7"), ConflictSeqno: 8}))
	if want := `put a row of table "items" into the range of its column "tag"`; e == nil || !strings.Contains(e.Detail, want) {
		t.Fatalf("index range conflict: %+v, want DETAIL with %s", e, want)
	}
	n := &Node{cfg: Config{ReadFilterFPRate: 0.01}}
	read := []writeset.Key{writeset.EncodeKey("t", int64(1)), writeset.EncodeKey("t", int64(3))}
	for _, c := range []struct {
		res certify.Result
		fp  bool
	}{
		{certify.Result{Reason: certify.ReadChanged, Table: "t", Key: writeset.EncodeKey("t", int64(2)), ViaFilter: true, ConflictSeqno: 9}, true},
		{certify.Result{Reason: certify.ReadChanged, Table: "t", Key: read[1], ViaFilter: true, ConflictSeqno: 9}, false},
		{certify.Result{Reason: certify.ReadChanged, Table: "t", Key: writeset.EncodeKey("t", int64(2)), ConflictSeqno: 9}, false},
		{certify.Result{Reason: certify.ReadChanged, Table: writeset.IndexTable("t", "tag"), Key: writeset.IndexKey("t", "tag", "x"), ViaFilter: true, ConflictSeqno: 9}, true},
	} {
		before := n.filterFalsePositives.Load()
		err := n.explainReadConflict(readConflict(c.res), read)
		e := sqlerr.As(err)
		if e == nil || e.Code != sqlerr.SerializationFailure {
			t.Fatalf("%+v: %v", c.res, err)
		}
		counted := n.filterFalsePositives.Load() > before
		if counted != c.fp || strings.Contains(e.Detail, "false positive") != c.fp || strings.Contains(e.Detail, "\x01") {
			t.Errorf("%+v: counted %v, detail %q", c.res, counted, e.Detail)
		}
	}
}
