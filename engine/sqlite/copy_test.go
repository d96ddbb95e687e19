package sqlite

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"strings"
	"testing"

	"certa/pgbinary"
	"certa/result"
	"certa/sqlerr"
)

// copyClient is the client end of a COPY for these tests: what it sends
// for COPY FROM, and what it got from COPY TO.
type copyClient struct {
	recorder
	in  string
	out bytes.Buffer
}

func (c *copyClient) CopyIn(format int16, columns int) (io.Reader, error) {
	return strings.NewReader(c.in), nil
}

func (c *copyClient) CopyOut(format int16, columns int) (io.WriteCloser, error) {
	return nopCloser{&c.out}, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

var _ result.Copier = (*copyClient)(nil)

// copyIn runs a COPY FROM STDIN of data in tx.
func copyIn(tx interface {
	Exec(context.Context, string, result.Writer, ...any) error
}, sql, data string) (*copyClient, error) {
	c := &copyClient{in: data}
	return c, tx.Exec(context.Background(), sql, c)
}

func TestCopyFromAndTo(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl(`CREATE TABLE t (id integer PRIMARY KEY, name text, ok boolean, at timestamptz, n numeric(10,2), b bytea,
		d text DEFAULT 'dflt', s bigserial)`)
	e.reserve("t_s_seq")
	tx := e.begin()
	c, err := copyIn(tx, "COPY t (id, name, ok, at, n, b) FROM STDIN",
		"1\tx\tt\t2024-01-01 10:00:00+02\t12.5\t\\\\x0102\n2\t\\N\tf\t\\N\t7\t\\N\n3\ttab\\there\tyes\t2024-02-03\t-1.25\t\\\\x\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.tag != "COPY 3" {
		t.Fatalf("tag %q", c.tag)
	}
	if c, err = copyIn(tx, "COPY t (id, name) FROM STDIN WITH (FORMAT csv, HEADER)", "id,name\n4,\"a,b\"\n5,\n6,\"\"\n"); err != nil || c.tag != "COPY 3" {
		t.Fatalf("csv: %v %q", err, c.tag)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, name, ok, at, n, b, d FROM t ORDER BY id"),
		row(int64(1), "x", true, "2024-01-01 08:00:00+00", "12.50", []byte{1, 2}, "dflt"),
		row(int64(2), nil, false, nil, "7.00", nil, "dflt"),
		row(int64(3), "tab\there", true, "2024-02-03 00:00:00+00", "-1.25", []byte{}, "dflt"),
		row(int64(4), "a,b", nil, nil, nil, nil, "dflt"),
		row(int64(5), nil, nil, nil, nil, nil, "dflt"),
		row(int64(6), "", nil, nil, nil, nil, "dflt"))
	if got := e.query("SELECT count(DISTINCT s) FROM t"); got[0][0] != int64(6) {
		t.Fatalf("bigserial values: %v", got)
	}

	tx = e.begin()
	c, err = copyIn(tx, "COPY t (id, name, ok, n, b) TO STDOUT", "")
	if err != nil || c.tag != "COPY 6" {
		t.Fatalf("COPY TO: %v %q", err, c.tag)
	}
	want := "1\tx\tt\t12.50\t\\\\x0102\n2\t\\N\tf\t7.00\t\\N\n3\ttab\\there\tt\t-1.25\t\\\\x\n4\ta,b\t\\N\t\\N\t\\N\n5\t\\N\t\\N\t\\N\t\\N\n6\t\t\\N\t\\N\t\\N\n"
	if c.out.String() != want {
		t.Fatalf("COPY TO text:\n%q\nwant\n%q", c.out.String(), want)
	}
	c, err = copyIn(tx, "COPY (SELECT id, name FROM t WHERE id >= 4 ORDER BY id) TO STDOUT (FORMAT csv, HEADER, FORCE_QUOTE (id))", "")
	if err != nil || c.out.String() != "id,name\n\"4\",\"a,b\"\n\"5\",\n\"6\",\"\"\n" {
		t.Fatalf("COPY (query) TO csv: %v\n%q", err, c.out.String())
	}
}

// Malformed data fails the COPY with PostgreSQL's SQLSTATE and the line
// (and column) in its CONTEXT, and no row of it stays.
func TestCopyFromErrors(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, v int)")
	e.ddl("CREATE VIEW vt AS SELECT 'v_' || name FROM t")
	for _, c := range []struct {
		sql, data, code, where string
	}{
		{"COPY vt TO STDOUT", "", "42809", ""},
		{"COPY vt FROM STDIN", "", "42809", ""},
		{"COPY t FROM STDIN", "1\ta\t1\n2\tb\n", "22P04", "COPY t, line 2"},
		{"COPY t FROM STDIN", "1\ta\t1\t9\n", "22P04", "COPY t, line 1"},
		{"COPY t FROM STDIN", "1\ta\t1\n2\tb\tzwei\n", "22P02", `COPY t, line 2, column v: "zwei"`},
		{"COPY t FROM STDIN", "1\t\\N\t1\n", "23502", "COPY t, line 1"},
		{"COPY t FROM STDIN", "1\ta\t1\n1\tb\t2\n", "23505", "COPY t, line 2"},
		{"COPY t (id, nope) FROM STDIN", "", "42703", ""},
		{"COPY t (id, id) FROM STDIN", "", "42701", ""},
		{"COPY nope FROM STDIN", "", "42P01", ""},
		{"COPY other.t FROM STDIN", "", "3F000", ""},
		{"COPY t FROM STDIN (FORMAT binary)", "", "22P04", ""},
		{"COPY t FROM STDIN (FORMAT binary, DELIMITER ',')", "", "0A000", ""},
		{"COPY t TO STDOUT (FORMAT binary)", "", "0A000", ""},
		{"COPY t FROM STDIN WHERE id > 1", "", "0A000", ""},
	} {
		tx := e.begin()
		_, err := copyIn(tx, c.sql, c.data)
		e2 := sqlerr.As(err)
		if err == nil || e2.Code != c.code || e2.Where != c.where {
			t.Errorf("%s %q: got %v (where %q), want %s (where %q)", c.sql, c.data, err, e2.Where, c.code, c.where)
		}
		tx.Rollback()
	}
	wantRows(t, e.query("SELECT count(*) FROM t"), row(int64(0)))
}

// A COPY in a transaction that was parked (another local writer took the
// lock) keeps its rows: it is restored from its changes, not re-run.
func TestCopyInParkedTx(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY)")
	e.ddl("CREATE TABLE u (id integer PRIMARY KEY)")
	tx := e.begin()
	if _, err := copyIn(tx, "COPY t FROM STDIN", "1\n2\n3\n"); err != nil {
		t.Fatal(err)
	}
	other := e.begin()
	exec(t, other, "INSERT INTO u VALUES (1)") // parks tx, idle holder of the lock
	ws2, err := other.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	other.Rollback()
	exec(t, tx, "INSERT INTO t VALUES (4)")
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws2, ws)
	wantRows(t, e.query("SELECT id FROM t ORDER BY id"), row(int64(1)), row(int64(2)), row(int64(3)), row(int64(4)))
}

func TestCopyOnServerRefused(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY)")
	tx := e.begin()
	for _, sql := range []string{"COPY t FROM '/etc/passwd'", "COPY t TO PROGRAM 'sh -c true'"} {
		if code, err := execErr(tx, sql); code != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

// COPY FROM in binary format (pgx's CopyFrom) reads each field's binary
// form by its column's type.
func TestCopyFromBinary(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, name varchar(20), ok boolean, at timestamptz, n numeric(10,2), b bytea, tags text[])")
	field := func(typ result.Type, v any) []byte {
		b, err := pgbinary.Append(nil, typ, v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rows := [][][]byte{
		{field(result.Int4, int64(1)), []byte("one"), field(result.Bool, true), field(result.Timestamptz, "2024-01-01 08:00:00+00"),
			field(result.Numeric, "12.50"), []byte{1, 2}, nil},
		{field(result.Int4, int64(2)), nil, nil, nil, nil, nil, nil},
	}
	tx := e.begin()
	c, err := copyIn(tx, "COPY t (id, name, ok, at, n, b, tags) FROM STDIN (FORMAT binary)", string(binaryCopy(rows)))
	if err != nil || c.tag != "COPY 2" {
		t.Fatalf("binary COPY: %v %q", err, c.tag)
	}
	ws, err := tx.WriteSet()
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	e.apply(ws)
	wantRows(t, e.query("SELECT id, name, ok, at, n, b FROM t ORDER BY id"),
		row(int64(1), "one", true, "2024-01-01 08:00:00+00", "12.50", []byte{1, 2}),
		row(int64(2), nil, nil, nil, nil, nil))

	// A field the column's type cannot read, and one of a type whose
	// binary form certa does not know: refused, with the column named.
	for _, bad := range [][][]byte{
		{{0, 1}, nil, nil, nil, nil, nil, nil},
		{field(result.Int4, int64(3)), nil, nil, nil, nil, nil, []byte{0, 0, 0, 0}},
	} {
		tx := e.begin()
		_, err := copyIn(tx, "COPY t FROM STDIN (FORMAT binary)", string(binaryCopy([][][]byte{bad})))
		if e2 := sqlerr.As(err); err == nil || !strings.HasPrefix(e2.Where, "COPY t, line 1, column ") {
			t.Errorf("bad field: %v (where %q)", err, e2.Where)
		}
		tx.Rollback()
	}
}

// binaryCopy is COPY's binary format of rows (nil fields are NULL).
func binaryCopy(rows [][][]byte) []byte {
	b := []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	for _, r := range rows {
		b = binary.BigEndian.AppendUint16(b, uint16(len(r)))
		for _, f := range r {
			if f == nil {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff)
				continue
			}
			b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
			b = append(b, f...)
		}
	}
	return binary.BigEndian.AppendUint16(b, 0xffff)
}
