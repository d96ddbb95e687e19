package sqlite

import (
	"bytes"
	"errors"
	"testing"

	"zombiezen.com/go/sqlite"
)

// rowSchema covers the value kinds and a composite key.
const rowSchema = `CREATE TABLE r (a INTEGER, b TEXT, n DOUBLE PRECISION, z BYTEA, note TEXT, PRIMARY KEY (a, b))`

var rowStatements = []string{
	"INSERT INTO r VALUES (1, 'x', 1.5, x'00ff', 'one'), (2, 'y', NULL, NULL, NULL), (3, 'q\"uote', -0.25, x'', '')",
	"UPDATE r SET note = NULL WHERE a = 1",
	"UPDATE r SET n = 2.5, z = x'01' WHERE a = 2",
	"DELETE FROM r WHERE a = 3",
	"UPDATE r SET a = 9 WHERE a = 2", // key change: delete + insert
}

// The changeset reader agrees with SQLite's own iterator on every record
// (the iterator shows undefined values as NULL).
func TestForEachChangeMatchesSQLiteIterator(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(rowSchema)
	for _, stmt := range rowStatements {
		ws := e.commit(stmt)
		it, err := sqlite.NewChangesetIterator(bytes.NewReader(ws.Changes))
		if err != nil {
			t.Fatal(err)
		}
		records := 0
		err = forEachChange(ws.Changes, func(ch *rowChange) error {
			records++
			if more, err := it.Next(); err != nil || !more {
				t.Fatalf("%s: SQLite's iterator ended early (%v)", stmt, err)
			}
			op, _ := it.Operation()
			if op.TableName != ch.table || int(op.Type) != int(ch.op) || op.NumColumns != len(ch.pk) {
				t.Fatalf("%s: record %+v, SQLite says %+v", stmt, ch, op)
			}
			pk, _ := it.PrimaryKey()
			for i := range pk {
				if pk[i] != ch.pk[i] {
					t.Fatalf("%s: pk flags %v, SQLite says %v", stmt, ch.pk, pk)
				}
			}
			compare := func(side string, vals []rowValue, get func(int) (sqlite.Value, error)) {
				for i, v := range vals {
					sv, err := get(i)
					if err != nil {
						t.Fatal(err)
					}
					if !sameValue(v, sv) {
						t.Fatalf("%s: %s value %d is %+v, SQLite says %v %q", stmt, side, i, v, sv.Type(), sv.Text())
					}
				}
			}
			compare("old", ch.old, it.Old)
			compare("new", ch.new, it.New)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if more, _ := it.Next(); more {
			t.Fatalf("%s: the reader missed records", stmt)
		}
		it.Close()
		if records == 0 {
			t.Fatalf("%s: no records", stmt)
		}
	}
}

func sameValue(v rowValue, sv sqlite.Value) bool {
	switch v.kind {
	case kindUndefined, kindNull:
		return sv.Type() == sqlite.TypeNull
	case kindInt:
		return sv.Type() == sqlite.TypeInteger && sv.Int64() == v.i
	case kindFloat:
		return sv.Type() == sqlite.TypeFloat && sv.Float() == v.f
	case kindText:
		return sv.Type() == sqlite.TypeText && sv.Text() == string(v.bytes)
	case kindBlob:
		return sv.Type() == sqlite.TypeBlob && bytes.Equal(sv.Blob(), v.bytes)
	}
	return false
}

// applyRows reproduces every kind of change on a second engine without
// falling back, and refuses a change whose old values do not match.
func TestApplyRowsReproducesAndDetectsMismatch(t *testing.T) {
	a, b := openTest(t, Config{}), openTest(t, Config{})
	a.ddl(rowSchema)
	b.ddl(rowSchema)
	c := b.applier
	for _, stmt := range rowStatements {
		ws := a.commit(stmt)
		if err := c.exec("BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		if err := c.refreshSchema(); err != nil {
			t.Fatal(err)
		}
		if err := applyRows(c, ws.Changes); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if err := c.exec("COMMIT"); err != nil {
			t.Fatal(err)
		}
	}
	const q = "SELECT a, b, n, z, note FROM r ORDER BY a"
	wantRows(t, b.query(q), a.query(q)...)

	// b's row differs from what a's next change expects.
	if err := c.exec("UPDATE r SET note = 'local' WHERE a = 1"); err != nil {
		t.Fatal(err)
	}
	ws := a.commit("UPDATE r SET note = 'new' WHERE a = 1")
	c.exec("BEGIN IMMEDIATE")
	defer c.rollback()
	c.refreshSchema()
	if err := applyRows(c, ws.Changes); !errors.Is(err, errNotClean) {
		t.Fatalf("mismatched old value: %v, want errNotClean", err)
	}
}

func FuzzForEachChange(f *testing.F) {
	f.Add([]byte{'T', 2, 1, 0, 't', 0, opInsert, 0, kindInt, 0, 0, 0, 0, 0, 0, 0, 1, kindText, 1, 'x'})
	f.Add([]byte{'T', 0x81, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		forEachChange(b, func(*rowChange) error { return nil }) // must not panic
	})
}
