package postgres

import (
	"context"
	"testing"

	"certa/result"
	"certa/writeset"
)

// Applying never runs a client's code with more rights than the client
// has: a function that makes certa_client a superuser whenever it runs as
// one (after RESET ROLE too) runs on the applier in a CHECK of rows from
// another node, in an index expression and a CHECK a schema change
// evaluates over existing rows, and in a CREATE TABLE AS, also when
// CheckDDL tries it on the origin; certa_client
// stays what it was, and the function saw no superuser.
func TestApplierIsNoSuperuser(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	apply := func(ws *writeset.WriteSet) {
		t.Helper()
		if err := f.apply(ws); err != nil {
			t.Fatal(err)
		}
	}
	for _, ddl := range []string{
		`CREATE FUNCTION grab(int) RETURNS boolean LANGUAGE plpgsql AS $$
		BEGIN
			BEGIN
				RESET ROLE;
			EXCEPTION WHEN OTHERS THEN NULL;
			END;
			IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
				ALTER ROLE certa_client SUPERUSER;
			END IF;
			RETURN true;
		END $$`,
		// An index expression must be immutable: it may call one that is not.
		`CREATE FUNCTION grab_immutable(int) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN RETURN grab($1); END $$`,
		`CREATE TABLE p (id int PRIMARY KEY, CHECK (grab(id)))`,
		`CREATE TABLE q (id int PRIMARY KEY)`,
	} {
		apply(&writeset.WriteSet{DDL: ddlText(ddl)})
	}
	// Rows from another node (captured here and rolled back).
	ctx := context.Background()
	tx, err := e.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{"INSERT INTO p VALUES (1)", "INSERT INTO q VALUES (1)"} {
		if err := tx.Exec(ctx, st, result.Discard); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	ws.Origin, ws.TxID = "n2", 7000
	apply(ws)
	for _, ddl := range []string{
		`CREATE INDEX p_grab ON p ((grab_immutable(id)))`,
		`ALTER TABLE q ADD CHECK (grab(id))`,
		`CREATE TABLE r AS SELECT id, grab(id) AS g FROM q`,
	} {
		apply(&writeset.WriteSet{DDL: ddlText(ddl)})
	}
	// CheckDDL runs a client's schema statement on the origin first.
	if _, err := e.CheckDDL(ctx, "CREATE TABLE r2 AS SELECT id, grab(id) AS g FROM q"); err != nil {
		t.Fatal(err)
	}
	if got := query(t, e, "SELECT count(*) FROM p JOIN q USING (id)"); got[0][0] != int64(1) {
		t.Fatalf("rows applied: %v", got)
	}
	for _, role := range []string{clientRole, applierRole} {
		if got := query(t, e, "SELECT rolsuper FROM pg_roles WHERE rolname = '"+role+"'"); got[0][0] != false {
			t.Fatalf("%s became a superuser on the applying node", role)
		}
	}
}
