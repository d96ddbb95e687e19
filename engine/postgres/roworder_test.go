package postgres

import (
	"fmt"
	"strings"
	"testing"

	"certa/writeset"
)

// change is a row change of table t (id int PRIMARY KEY, v int) written
// short: "I1:a" inserts id 1 with v a, "U1:a>b" updates it from a to b,
// "U1:a>2:b" changes its key too, "D1:a" deletes it; "S" is a schema
// statement.
func change(s string) (rowChange, rowTrace) {
	if s == "S" {
		return rowChange{op: opSchema, newRow: []byte("ALTER TABLE t ADD x int")}, rowTrace{}
	}
	image := func(kv string) (writeset.Key, []byte) {
		id, v, _ := strings.Cut(kv, ":")
		return writeset.EncodeKey("t", id), []byte(fmt.Sprintf(`{"id": %s, "v": %q}`, id, v))
	}
	r := rowChange{op: s[0], schema: "public", table: "t"}
	tr := rowTrace{keyed: true}
	body := s[1:]
	if r.op != opInsert {
		old, _, _ := strings.Cut(body, ">")
		tr.hasOld = true
		tr.oldKey, tr.oldImage = image(old)
		id, _, _ := strings.Cut(old, ":")
		r.oldKey = []byte(`{"id": ` + id + `}`)
	}
	if r.op != opDelete {
		nw := body
		if r.op == opUpdate {
			_, nw, _ = strings.Cut(body, ">")
			if !strings.Contains(nw, ":") { // the same key
				id, _, _ := strings.Cut(body, ":")
				nw = id + ":" + nw
			}
		}
		tr.hasNew = true
		tr.newKey, r.newRow = image(nw)
	}
	return r, tr
}

// short writes a rowChange back the way change reads it (an update as
// key:new).
func short(r rowChange) string {
	switch r.op {
	case opSchema:
		return "S"
	case opDelete:
		return "D" + strings.TrimSuffix(strings.TrimPrefix(string(r.oldKey), `{"id": `), "}")
	}
	var id, v string
	fmt.Sscanf(strings.NewReplacer(`{"id": `, "", `, "v": "`, " ", `"}`, "").Replace(string(r.newRow)), "%s %s", &id, &v)
	return string(r.op) + id + ":" + v
}

func TestOrderRows(t *testing.T) {
	for _, c := range []struct{ recorded, want string }{
		// In order: as recorded.
		{"I1:a U1:a>b D1:b", "I1:a U1:b D1"},
		{"D1:a I1:a", ""},            // in order, but taken together: it ends as it began
		{"D1:a I1:b", "D1 I1:b"},     // a client's DELETE and INSERT: as recorded
		{"D2:b U1:a>2:c", "D2 U2:c"}, // a key moved onto a deleted one: as recorded
		{"I1:a I2:b U1:a>c", "I1:a I2:b U1:c"},
		// A nested statement's update recorded before the insert it follows.
		{"I1:a U2:a>b I2:a I3:x", "I1:a I2:b I3:x"},
		// Two updates the other way round: the later image wins.
		{"U2:b>c U2:a>b", "U2:c"},
		{"U1:a>b U2:b>c U1:x>a", "U1:b U2:c"},
		// Deleted by a nested statement before its insert was recorded.
		{"I1:a D2:a I2:a", "I1:a"},
		{"I1:a U2:a>b D2:b I2:a", "I1:a"},
		// A key's change ties the two keys.
		{"U2:b>3:c U2:a>b I4:z", "D2 I3:c I4:z"},
		// Schema statements part what is taken together.
		{"I1:a S U1:a>b", "I1:a S U1:b"},
		{"U2:b>c S U2:a>b", "U2:c S U2:b"}, // no chain within either part: as recorded
	} {
		var rows []rowChange
		var trace []rowTrace
		for _, s := range strings.Fields(c.recorded) {
			r, tr := change(s)
			rows = append(rows, r)
			trace = append(trace, tr)
		}
		var got []string
		for _, r := range orderRows(rows, trace) {
			got = append(got, short(r))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("orderRows(%s) = %s, want %s", c.recorded, strings.Join(got, " "), c.want)
		}
	}
}

// BenchmarkOrderRows: the replay of a bulk insert's rows (all in order),
// per row.
func BenchmarkOrderRows(b *testing.B) {
	const n = 100_000
	rows, trace := make([]rowChange, n), make([]rowTrace, n)
	for i := range rows {
		rows[i], trace[i] = change(fmt.Sprintf("I%d:v", i))
	}
	b.ResetTimer()
	for range b.N {
		orderRows(rows, trace)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}
