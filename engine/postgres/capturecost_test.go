package postgres

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"certa/writeset"
)

// The cost of capture (reading the capture rows back and building the
// write set's rows and keys) for a 10,000-row insert into a table with a
// foreign key and a UNIQUE constraint, and for a 1-row update of it.
// Timing only: run with CERTA_CAPTURE_COST=1 (-v prints the figures).
func TestCaptureCostFKUnique(t *testing.T) {
	if os.Getenv("CERTA_CAPTURE_COST") == "" {
		t.Skip("set CERTA_CAPTURE_COST=1 to measure")
	}
	o, _ := startServer(t)
	for _, ddl := range []string{
		`CREATE TABLE parent (id int PRIMARY KEY, name text)`,
		`CREATE TABLE child (id bigint PRIMARY KEY, pid int NOT NULL REFERENCES parent, email text UNIQUE, v int)`,
	} {
		mustExec(t, o.admin, asClient(ddl))
	}
	mustExec(t, o.admin, `INSERT INTO parent SELECT g, 'p' || g FROM generate_series(1, 100) g;
		INSERT INTO child SELECT g, g % 100 + 1, 'e' || g || '@x', g FROM generate_series(1000001, 1000100) g`)
	ctx := context.Background()
	var ts tables
	measure := func(name, stmt string, runs, again int) {
		var total, build, mem, norm []time.Duration
		var nkeys, distinct, size int
		for range runs {
			mustExec(t, o.client, "BEGIN ISOLATION LEVEL REPEATABLE READ")
			mustExec(t, o.client, stmt)
			mustExec(t, o.client, "SET CONSTRAINTS ALL IMMEDIATE")
			start := time.Now()
			r := o.client.ExecParams(ctx, captureSQL, nil, nil, nil, nil).Read()
			if r.Err != nil {
				t.Fatal(r.Err)
			}
			read := time.Now()
			c, err := captureRows(ctx, o.client, &ts, r.Rows)
			if err != nil {
				t.Fatal(err)
			}
			end := time.Now()
			total, build = append(total, end.Sub(start)), append(build, end.Sub(read))
			nkeys = len(c.keys)
			ws := writeset.WriteSet{Keys: c.keys, Tables: c.tables, Changes: appendRows(nil, c.rows)}
			start = time.Now()
			ws.Normalize()
			norm = append(norm, time.Since(start))
			size, distinct = ws.Size(), len(ws.Keys)
			// Building again from the rows read, in memory.
			for range again {
				start := time.Now()
				if _, err := captureRows(ctx, o.client, &ts, r.Rows); err != nil {
					t.Fatal(err)
				}
				mem = append(mem, time.Since(start))
			}
			mustExec(t, o.client, "ROLLBACK")
		}
		t.Logf("%s: capture %v, of which building rows and keys %v (in memory again: median %v, min %v); %d keys, %d distinct, sorted in %v; write set %d bytes (medians of %d)",
			name, median(total), median(build), median(mem), slices.Min(mem), nkeys, distinct, median(norm), size, runs)
	}
	measure("10,000-row insert", `INSERT INTO child SELECT g, g % 100 + 1, 'e' || g || '@x', g FROM generate_series(1, 10000) g`, 9, 5)
	measure("1-row update", `UPDATE child SET v = v + 1 WHERE id = 1000050`, 201, 20)
	measure("1-row update of the unique column", `UPDATE child SET email = 'new@x' WHERE id = 1000050`, 201, 20)
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}
