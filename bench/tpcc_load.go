package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// loader inserts TPC-C's initial population in multi-row INSERTs. The first
// error stops it and stays in err.
type loader struct {
	ctx context.Context
	c   Conn
	rng *rand.Rand
	err error

	table string
	cols  int
	rows  [][]any
}

// loadBatch is the rows per INSERT.
const loadBatch = 200

func (l *loader) start(table string, cols int) { l.table, l.cols, l.rows = table, cols, l.rows[:0] }

func (l *loader) add(row ...any) {
	l.rows = append(l.rows, row)
	if len(l.rows) == loadBatch {
		l.flush()
	}
}

func (l *loader) flush() {
	if l.err != nil || len(l.rows) == 0 {
		l.rows = l.rows[:0]
		return
	}
	var sql strings.Builder
	fmt.Fprintf(&sql, "INSERT INTO %s VALUES ", l.table)
	args := make([]any, 0, len(l.rows)*l.cols)
	for i, row := range l.rows {
		if i > 0 {
			sql.WriteByte(',')
		}
		sql.WriteByte('(')
		for j := range row {
			if j > 0 {
				sql.WriteByte(',')
			}
			fmt.Fprintf(&sql, "$%d", len(args)+j+1)
		}
		sql.WriteByte(')')
		args = append(args, row...)
	}
	if _, err := l.c.Exec(l.ctx, sql.String(), args...); err != nil {
		l.err = fmt.Errorf("load %s: %w", l.table, err)
	}
	l.rows = l.rows[:0]
}

func (l *loader) text(minLen, maxLen int) string { return randText(l.rng, minLen, maxLen) }

// withOriginal is TPC-C's i_data and s_data: 10% contain "ORIGINAL".
func (l *loader) withOriginal() string {
	s := l.text(26, 50)
	if l.rng.IntN(10) == 0 {
		at := l.rng.IntN(len(s) - 8)
		s = s[:at] + "ORIGINAL" + s[at+8:]
	}
	return s
}

func (l *loader) items(s tpccSize) {
	l.start("item", 5)
	for id := 1; id <= s.items; id++ {
		l.add(id, l.rng.IntN(10000)+1, l.text(14, 24), int64(l.rng.IntN(9901)+100), l.withOriginal())
	}
	l.flush()
}

func (l *loader) warehouse(s tpccSize, w int) {
	now := time.Now().Unix()
	l.start("warehouse", 9)
	l.add(w, l.text(6, 10), l.text(10, 20), l.text(10, 20), l.text(10, 20), l.text(2, 2), zip(l.rng),
		l.rng.IntN(2001), int64(30000000))
	l.flush()

	l.start("stock", 17)
	for i := 1; i <= s.items; i++ {
		row := []any{w, i, l.rng.IntN(91) + 10}
		for range tpccDistricts {
			row = append(row, l.text(24, 24))
		}
		l.add(append(row, 0, 0, 0, l.withOriginal())...)
	}
	l.flush()

	l.start("district", 11)
	for d := 1; d <= tpccDistricts; d++ {
		l.add(w, d, l.text(6, 10), l.text(10, 20), l.text(10, 20), l.text(10, 20), l.text(2, 2), zip(l.rng),
			l.rng.IntN(2001), int64(3000000), s.customers+1)
	}
	l.flush()

	for d := 1; d <= tpccDistricts; d++ {
		l.start("customer", 21)
		for c := 1; c <= s.customers; c++ {
			credit := "GC"
			if l.rng.IntN(10) == 0 {
				credit = "BC"
			}
			last := c - 1
			if c > 1000 {
				last = nuRand(l.rng, 255, 0, 999, cLastLoad)
			}
			l.add(w, d, c, l.text(8, 16), "OE", lastName(last), l.text(10, 20), l.text(10, 20), l.text(10, 20),
				l.text(2, 2), zip(l.rng), digits(l.rng, 16), now, credit, int64(5000000), l.rng.IntN(5001),
				int64(-1000), int64(1000), 1, 0, l.text(300, 500))
		}
		l.flush()

		l.start("history", 9)
		for c := 1; c <= s.customers; c++ {
			l.add(historyID(w, d, c, 0), c, d, w, d, w, now, int64(1000), l.text(12, 24))
		}
		l.flush()

		// Orders 1..customers, one per customer in a random order; the
		// newest newOrders are undelivered.
		perm := l.rng.Perm(s.customers)
		firstNew := s.customers - s.newOrders + 1
		var lineCounts []int
		l.start("orders", 8)
		for o := 1; o <= s.customers; o++ {
			lines := l.rng.IntN(11) + 5
			lineCounts = append(lineCounts, lines)
			var carrier any
			if o < firstNew {
				carrier = l.rng.IntN(10) + 1
			}
			l.add(w, d, o, perm[o-1]+1, now, carrier, lines, 1)
		}
		l.flush()

		l.start("order_line", 10)
		for o := 1; o <= s.customers; o++ {
			for n := 1; n <= lineCounts[o-1]; n++ {
				var delivered any = now
				amount := int64(0)
				if o >= firstNew {
					delivered, amount = nil, int64(l.rng.IntN(999999)+1)
				}
				l.add(w, d, o, n, l.rng.IntN(s.items)+1, w, delivered, 5, amount, l.text(24, 24))
			}
		}
		l.flush()

		l.start("new_order", 3)
		for o := firstNew; o <= s.customers; o++ {
			l.add(w, d, o)
		}
		l.flush()
	}
}

// historyID makes a history row's key unique: the loader's rows have
// seq 0; a client's have its own number and count in seq.
func historyID(w, d, c int, seq int64) int64 {
	return seq<<32 | int64(w)<<18 | int64(d)<<14 | int64(c)
}

// Customer last names: three syllables chosen by the digits of a number
// from 0 to 999 (TPC-C 4.3.2.3).
var syllables = []string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

func lastName(n int) string {
	return syllables[n/100] + syllables[n/10%10] + syllables[n%10]
}

// The NURand constants C (TPC-C 2.1.6). The run's C for last names must
// differ from the load's by 65 to 119, except 96 and 112.
const (
	cLastLoad = 157
	cLastRun  = 223
	cCustomer = 259
	cItem     = 7911
)

// nuRand is TPC-C's non-uniform random number in [x, y].
func nuRand(rng *rand.Rand, a, x, y, c int) int {
	return ((rng.IntN(a+1)|(rng.IntN(y-x+1)+x))+c)%(y-x+1) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randText(rng *rand.Rand, minLen, maxLen int) string {
	b := make([]byte, minLen+rng.IntN(maxLen-minLen+1))
	for i := range b {
		b[i] = alnum[rng.IntN(len(alnum))]
	}
	return string(b)
}

func digits(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + rng.IntN(10))
	}
	return string(b)
}

func zip(rng *rand.Rand) string { return digits(rng, 4) + "11111" }
