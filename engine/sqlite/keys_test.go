package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// Issue 16: a PRIMARY KEY column other than an INTEGER PRIMARY KEY can hold
// NULL in SQLite, and the session extension ignores such rows: they were
// acknowledged and never replicated. PostgreSQL's primary keys are NOT NULL.
func TestPrimaryKeyColumnsAreNotNull(t *testing.T) {
	e := openTest(t, Config{})
	for _, ddl := range []string{
		"CREATE TABLE t1 (id bigint PRIMARY KEY, k integer)",
		"CREATE TABLE t2 (id int, k integer, PRIMARY KEY (id))",
		"CREATE TABLE t3 (a text, b int, k int, CONSTRAINT t3_pk PRIMARY KEY (a, b))",
		"CREATE TABLE t4 (id numeric /* , */ PRIMARY KEY, k int)",
	} {
		e.ddl(ddl)
	}
	for _, stmt := range []string{
		"INSERT INTO t1(k) VALUES (5), (6)",
		"INSERT INTO t1 VALUES (NULL, 5)",
		"INSERT INTO t2(k) VALUES (5)",
		"INSERT INTO t2(k) SELECT 1",
		"INSERT INTO t3(a, k) VALUES ('x', 1)",
		"INSERT INTO t3(b, k) VALUES (1, 1)",
		"INSERT INTO t4(k) VALUES (1) RETURNING *",
	} {
		tx := e.begin()
		code, err := execErr(tx, stmt)
		if code != sqlerr.NotNullViolation || !strings.Contains(err.Error(), `null value in column "`) {
			t.Errorf("%s: %s %v, want 23502", stmt, code, err)
		}
		tx.Rollback()
	}
	e.commit("INSERT INTO t1 VALUES (1, 1)")
	tx := e.begin()
	if code, err := execErr(tx, "UPDATE t1 SET id = NULL WHERE id = 1"); code != sqlerr.NotNullViolation {
		t.Errorf("update key to NULL: %s %v", code, err)
	}
	tx.Rollback()
	// An upsert whose key is NULL is refused as well.
	tx = e.begin()
	if code, err := execErr(tx, "INSERT INTO t1 VALUES (NULL, 2) ON CONFLICT (id) DO UPDATE SET k = 3"); code != sqlerr.NotNullViolation {
		t.Errorf("upsert: %s %v", code, err)
	}
	tx.Rollback()
}

// A key compared with a collation other than BINARY is one row to SQLite
// and two keys to certification ('KEY3' and 'key3' under NOCASE): refused.
func TestKeyCollationRefused(t *testing.T) {
	e := openTest(t, Config{})
	for _, ddl := range []string{
		"CREATE TABLE c1 (k TEXT COLLATE NOCASE PRIMARY KEY)",
		"CREATE TABLE c2 (k TEXT NOT NULL, PRIMARY KEY (k COLLATE RTRIM))", // SQLite syntax
		"CREATE TABLE c3 (a int, k TEXT COLLATE NOCASE, PRIMARY KEY (a, k)) WITHOUT ROWID",
	} {
		_, err := e.CheckDDL(context.Background(), ddl)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "collation") {
			t.Errorf("%s: %v", ddl, err)
		}
	}
	// Other columns may use any collation.
	e.ddl("CREATE TABLE c4 (k TEXT PRIMARY KEY, name TEXT COLLATE NOCASE UNIQUE)")
}

// Values SQLite finds equal in a key column are one certification key: 1
// and 1.0 in a column without a type conflicted in the unique index on
// every node after both passed certification.
func TestKeysEqualAsSQLiteDoes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE u (k NOT NULL PRIMARY KEY, v TEXT)") // SQLite syntax: no type, blob affinity
	a := e.capture("INSERT INTO u VALUES (1, 'a')")
	b := e.capture("INSERT INTO u VALUES (1.0, 'b')")
	if len(a.Keys) != 1 || len(b.Keys) != 1 || a.Keys[0] != b.Keys[0] {
		t.Fatalf("keys %q and %q differ", a.Keys, b.Keys)
	}
}

// SERIAL and identity columns are refused until certa generates values:
// in SQLite they were NULL, and the rows were lost.
func TestGeneratedColumnsRefused(t *testing.T) {
	e := openTest(t, Config{})
	for _, ddl := range []string{
		"CREATE TABLE s1 (id SERIAL, k INTEGER, PRIMARY KEY (id))",
		"CREATE TABLE s2 (id bigserial PRIMARY KEY)",
		"CREATE TABLE s3 (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY)",
		"CREATE TABLE s4 (id int PRIMARY KEY, n smallserial)",
	} {
		_, err := e.CheckDDL(context.Background(), ddl)
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "not supported yet") {
			t.Errorf("%s: %v", ddl, err)
		}
	}
}

// A table an older version created with a key that can hold NULL is not
// written: its rows would not be replicated.
func TestLegacyNullableKeyTableNotWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db.sqlite")
	c, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		t.Fatal(err)
	}
	if err := execScript(c, "CREATE TABLE old (id bigint PRIMARY KEY, k int)"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	e := openTest(t, Config{Path: path})
	tx := e.begin()
	code, err := execErr(tx, "INSERT INTO old VALUES (1, 1)")
	if code != sqlerr.FeatureNotSupported || !strings.Contains(err.Error(), "can hold NULL") {
		t.Errorf("insert into legacy table: %s %v", code, err)
	}
	tx.Rollback()
	wantRows(t, e.query("SELECT count(*) FROM old"), row(int64(0)))
}
