package certify

import (
	"slices"
	"testing"

	"certa/writeset"
)

func key(table string, id int64) writeset.Key { return writeset.EncodeKey(table, id) }

// dml returns a write set with snapshot snap writing keys, with Tables
// derived from the keys.
func dml(snap uint64, keys ...writeset.Key) writeset.WriteSet {
	ws := writeset.WriteSet{Origin: "n1", Snapshot: snap, Keys: keys}
	for _, k := range keys {
		ws.Tables = append(ws.Tables, k.Table())
	}
	ws.Normalize()
	return ws
}

// ddl returns a DDL write set touching tables (none: every table).
func ddl(snap uint64, tables ...string) writeset.WriteSet {
	return writeset.WriteSet{Origin: "n1", Snapshot: snap, DDL: "ALTER TABLE ...", Tables: tables}
}

// schemaTx returns a transaction with schema statements of scope,
// touching tables and writing keys.
func schemaTx(snap uint64, scope writeset.Schema, tables []string, keys ...writeset.Key) writeset.WriteSet {
	ws := dml(snap, keys...)
	ws.Schema = scope
	ws.Tables = append(ws.Tables, tables...)
	ws.Normalize()
	return ws
}

// serializable returns dml(snap, keys...) of a serializable transaction
// that read tables.
func serializable(snap uint64, reads []string, keys ...writeset.Key) writeset.WriteSet {
	ws := dml(snap, keys...)
	ws.ReadTables = reads
	return ws
}

type step struct {
	seqno  uint64
	ws     writeset.WriteSet
	want   Result
	commit bool // commit if it passes (else: its apply failed)
}

func pass(seqno uint64, ws writeset.WriteSet) step {
	return step{seqno: seqno, ws: ws, commit: true}
}

// failApply is a write set that passes certification but whose apply fails,
// so it is not committed.
func failApply(seqno uint64, ws writeset.WriteSet) step {
	return step{seqno: seqno, ws: ws}
}

func refused(seqno uint64, ws writeset.WriteSet, r Reason, table string, at uint64) step {
	return step{seqno: seqno, ws: ws, want: Result{Reason: r, Table: table, ConflictSeqno: at}}
}

func TestCertify(t *testing.T) {
	a1, a2, a3 := key("a", 1), key("a", 2), key("a", 3)
	b1 := key("b", 1)
	tests := []struct {
		name    string
		horizon uint64
		steps   []step
	}{
		{"disjoint keys pass", 100, []step{
			pass(1, dml(0, a1)),
			pass(2, dml(0, a2)),
			pass(3, dml(0, b1)),
			pass(4, dml(0, a3)),
		}},
		{"serializable reads: write skew fails, reads before the snapshot pass", 100, []step{
			// Both read table a at snapshot 0 and write different rows.
			pass(1, serializable(0, []string{"a"}, a1)),
			refused(2, serializable(0, []string{"a"}, a2), ReadChanged, "a", 1),
			pass(3, serializable(1, []string{"a", "b"}, a3)), // snapshot holds 1
			pass(4, dml(0, a2)), // not serializable: only keys count
			refused(5, serializable(3, []string{"b", "a"}, b1), ReadChanged, "a", 4),
			refused(6, serializable(3, []string{"b"}, a2), Conflict, "a", 4), // keys first
			pass(7, ddl(6, "b")),
			refused(8, serializable(6, []string{"b"}), ReadChanged, "b", 7),
			pass(9, ddl(8)),
			refused(10, serializable(8, []string{"c"}), SchemaChanged, "", 9), // a DDL of every table
		}},
		{"overlap committed after snapshot conflicts", 100, []step{
			pass(1, dml(0, a1, a2)),
			refused(2, dml(0, a2), Conflict, "a", 1),
			refused(3, dml(0, b1, a1), Conflict, "a", 1),
			pass(4, dml(1, a1)), // snapshot includes 1
		}},
		{"committed at or before snapshot passes", 100, []step{
			pass(1, dml(0, a1)),
			pass(2, dml(0, a2)),
			pass(3, dml(1, a1)), // committed at the snapshot
			pass(5, dml(4, a1)), // committed before the snapshot
			refused(6, dml(4, a1), Conflict, "a", 5),
		}},
		{"same write set from two nodes: first committer wins", 100, []step{
			pass(1, dml(0, b1)),
			pass(2, writeset.WriteSet{Origin: "n1", TxID: 7, Snapshot: 1, Keys: []writeset.Key{a1, a2}, Tables: []string{"a"}}),
			refused(3, writeset.WriteSet{Origin: "n2", TxID: 7, Snapshot: 1, Keys: []writeset.Key{a1, a2}, Tables: []string{"a"}}, Conflict, "a", 2),
			// The loser did not commit: a retry on a fresh snapshot passes.
			pass(4, writeset.WriteSet{Origin: "n2", TxID: 8, Snapshot: 3, Keys: []writeset.Key{a1, a2}, Tables: []string{"a"}}),
		}},
		{"failed write sets cause no later conflict", 100, []step{
			failApply(1, dml(0, a1)), // passed, apply failed (e.g. unique index)
			pass(2, dml(0, a1)),      // would conflict with 1 had it committed
			refused(3, dml(0, a1), Conflict, "a", 2),
			pass(4, dml(2, a1)), // 3 was refused, so nothing after 2
			failApply(5, dml(4, a2)),
			pass(6, dml(4, a2, a1)),
		}},
		{"conflict reports the last commit of the smallest key", 100, []step{
			pass(1, dml(0, b1)),
			pass(2, dml(0, a2)),
			pass(3, dml(2, a2)),
			refused(4, dml(0, b1, a2), Conflict, "a", 3),
			// Unsorted keys decide the same.
			refused(5, writeset.WriteSet{Snapshot: 0, Keys: []writeset.Key{b1, a2}, Tables: []string{"b", "a"}}, Conflict, "a", 3),
		}},
		{"DDL on the write set's table", 100, []step{
			pass(1, dml(0, a1)),
			pass(2, ddl(1, "a")),
			refused(3, dml(1, a2), SchemaChanged, "a", 2), // snapshot before the DDL
			pass(4, dml(2, a2)),                           // snapshot after it
			pass(5, dml(0, b1)),                           // DDL on another table does not matter
		}},
		{"DDL always passes and is checked before keys", 100, []step{
			pass(1, dml(0, a1)),
			pass(2, ddl(0, "a")), // an old snapshot does not matter to DDL
			pass(3, ddl(0)),
			refused(4, dml(0, a1), SchemaChanged, "a", 3),
		}},
		{"a transaction with schema statements is certified, then changes its tables' schema", 100, []step{
			pass(1, dml(0, a1)),
			refused(2, schemaTx(0, writeset.SchemaTables, []string{"b"}, a1), Conflict, "a", 1), // its keys conflict
			pass(3, schemaTx(1, writeset.SchemaTables, []string{"b"}, a2)),
			refused(4, dml(2, b1), SchemaChanged, "b", 3), // b's schema changed at 3
			refused(5, dml(2, a3), SchemaChanged, "a", 3), // so did a's
			pass(6, dml(0, key("c", 1))),
			refused(7, schemaTx(2, writeset.SchemaTables, []string{"b"}), SchemaChanged, "b", 3), // a schema change of its tables after its snapshot
		}},
		{"a transaction with schema statements of every table", 100, []step{
			pass(1, ddl(0, "b")),
			refused(2, schemaTx(0, writeset.SchemaAll, nil, a1), SchemaChanged, "", 1), // any DDL after its snapshot
			pass(3, schemaTx(1, writeset.SchemaAll, nil, a1)),
			refused(4, dml(2, key("c", 1)), SchemaChanged, "c", 3), // every table's schema changed
			pass(5, dml(3, key("c", 1))),
		}},
		{"DDL touching several tables", 100, []step{
			pass(1, ddl(0, "a", "b")),
			refused(2, dml(0, b1), SchemaChanged, "b", 1),
			refused(3, dml(0, b1, a1), SchemaChanged, "a", 1),
			pass(4, dml(0, key("c", 1))),
		}},
		{"global DDL", 100, []step{
			pass(1, dml(0, a1)),
			pass(2, ddl(1)), // no tables: every table
			refused(3, dml(1, b1), SchemaChanged, "b", 2),
			refused(4, dml(1, key("zz", 9)), SchemaChanged, "zz", 2),
			refused(5, writeset.WriteSet{Snapshot: 1}, SchemaChanged, "", 2), // no table at all
			pass(6, dml(2, b1)),
			pass(7, writeset.WriteSet{Snapshot: 2}),
			pass(8, ddl(7, "a")),
			// The last DDL touching a table is reported.
			refused(9, dml(1, a2), SchemaChanged, "a", 8),
			refused(10, dml(1, b1), SchemaChanged, "b", 2),
		}},
		{"failed DDL changes nothing", 100, []step{
			failApply(1, ddl(0, "a")),
			failApply(2, ddl(0)),
			pass(3, dml(0, a1)),
		}},
		{"DDL rows count as keys", 100, []step{
			pass(1, writeset.WriteSet{Snapshot: 0, DDL: "CREATE TABLE b AS ...", Tables: []string{"b"}, Keys: []writeset.Key{b1}}),
			pass(2, dml(1, b1)),
		}},
		{"horizon", 3, []step{
			pass(1, dml(0, a1)),
			pass(2, dml(0, b1)),
			pass(3, dml(0, a2)),                   // exactly H behind: passes
			refused(4, dml(0, a3), TooOld, "", 0), // H+1 behind
			refused(5, dml(2, a2), Conflict, "a", 3),
			pass(6, dml(3, a1)), // 1 was pruned, and could not matter anyway
			refused(7, dml(4, a1), Conflict, "a", 6),
			refused(8, dml(5, a1), Conflict, "a", 6),
			refused(10, dml(6, a3), TooOld, "", 0),
		}},
		{"horizon 1", 1, []step{
			// Only snapshot n-1 is young enough, and then nothing is
			// between the snapshot and the position: no conflicts.
			pass(1, dml(0, a1)),
			refused(2, dml(0, a1), TooOld, "", 0),
			pass(3, dml(2, a1)),
			pass(4, dml(3, a1)),
			refused(5, dml(3, a1), TooOld, "", 0),
		}},
		{"TooOld before SchemaChanged before Conflict", 3, []step{
			pass(1, ddl(0, "a")),
			pass(2, dml(1, a1)),
			refused(3, dml(0, a1), SchemaChanged, "a", 1), // and a conflict
			refused(4, dml(1, a1), Conflict, "a", 2),
			refused(5, dml(1, a1), TooOld, "", 0), // and a conflict
			refused(6, dml(2, a1, b1), TooOld, "", 0),
		}},
		{"invalid snapshot", 100, []step{
			pass(1, dml(0, a1)),
			refused(2, dml(2, a1), Invalid, "", 0),
			refused(3, dml(9, a2), Invalid, "", 0),
			pass(4, ddl(9)),
		}},
		{"gaps in positions", 5, []step{
			pass(10, dml(9, a1)),
			refused(20, dml(9, a1), TooOld, "", 0),
			refused(21, dml(15, a1), TooOld, "", 0),
			pass(22, dml(17, a1)),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.horizon)
			for _, s := range tt.steps {
				ws := s.ws
				got := c.Certify(&ws, s.seqno)
				if got != s.want {
					t.Fatalf("position %d: Certify = %+v (%v), want %+v", s.seqno, got, got, s.want)
				}
				if got.OK() != (s.want.Reason == Pass) {
					t.Fatalf("position %d: OK() = %v", s.seqno, got.OK())
				}
				if got.OK() && s.commit {
					c.Commit(&ws, s.seqno)
				}
				if c.LastSeqno() != s.seqno {
					t.Fatalf("LastSeqno = %d, want %d", c.LastSeqno(), s.seqno)
				}
				// A saved and loaded copy decides the same from here on.
				c = roundTrip(t, c)
			}
		})
	}
}

func roundTrip(t testing.TB, c *Certifier) *Certifier {
	t.Helper()
	b := save(t, c)
	d, err := Load(bytesReader(b))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if b2 := save(t, d); string(b2) != string(b) {
		t.Fatalf("Save(Load(Save(c))) differs from Save(c)")
	}
	if d.Len() != c.Len() || d.LastSeqno() != c.LastSeqno() || d.Horizon() != c.Horizon() {
		t.Fatalf("loaded Len/LastSeqno/Horizon = %d/%d/%d, want %d/%d/%d",
			d.Len(), d.LastSeqno(), d.Horizon(), c.Len(), c.LastSeqno(), c.Horizon())
	}
	return d
}

func TestLenPrunes(t *testing.T) {
	const h = 10
	c := New(h)
	for n := uint64(1); n <= 100; n++ {
		ws := dml(n-1, key("t", int64(n)), key("t", int64(n+1000)), key("u", 1))
		if r := c.Certify(&ws, n); !r.OK() {
			t.Fatalf("position %d: %v", n, r)
		}
		c.Commit(&ws, n)
		// Keys of positions n-h+1..n, plus the shared u/1.
		want := 2*int(min(n, h)) + 1
		if c.Len() != want {
			t.Fatalf("position %d: Len = %d, want %d", n, c.Len(), want)
		}
	}
	// Certifying alone advances the window.
	ws := dml(100, key("v", 1))
	c.Certify(&ws, 200)
	if c.Len() != 0 {
		t.Fatalf("Len = %d after the window moved past every commit", c.Len())
	}
	if c.commits.len() != 0 || c.keyq.len() != 0 || c.ddls.len() != 0 {
		t.Fatalf("queues not empty: %d %d %d", c.commits.len(), c.keyq.len(), c.ddls.len())
	}
}

func TestLateCommit(t *testing.T) {
	// Certifying ahead: 2 is certified before 1 commits, so it does not see 1.
	c := New(100)
	a := dml(0, key("a", 1))
	if r := c.Certify(&a, 1); !r.OK() {
		t.Fatal(r)
	}
	b := dml(0, key("b", 1))
	if r := c.Certify(&b, 2); !r.OK() {
		t.Fatal(r)
	}
	c.Commit(&a, 1)
	c.Commit(&b, 2)
	x := dml(0, key("a", 1))
	if r := c.Certify(&x, 3); r != (Result{Reason: Conflict, Table: "a", ConflictSeqno: 1}) {
		t.Fatalf("got %v", r)
	}
	// A commit already out of the window is forgotten at once.
	c = New(2)
	for n := uint64(1); n <= 5; n++ {
		ws := dml(n-1, key("a", int64(n)))
		c.Certify(&ws, n)
	}
	c.Commit(&a, 3)
	if c.Len() != 0 {
		t.Fatalf("Len = %d, want 0", c.Len())
	}
}

func TestCommitDoesNotRetain(t *testing.T) {
	c := New(100)
	ws := writeset.WriteSet{DDL: "x", Tables: []string{"a"}, Keys: []writeset.Key{key("a", 1)}}
	c.Certify(&ws, 1)
	c.Commit(&ws, 1)
	ws.Tables[0], ws.Keys[0] = "zz", key("zz", 1)
	x := dml(0, key("a", 1))
	if r := c.Certify(&x, 2); r != (Result{Reason: SchemaChanged, Table: "a", ConflictSeqno: 1}) {
		t.Fatalf("got %v", r)
	}
	y := writeset.WriteSet{Snapshot: 0, Keys: []writeset.Key{key("a", 1)}}
	if r := c.Certify(&y, 3); r != (Result{Reason: Conflict, Table: "a", ConflictSeqno: 1}) {
		t.Fatalf("got %v", r)
	}
}

func TestMisusePanics(t *testing.T) {
	ws := dml(0, key("a", 1))
	tests := []struct {
		name string
		f    func()
	}{
		{"zero horizon", func() { New(0) }},
		{"same position twice", func() { c := New(5); c.Certify(&ws, 1); c.Certify(&ws, 1) }},
		{"position going back", func() { c := New(5); c.Certify(&ws, 3); c.Certify(&ws, 2) }},
		{"commit before certify", func() { c := New(5); c.Commit(&ws, 1) }},
		{"commit of an uncertified position", func() { c := New(5); c.Certify(&ws, 1); c.Commit(&ws, 2) }},
		{"commit twice", func() { c := New(5); c.Certify(&ws, 1); c.Commit(&ws, 1); c.Commit(&ws, 1) }},
		{"commits out of order", func() {
			c := New(5)
			c.Certify(&ws, 1)
			c.Certify(&ws, 2)
			c.Commit(&ws, 2)
			c.Commit(&ws, 1)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tt.f()
		})
	}
}

func TestPositionZero(t *testing.T) {
	c := New(5)
	ws := dml(0, key("a", 1))
	if r := c.Certify(&ws, 0); r.Reason != Invalid {
		t.Fatalf("DML at position 0: %v", r)
	}
	d := ddl(0, "a")
	if r := c.Certify(&d, 1); !r.OK() {
		t.Fatal(r)
	}
	c.Commit(&d, 1)
	if r := c.Certify(&ws, 2); r != (Result{Reason: SchemaChanged, Table: "a", ConflictSeqno: 1}) {
		t.Fatal(r)
	}
}

func TestReasonString(t *testing.T) {
	for r, want := range map[Reason]string{
		Pass: "pass", Conflict: "conflict", TooOld: "snapshot too old",
		SchemaChanged: "schema changed", Invalid: "invalid snapshot", Reason(42): "Reason(42)",
	} {
		if got := r.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(r), got, want)
		}
	}
	for _, tt := range []struct {
		r    Result
		want string
	}{
		{Result{}, "pass"},
		{Result{Reason: Conflict, Table: "t", ConflictSeqno: 42}, `conflict on table "t" with the write set at position 42`},
		{Result{Reason: SchemaChanged, Table: "t", ConflictSeqno: 7}, `schema of table "t" changed by the DDL at position 7`},
		{Result{Reason: SchemaChanged, ConflictSeqno: 7}, `schema changed by the DDL at position 7`},
		{Result{Reason: TooOld}, "snapshot too old"},
	} {
		if got := tt.r.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.r, got, tt.want)
		}
	}
}

func TestFifo(t *testing.T) {
	var q fifo[int]
	var model []int
	next := 0
	for i := 0; i < 10000; i++ {
		if i%7 < 4 {
			n := i % 5
			for j := 0; j < n; j++ {
				q.push(next)
				model = append(model, next)
				next++
			}
		} else if len(model) > 0 {
			n := min(len(model), 1+i%6)
			if !slices.Equal(q.front(n), model[:n]) {
				t.Fatalf("step %d: front(%d) = %v, want %v", i, n, q.front(n), model[:n])
			}
			q.drop(n)
			model = model[n:]
		}
		if q.len() != len(model) {
			t.Fatalf("step %d: len %d, want %d", i, q.len(), len(model))
		}
	}
	if cap(q.buf) > 4096 {
		t.Errorf("fifo grew to %d for at most a few hundred live elements", cap(q.buf))
	}
}
