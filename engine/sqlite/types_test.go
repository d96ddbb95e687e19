package sqlite

import (
	"context"
	"testing"

	"certa/sqlerr"
)

// bytea: '\x…'::bytea and the escape form are read as PostgreSQL reads
// them; text given for a bytea column is refused rather than kept as text.
func TestByteaInput(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE b (id int PRIMARY KEY, v bytea)")
	e.commit(`INSERT INTO b VALUES (1, '\xdeadbeef'::bytea), (2, 'a\\b\001'::bytea), (3, NULL)`)
	wantRows(t, e.query("SELECT id, v, length(v) FROM b ORDER BY id"),
		row(int64(1), []byte{0xde, 0xad, 0xbe, 0xef}, int64(4)), row(int64(2), []byte{'a', '\\', 'b', 1}, int64(4)), row(int64(3), nil, nil))
	for sql, code := range map[string]string{
		`INSERT INTO b VALUES (4, '\xdeadbeef')`:  sqlerr.FeatureNotSupported,
		`INSERT INTO b VALUES (5, '\xzz'::bytea)`: sqlerr.InvalidTextRepresentation,
		`INSERT INTO b VALUES (6, 'x\q'::bytea)`:  sqlerr.InvalidTextRepresentation,
	} {
		if got, err := execErr(e.begin(), sql); got != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
}

// Columns of types whose values the engine would keep as unchecked text
// and read back as another type are refused, in CREATE TABLE, ADD COLUMN
// and ALTER COLUMN TYPE.
func TestRefusedColumnTypes(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE t (id int PRIMARY KEY, v text)")
	for _, sql := range []string{
		"CREATE TABLE i (id int PRIMARY KEY, d interval)",
		"CREATE TABLE p (id int PRIMARY KEY, at point)",
		"CREATE TABLE r (id int PRIMARY KEY, span int4range)",
		"ALTER TABLE t ADD COLUMN d interval",
		"ALTER TABLE t ALTER COLUMN v TYPE money",
	} {
		if _, err := e.CheckDDL(context.Background(), sql); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func TestMD5(t *testing.T) {
	e := openTest(t, Config{})
	wantRows(t, e.query("SELECT md5('abc'), md5(''), md5(NULL)"),
		row("900150983cd24fb0d6963f7d28e17f72", "d41d8cd98f00b204e9800998ecf8427e", nil))
}
