package clustertest

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// pgx in its default mode (extended protocol, cached prepared statements,
// binary formats) against a cluster that requires SCRAM-SHA-256: every
// supported type through parameters and back, NULLs, a statement reused,
// an explicit transaction, a conflict reported as 40001 and its retry, and
// a cancelled statement.
func TestPgxExtendedProtocolAllTypes(t *testing.T) {
	forEachEngine(t, testPgxExtendedProtocolAllTypes)
}

func testPgxExtendedProtocolAllTypes(t *testing.T, start startFunc) {
	c := startWithPassword(t, start)
	ctx := ctxT(t)
	a := extendedConn(t, c, 0)
	b := extendedConn(t, c, 1)
	// The embedded engine has no real (float4) columns: SQLite computes
	// with doubles, and float4's results would differ.
	real := "real"
	if strings.HasSuffix(t.Name(), "/sqlite") {
		real = "double precision"
	}
	mustExec(t, a, `CREATE TABLE typed (id bigint PRIMARY KEY, i integer, f double precision, r `+real+`,
		b boolean, s text, v varchar(20), by bytea, n numeric(10,2), d date, ts timestamp, tz timestamptz,
		u uuid, j json, jb jsonb)`)

	const insert = "INSERT INTO typed (id, i, f, r, b, s, v, by, n, d, ts, tz, u, j, jb) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
	tz := time.Date(2026, 11, 21, 10, 11, 12, 345678000, time.UTC)
	if _, err := a.Exec(ctx, insert, int64(1), int32(42), 1.5, float32(2.25), true, "text", "var", []byte{0, 1, 255},
		"12.50", time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 21, 10, 11, 12, 0, time.UTC), tz,
		"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", `{"a": 1}`, `{"b": [1, 2]}`); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, insert, int64(2), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}

	var (
		i          int32
		f          float64
		r          float32
		bo         bool
		s, v, u    string
		by         []byte
		d, ts, gtz time.Time
		j, jb      string
		nf         float64
	)
	err := syncExtended(t, c, 1).QueryRow(ctx, "SELECT i, f, r, b, s, v, by, n, d, ts, tz, u, j, jb FROM typed WHERE id = $1",
		[]any{int64(1)}, &i, &f, &r, &bo, &s, &v, &by, &nf, &d, &ts, &gtz, &u, &j, &jb)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d %v %v %v %s %s %x %v %s %s %s %s %s %s", i, f, r, bo, s, v, by, nf,
		d.Format("2006-01-02"), ts.Format(time.RFC3339), gtz.UTC().Format(time.RFC3339Nano), u, j, jb)
	want := `42 1.5 2.25 true text var 0001ff 12.5 2026-11-21 2026-11-21T10:11:12Z 2026-11-21T10:11:12.345678Z a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 {"a": 1} {"b": [1, 2]}`
	if got != want {
		t.Fatalf("row 1 read back on another node as\n%s\nwant\n%s", got, want)
	}

	// NULLs of every type come back as NULL.
	vals := make([]any, 14)
	ptrs := make([]any, 14)
	for k := range vals {
		ptrs[k] = &vals[k]
	}
	if err := b.QueryRow(ctx, "SELECT i, f, r, b, s, v, by, n, d, ts, tz, u, j, jb FROM typed WHERE id = $1", []any{int64(2)}, ptrs...); err != nil {
		t.Fatal(err)
	}
	for k, v := range vals {
		if v != nil {
			t.Fatalf("column %d of the NULL row is %v", k, v)
		}
	}

	// A prepared statement reused many times; count(*) is a bigint.
	for k := int64(10); k < 60; k++ {
		if _, err := a.Exec(ctx, "INSERT INTO typed (id, s) VALUES ($1, $2)", k, fmt.Sprint("row ", k)); err != nil {
			t.Fatal(err)
		}
	}
	var count int64
	if err := a.QueryRow(ctx, "SELECT count(*) FROM typed WHERE id >= $1", []any{int64(10)}, &count); err != nil || count != 50 {
		t.Fatalf("count: %d, %v", count, err)
	}

	// RETURNING and ON CONFLICT.
	var id int64
	var text string
	if err := a.QueryRow(ctx, "INSERT INTO typed (id, s) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET s = excluded.s || ' again' RETURNING id, s",
		[]any{int64(10), "row 10"}, &id, &text); err != nil || id != 10 || text != "row 10 again" {
		t.Fatalf("upsert returning: %d %q %v", id, text, err)
	}

	// An explicit transaction; a concurrent commit to the same row makes
	// the later one fail with 40001, and a retry succeeds.
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE typed SET i = i + $1 WHERE id = $2", int32(1), int64(1))
	mustExec(t, b, "UPDATE typed SET i = i + $1 WHERE id = $2", int32(100), int64(1))
	if _, err := a.Exec(ctx, "COMMIT"); pgclient.SQLState(err) != "40001" {
		t.Fatalf("COMMIT after a concurrent update: %v, want 40001", err)
	}
	mustExec(t, a, "BEGIN")
	mustExec(t, a, "UPDATE typed SET i = i + $1 WHERE id = $2", int32(1), int64(1))
	mustExec(t, a, "COMMIT")
	if err := syncExtended(t, c, 2).QueryRow(ctx, "SELECT i FROM typed WHERE id = $1", []any{int64(1)}, &i); err != nil || i != 143 {
		t.Fatalf("after the retry: %d, %v (want 143)", i, err)
	}

	cancelForever(t, a)
	if err := a.QueryRow(ctx, "SELECT count(*) FROM typed", nil, &count); err != nil || count != 52 {
		t.Fatalf("after the cancel: %d, %v", count, err)
	}
}

// testPassword is the password of user certa in startWithPassword's cluster.
const testPassword = "s3cret pass"

// startWithPassword starts a 3-node cluster whose only user is certa, with
// testPassword (SCRAM-SHA-256).
func startWithPassword(t *testing.T, start startFunc) *testcluster.Cluster {
	return start(t, 3, "--users-file", usersFile(t, "certa", testPassword))
}

// passwordURL is a connection string for node i of startWithPassword's cluster.
func passwordURL(c *testcluster.Cluster, i int) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword("certa", testPassword), Host: c.Nodes[i].PGAddr,
		Path: "/certa", RawQuery: "sslmode=disable"}
	return u.String()
}

func extendedConn(t *testing.T, c *testcluster.Cluster, i int) *pgclient.Conn {
	t.Helper()
	conn, err := pgclient.ConnectExtended(ctxT(t), passwordURL(c, i))
	if err != nil {
		t.Fatalf("connect to %s: %v", c.Nodes[i].ID, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func syncExtended(t *testing.T, c *testcluster.Cluster, i int) *pgclient.Conn {
	conn := extendedConn(t, c, i)
	mustExec(t, conn, "SET certa.consistency = 'sync'")
	return conn
}
