package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
)

// Sequences hand out values from blocks of the node's own while they stay
// as the client made them: the founder's (slot 0) are a lone
// PostgreSQL's, another slot's start at its first block. A transaction
// that took values late in its node's block moves the sequence to the
// node's next block; one that ran past the end into another slot's block
// is refused (ErrNoSequenceValues, 40001) and the sequence moved; a
// setval into another slot's block moves it without refusing.
func TestSequenceBlocks(t *testing.T) {
	for _, founder := range []bool{true, false} {
		t.Run(fmt.Sprintf("founder=%v", founder), func(t *testing.T) {
			e := openResetEngine(t, Config{MaxConns: 2, Founder: founder})
			f := &tempFixture{t: t, e: e}
			grantSlot(f)
			slot := e.slot.Load()
			if (slot == 0) != founder {
				t.Fatalf("slot %d of a node that founded the cluster: %v", slot, founder)
			}
			// Blocks of 31 values (4095 over 128 slots), the last
			// block of slot s starting at 1 + (128 + s) * 31.
			resetDDL(f, "CREATE SEQUENCE s MAXVALUE 4096", "CREATE SEQUENCE u MAXVALUE 4096", "CREATE SEQUENCE v MAXVALUE 4096")
			first, next := 1+slot*31, 1+(128+slot)*31
			s := e.NewSession()
			defer s.Close()
			ctx := engine.WithSequenceValues(context.Background(), &engine.SequenceValues{})
			run := func(sql string) (result.Value, error) {
				row, err := f.firstRow(s, ctx, sql)
				if err != nil {
					return nil, err
				}
				return row[0], nil
			}
			mustRun := func(sql string) string {
				t.Helper()
				v, err := run(sql)
				if err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return fmt.Sprint(v)
			}

			if got := mustRun("SELECT nextval('s')"); got != fmt.Sprint(first) {
				t.Fatalf("first value: %s, want %d", got, first)
			}
			if got := mustRead(t, s, "SELECT increment_by, max_value FROM pg_sequences WHERE sequencename = 's'"); fmt.Sprint(got) != "[[1 4096]]" {
				t.Fatalf("the sequence as pg_sequences shows it: %v", got)
			}
			// The block's last value is late: the next transaction's
			// value is the node's next block's first.
			if got := mustRun("SELECT max(nextval('s')) FROM generate_series(1, 30)"); got != fmt.Sprint(first+30) {
				t.Fatalf("the rest of the block: %s, want %d", got, first+30)
			}
			if got := mustRun("SELECT nextval('s')"); got != fmt.Sprint(next) {
				t.Fatalf("after the block: %s, want %d", got, next)
			}

			// Past the end in one go: refused, the sequence moved.
			_, err := run("SELECT max(nextval('u')) FROM generate_series(1, 40)")
			if !errors.Is(err, engine.ErrNoSequenceValues) || sqlerr.Code(err) != sqlerr.SerializationFailure {
				t.Fatalf("values past the block's end: %v, want ErrNoSequenceValues (40001)", err)
			}
			if got := mustRun("SELECT nextval('u')"); got != fmt.Sprint(next) {
				t.Fatalf("after a refused transaction: %s, want %d", got, next)
			}

			// setval into another slot's block: committed, then moved.
			other := 1 + (slot+1)*31 + 5
			if got := mustRun(fmt.Sprintf("SELECT setval('v', %d)", other)); got != fmt.Sprint(other) {
				t.Fatalf("setval: %s", got)
			}
			if got := mustRun("SELECT nextval('v')"); got != fmt.Sprint(next) {
				t.Fatalf("after a setval into another slot's block: %s, want %d", got, next)
			}
		})
	}
}
