package postgres

import (
	"context"
	"slices"
	"testing"

	"certa/engine"
	"certa/sqlerr"
)

// A json column (unlike jsonb) keeps the text it was given: spaces, key
// order, duplicate keys, escapes. Rows travel as jsonb, which would
// normalise it on the other nodes; they get the text itself, also through
// a domain over json (whose check sees the real value), in a table
// without a key (found by its whole row), in a column added later, and
// inside arrays and composite types; a jsonb key may be JSON null. Such a
// table's arrays keep their bounds as well.
func TestJSONColumnsKeepTheirText(t *testing.T) {
	o, r := startServer(t)
	ctx := context.Background()
	schema := []string{
		"CREATE DOMAIN doc_with_a AS json CHECK ((VALUE::jsonb) ? 'a')",
		"CREATE TABLE j (id int PRIMARY KEY, doc json, d doc_with_a, b jsonb, n numeric(6,2))",
		"CREATE TABLE k (doc json, n int)",
		"CREATE TYPE pair AS (j jsonb, n int)",
		"CREATE TABLE ja (id jsonb PRIMARY KEY, docs json[], p pair, tags text[])",
	}
	for _, s := range schema {
		mustExec(t, o.admin, asClient(s))
		mustExec(t, r.admin, asClient(s))
	}
	var ts, tsr tables
	seqno := uint64(0)
	apply := func(stmts ...string) {
		t.Helper()
		w := captureTx(t, o.client, &ts, true, stmts...)
		seqno++
		items := []engine.ApplyItem{{Seqno: seqno, WS: w}}
		if err := applyItems(ctx, r.applier, &tsr, items, seqno, testToken, nil, nil); err != nil || items[0].Err != nil {
			t.Fatalf("%v: %v, %v", stmts, err, items[0].Err)
		}
		for _, table := range []string{"j", "k", "ja"} {
			if got, want := rowsOf(t, r.admin, table), rowsOf(t, o.admin, table); !slices.Equal(got, want) {
				t.Fatalf("after %v, table %s:\nreplica %q\norigin  %q", stmts, table, got, want)
			}
		}
	}
	apply(`INSERT INTO j VALUES
		(1, '{"b": 1,   "a": [1, 2],"a": 3}', '{"a":1}', '{"b": 1, "a": 2}', 1.5),
		(2, '  "caf\u00e9 \"x\""  ', '{"a" : null}', NULL, NULL),
		(3, 'null', NULL, 'null', 2),
		(4, NULL, '{"z":0,"a":"\ud83d\ude00"}', '[]', 3)`,
		`INSERT INTO k VALUES ('{"x":1,  "x":2}', 1), ('{"x":1,  "x":2}', 1), (NULL, 2), ('[ 1,2 ]', 3)`)
	apply(`UPDATE j SET doc = '{ "updated" :true }', d = '{"a":  [ ]}' WHERE id = 1`,
		`UPDATE j SET n = 9 WHERE id = 2`)
	apply(`UPDATE k SET n = 10 WHERE n = 1 AND ctid = (SELECT min(ctid) FROM k WHERE n = 1)`,
		`DELETE FROM k WHERE doc::text = '[ 1,2 ]'`)
	apply(`DELETE FROM j WHERE id = 3`)
	mustExec(t, o.admin, asClient("ALTER TABLE k ADD COLUMN later json"))
	mustExec(t, r.admin, asClient("ALTER TABLE k ADD COLUMN later json"))
	ts.reset()
	tsr.reset()
	apply(`UPDATE k SET later = '{"l":  1}' WHERE n = 2`)

	apply(`INSERT INTO ja VALUES ('null', ARRAY['{"a":  1}'::json, NULL, 'null'], ROW('null', 1), '[0:1]={a,b}'),
		('{"k": 1}', '{}', ROW(NULL, NULL), NULL)`)
	apply(`UPDATE ja SET p = ROW('{"x": [1, null]}', 2), docs[0] = '[ ]' WHERE id = 'null'`)
	apply(`DELETE FROM ja WHERE id = '{"k": 1}'`)
	if got := rowsOf(t, r.admin, "ja"); len(got) != 1 {
		t.Fatalf("ja on the replica: %q", got)
	}

}

// A table gets the exact capture (certa.capture_row_exact) when a column
// makes it need it, the capture under fixed settings (certa.capture_row)
// when a column's JSON depends on settings, and the one that sets none
// (certa.capture_row_invariant) otherwise, however the column comes
// (CREATE TABLE, CREATE TABLE AS, ALTER TABLE on its own or in a block,
// ALTER TYPE of a type it holds), and switches when its columns do. No
// client trigger may call one.
func TestCaptureFollowsColumns(t *testing.T) {
	e := openEngine(t)
	f := newBoundaryFixture(t, e)
	captureOf := func(table string) string {
		t.Helper()
		rows := inspect(t, e, "SELECT tgfoid::regproc::text FROM pg_trigger WHERE tgrelid = "+quoteLiteral(table)+"::regclass AND tgname = ' certa_capture'")
		return rows[0][0].(string)
	}
	const plain, exact, invariant = "certa.capture_row", "certa.capture_row_exact", "certa.capture_row_invariant"
	f.mustDDL("CREATE TABLE p (id int PRIMARY KEY, n int)", "CREATE TABLE j (id int PRIMARY KEY, doc json)",
		"CREATE TABLE c AS SELECT 1 AS id, '{}'::jsonb AS doc", "CREATE TABLE ts (id int PRIMARY KEY, at timestamptz)",
		"CREATE TABLE b (id int PRIMARY KEY, u uuid, d date, b bytea)", "CREATE TABLE u (id int PRIMARY KEY, u uuid, d date)",
		"CREATE TYPE mood AS ENUM ('ok')", "CREATE TABLE e (id int PRIMARY KEY, m mood)")
	for table, want := range map[string]string{"p": invariant, "j": exact, "c": exact, "ts": plain, "b": plain, "u": invariant, "e": plain} {
		if got := captureOf(table); got != want {
			t.Errorf("%s: %s, want %s", table, got, want)
		}
	}
	for _, step := range []struct {
		stmt    string
		inBlock bool
		want    string
	}{
		{"ALTER TABLE p ADD COLUMN d jsonb", false, exact},
		{"ALTER TABLE p DROP COLUMN d", true, invariant},
		{"ALTER TABLE p ALTER COLUMN n TYPE json USING pg_catalog.to_json(n)", false, exact},
		{"ALTER TABLE p ALTER COLUMN n TYPE float8 USING 1", true, plain},
		{"ALTER TABLE p ALTER COLUMN n TYPE text", true, invariant},
		{"ALTER TABLE p ADD COLUMN i interval", false, plain},
		{"ALTER TABLE p DROP COLUMN i", false, invariant},
	} {
		var err error
		if step.inBlock {
			err = f.inBlock(step.stmt)
		} else {
			err = f.ddl(step.stmt)
		}
		if err != nil {
			t.Fatalf("%s: %v", step.stmt, err)
		}
		if got := captureOf("p"); got != step.want {
			t.Errorf("after %s: %s, want %s", step.stmt, got, step.want)
		}
		f.wantCaptured("INSERT INTO p (id) VALUES (1)", key("p", 1))
	}
	// A type the table's columns hold (through a composite, a domain)
	// that comes to hold json, or stops holding it, switches the table's
	// capture too. (One holding an array is captured exactly anyway: its
	// bounds.)
	f.mustDDL("CREATE TYPE inner_t AS (a int)", "CREATE TYPE outer_t AS (i inner_t, n int)",
		"CREATE DOMAIN outer_d AS outer_t", "CREATE TABLE nested (id int PRIMARY KEY, v outer_d)")
	if got := captureOf("nested"); got != invariant {
		t.Errorf("nested: %s, want %s", got, invariant)
	}
	for _, step := range []struct{ stmt, want string }{
		{"ALTER TYPE inner_t ADD ATTRIBUTE doc jsonb", exact},
		{"ALTER TYPE inner_t DROP ATTRIBUTE doc", invariant},
		{"ALTER TYPE inner_t ADD ATTRIBUTE at timestamptz", plain},
		{"ALTER TYPE inner_t DROP ATTRIBUTE at", invariant},
		{"ALTER TYPE inner_t ADD ATTRIBUTE docs json[]", exact},
	} {
		if err := f.ddl(step.stmt); err != nil {
			t.Fatalf("%s: %v", step.stmt, err)
		}
		if got := captureOf("nested"); got != step.want {
			t.Errorf("after %s: %s, want %s", step.stmt, got, step.want)
		}
	}
	// None compiles its statements, whatever the client's jit settings
	// (noJIT).
	if rows := inspect(t, e, "SELECT count(*) FROM pg_proc WHERE oid = ANY (certa.capture_fns()) AND 'jit=off' = ANY (proconfig)"); rows[0][0] != int64(3) {
		t.Errorf("capture functions with jit off: %v, want 3", rows[0][0])
	}
	for _, fn := range []string{plain, exact, invariant} {
		err := f.ddl("CREATE TRIGGER mine AFTER INSERT ON p FOR EACH ROW EXECUTE FUNCTION " + fn + "()")
		if sqlerr.Code(err) != "0A000" {
			t.Fatalf("a client trigger calling %s: %v, want 0A000", fn, err)
		}
	}
}
