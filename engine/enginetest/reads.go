package enginetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"certa/result"
	"certa/writeset"
)

// Every row a serializable statement's WHERE selects is covered by what
// Reads reports (its key, a range holding it, or its table read whole),
// for random conditions on a single and a composite key and on indexed
// columns (LIKE patterns too), with constants and parameters of every
// type a client sends: the reads are never narrower than the engine's
// own comparisons.
func testReadsCoverSelectedRows(t *testing.T, f Factory) {
	n := open(t, f)
	n.ddl("CREATE TABLE s (id bigint PRIMARY KEY, v integer)")
	n.ddl("CREATE TABLE c (a text, b integer, v integer, w varchar(10), PRIMARY KEY (a, b))")
	n.ddl("CREATE INDEX s_v ON s (v)", "CREATE INDEX c_v ON c (v)", "CREATE INDEX c_w ON c (w)")
	var rows []string
	for i := -6; i <= 6; i++ {
		rows = append(rows, fmt.Sprintf("(%d, %d)", i*3, i%4))
	}
	n.commit("INSERT INTO s VALUES " + strings.Join(rows, ", "))
	rows = rows[:0]
	texts := []string{"", "a", "b", "ab", "5", "05", "a%b", `a\b`, "é", "éa", "A"}
	for i, a := range texts {
		for b := -2; b <= 2; b++ {
			rows = append(rows, fmt.Sprintf("('%s', %d, %d, '%s')", a, b, b*b, texts[(i+b+2)%len(texts)]))
		}
	}
	n.commit("INSERT INTO c VALUES " + strings.Join(rows, ", "))

	rng := rand.New(rand.NewPCG(3, 4))
	ints := []string{"-7", "-3", "0", "2", "3", "9", "18", "100"}
	patterns := []string{"a%", "ab%", "a_", "a\\%%", `a\\%`, "a%b", "é%", "%", "_", "5", "A%", "a\\_%"}
	operand := func(col string, args *[]any) string {
		if rng.IntN(2) == 0 { // a parameter of some type
			var v any
			switch rng.IntN(6) {
			case 0:
				v = int64(rng.IntN(21) - 10)
			case 1:
				v = fmt.Sprint(rng.IntN(21) - 10)
			case 2:
				v = fmt.Sprintf("0%d", rng.IntN(5))
			case 3:
				v = float64(rng.IntN(9)-4) + []float64{0, 0.5}[rng.IntN(2)]
			case 4:
				v = []string{"a", "ab", "5", "", "a%", "é%"}[rng.IntN(6)]
			default:
				v = nil
			}
			*args = append(*args, v)
			return fmt.Sprintf("$%d", len(*args))
		}
		if (col == "a" || col == "w") && rng.IntN(3) > 0 {
			return "'" + texts[rng.IntN(len(texts))] + "'"
		}
		switch rng.IntN(5) {
		case 0:
			return "'" + ints[rng.IntN(len(ints))] + "'"
		case 1:
			return ints[rng.IntN(len(ints))] + ".0"
		}
		return ints[rng.IntN(len(ints))]
	}
	cond := func(cols []string, args *[]any) string {
		col := cols[rng.IntN(len(cols))]
		switch rng.IntN(6) {
		case 5:
			if col == "a" || col == "w" {
				if rng.IntN(2) == 0 {
					*args = append(*args, patterns[rng.IntN(len(patterns))])
					return fmt.Sprintf("%s LIKE $%d", col, len(*args))
				}
				return fmt.Sprintf("%s LIKE '%s'", col, patterns[rng.IntN(len(patterns))])
			}
			fallthrough
		case 0:
			return fmt.Sprintf("%s IN (%s, %s)", col, operand(col, args), operand(col, args))
		case 1:
			return fmt.Sprintf("%s BETWEEN %s AND %s", col, operand(col, args), operand(col, args))
		case 2:
			return fmt.Sprintf("%s %s %s", operand(col, args), []string{"=", "<", ">="}[rng.IntN(3)], col)
		}
		return fmt.Sprintf("%s %s %s", col, []string{"=", "<", "<=", ">", ">="}[rng.IntN(5)], operand(col, args))
	}
	checked := map[string]int{}
	for iter := range 400 {
		table, cols, key := "s", []string{"id", "v"}, "id"
		if iter%2 == 1 {
			table, cols, key = "c", []string{"a", "b", "v", "w"}, "a, b"
		}
		var args []any
		conds := make([]string, 1+rng.IntN(3))
		for i := range conds {
			conds[i] = cond(cols, &args)
		}
		where := strings.Join(conds, " AND ")
		tx, err := n.e.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.TrackReads(ctx); err != nil {
			t.Fatal(err)
		}
		sql := fmt.Sprintf("SELECT %s FROM %s WHERE %s", key, table, where)
		got := &result.Buffer{}
		if err := tx.Exec(ctx, sql, got, args...); err != nil {
			tx.Rollback()
			checked["refused"]++
			continue // a value SQLite or certa refuses: nothing read
		}
		reads, err := tx.Reads(ctx)
		tx.Rollback()
		if err != nil {
			t.Fatal(err)
		}
		grain := "whole"
		if !slices.Contains(reads.Tables, table) {
			grain = "keys"
		}
		checked[grain]++
		for _, row := range got.Rows {
			var k writeset.Key
			if table == "s" {
				k = writeset.EncodeKey("s", keyVal(row[0]))
			} else {
				k = writeset.EncodeKey("c", keyVal(row[0]), keyVal(row[1]))
			}
			covered := slices.Contains(reads.Tables, table) || slices.Contains(reads.Keys, k) ||
				slices.ContainsFunc(reads.Ranges, func(r writeset.KeyRange) bool { return r.Contains(k) })
			if !covered {
				t.Fatalf("%s %v: row %v is not covered by reads %q %q %q", sql, args, row, reads.Tables, reads.Keys, reads.Ranges)
			}
		}
	}
	t.Logf("statements by grain: %v", checked)
	if checked["keys"] < 50 || checked["whole"] < 50 {
		t.Fatalf("too few statements of a grain to tell: %v", checked)
	}
}

// keyVal is a result value as keys hold it.
func keyVal(v result.Value) any {
	switch v := v.(type) {
	case int64, string:
		return v
	case int32:
		return int64(v)
	case int16:
		return int64(v)
	}
	panic(fmt.Sprintf("key value %T", v))
}
