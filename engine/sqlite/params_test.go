package sqlite

import (
	"context"
	"testing"

	"certa/result"
	"certa/sqlerr"
)

func TestExecBindsDollarParameters(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, n DOUBLE PRECISION, b BYTEA, ok BOOLEAN)")
	tx := e.begin()
	defer tx.Rollback()
	ctx := context.Background()
	if err := tx.Exec(ctx, "INSERT INTO t VALUES ($1, $2, $3, $4, $5), ($6, NULL, $3, NULL, $7)", &recorder{},
		int64(1), "one", 1.5, []byte{0, 1}, true, int64(2), false); err != nil {
		t.Fatal(err)
	}
	r := &recorder{}
	if err := tx.Exec(ctx, "SELECT id, v, n, b, ok FROM t WHERE id = $1 OR v = $2 ORDER BY id", r, int64(2), "one"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, r.rows, row(int64(1), "one", 1.5, []byte{0, 1}, true), row(int64(2), nil, 1.5, nil, false))
	err := tx.Exec(ctx, "SELECT * FROM t WHERE id = $2", &recorder{}, int64(1))
	wantCode(t, err, sqlerr.UndefinedParameter)
	err = tx.Exec(ctx, "SELECT * FROM t WHERE id = ?", &recorder{}, int64(1))
	wantCode(t, err, sqlerr.SyntaxError)
}

func TestDescribeInfersTypes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id BIGINT PRIMARY KEY, v TEXT, n DOUBLE PRECISION, b BYTEA, ok BOOLEAN, at TIMESTAMPTZ, u UUID)")
	for _, c := range []struct {
		sql    string
		params []result.Type
		cols   []result.Type
	}{
		{"INSERT INTO t (v, id, b) VALUES ($1, $2, $3)", []result.Type{result.Text, result.Int8, result.Bytea}, nil},
		{"INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET n = $8", []result.Type{
			result.Int8, result.Text, result.Float8, result.Bytea, result.Bool, result.Timestamptz, result.UUID, result.Float8}, nil},
		{"SELECT id, v AS alias, count(*), 1, $2 FROM t WHERE n > $1 AND \"t\".ok = $3 GROUP BY id",
			[]result.Type{result.Float8, result.Text, result.Bool},
			[]result.Type{result.Int8, result.Text, result.Int8, result.Int4, result.Unknown}},
		{"UPDATE t SET at = $1 WHERE u = $2", []result.Type{result.Timestamptz, result.UUID}, nil},
		{"UPDATE t SET n = n * $1, id = $2 + id, v = v || $3 WHERE id = $4", []result.Type{result.Float8, result.Int8, result.Text, result.Int8}, nil},
		{"SELECT at, u FROM t", nil, []result.Type{result.Timestamptz, result.UUID}},
		{"SELECT v FROM t WHERE id BETWEEN $1 AND $2 OR n NOT BETWEEN $3 AND $4", []result.Type{
			result.Int8, result.Int8, result.Float8, result.Float8}, []result.Type{result.Text}},
		{"SELECT n FROM t WHERE id = $1 FOR UPDATE", []result.Type{result.Int8}, []result.Type{result.Float8}},
		{"DELETE FROM t WHERE id IN ($1, $2, $3) AND n NOT IN ($4)", []result.Type{
			result.Int8, result.Int8, result.Int8, result.Float8}, nil},
	} {
		params, cols, err := e.Describe(context.Background(), c.sql)
		if err != nil {
			t.Fatalf("%s: %v", c.sql, err)
		}
		if len(params) != len(c.params) {
			t.Fatalf("%s: params %v, want %v", c.sql, params, c.params)
		}
		for i := range params {
			if params[i] != c.params[i] {
				t.Fatalf("%s: param $%d is %v, want %v", c.sql, i+1, params[i], c.params[i])
			}
		}
		if len(cols) != len(c.cols) {
			t.Fatalf("%s: columns %v, want types %v", c.sql, cols, c.cols)
		}
		for i := range cols {
			if cols[i].Type != c.cols[i] {
				t.Fatalf("%s: column %d (%s) is %v, want %v", c.sql, i, cols[i].Name, cols[i].Type, c.cols[i])
			}
		}
	}
	if _, _, err := e.Describe(context.Background(), "SELEC 1"); sqlerr.Code(err) != sqlerr.SyntaxError {
		t.Fatalf("syntax error described as %v", err)
	}
}

func TestPostgreSQLFunctions(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	defer tx.Rollback()
	r := exec(t, tx, "SELECT version(), current_database(), current_schema(), now(), gen_random_uuid()")
	v := r.rows[0]
	if s, _ := v[0].(string); len(s) < 16 || s[:16] != "PostgreSQL 15.0 " || v[1] != "certa" || v[2] != "public" {
		t.Fatalf("got %v", v)
	}
	if s, _ := v[3].(string); len(s) < 20 || s[len(s)-3:] != "+00" {
		t.Fatalf("now() = %v", v[3])
	}
	if s, _ := v[4].(string); len(s) != 36 || s[14] != '4' {
		t.Fatalf("gen_random_uuid() = %v", v[4])
	}
}
