package postgres

import (
	"context"
	"errors"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// A TRUNCATE of a table with a TRUNCATE trigger, sent on its own, runs
// in the client's session as a block's would (CheckDDL answers
// ErrRunAsTransaction): the trigger fires there, and the TRUNCATE
// replicates in the transaction's write set (it was refused: the
// applier fires no trigger).
func TestTruncateWithTriggerRunsInSession(t *testing.T) {
	fac := &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}}
	f := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	other := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	for _, ddl := range []string{
		"CREATE TABLE logged (id int PRIMARY KEY)",
		"CREATE TABLE log (what text)",
		"CREATE FUNCTION note_truncate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'truncated %', TG_TABLE_NAME; RETURN NULL; END $$",
		"CREATE TRIGGER noted AFTER TRUNCATE ON logged FOR EACH STATEMENT EXECUTE FUNCTION note_truncate()",
	} {
		for _, node := range []*tempFixture{f, other} {
			if err := node.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
				t.Fatalf("%s: %v", ddl, err)
			}
		}
	}
	s := f.e.NewSession()
	defer s.Close()
	other.apply(f.exec(s, "INSERT INTO logged VALUES (1), (2)"))

	ctx := context.Background()
	if _, err := f.e.CheckDDL(ctx, "TRUNCATE logged"); !errors.Is(err, engine.ErrRunAsTransaction) {
		t.Fatalf("CheckDDL(TRUNCATE logged): %v, want ErrRunAsTransaction", err)
	}
	var notices []*sqlerr.Error
	nctx := sqlerr.WithNotices(ctx, func(n *sqlerr.Error) { notices = append(notices, n) })
	tx, err := s.Begin(nctx)
	if err != nil {
		t.Fatal(err)
	}
	var buf result.Buffer
	if err := tx.Exec(nctx, "TRUNCATE logged", &buf); err != nil {
		t.Fatalf("TRUNCATE logged in the session: %v", err)
	}
	if buf.Tag != "TRUNCATE TABLE" || len(notices) != 1 || notices[0].Message != "truncated logged" {
		t.Fatalf("TRUNCATE logged: tag %q, notices %v", buf.Tag, notices)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.commitWS(tx, ws); err != nil {
		t.Fatal(err)
	}
	if err := other.apply(ws); err != nil {
		t.Fatalf("the TRUNCATE applied: %v", err)
	}
	for _, node := range []*tempFixture{f, other} {
		if rows := query(t, node.e, "SELECT count(*) FROM logged"); rows[0][0] != int64(0) {
			t.Fatalf("rows left: %v", rows)
		}
	}

	// A trigger that writes rows: refused, whatever it writes into (a
	// BEFORE TRUNCATE trigger's row in the emptied table would reach the
	// other nodes after the TRUNCATE, and stay there alone).
	ddl := "CREATE TRIGGER fill BEFORE TRUNCATE ON logged FOR EACH STATEMENT EXECUTE FUNCTION fill_logged()"
	for _, node := range []*tempFixture{f, other} {
		if err := node.apply(&writeset.WriteSet{DDL: ddlText("CREATE FUNCTION fill_logged() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO logged VALUES (9); RETURN NULL; END $$")}); err != nil {
			t.Fatal(err)
		}
		if err := node.apply(&writeset.WriteSet{DDL: ddlText(ddl)}); err != nil {
			t.Fatal(err)
		}
	}
	tx, err = s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if err := tx.Exec(ctx, "TRUNCATE logged", result.Discard); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("TRUNCATE whose trigger writes a row: %v, want 0A000", err)
	}
}

// A session that turned row security off (as pg_dump does) still has its
// changes captured, also those of a TRUNCATE in its block: certa's
// reads of its capture rows are not the client's to be refused ("query
// would be affected by row-level security policy for table capture").
func TestCaptureWithRowSecurityOff(t *testing.T) {
	fac := &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}}
	f := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	other := &tempFixture{t: t, e: fac.Open(t).(*Engine)}
	for _, node := range []*tempFixture{f, other} {
		if err := node.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE rs (id int PRIMARY KEY)")}); err != nil {
			t.Fatal(err)
		}
	}
	s := f.e.NewSession()
	defer s.Close()
	other.apply(f.exec(s, "SET LOCAL row_security = off", "INSERT INTO rs VALUES (1), (2)", "TRUNCATE rs", "INSERT INTO rs VALUES (3)"))
	for _, node := range []*tempFixture{f, other} {
		if rows := query(t, node.e, "SELECT string_agg(id::text, ',') FROM rs"); rows[0][0] != "3" {
			t.Fatalf("rows %v, want 3", rows)
		}
	}
}
