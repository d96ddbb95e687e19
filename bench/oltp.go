package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
)

// OLTP is a family of sysbench-style workloads on one table of Rows rows,
// shaped as sysbench's sbtest1 (id primary key, k indexed, c and pad
// filler), with the statements and proportions of sysbench's Lua scripts.
// Row ids are drawn uniformly.
type OLTP struct {
	Kind string // "oltp-write", "oltp-read-write" or "point-select"
	Rows int    // rows in the table (default 10000)
}

// OLTPKinds are the OLTP workloads.
var OLTPKinds = []string{"oltp-write", "oltp-read-write", "point-select"}

// oltpRange is how many rows sysbench's range selects read.
const oltpRange = 100

func (o OLTP) Name() string { return o.Kind }

func (o OLTP) rows() int {
	if o.Rows <= 0 {
		return 10000
	}
	return o.Rows
}

// Setup creates sbtest1 and loads it in batches of 500 rows.
func (o OLTP) Setup(ctx context.Context, t Target) error {
	c, err := t.Open(ctx, 0, ConsistencyLocal)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, sql := range []string{
		"DROP TABLE IF EXISTS sbtest1",
		"CREATE TABLE sbtest1 (id integer PRIMARY KEY, k integer NOT NULL DEFAULT 0, c char(120) NOT NULL DEFAULT '', pad char(60) NOT NULL DEFAULT '')",
		"CREATE INDEX k_1 ON sbtest1 (k)",
	} {
		if _, err := c.Exec(ctx, sql); err != nil {
			return fmt.Errorf("%s: %w", sql, err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const batch = 500
	for start := 1; start <= o.rows(); start += batch {
		var sql strings.Builder
		sql.WriteString("INSERT INTO sbtest1 (id, k, c, pad) VALUES ")
		var args []any
		for id := start; id < start+batch && id <= o.rows(); id++ {
			if id > start {
				sql.WriteByte(',')
			}
			n := len(args)
			fmt.Fprintf(&sql, "($%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4)
			args = append(args, id, rng.IntN(o.rows())+1, filler(rng, 11, 10), filler(rng, 11, 5))
		}
		if _, err := c.Exec(ctx, sql.String(), args...); err != nil {
			return fmt.Errorf("load sbtest1: %w", err)
		}
	}
	return nil
}

// filler is sysbench's c and pad text: groups of digits joined by '-'.
func filler(rng *rand.Rand, group, groups int) string {
	b := make([]byte, 0, groups*(group+1))
	for g := range groups {
		if g > 0 {
			b = append(b, '-')
		}
		for range group {
			b = append(b, byte('0'+rng.IntN(10)))
		}
	}
	return string(b)
}

// Next returns one sysbench event as a transaction.
func (o OLTP) Next(rng *rand.Rand, client int) Txn {
	id := func() int { return rng.IntN(o.rows()) + 1 }
	switch o.Kind {
	case "point-select":
		key := id()
		return Txn{Kind: "point-select", Run: func(ctx context.Context, c Conn) error {
			_, err := c.Query(ctx, "SELECT c FROM sbtest1 WHERE id = $1", key)
			return err
		}}
	case "oltp-read-write":
		var points [10]int
		for i := range points {
			points[i] = id()
		}
		lo := [4]int{}
		for i := range lo {
			lo[i] = rng.IntN(o.rows()-oltpRange+1) + 1
		}
		w := o.writes(rng, id)
		return Txn{Kind: "read-write", Run: func(ctx context.Context, c Conn) error {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				return err
			}
			for _, p := range points {
				if _, err := c.Query(ctx, "SELECT c FROM sbtest1 WHERE id = $1", p); err != nil {
					return err
				}
			}
			for i, sql := range []string{
				"SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2",
				"SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN $1 AND $2",
				"SELECT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c",
				"SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN $1 AND $2 ORDER BY c",
			} {
				if _, err := c.Query(ctx, sql, lo[i], lo[i]+oltpRange-1); err != nil {
					return err
				}
			}
			return w(ctx, c)
		}}
	default: // oltp-write
		w := o.writes(rng, id)
		return Txn{Kind: "write", Run: func(ctx context.Context, c Conn) error {
			if _, err := c.Exec(ctx, "BEGIN"); err != nil {
				return err
			}
			return w(ctx, c)
		}}
	}
}

// writes is the write part of sysbench's oltp_read_write and
// oltp_write_only: an update of the indexed column, an update of c, and a
// delete and re-insert of one row, then COMMIT.
func (o OLTP) writes(rng *rand.Rand, id func() int) func(context.Context, Conn) error {
	idx, nonIdx, del := id(), id(), id()
	c, k, pad := filler(rng, 11, 10), rng.IntN(o.rows())+1, filler(rng, 11, 5)
	return func(ctx context.Context, conn Conn) error {
		steps := []struct {
			sql  string
			args []any
		}{
			{"UPDATE sbtest1 SET k = k + 1 WHERE id = $1", []any{idx}},
			{"UPDATE sbtest1 SET c = $1 WHERE id = $2", []any{c, nonIdx}},
			{"DELETE FROM sbtest1 WHERE id = $1", []any{del}},
			{"INSERT INTO sbtest1 (id, k, c, pad) VALUES ($1, $2, $3, $4)", []any{del, k, c, pad}},
			{"COMMIT", nil},
		}
		for _, s := range steps {
			if _, err := conn.Exec(ctx, s.sql, s.args...); err != nil {
				return err
			}
		}
		return nil
	}
}
