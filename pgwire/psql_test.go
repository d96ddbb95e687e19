package pgwire

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// These tests drive the server with psql (libpq), the reference client.

// psql runs psql against ts as user tester with sslmode=prefer and the
// given arguments, and returns its standard output, standard error and
// exit code.
func psql(t *testing.T, ts *testServer, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// sslmode=prefer (libpq's default) makes libpq send an SSLRequest,
	// which the server refuses unless it has TLS, and carry on in the clear.
	return psqlWith(t, ts, "user=tester sslmode=prefer", "", args...)
}

// psqlWith runs psql with connection parameters params (user, sslmode...)
// and password, if not empty.
func psqlWith(t *testing.T, ts *testServer, params, password string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql not installed")
	}
	host, port, _ := net.SplitHostPort(ts.addr)
	dsn := fmt.Sprintf("host=%s port=%s dbname=testdb gssencmode=disable connect_timeout=10 application_name=psqltest %s", host, port, params)
	cmd := exec.CommandContext(testCtx(t), path, append([]string{"-X", "--no-password", "-v", "ON_ERROR_STOP=1", dsn}, args...)...)
	// Keep the environment from redirecting psql (PGHOST, PGSERVICE...).
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "PGCLIENTENCODING=UTF8", "LC_ALL=C.UTF-8", "PGPASSFILE="+os.DevNull)
	if password != "" {
		cmd.Env = append(cmd.Env, "PGPASSWORD="+password)
	}
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("psql: %v", err)
	}
	return out.String(), errOut.String(), code
}

func TestPsql(t *testing.T) {
	ts := startServer(t, Config{})

	out, errOut, code := psql(t, ts, "-A", "-t", "-c", "SELECT 1")
	if code != 0 || out != "1\n" {
		t.Fatalf("SELECT 1: exit %d, out %q, err %q", code, out, errOut)
	}

	// Two statements in one -c: one Query message, two results.
	out, errOut, code = psql(t, ts, "-A", "-t", "-c", "SELECT 1; SELECT 2")
	if code != 0 || out != "1\n2\n" {
		t.Fatalf("two statements: exit %d, out %q, err %q", code, out, errOut)
	}

	// Two -c options: two Query messages on one connection.
	out, errOut, code = psql(t, ts, "-A", "-t", "-c", "BEGIN", "-c", "SELECT 3", "-c", "COMMIT")
	if code != 0 || out != "BEGIN\n3\nCOMMIT\n" {
		t.Fatalf("three -c: exit %d, out %q, err %q", code, out, errOut)
	}

	// Every type, NULL and the empty string, in psql's aligned format.
	out, errOut, code = psql(t, ts, "-P", "null=<null>", "-c", "VALUES")
	if code != 0 {
		t.Fatalf("VALUES: exit %d, err %q", code, errOut)
	}
	want := `  i  |  f  |   t   |     b      | ok |   n    | u | e | no 
-----+-----+-------+------------+----+--------+---+---+----
 -42 | 1.5 | héllo | \xdeadbeef | t  | <null> | x |   | f
(1 row)

`
	if out != want {
		t.Errorf("VALUES:\n%s\nwant:\n%s", out, want)
	}

	out, errOut, code = psql(t, ts, "-A", "-t", "-c", "FLOATS")
	if code != 0 {
		t.Fatalf("FLOATS: exit %d, err %q", code, errOut)
	}
	var wantFloats []string
	for _, f := range testFloats {
		wantFloats = append(wantFloats, f.text)
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, " ") != strings.Join(wantFloats, " ") {
		t.Errorf("FLOATS: %q, want %q", got, wantFloats)
	}

	// Server version and session parameters as libpq sees them.
	out, errOut, code = psql(t, ts, "-A", "-t", "-c", `\echo :SERVER_VERSION_NAME :SERVER_VERSION_NUM`, "-c", "WHOAMI")
	if code != 0 || out != DefaultServerVersion+" 150000\ntester|testdb\n" {
		t.Fatalf("version: exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestPsqlErrors(t *testing.T) {
	ts := startServer(t, Config{})

	out, errOut, code := psql(t, ts, "-c", "FAIL")
	if code == 0 || out != "" ||
		!strings.Contains(errOut, `ERROR:  duplicate key value violates unique constraint "t_pkey"`) ||
		!strings.Contains(errOut, "DETAIL:  Key (id)=(1) already exists.") ||
		!strings.Contains(errOut, "HINT:  Pick another id.") {
		t.Fatalf("FAIL: exit %d, out %q, err %q", code, out, errOut)
	}

	// SQLSTATE as libpq reports it.
	_, errOut, code = psql(t, ts, "-v", "VERBOSITY=verbose", "-c", "PLAINERR")
	if code == 0 || !strings.Contains(errOut, "ERROR:  XX000: boom") {
		t.Fatalf("PLAINERR: exit %d, err %q", code, errOut)
	}

	// The results before an error are shown.
	out, errOut, code = psql(t, ts, "-A", "-t", "-c", "SELECT 1; FAIL; SELECT 2")
	if code == 0 || out != "1\n" || !strings.Contains(errOut, "ERROR:") {
		t.Fatalf("batch: exit %d, out %q, err %q", code, out, errOut)
	}
}

func TestPsqlTooManyConnections(t *testing.T) {
	ts := startServer(t, Config{MaxConns: 1, Logger: discardLogger})
	ts.mustPgx()
	_, errOut, code := psql(t, ts, "-c", "SELECT 1")
	if code == 0 || !strings.Contains(errOut, "FATAL:  sorry, too many clients already") {
		t.Fatalf("exit %d, err %q", code, errOut)
	}
}
