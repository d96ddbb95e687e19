package postgres

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/result"
	"certa/writeset"
)

// grabSQL makes grab(int), a client's function that makes certa_client a
// superuser whenever it runs as one, after RESET ROLE too.
const grabSQL = `CREATE FUNCTION grab(int) RETURNS boolean LANGUAGE plpgsql AS $$
	BEGIN
		BEGIN
			RESET ROLE;
		EXCEPTION WHEN OTHERS THEN NULL;
		END;
		IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
			ALTER ROLE certa_client SUPERUSER;
		END IF;
		RETURN true;
	END $$`

// Applying never runs a client's code with more rights than the client
// has: a function that makes certa_client a superuser whenever it runs as
// one (after RESET ROLE too) runs on the applier in a CHECK of rows from
// another node, in an index expression and a CHECK a schema change
// evaluates over existing rows, and in a CREATE TABLE AS (of an older
// node's log), also when CheckDDL tries an index on the origin; certa_client
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
		grabSQL,
		// An index expression and a CREATE TABLE AS must call immutable
		// functions (recompute.go): they may call one that is not.
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
		`CREATE TABLE r AS SELECT id, grab_immutable(id) AS g FROM q`,
	} {
		apply(&writeset.WriteSet{DDL: ddlText(ddl)})
	}
	// CheckDDL runs a client's schema statement on the origin first.
	if _, err := e.CheckDDL(ctx, "CREATE INDEX q_grab ON q ((grab_immutable(id)))"); err != nil {
		t.Fatal(err)
	}
	if got := query(t, e, "SELECT count(*) FROM p JOIN q USING (id)"); got[0][0] != int64(1) {
		t.Fatalf("rows applied: %v", got)
	}
	for _, role := range []string{clientRole, applierRole} {
		if got := inspect(t, e, "SELECT rolsuper FROM pg_roles WHERE rolname = '"+role+"'"); got[0][0] != false {
			t.Fatalf("%s became a superuser on the applying node", role)
		}
	}
}

// The applier's statements call the functions they name: a client's
// overloads of jsonb_populate_record(set) in schema public, taking text
// (which an untyped parameter would prefer) and changing the row, are
// never called, and the replica holds the origin's rows.
func TestApplierCallsItsOwnFunctions(t *testing.T) {
	o, r := startServer(t)
	ctx := context.Background()
	for _, c := range []*pgconn.PgConn{o.admin, r.admin} {
		mustExec(t, c, asClient("CREATE TABLE t (id int PRIMARY KEY, v text)"))
		for _, f := range []string{"jsonb_populate_record", "jsonb_populate_recordset"} {
			ret := "anyelement"
			if f == "jsonb_populate_recordset" {
				ret = "SETOF anyelement"
			}
			mustExec(t, c, asClient(`CREATE FUNCTION public.`+f+`(base anyelement, j text) RETURNS `+ret+`
				LANGUAGE sql AS $$ SELECT * FROM pg_catalog.`+f+`(base, pg_catalog.jsonb_set(j::jsonb, '{v}', '"forged"')) $$`))
		}
	}
	var ts, tsr tables
	for i, stmts := range [][]string{
		{"INSERT INTO t VALUES (1, 'a'), (2, 'b')"},
		{"UPDATE t SET v = 'c' WHERE id = 1"},
		{"DELETE FROM t WHERE id = 2"},
	} {
		w := captureTx(t, o.client, &ts, true, stmts...)
		items := []engine.ApplyItem{{Seqno: uint64(i + 1), WS: w}}
		if err := applyItems(ctx, r.applier, &tsr, items, uint64(i+1), testToken, nil, nil); err != nil || items[0].Err != nil {
			t.Fatalf("%s: %v %v", stmts, err, items[0].Err)
		}
		if got, want := rowsOf(t, r.admin, "t"), rowsOf(t, o.admin, "t"); !slices.Equal(got, want) {
			t.Fatalf("after %s: replica %q, origin %q", stmts, got, want)
		}
	}
}
