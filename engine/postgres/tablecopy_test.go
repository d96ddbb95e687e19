package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// CREATE TABLE AS and SELECT INTO fill their table with rows that travel
// in the write set, computed once on the origin: another node that
// applies it has the same rows, random() and LIMIT without ORDER BY
// included. The client gets PostgreSQL's tags and its errors' positions.
// A CREATE TABLE AS run where certa does not split it (a function's
// EXECUTE) is refused rather than leave its rows on the origin.
func TestTableCopy(t *testing.T) {
	fac := &factory{srv: startOneServer(t), dbs: map[engine.Engine]string{}}
	origin, other := fac.Open(t).(*Engine), fac.Open(t).(*Engine)
	fo, fx := &tempFixture{t: t, e: origin}, &tempFixture{t: t, e: other}
	ctx := context.Background()
	for _, f := range []*tempFixture{fo, fx} {
		if err := f.apply(&writeset.WriteSet{DDL: ddlText("CREATE TABLE src (id int PRIMARY KEY, v text)")}); err != nil {
			t.Fatal(err)
		}
	}
	s := origin.NewSession()
	defer s.Close()
	ws := fo.exec(s, "INSERT INTO src SELECT g, 'v' || g FROM generate_series(1, 50) g")
	if err := fx.apply(ws); err != nil {
		t.Fatal(err)
	}

	// run runs stmts in one transaction on the origin, statement by
	// statement as the session sends them (Exec, or ExecSchema for a
	// schema statement in a block), and applies its write set on the
	// other node; it returns the tags.
	run := func(stmts ...string) []string {
		t.Helper()
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		var tags []string
		for _, st := range stmts {
			var buf result.Buffer
			exec := tx.Exec
			if st[:6] == "CREATE" {
				exec = func(ctx context.Context, sql string, w result.Writer, _ ...any) error {
					return tx.ExecSchema(ctx, sql, w)
				}
			}
			if err := exec(ctx, st, &buf); err != nil {
				t.Fatalf("%s: %v", st, err)
			}
			tags = append(tags, buf.Tag)
		}
		ws, err := tx.WriteSet()
		if err != nil {
			t.Fatal(err)
		}
		if err := fo.commitWS(tx, ws); err != nil {
			t.Fatal(err)
		}
		if err := fx.apply(ws); err != nil {
			t.Fatal(err)
		}
		return tags
	}
	tags := run("CREATE TABLE r AS SELECT id, random() AS x FROM src",
		"SELECT id, v INTO TABLE few FROM src LIMIT 7",
		"CREATE TABLE IF NOT EXISTS r AS SELECT 1",
		"CREATE TABLE empty AS SELECT id FROM src WITH NO DATA")
	if want := fmt.Sprint([]string{"SELECT 50", "SELECT 7", "CREATE TABLE AS", "CREATE TABLE AS"}); fmt.Sprint(tags) != want {
		t.Errorf("tags %v, want %v", tags, want)
	}
	for _, q := range []string{
		"SELECT id, x::text FROM r ORDER BY id",
		"SELECT id, v FROM few ORDER BY id",
		"SELECT count(*) FROM empty",
	} {
		a, b := query(t, origin, q), query(t, other, q)
		if fmt.Sprint(a) != fmt.Sprint(b) || len(a) == 0 {
			t.Errorf("%s: origin %v, other node %v", q, a, b)
		}
	}
	if n := query(t, other, "SELECT count(*) FROM few")[0][0]; n != int64(7) {
		t.Errorf("few has %v rows on the other node, want 7", n)
	}

	// Errors point into the client's text.
	for sql, at := range map[string]int32{
		"SELECT 'é', nope INTO tê FROM src":            13,
		"CREATE TABLE tê AS SELECT 'é', nope FROM src": 32,
	} {
		tx, err := s.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		err = tx.Exec(ctx, sql, result.Discard)
		tx.Rollback()
		var e *sqlerr.Error
		if !errors.As(err, &e) || e.Code != "42703" || e.Position != at {
			t.Errorf("%s: %v (position %d), want 42703 at %d", sql, err, e.Position, at)
		}
	}

	// Where certa cannot split it, refused.
	tx, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	err = tx.Exec(ctx, "DO $$ BEGIN EXECUTE 'CREATE TABLE lone AS SELECT 1 AS a'; END $$", result.Discard)
	tx.Rollback()
	if sqlerr.Code(err) == "" {
		t.Errorf("CREATE TABLE AS in a DO block: ran, want refused")
	}

	// CREATE TABLE AS EXECUTE: the prepared statement is the session's,
	// which another node's run of the statement would not find.
	if _, err := origin.CheckDDL(ctx, "CREATE TABLE ofp AS EXECUTE q WITH NO DATA"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("CREATE TABLE AS EXECUTE on its own: %v, want 0A000", err)
	}
	if tx, err = s.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Exec(ctx, "PREPARE q AS SELECT 1 AS a", result.Discard); err != nil {
		t.Fatal(err)
	}
	err = tx.ExecSchema(ctx, "CREATE TABLE ofp AS EXECUTE q WITH NO DATA", result.Discard)
	tx.Rollback()
	if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("CREATE TABLE AS EXECUTE in a block: %v, want 0A000", err)
	}
}
