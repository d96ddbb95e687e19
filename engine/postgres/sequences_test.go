package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
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

// A node rebuilt from a snapshot goes on past the values of its own blocks
// that the restored rows hold, though the snapshot's sequence is behind
// them (another node's snapshot: its sequence is at that node's place).
func TestRestoreGoesOnPastOwnValues(t *testing.T) {
	e := openResetEngine(t, Config{MaxConns: 2})
	f := &tempFixture{t: t, e: e}
	grantSlot(f)
	resetDDL(f, "CREATE TABLE t (id serial PRIMARY KEY, v int)")
	ctx := engine.WithSequenceValues(context.Background(), &engine.SequenceValues{})
	s := e.NewSession()
	defer s.Close()
	// This node's first block of an integer sequence, from slot 1: its
	// values, written by another node's client, are ahead of t_id_seq.
	block := int64(16777215)
	first := 1 + e.slot.Load()*block
	if _, err := f.firstRow(s, ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, 1), (%d, 2)", first, first+1)); err != nil {
		t.Fatal(err)
	}
	snap, err := e.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	snap.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Restore(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	row, err := f.firstRow(s, ctx, "INSERT INTO t (v) VALUES (3) RETURNING id")
	if err != nil || fmt.Sprint(row) != fmt.Sprintf("[%d]", first+2) {
		t.Fatalf("the next value after the restore: %v, %v; want %d", row, err, first+2)
	}
}

// PostgreSQL checks a sequence's new bounds against where it is, which
// is each node's own place: a node whose place is past the new bounds ran
// ALTER SEQUENCE ... AS smallint into an error the others did not (the
// regression suite's sequence test stopped two nodes). Every node now runs
// such a statement with its sequences at their start, so that it has the
// same outcome everywhere; a node whose place is then out of bounds has
// used up its values of it (2200H), as what it handed out may lie within
// them. ALTER TABLE of an identity column alike; in a block, the origin
// runs it at once with its own place (PostgreSQL's error if that is out of
// bounds), and the others hold theirs when they apply it.
func TestAlterSequenceBoundsOnEveryNode(t *testing.T) {
	for _, founder := range []bool{true, false} {
		t.Run(fmt.Sprintf("founder=%v", founder), func(t *testing.T) {
			e := openResetEngine(t, Config{MaxConns: 2, Founder: founder})
			f := &tempFixture{t: t, e: e}
			grantSlot(f)
			resetDDL(f, "CREATE SEQUENCE s AS integer", "CREATE TABLE t (id int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY)")
			s := e.NewSession()
			defer s.Close()
			ctx := engine.WithSequenceValues(context.Background(), &engine.SequenceValues{})
			check := func(what, sql string) {
				t.Helper()
				row, err := f.firstRow(s, ctx, sql)
				if founder && (err != nil || fmt.Sprint(row) != "[1]") {
					t.Fatalf("%s on the founder: %v, %v; want 1", what, row, err)
				}
				if !founder && sqlerr.Code(err) != "2200H" {
					t.Fatalf("%s on another node: %v, %v; want 2200H", what, row, err)
				}
			}
			resetDDL(f, "ALTER SEQUENCE s AS smallint")
			check("nextval after AS smallint", "SELECT nextval('s')")
			tx, err := s.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			err = tx.ExecSchema(ctx, "ALTER TABLE t ALTER COLUMN id TYPE smallint", result.Discard)
			if !founder {
				// In a block the statement runs at once, where this
				// node's sequence is: PostgreSQL's own error, on this
				// node only (the others, applying, hold theirs).
				if sqlerr.Code(err) != "22023" {
					t.Fatalf("TYPE smallint of an identity column past its bounds here, in a block: %v, want 22023", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ALTER TABLE ... TYPE smallint of an identity column, in a block: %v", err)
			}
			if err := f.commit(tx); err != nil {
				t.Fatal(err)
			}
			check("identity value after TYPE smallint", "INSERT INTO t DEFAULT VALUES RETURNING id")
		})
	}
}

// A sequence too narrow for blocks of lateShare values is refused where
// it is made or changed, also in a block: a CYCLE sequence of blocks of
// one value handed out that value again and again (PostgreSQL's
// sequence test: 32 on every nextval).
func TestNarrowSequencesRefused(t *testing.T) {
	e := openResetEngine(t, Config{MaxConns: 2, Founder: true})
	f := &tempFixture{t: t, e: e}
	grantSlot(f)
	resetDDL(f, "CREATE SEQUENCE wide START WITH 32", "CREATE SEQUENCE just MAXVALUE 2049", "CREATE TABLE sm (id smallserial PRIMARY KEY)")
	for _, stmt := range []string{
		"ALTER SEQUENCE wide RESTART WITH 24 INCREMENT BY 4 MAXVALUE 36 MINVALUE 5 CYCLE",
		"CREATE SEQUENCE narrow MAXVALUE 2048",
		"CREATE TABLE id10 (id int GENERATED ALWAYS AS IDENTITY (MAXVALUE 10) PRIMARY KEY)",
	} {
		_, err := e.CheckDDL(context.Background(), stmt)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "too few values") {
			t.Errorf("%s: %v, want 0A000 too few values", stmt, err)
		}
	}
	s := e.NewSession()
	defer s.Close()
	ctx := engine.WithSequenceValues(context.Background(), &engine.SequenceValues{})
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.ExecSchema(ctx, "CREATE SEQUENCE inblock MAXVALUE 10", result.Discard); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("in a block: %v, want 0A000", err)
	}
}
