package clustertest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"certa/internal/localcluster"
	"certa/internal/pgclient"
	"certa/internal/pgserver"
	"certa/internal/testcert"
	"certa/internal/testcluster"
)

// operatorServer is a PostgreSQL server as an operator runs it for
// --postgres-dsn: TCP on loopback, every role authenticating with
// scram-sha-256, a superuser certa_admin with a password.
type operatorServer struct {
	srv   *pgserver.Server
	admin *pgclient.Conn // as postgres, to the database postgres
}

const adminPassword = "admin pass/word"

func startOperatorServer(t *testing.T) *operatorServer {
	t.Helper()
	srv := pgserver.StartWith(t, pgserver.Options{Password: "postgres-secret", Auth: "scram-sha-256",
		Settings: map[string]string{"max_connections": "400"}})
	admin, err := pgclient.ConnectString(ctxT(t), srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	mustExec(t, admin, "CREATE ROLE certa_admin SUPERUSER LOGIN PASSWORD '"+adminPassword+"'")
	return &operatorServer{srv: srv, admin: admin}
}

// dsn connects to db as certa_admin, password included.
func (o *operatorServer) dsn(db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("certa_admin", adminPassword), Host: fmt.Sprintf("127.0.0.1:%d", o.srv.Port), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// createDB makes db, as an operator would for a node, unless it exists.
func (o *operatorServer) createDB(t *testing.T, db string) {
	t.Helper()
	n, err := o.admin.QueryInt(ctxT(t), "SELECT count(*) FROM pg_database WHERE datname = $1", db)
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		mustExec(t, o.admin, "CREATE DATABASE "+db+" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'")
	}
}

// startPostgresDSNCluster starts n nodes with --engine postgres over
// databases certa_n1, certa_n2... of one operator's server
// (--postgres-dsn). Node 2's DSN is keyword/value with the password in
// PGPASSWORD; the others' are URLs with it.
func startPostgresDSNCluster(t *testing.T, n int, args ...string) (*testcluster.Cluster, *operatorServer) {
	t.Helper()
	o := startOperatorServer(t)
	t.Setenv("PGPASSWORD", adminPassword)
	if len(args) == 0 {
		args = testArgs
	}
	nodeArgs := func(i int) []string {
		db := fmt.Sprintf("certa_n%d", i+1)
		o.createDB(t, db)
		dsn := o.dsn(db)
		if i == 1 {
			dsn = fmt.Sprintf("host=127.0.0.1 port=%d user=certa_admin dbname=%s sslmode=disable", o.srv.Port, db)
		}
		return []string{"--engine", "postgres", "--postgres-dsn", dsn}
	}
	return testcluster.StartNodeArgs(t, n, nodeArgs, args...), o
}

// startPostgresDSNClusterTLS is startPostgresDSNCluster over TLS that
// verifies the server (sslmode=verify-full), certa_admin authenticating
// with a client certificate (pg_hba.conf's "cert") and no password: what
// the DSN says of TLS must reach everything that connects, pg_dump and
// pg_restore included.
func startPostgresDSNClusterTLS(t *testing.T, n int, args ...string) *testcluster.Cluster {
	t.Helper()
	letPostgresIn(t)
	certs := testcert.New(t)
	srv := pgserver.StartWith(t, pgserver.Options{Password: "postgres-secret", Auth: "scram-sha-256", TLS: certs,
		Settings: map[string]string{"max_connections": "400"}})
	admin, err := pgclient.ConnectString(ctxT(t), srv.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	mustExec(t, admin, "CREATE ROLE certa_admin SUPERUSER LOGIN")
	srv.SetHBA(t, "host all postgres 127.0.0.1/32 scram-sha-256",
		"hostssl all certa_admin 127.0.0.1/32 cert",
		"hostssl all all 127.0.0.1/32 scram-sha-256")
	client := certs.WriteClient(t, t.TempDir(), "certa_admin")
	o := &operatorServer{srv: srv, admin: admin}
	if len(args) == 0 {
		args = testArgs
	}
	nodeArgs := func(i int) []string {
		db := fmt.Sprintf("certa_n%d", i+1)
		o.createDB(t, db)
		dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=certa_admin dbname=%s sslmode=verify-full sslrootcert=%s sslcert=%s sslkey=%s",
			srv.Port, db, client.CA, client.Cert, client.Key)
		return []string{"--engine", "postgres", "--postgres-dsn", dsn}
	}
	return testcluster.StartNodeArgs(t, n, nodeArgs, args...)
}

// Three nodes over three databases of one operator's server: writes on
// one node seen on the others, a conflict refused with 40001, clients
// running as certa_client through a login role of the node's, a node
// restarted resumes, and a fourth node on a database already used is
// refused.
func TestPostgresDSNCluster(t *testing.T) {
	c, o := startPostgresDSNCluster(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE acct (id bigint PRIMARY KEY, owner text NOT NULL, balance numeric(12,2))")
	for i := range c.Nodes {
		mustExec(t, syncConn(t, c, i), "INSERT INTO acct VALUES ($1, $2, 10)", i+1, fmt.Sprintf("owner %d", i+1))
	}
	for i := range c.Nodes {
		if got := values(t, syncConn(t, c, i), "SELECT id, owner FROM acct ORDER BY id"); got != "1=owner 1,2=owner 2,3=owner 3" {
			t.Fatalf("node %d sees %q", i+1, got)
		}
	}
	// First committer wins across nodes.
	a, b := syncConn(t, c, 0), syncConn(t, c, 1)
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE acct SET balance = balance + 1 WHERE id = 1")
	mustExec(t, b, "UPDATE acct SET balance = balance + 100 WHERE id = 1")
	mustFail(t, a, "40001", "COMMIT")
	if got := values(t, syncConn(t, c, 2), "SELECT id, balance::text FROM acct WHERE id = 1"); got != "1=110.00" {
		t.Fatalf("node 3: %s, want 1=110.00", got)
	}

	// Clients run as certa_client through the node's login role, which a
	// RESET ROLE does not leave; certa_client owns the tables and cannot
	// log in; a schema change after SET ROLE NONE is refused.
	if got := values(t, b, "SELECT session_user, current_user"); got != "certa_client_certa_n2=certa_client" {
		t.Fatalf("session and current user: %s", got)
	}
	mustExec(t, b, "RESET ROLE")
	if got := values(t, b, "SELECT 1, current_user"); got != "1=certa_client" {
		t.Fatalf("after RESET ROLE: %s", got)
	}
	mustExec(t, b, "SET ROLE NONE")
	mustExec(t, b, "BEGIN")
	mustFail(t, b, "42501", "CREATE TABLE owned_elsewhere (id int PRIMARY KEY)")
	mustExec(t, b, "ROLLBACK")
	mustExec(t, b, "RESET ROLE")
	n2, err := pgclient.ConnectString(ctxT(t), o.dsn("certa_n2"))
	if err != nil {
		t.Fatal(err)
	}
	defer n2.Close()
	if got := values(t, n2, "SELECT tablename, tableowner FROM pg_tables WHERE schemaname = 'public'"); got != "acct=certa_client" {
		t.Fatalf("tables of certa_n2: %s", got)
	}
	if got := values(t, n2, "SELECT rolname, rolcanlogin::text FROM pg_roles WHERE rolname LIKE 'certa\\_client%' ORDER BY 1"); got != "certa_client=false,certa_client_certa_n1=true,certa_client_certa_n2=true,certa_client_certa_n3=true" {
		t.Fatalf("roles: %s", got)
	}
	if st, err := os.Stat(filepath.Join(c.Nodes[1].DataDir, "postgres-dsn.secret")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the secret file: %v %v", st, err)
	}

	// A restarted node resumes with what it missed.
	c.Kill(1)
	mustExec(t, c.Conn(0), "INSERT INTO acct VALUES (10, 'while n2 was down', 0)")
	c.Restart(1)
	c.WaitReady(60 * time.Second)
	if got := values(t, syncConn(t, c, 1), "SELECT id, owner FROM acct WHERE id = 10"); got != "10=while n2 was down" {
		t.Fatalf("node 2 after restart: %q", got)
	}
	mustExec(t, syncConn(t, c, 1), "INSERT INTO acct VALUES (11, 'after restart', 0)")
	c.WaitConverged(60 * time.Second)

	// A new node given node 1's database is refused.
	out := refusedNode(t, "--join", c.Nodes[0].HTTPAddr, "--engine", "postgres", "--postgres-dsn", o.dsn("certa_n1"))
	for _, want := range []string{"belongs to another certa node", "database certa_n1 is node n1's", "a database of its own"} {
		if !strings.Contains(out, want) {
			t.Fatalf("a node on node 1's database: %q does not say %q", out, want)
		}
	}
	if n, err := syncConn(t, c, 0).QueryInt(ctxT(t), "SELECT count(*) FROM acct"); err != nil || n != 5 {
		t.Fatalf("after the refused node: %d rows, %v", n, err)
	}
}

// refusedNode runs a node with args that must refuse to start, and
// returns what it wrote.
func refusedNode(t *testing.T, args ...string) string {
	t.Helper()
	var addrs [3]string
	for k := range addrs {
		a, err := localcluster.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs[k] = a
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testcluster.Binary(t), append([]string{"node", "--id", "refused",
		"--data-dir", filepath.Join(t.TempDir(), "refused"),
		"--pg-addr", addrs[0], "--http-addr", addrs[1], "--raft-addr", addrs[2]}, args...)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the node did not refuse within 90s: %s", out)
	}
	if err == nil {
		t.Fatalf("the node started and ended without an error: %s", out)
	}
	return string(out)
}

// Each requirement of --postgres-dsn that the server, the role or the
// database does not meet stops the node at start with a message that
// says what to change.
func TestPostgresDSNRefusals(t *testing.T) {
	o := startOperatorServer(t)
	o.createDB(t, "plain_db")
	mustExec(t, o.admin, "CREATE ROLE plain LOGIN PASSWORD 'plainpw'")
	o.createDB(t, "used_db")
	used, err := pgclient.ConnectString(ctxT(t), o.dsn("used_db"))
	if err != nil {
		t.Fatal(err)
	}
	defer used.Close()
	mustExec(t, used, "CREATE TABLE app_table (id int PRIMARY KEY)")
	mustExec(t, o.admin, "CREATE DATABASE latin_db TEMPLATE template0 ENCODING 'LATIN1' LOCALE 'C'")
	oldBin := t.TempDir()
	for _, prog := range []string{"pg_dump", "pg_restore"} {
		if err := os.WriteFile(filepath.Join(oldBin, prog), []byte("#!/bin/sh\necho '"+prog+" (PostgreSQL) 13.11'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pg := func(dsn string, extra ...string) []string {
		return append([]string{"--bootstrap", "--engine", "postgres", "--postgres-dsn", dsn}, extra...)
	}
	port := o.srv.Port
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"not postgres engine", []string{"--bootstrap", "--postgres-dsn", o.dsn("plain_db")}, []string{"--postgres-dsn needs --engine postgres"}},
		{"not superuser", pg(fmt.Sprintf("postgres://plain:plainpw@127.0.0.1:%d/plain_db?sslmode=disable", port)),
			[]string{"role plain of --postgres-dsn must be a superuser", "ALTER ROLE plain SUPERUSER"}},
		{"wrong password", pg(fmt.Sprintf("postgres://certa_admin:wrong@127.0.0.1:%d/plain_db?sslmode=disable", port)),
			[]string{"refused role certa_admin in database plain_db", "pg_hba.conf", "28P01"}},
		{"no database", pg(o.dsn("missing_db")), []string{"database missing_db does not exist", "CREATE DATABASE missing_db"}},
		{"maintenance database", pg(o.dsn("postgres")), []string{"a database of its own"}},
		{"tables of others", pg(o.dsn("used_db")), []string{"database used_db holds tables certa did not make (public.app_table)"}},
		{"not UTF8", pg(o.dsn("latin_db")), []string{"has encoding LATIN1", "UTF8"}},
		{"old pg_dump", pg(o.dsn("plain_db"), "--postgres-bin", oldBin), []string{"no usable pg_dump and pg_restore found in " + oldBin + " of version 15 or later", "PostgreSQL 13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := refusedNode(t, tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("%q does not say %q", out, w)
				}
			}
		})
	}

	// pg_hba.conf lets certa_admin in but not the node's clients' login
	// role: the node says which line it needs.
	t.Run("clients' login refused", func(t *testing.T) {
		o.createDB(t, "hba_db")
		o.srv.SetHBA(t,
			"host all postgres 127.0.0.1/32 scram-sha-256",
			"host all certa_admin 127.0.0.1/32 scram-sha-256",
			"host all all 127.0.0.1/32 reject")
		defer o.srv.SetHBA(t, "host all all 127.0.0.1/32 scram-sha-256")
		out := refusedNode(t, pg(o.dsn("hba_db"))...)
		for _, w := range []string{"as role certa_client_hba_db", "as role certa_applier_hba_db", "server refused", "host hba_db,hba_db_restoring +certa_client", "scram-sha-256"} {
			if !strings.Contains(out, w) {
				t.Errorf("%q does not say %q", out, w)
			}
		}
	})
}
