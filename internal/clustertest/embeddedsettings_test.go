package clustertest

import (
	"fmt"
	"strings"
	"testing"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// embeddedSettingsScript sets and shows parameters the embedded engine
// takes, with good and bad values: checked, and shown, as PostgreSQL
// does (units, booleans, enums, ranges, RESET, custom names).
const embeddedSettingsScript = `SHOW search_path;
SHOW work_mem;
SET work_mem = '64MB';
SHOW work_mem;
SET work_mem = 10;
SET work_mem = '100000000000';
SET work_mem = '5 mb';
SET work_mem = '1 TB';
SHOW work_mem;
RESET work_mem;
SHOW work_mem;
SHOW effective_cache_size;
SET temp_buffers = 1000;
SHOW temp_buffers;
SET statement_timeout = '1.5min';
SHOW statement_timeout;
SET statement_timeout = '1500ms';
SHOW statement_timeout;
SET statement_timeout = 0;
SET vacuum_cost_delay = '0.5';
SHOW vacuum_cost_delay;
SET vacuum_cost_delay = 80.1;
SHOW vacuum_cost_delay;
SET vacuum_cost_delay = '1s';
SET seq_page_cost = '2.5';
SHOW seq_page_cost;
SET enable_seqscan = 'of';
SHOW enable_seqscan;
SET enable_seqscan = 'ye';
SHOW enable_seqscan;
SET enable_seqscan = banana;
SET intervalstyle = 'banana';
SET lock_timeout = -1;
SET idle_session_timeout = '1h';
SHOW idle_session_timeout;
SHOW max_connections;
SET max_connections = 10;
SET wal_level = minimal;
SET in_hot_standby = on;
SET log_connections = on;
SET nonsense_param = 1;
SHOW nonsense_param;
SET myapp.user_id = 7;
SHOW myapp.user_id;
SET search_path = public, pg_catalog;
SHOW search_path;
SET client_min_messages = warning;
SHOW client_min_messages;
SET extra_float_digits = 3;
SHOW extra_float_digits;
SET DateStyle = ymd;
SHOW DateStyle;
SET DateStyle = 'ISO';
SHOW DateStyle;
SET DateStyle = euro, iso;
SHOW DateStyle;
RESET DateStyle;
SHOW DateStyle;
SHOW custom.never_set;
SET custom.was_set = 'x';
RESET custom.was_set;
SHOW custom.was_set;
BEGIN;
SET LOCAL work_mem = '8MB';
SHOW work_mem;
COMMIT;
SHOW work_mem;
SELECT set_config('work_mem', '65536', false);
SELECT set_config('work_mem', '2MB', true);
SHOW work_mem;
SELECT set_config('Enable_SeqScan', 'of', false) AS v;
SELECT set_config('work_mem', '1 TB', false);
`

// The embedded engine takes PostgreSQL's parameters only where it does
// what their values say. Those it takes are checked and shown as
// PostgreSQL does (compared with a plain PostgreSQL); the others are
// refused with 0A000 at SET and fail the connection when a client's
// startup packet names them, instead of being accepted and ignored.
func TestEmbeddedSettingsAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1)
	pg := referencePostgres(t)
	clock := []string{"PGTZ=UTC", "PGDATESTYLE=ISO, MDY"}
	got := psqlScript(t, c.Nodes[0].PGAddr, embeddedSettingsScript, clock...)
	if want := psqlScript(t, fmt.Sprintf("127.0.0.1:%d", pg.Port), embeddedSettingsScript, clock...); got != want {
		t.Fatalf("through certa:\n%s\nPostgreSQL:\n%s", got, want)
	}

	// set_config with parameters (Flyway sends its search_path so).
	ref, err := pgclient.ConnectString(ctxT(t), fmt.Sprintf("postgres://certa@127.0.0.1:%d/certa?sslmode=disable", pg.Port))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	host, port, _ := strings.Cut(c.Nodes[0].PGAddr, ":")
	ext, err := pgclient.ConnectExtended(ctxT(t), fmt.Sprintf("host=%s port=%s user=certa dbname=certa sslmode=disable", host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	simple := c.Conn(0)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"SELECT set_config('work_mem', $1, false)", []any{"65536"}},
		{"SELECT set_config($1, $2, $3)", []any{"application_name", "app 1", false}},
		{"SELECT set_config($2, $1, false)", []any{"8MB", "work_mem"}},
		{"SELECT set_config('work_mem', $1, false)", []any{nil}},
		{"SELECT set_config($1, 'x', false)", []any{nil}},
		{"SELECT set_config('work_mem', $1, false)", []any{"1 TB"}},
		{"SHOW work_mem", nil},
	} {
		want, werr := ref.Query(ctxT(t), q.sql, q.args...)
		for _, conn := range []*pgclient.Conn{simple, ext} { // simple and extended protocol
			got, gerr := conn.Query(ctxT(t), q.sql, q.args...)
			if fmt.Sprint(got) != fmt.Sprint(want) || pgclient.SQLState(gerr) != pgclient.SQLState(werr) {
				t.Fatalf("%s %v: certa %v %v, PostgreSQL %v %v", q.sql, q.args, got, gerr, want, werr)
			}
		}
	}
	mustFail(t, c.Conn(0), "0A000", "SELECT set_config('search_path', $1, false)", "app")

	for _, sql := range []string{
		"SET standard_conforming_strings = off",
		"SET bytea_output = escape",
		"SET transform_null_equals = on",
		"SET extra_float_digits = 0",
		"SET search_path = app",
		"SET search_path = app, public",
		"SET search_path = 'public, pg_catalog'",
		"SELECT set_config('search_path', 'app', false)",
		"SET lc_numeric = 'de_DE.UTF-8'",
		"SET default_tablespace = fast",
		"SET DateStyle = 'SQL, DMY'",
		"SET TimeZone = 'Europe/Paris'",
	} {
		mustFail(t, c.Conn(0), "0A000", sql)
	}
	// A refused SET changes nothing.
	if rows, err := c.Conn(0).Query(ctxT(t), "SHOW standard_conforming_strings"); err != nil || len(rows) != 1 || fmt.Sprint(rows[0][0]) != "on" {
		t.Fatalf("standard_conforming_strings after a refused SET: %v %v", rows, err)
	}

	for _, tc := range []struct{ env, want string }{
		{"PGTZ=America/New_York", `TimeZone "America/New_York" is not supported`},
		{"PGDATESTYLE=Postgres, MDY", `DateStyle "Postgres, MDY" is not supported`},
		{"PGOPTIONS=-c bytea_output=escape", "bytea_output = 'hex' only"},
		{"PGOPTIONS=-c no_such_parameter=1", `unrecognized configuration parameter "no_such_parameter"`},
		{"PGOPTIONS=-c shared_buffers=1GB", `parameter "shared_buffers" cannot be changed without restarting the server`},
	} {
		out, err := psqlWith(c, 0, []string{tc.env}, "SELECT 1")
		if err == nil || !strings.Contains(out, "FATAL") || !strings.Contains(out, tc.want) {
			t.Fatalf("connecting with %s: %v\n%s", tc.env, err, out)
		}
	}
	out, err := psqlWith(c, 0, []string{"PGTZ=Etc/UTC", "PGDATESTYLE=ISO, DMY", "PGOPTIONS=-c work_mem=64MB -c extra_float_digits=3"},
		"SHOW work_mem", "SHOW TimeZone")
	if err != nil || out != "64MB\nEtc/UTC\n" {
		t.Fatalf("connecting with settings the engine takes: %v\n%s", err, out)
	}
}
