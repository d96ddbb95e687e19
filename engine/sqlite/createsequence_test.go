package sqlite

import (
	"context"
	"fmt"
	"testing"

	"certa/result"
	"certa/sqlerr"
)

// CREATE SEQUENCE makes a sequence no column owns: nextval hands out its
// values from START, a default may call it, later schema statements keep
// it, and DROP SEQUENCE refuses while a default calls it. Options certa
// cannot honour are refused.
func TestCreateSequence(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE SEQUENCE public.s AS integer START 10")
	e.ddl("CREATE SEQUENCE IF NOT EXISTS s")
	e.ddl("CREATE TABLE c (id bigint PRIMARY KEY DEFAULT nextval('s'::regclass), n text)")
	e.ddl("CREATE TABLE other (id int PRIMARY KEY)")
	e.reserve("s")
	e.commit("INSERT INTO c (n) VALUES ('a'), ('b')")
	wantRows(t, e.query("SELECT id, n FROM c ORDER BY id"), row(int64(10), "a"), row(int64(11), "b"))
	for stmt, code := range map[string]string{
		"CREATE SEQUENCE s":                         sqlerr.DuplicateTable,
		"CREATE SEQUENCE p INCREMENT 50":            sqlerr.FeatureNotSupported,
		"CREATE SEQUENCE p CYCLE":                   sqlerr.FeatureNotSupported,
		"CREATE SEQUENCE other":                     sqlerr.DuplicateTable,
		"DROP SEQUENCE s":                           sqlerr.DependentObjectsStillExist,
		"DROP SEQUENCE nope":                        sqlerr.UndefinedTable,
		"CREATE SEQUENCE elsewhere.p":               sqlerr.InvalidSchemaName,
		"CREATE SEQUENCE p AS smallint START 40000": sqlerr.InvalidParameterValue,
	} {
		_, err := e.CheckDDL(context.Background(), stmt)
		if sqlerr.Code(err) != code {
			t.Errorf("%s: %v, want %s", stmt, err, code)
		}
	}
	e.ddl("DROP TABLE c")
	e.ddl("DROP SEQUENCE s")
	e.ddl("DROP SEQUENCE IF EXISTS s")
	wantRows(t, e.query("SELECT count(*) FROM _certa_sequences"), row(int64(0)))
}

// ALTER TABLE ... ADD PRIMARY KEY gives a table made without one a key,
// keeping its rows (loaded first, as pg_dump's restores do) and its
// indexes; a second key, or a key over duplicate or NULL values, is
// refused.
func TestAddPrimaryKey(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE h (rank integer NOT NULL, version varchar(50), ok boolean NOT NULL)")
	e.ddl("CREATE INDEX h_ok ON h (ok)")
	e.commit("INSERT INTO h VALUES (1, '1', true), (2, NULL, false)")
	e.ddl("ALTER TABLE h ADD CONSTRAINT h_pk PRIMARY KEY (rank)")
	wantRows(t, e.query("SELECT rank, version FROM h ORDER BY rank"), row(int64(1), "1"), row(int64(2), nil))
	e.commit("INSERT INTO h VALUES (3, '3', true)")
	wantRows(t, e.query("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL"), row("h_ok"))
	if _, err := e.CheckDDL(context.Background(), "ALTER TABLE h ADD PRIMARY KEY (version)"); sqlerr.Code(err) != sqlerr.InvalidTableDefinition {
		t.Errorf("a second primary key: %v", err)
	}
	tx := e.begin()
	if code, _ := execErr(tx, "INSERT INTO h VALUES (1, 'dup', true)"); code != sqlerr.UniqueViolation {
		t.Errorf("duplicate key: %s", code)
	}
	tx.Rollback()
}

// A statement that takes more values than the node holds makes the next
// block of its sequence larger, once per shortage, so that when it runs
// again it finds enough (a bulk INSERT of thousands of rows with a SERIAL
// key never finished, each try finding one block); and the values it took
// before it failed are handed out again, so the rows get 1..n as they
// would in PostgreSQL (sysbench counts on it).
func TestSequenceBlockGrows(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE s (id serial PRIMARY KEY, k int)")
	e.reserve("s_id_seq")
	insert := fmt.Sprintf("INSERT INTO s (k) SELECT x FROM generate_series(1, %d) x", 3*sequenceBlock)
	tx := e.begin()
	if code, err := execErr(tx, insert); code != sqlerr.SerializationFailure {
		t.Fatalf("a statement taking more values than held: %v", err)
	}
	tx.Rollback()
	if b := e.reserve("s_id_seq"); b.Count != sequenceGrowth*sequenceBlock {
		t.Fatalf("block after running out: %+v", b)
	}
	e.commit(insert)
	wantRows(t, e.query("SELECT min(id), max(id), count(*) FROM s"), row(int64(1), int64(3*sequenceBlock), int64(3*sequenceBlock)))
}

// Sequences follow the columns that own them through the schema
// statements that touch their tables (syncSequences reads those tables
// alone): a rename keeps the owner, dropping the column or the table
// drops the sequence, a statement on another table leaves it alone.
func TestSequencesFollowTheirColumns(t *testing.T) {
	e := openTest(t, Config{})
	seqs := func(want ...[]result.Value) {
		t.Helper()
		wantRows(t, e.query("SELECT name, tbl, col FROM _certa_sequences ORDER BY name"), want...)
	}
	e.ddl("CREATE TABLE a (id serial PRIMARY KEY, n bigserial)")
	e.ddl("CREATE TABLE b (id serial PRIMARY KEY)")
	seqs(row("a_id_seq", "a", "id"), row("a_n_seq", "a", "n"), row("b_id_seq", "b", "id"))
	e.ddl("ALTER TABLE a RENAME TO a2")
	e.ddl("ALTER TABLE a2 RENAME COLUMN n TO m")
	e.ddl("CREATE TABLE c (x int PRIMARY KEY)")
	seqs(row("a_id_seq", "a2", "id"), row("a_n_seq", "a2", "m"), row("b_id_seq", "b", "id"))
	e.ddl("ALTER TABLE a2 DROP COLUMN m")
	seqs(row("a_id_seq", "a2", "id"), row("b_id_seq", "b", "id"))
	e.ddl("DROP TABLE b")
	seqs(row("a_id_seq", "a2", "id"))
}
