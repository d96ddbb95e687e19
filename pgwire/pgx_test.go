package pgwire

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"certa/sqlerr"
)

// These tests drive the server with pgx, a real driver, over TCP.

func TestPgxValues(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	ctx := testCtx(t)

	rows, err := conn.Query(ctx, "VALUES")
	if err != nil {
		t.Fatal(err)
	}
	var wantOIDs = []uint32{20, 701, 25, 17, 16, 25, 25, 25, 16}
	var wantSizes = []int16{8, 8, -1, -1, 1, -1, -1, -1, 1}
	for i, fd := range rows.FieldDescriptions() {
		if fd.DataTypeOID != wantOIDs[i] || fd.DataTypeSize != wantSizes[i] || fd.Format != 0 {
			t.Errorf("column %d %s: OID %d size %d format %d, want %d %d text", i, fd.Name, fd.DataTypeOID, fd.DataTypeSize, fd.Format, wantOIDs[i], wantSizes[i])
		}
	}
	if !rows.Next() {
		t.Fatalf("no row: %v", rows.Err())
	}
	var (
		i      int64
		f      float64
		s      string
		b      []byte
		ok, no bool
		n      *string
		u, e   string
	)
	if err := rows.Scan(&i, &f, &s, &b, &ok, &n, &u, &e, &no); err != nil {
		t.Fatal(err)
	}
	if rows.Next() {
		t.Fatal("more than one row")
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if i != -42 || f != 1.5 || s != "héllo" || !bytes.Equal(b, []byte{0xde, 0xad, 0xbe, 0xef}) || !ok || n != nil || u != "x" || e != "" || no {
		t.Errorf("got %v %v %q %x %v %v %q %q %v", i, f, s, b, ok, n, u, e, no)
	}
	if tag := rows.CommandTag().String(); tag != "SELECT 1" {
		t.Errorf("tag %q", tag)
	}

	// The exact text of each value, as psql would show it.
	res, err := conn.PgConn().Exec(ctx, "VALUES").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range res[0].Rows[0] {
		if v == nil {
			got = append(got, "<NULL>")
		} else {
			got = append(got, string(v))
		}
	}
	want := []string{"-42", "1.5", "héllo", `\xdeadbeef`, "t", "<NULL>", "x", "", "f"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("value %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestPgxFloatText(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	res, err := conn.PgConn().Exec(testCtx(t), "FLOATS").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res[0].Rows) != len(testFloats) {
		t.Fatalf("%d rows", len(res[0].Rows))
	}
	for i, row := range res[0].Rows {
		if string(row[0]) != testFloats[i].text {
			t.Errorf("%v: %q, want %q", testFloats[i].f, row[0], testFloats[i].text)
		}
	}
	// And pgx reads them back as the same floats.
	rows, err := conn.Query(testCtx(t), "FLOATS")
	if err != nil {
		t.Fatal(err)
	}
	fs, err := pgx.CollectRows(rows, pgx.RowTo[float64])
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range fs {
		want := testFloats[i].f
		if f != want && !(f != f && want != want) {
			t.Errorf("row %d: %v, want %v", i, f, want)
		}
	}
}

func TestPgxErrors(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	ctx := testCtx(t)

	_, err := conn.Exec(ctx, "FAIL")
	pe := pgErr(t, err)
	if pe.Code != sqlerr.UniqueViolation || pe.Severity != "ERROR" || pe.SeverityUnlocalized != "ERROR" ||
		pe.Message != `duplicate key value violates unique constraint "t_pkey"` ||
		pe.Detail != "Key (id)=(1) already exists." || pe.Hint != "Pick another id." {
		t.Errorf("got %+v", pe)
	}

	// An error without SQLSTATE still gets one.
	_, err = conn.Exec(ctx, "PLAINERR")
	if pe := pgErr(t, err); pe.Code != sqlerr.Internal || pe.Message != "boom" {
		t.Errorf("got %+v", pe)
	}

	// A session breaking the Writer contract gets an error, not a stream
	// the driver misreads.
	_, err = conn.Exec(ctx, "BADROW")
	if pe := pgErr(t, err); pe.Code != sqlerr.Internal {
		t.Errorf("got %+v", pe)
	}

	_, err = conn.Exec(ctx, "UNFINISHED")
	if pe := pgErr(t, err); pe.Code != sqlerr.Internal {
		t.Errorf("got %+v", pe)
	}

	// The connection is still usable after errors.
	var n int64
	if err := conn.QueryRow(ctx, "SELECT 3").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after errors: %d, %v", n, err)
	}
}

func TestPgxTxStatus(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	ctx := testCtx(t)
	if s := conn.PgConn().TxStatus(); s != 'I' {
		t.Fatalf("initial status %q", s)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s := conn.PgConn().TxStatus(); s != 'T' {
		t.Fatalf("after BEGIN: %q", s)
	}
	if _, err := tx.Exec(ctx, "FAIL"); err == nil {
		t.Fatal("FAIL succeeded")
	}
	if s := conn.PgConn().TxStatus(); s != 'E' {
		t.Fatalf("after failure in tx: %q", s)
	}
	_, err = tx.Exec(ctx, "SELECT 1")
	if pe := pgErr(t, err); pe.Code != sqlerr.InFailedTransaction {
		t.Fatalf("got %v", pe)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if s := conn.PgConn().TxStatus(); s != 'I' {
		t.Fatalf("after ROLLBACK: %q", s)
	}
}

func TestPgxMultiStatement(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	res, err := conn.PgConn().Exec(testCtx(t), "SELECT 1; BEGIN; SELECT 2").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 || string(res[0].Rows[0][0]) != "1" || res[1].CommandTag.String() != "BEGIN" || string(res[2].Rows[0][0]) != "2" {
		t.Fatalf("got %+v", res)
	}
	if s := conn.PgConn().TxStatus(); s != 'T' {
		t.Fatalf("status %q", s)
	}

	// An error stops the batch after the results so far.
	res, err = conn.PgConn().Exec(testCtx(t), "COMMIT; SELECT 5; FAIL; SELECT 6").ReadAll()
	if pe := pgErr(t, err); pe.Code != sqlerr.UniqueViolation {
		t.Fatalf("got %v", pe)
	}
	if len(res) < 2 || string(res[1].Rows[0][0]) != "5" {
		t.Fatalf("got %+v", res)
	}
}

func TestPgxLargeResult(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	rows, err := conn.Query(testCtx(t), "MANY 200000")
	if err != nil {
		t.Fatal(err)
	}
	ns, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) != 200000 || ns[199999] != 199999 {
		t.Fatalf("%d rows", len(ns))
	}
}

func TestPgxSession(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.mustPgx()
	var user, db string
	if err := conn.QueryRow(testCtx(t), "WHOAMI").Scan(&user, &db); err != nil {
		t.Fatal(err)
	}
	if user != "tester" || db != "testdb" {
		t.Errorf("session for %q %q", user, db)
	}
	pc := conn.PgConn()
	for name, want := range map[string]string{
		"server_version":              DefaultServerVersion,
		"application_name":            "pgxtest",
		"session_authorization":       "tester",
		"standard_conforming_strings": "on",
		"client_encoding":             "UTF8",
	} {
		if got := pc.ParameterStatus(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if pc.PID() == 0 {
		t.Error("no BackendKeyData")
	}
}

func TestPgxNewSessionError(t *testing.T) {
	ts := startServer(t, Config{})
	_, err := ts.pgxConnect("refused")
	if pe := pgErr(t, err); pe.Code != "28000" || pe.Severity != "FATAL" || pe.Message != `role "refused" does not exist` {
		t.Errorf("got %+v", pe)
	}
	_, err = ts.pgxConnect("plainfail")
	if pe := pgErr(t, err); pe.Code != sqlerr.Internal || pe.Severity != "FATAL" {
		t.Errorf("got %+v", pe)
	}
	ts.checkServing()
}

// pgx's default mode uses the extended protocol (a cached prepared
// statement, binary results where the type allows).
func TestPgxExtendedProtocol(t *testing.T) {
	ts := startServer(t, Config{})
	conn, err := pgx.Connect(testCtx(t), ts.connString("tester", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for i := 0; i < 3; i++ { // prepared once, then reused
		var n int64
		if err := conn.QueryRow(testCtx(t), "SELECT 4").Scan(&n); err != nil || n != 4 {
			t.Fatalf("SELECT 4: %d, %v", n, err)
		}
	}
	var a, b string
	if err := conn.QueryRow(testCtx(t), "PARAMS 2", "x", "y").Scan(&a, &b); err != nil || a != "x" || b != "y" {
		t.Fatalf("PARAMS: %q %q %v", a, b, err)
	}
	_, err = conn.Exec(testCtx(t), "FAIL", 1)
	if pe := pgErr(t, err); pe.Code == "" {
		t.Fatalf("got %+v", pe)
	}
	var n int64
	if err := conn.QueryRow(testCtx(t), "SELECT 5").Scan(&n); err != nil || n != 5 {
		t.Fatalf("after an error: %d, %v", n, err)
	}
}

func TestPgxPanicInSession(t *testing.T) {
	ts := startServer(t, Config{Logger: discardLogger})
	conn := ts.mustPgx()
	_, err := conn.Exec(testCtx(t), "PANIC")
	if pe := pgErr(t, err); pe.Code != sqlerr.Internal || pe.Severity != "FATAL" {
		t.Fatalf("got %+v", pe)
	}
	if !conn.IsClosed() {
		t.Error("connection not closed after panic")
	}
	eventually(t, "session closed", func() bool {
		o, c := ts.backend.counts()
		return o == 1 && c == 1
	})
	ts.checkServing()
}
