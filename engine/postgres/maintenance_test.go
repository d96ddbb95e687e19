package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"certa/engine"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// A maintenance command that locks a replicated table (VACUUM FULL) and
// blocks the applier is cancelled after the applier's grace, with 57014
// saying why; the applier goes on. Waiting for its lock behind an
// operator's transaction, it blocks the applier (queued before it) as
// much as running.
func TestMaintenanceCancelledForApply(t *testing.T) {
	srv := startOneServer(t)
	e, _, _ := openLogged(t, srv, "maint")
	ctx := context.Background()
	applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE big (id int PRIMARY KEY, pad text)")})
	su := superuser(t, srv, "maint")
	// Rows of this node alone (not captured): a table VACUUM FULL takes a
	// while to rewrite.
	mustExec(t, su, "INSERT INTO big SELECT g, repeat(md5(g::text), 8) FROM generate_series(1, 400000) g")
	seqno := uint64(1)
	// The write sets to apply, captured before VACUUM FULL holds the table.
	var ws []*writeset.WriteSet
	for i := range 2 {
		ws = append(ws, remoteWS(t, e, uint64(2000+i), fmt.Sprintf("INSERT INTO big VALUES (%d, 'applied')", -1-i)))
	}
	vacuum := func(s engine.Session) chan error {
		done := make(chan error, 1)
		go func() { done <- s.Read(ctx, "VACUUM FULL big", result.Discard) }()
		return done
	}
	state := func(wantWait bool) func() bool {
		return func() bool {
			r := su.ExecParams(ctx, "SELECT coalesce(wait_event_type, '') FROM pg_stat_activity WHERE query = 'VACUUM FULL big' AND state = 'active'", nil, nil, nil, nil).Read()
			return r.Err == nil && len(r.Rows) == 1 && (string(r.Rows[0][0]) == "Lock") == wantWait
		}
	}
	check := func(name string, done chan error) {
		t.Helper()
		seqno++
		ws := ws[seqno-2]
		if !state(name == "waiting")() {
			t.Logf("%s: VACUUM FULL no longer in that state when Apply started", name)
		}
		start := time.Now()
		applied := make(chan error, 1)
		go func() {
			items := []engine.ApplyItem{{Seqno: seqno, WS: ws}}
			err := e.Apply(ctx, items, seqno)
			applied <- errors.Join(err, items[0].Err)
		}()
		select {
		case err := <-applied:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: Apply still waits behind VACUUM FULL after 30 s", name)
		}
		t.Logf("%s VACUUM FULL: Apply took %v (grace %v)", name, time.Since(start).Round(time.Millisecond), applyGrace)
		err := <-done
		if err == nil {
			t.Logf("%s: VACUUM FULL ended before it was cancelled", name)
			return
		}
		se := sqlerr.As(err)
		if se == nil || se.Code != sqlerr.QueryCanceled || !strings.Contains(se.Message, "conflict with replication") || se.Hint == "" {
			t.Fatalf("%s: VACUUM FULL: %v, want 57014 saying why, with a hint", name, err)
		}
		t.Logf("%s: the client got: %s (hint: %s)", name, se.Message, se.Hint)
	}

	// Running.
	s := e.NewSession()
	defer s.Close()
	done := vacuum(s)
	waitUntil(t, 20*time.Second, "VACUUM FULL running", state(false))
	check("running", done)

	// Waiting for its lock behind an operator's reader (another
	// connection: pg_stat_activity stays as it was within a transaction).
	reader := superuser(t, srv, "maint")
	mustExec(t, reader, "BEGIN; SELECT count(*) FROM big WHERE id = 1")
	done = vacuum(s)
	waitUntil(t, 20*time.Second, "VACUUM FULL waiting", state(true))
	check("waiting", done)
	mustExec(t, reader, "ROLLBACK")

	// Once nothing writes the table, it runs to its end.
	if err := s.Read(ctx, "VACUUM FULL big", result.Discard); err != nil {
		t.Fatalf("VACUUM FULL of a quiet table: %v", err)
	}
	if rows := query(t, e, "SELECT count(*) FROM big WHERE pad = 'applied'"); rows[0][0] != int64(2) {
		t.Fatalf("applied rows %v, want 2", rows)
	}
}

func TestMaintenanceWords(t *testing.T) {
	for sql, want := range map[string]bool{
		"VACUUM": true, "vacuum full t": true, "VACUUM (FULL) t": true, "ANALYZE t": true, "analyse": true,
		"CLUSTER;": true, "cluster t USING t_pkey": true, "REINDEX TABLE t": true, " \nREINDEX INDEX CONCURRENTLY i": true,
		"SELECT 1": false, "VACUUMX": false, "CLUSTERED": false,
	} {
		if got := maintenance(sql); got != want {
			t.Errorf("maintenance(%q) = %v, want %v", sql, got, want)
		}
	}
}

// CheckDDL's trial run of a schema statement that takes a while over a
// table (a CHECK that reads each row slowly: 100 rows, 50 ms each) holds
// its lock against the applier; once it has blocked the applier for
// trialGrace it is cancelled, with 57014 saying why, and the applier goes
// on. The checker's connection still serves.
func TestSchemaTrialCancelledForApply(t *testing.T) {
	srv := startOneServer(t)
	e, _, _ := openLogged(t, srv, "trial")
	ctx := context.Background()
	applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE big (id int PRIMARY KEY, pad text)")})
	applyOne(t, e, 2, &writeset.WriteSet{DDL: ddlText("CREATE FUNCTION slow_true() RETURNS boolean LANGUAGE sql AS 'SELECT true FROM pg_sleep(0.05)'")})
	su := superuser(t, srv, "trial")
	mustExec(t, su, "INSERT INTO big SELECT g, 'x' FROM generate_series(1, 100) g")
	ws := remoteWS(t, e, 3000, "INSERT INTO big VALUES (-1, 'applied')")

	checked := make(chan error, 1)
	go func() {
		_, err := e.CheckDDL(ctx, "ALTER TABLE big ADD CONSTRAINT slowly CHECK (slow_true())")
		checked <- err
	}()
	waitUntil(t, 30*time.Second, "the trial run holds the table", func() bool {
		r := su.ExecParams(ctx, "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'big' AND l.mode = 'AccessExclusiveLock' AND l.granted", nil, nil, nil, nil).Read()
		return r.Err == nil && string(r.Rows[0][0]) == "1"
	})
	start := time.Now()
	items := []engine.ApplyItem{{Seqno: 3, WS: ws}}
	if err := e.Apply(ctx, items, 3); err != nil || items[0].Err != nil {
		t.Fatalf("apply: %v %v", err, items[0].Err)
	}
	t.Logf("Apply took %v behind the trial (grace %v)", time.Since(start).Round(time.Millisecond), trialGrace)
	err := <-checked
	se := sqlerr.As(err)
	if se == nil || se.Code != sqlerr.QueryCanceled || !strings.Contains(se.Message, "conflict with replication") || se.Hint == "" {
		t.Fatalf("CheckDDL: %v, want 57014 saying why, with a hint", err)
	}
	// The checker's connection still serves.
	if _, err := e.CheckDDL(ctx, "CREATE TABLE after_trial (id int PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
}

// A maintenance command's notices reach the client as PostgreSQL sends
// them: VACUUM VERBOSE's and REINDEX's INFO, a REINDEX with nothing to do
// says so.
func TestMaintenanceNotices(t *testing.T) {
	srv := startOneServer(t)
	e, _, _ := openLogged(t, srv, "maintnotice")
	applyOne(t, e, 1, &writeset.WriteSet{DDL: ddlText("CREATE TABLE plain (id int PRIMARY KEY)")})
	applyOne(t, e, 2, &writeset.WriteSet{DDL: ddlText("CREATE TABLE bare (id int)")})
	var notices []string
	ctx := sqlerr.WithNotices(context.Background(), func(n *sqlerr.Error) { notices = append(notices, n.Severity+": "+n.Message) })
	s := e.NewSession()
	defer s.Close()
	for _, c := range []struct{ sql, want string }{
		{"REINDEX (VERBOSE) TABLE plain", `INFO: index "plain_pkey" was reindexed`},
		{"REINDEX TABLE bare", `NOTICE: table "bare" has no indexes to reindex`},
	} {
		notices = nil
		if err := s.Read(ctx, c.sql, result.Discard); err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if !slices.Contains(notices, c.want) {
			t.Errorf("%s: notices %q, want %q", c.sql, notices, c.want)
		}
	}
	// A whole-database VACUUM or ANALYZE skips certa's tables and the
	// catalogs the client does not own, as a database owner's would, in
	// silence; client_min_messages holds.
	for _, sql := range []string{"VACUUM", "ANALYZE"} {
		notices = nil
		if err := s.Read(ctx, sql, result.Discard); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		if len(notices) != 0 {
			t.Errorf("%s: notices %q, want none", sql, notices)
		}
	}
	notices = nil
	quiet := engine.WithSettings(ctx, map[string]string{"client_min_messages": "warning"})
	if err := s.Read(quiet, "REINDEX TABLE bare", result.Discard); err != nil || len(notices) != 0 {
		t.Errorf("REINDEX TABLE bare under client_min_messages = warning: %v, notices %q", err, notices)
	}
	// After SET ROLE, the command runs as that role, which skips what it
	// does not own, as in PostgreSQL; the pooled backend is reset after.
	applyOne(t, e, 3, &writeset.WriteSet{DDL: ddlText("CREATE ROLE maint_other")})
	notices = nil
	other := engine.WithSettings(ctx, map[string]string{"role": "maint_other"})
	if err := s.Read(other, "VACUUM plain", result.Discard); err != nil {
		t.Fatalf("VACUUM plain as maint_other: %v", err)
	}
	if want := `WARNING: skipping "plain" --- only table or database owner can vacuum it`; !slices.Equal(notices, []string{want}) {
		t.Errorf("VACUUM plain as maint_other: notices %q, want %q", notices, want)
	}
	for range 3 { // whichever pooled backend
		if rows := mustRead(t, s, "SELECT current_user"); rows[0][0] != "certa_client" {
			t.Fatalf("after a VACUUM as maint_other, a statement runs as %v", rows[0][0])
		}
	}
}
