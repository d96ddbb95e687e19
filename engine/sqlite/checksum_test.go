package sqlite

import (
	"context"
	"testing"
)

// Two engines given the same write sets report the same checksums; a
// difference in any value, even only its type, changes them.
func TestChecksums(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	for _, e := range []*testEngine{a, b} {
		e.legacyDDL("CREATE TABLE t (id INTEGER PRIMARY KEY, v)")
		e.ddl("CREATE TABLE u (k TEXT PRIMARY KEY)")
	}
	b.apply(a.commit("INSERT INTO t VALUES (1, 'x'), (2, 2.5), (3, NULL)"), a.commit("INSERT INTO u VALUES ('k')"))
	ctx := context.Background()
	sa, err := a.Checksums(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sb, _ := b.Checksums(ctx)
	if len(sa.Tables) != 2 || sa.Tables[0].Table != "t" || sa.Tables[0].Rows != 3 || sa.Tables[1].Rows != 1 {
		t.Fatalf("checksums %+v", sa)
	}
	if sa.Tables[0] != sb.Tables[0] || sa.Tables[1] != sb.Tables[1] || sa.Seqno != sb.Seqno {
		t.Fatalf("same data, different checksums:\n%+v\n%+v", sa, sb)
	}
	b.commit("UPDATE t SET v = '2.5' WHERE id = 2") // text instead of real
	sb, _ = b.Checksums(ctx)
	if sa.Tables[0].Sum == sb.Tables[0].Sum || sa.Tables[1] != sb.Tables[1] {
		t.Fatalf("a changed type went unnoticed: %+v / %+v", sa, sb)
	}
}
