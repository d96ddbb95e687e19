package clustertest

import (
	"context"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// alterScript changes tables the ways migration tools do (Django, Alembic,
// Flyway scripts): column types, defaults, NOT NULL, constraints added
// and dropped; some steps must fail (rows that break what is added), and
// the probes after them show what each change now enforces. Inserts with
// fewer values than the table has columns fill the rest with defaults.
var alterScript = []string{
	"CREATE TABLE ap (id integer PRIMARY KEY, name varchar(10) NOT NULL DEFAULT 'x')",
	"CREATE TABLE ac (id integer PRIMARY KEY, p_id integer, note text)",
	"INSERT INTO ap VALUES (1, 'a'), (2, 'bb')",
	"INSERT INTO ac VALUES (1, 1, 'n'), (2, NULL, NULL)",
	`ALTER TABLE ac ADD CONSTRAINT ac_p_fk FOREIGN KEY (p_id) REFERENCES ap (id) DEFERRABLE INITIALLY DEFERRED`,
	"INSERT INTO ac VALUES (3, 7, 'z')",
	`ALTER TABLE "ap" ALTER COLUMN "name" TYPE varchar(255)`,
	"INSERT INTO ap (id, name) VALUES (3, 'a longer name')",
	"ALTER TABLE ap ALTER COLUMN name DROP DEFAULT",
	"INSERT INTO ap (id) VALUES (4)",
	"ALTER TABLE ap ALTER COLUMN name DROP NOT NULL",
	"INSERT INTO ap (id) VALUES (5)",
	"ALTER TABLE ap ALTER COLUMN name SET DEFAULT 'dflt'",
	"INSERT INTO ap (id) VALUES (6)",
	"ALTER TABLE ac ALTER COLUMN note SET NOT NULL",
	"UPDATE ac SET note = 'm' WHERE id = 2",
	"ALTER TABLE ac ALTER COLUMN note SET NOT NULL",
	"INSERT INTO ac VALUES (4, 1, NULL)",
	"ALTER TABLE ac ADD CONSTRAINT note_short CHECK (length(note) < 5), ADD COLUMN extra integer",
	"ALTER TABLE ac ADD CONSTRAINT note_one CHECK (length(note) < 2)",
	"INSERT INTO ac VALUES (9, 1, 'toolong', 1)",
	"ALTER TABLE ac ADD CONSTRAINT ac_note_key UNIQUE (note)",
	"INSERT INTO ac VALUES (5, 1, 'n', 1)",
	"ALTER TABLE ap ALTER COLUMN name TYPE varchar(3)",
	"DELETE FROM ap WHERE id = 3",
	"ALTER TABLE ap ALTER COLUMN name TYPE varchar(4)",
	"INSERT INTO ap VALUES (7, 'abcde')",
	"ALTER TABLE ac ALTER COLUMN extra TYPE bigint",
	"INSERT INTO ac VALUES (6, 1, 'q', 9000000000)",
	"ALTER TABLE ac ALTER COLUMN extra TYPE text",
	"ALTER TABLE ac DROP CONSTRAINT ac_p_fk, DROP CONSTRAINT note_short",
	"INSERT INTO ac VALUES (7, 99, 'long note', 1)",
	"ALTER TABLE ac DROP CONSTRAINT ac_note_key",
	"INSERT INTO ac VALUES (8, 1, 'n')",
	"INSERT INTO ac VALUES (10, 1, 'o'), (11, 1)",
	"INSERT INTO ac VALUES (12, 1, 'p', 4, 5)",
	"INSERT INTO ac (id, p_id, note) VALUES (13, 1)",
	"ALTER TABLE ac DROP CONSTRAINT nope",
	"ALTER TABLE ac DROP CONSTRAINT IF EXISTS nope",
	"ALTER TABLE ac ALTER COLUMN nope SET NOT NULL",
	"ALTER TABLE ap ALTER COLUMN id DROP NOT NULL",
	"ALTER TABLE nope ALTER COLUMN id DROP NOT NULL",
	"ALTER TABLE IF EXISTS nope ALTER COLUMN id DROP NOT NULL",
	// TRUNCATE: a referenced table only with its children, or CASCADE.
	"CREATE TABLE tp (id integer PRIMARY KEY)",
	"CREATE TABLE tc (id integer PRIMARY KEY, tp_id integer REFERENCES tp (id))",
	"INSERT INTO tp VALUES (1), (2)",
	"INSERT INTO tc VALUES (1, 1)",
	"TRUNCATE tp",
	"TRUNCATE tp, tc",
	"INSERT INTO tp VALUES (1), (2)",
	"INSERT INTO tc VALUES (1, 1)",
	"TRUNCATE TABLE tp CASCADE",
	"INSERT INTO tp VALUES (3)",
	"INSERT INTO tc VALUES (3, 3)",
	"TRUNCATE ap",
	"TRUNCATE ap RESTART IDENTITY",
	"TRUNCATE nope",
	"BEGIN",
	"INSERT INTO ap VALUES (20, 'in')",
	"TRUNCATE ac",
	"INSERT INTO ac VALUES (1, 1, 'x')",
	"COMMIT",
	// In a transaction block, as migration tools run them.
	"BEGIN",
	"ALTER TABLE ap ADD CONSTRAINT ap_name_check CHECK (name <> 'bad')",
	"INSERT INTO ap VALUES (8, 'ok')",
	"COMMIT",
	"INSERT INTO ap VALUES (9, 'bad')",
	// Flyway's history table: made without a key, which is added after.
	"BEGIN",
	"CREATE TABLE public.hist (installed_rank integer NOT NULL, version varchar(50), success boolean NOT NULL)",
	"ALTER TABLE public.hist ADD CONSTRAINT hist_pk PRIMARY KEY (installed_rank)",
	"CREATE INDEX hist_s_idx ON public.hist (success)",
	"COMMIT",
	"INSERT INTO hist VALUES (1, '1', true), (2, '2', false)",
	"INSERT INTO hist VALUES (1, 'dup', true)",
	"ALTER TABLE hist ADD PRIMARY KEY (version)",
	// Defaults are expressions, of the column's type.
	"CREATE TABLE dd (id integer PRIMARY KEY, at timestamptz DEFAULT now(), label text DEFAULT 'a'::text, n integer DEFAULT 1 + 2)",
	"INSERT INTO dd (id) VALUES (1)",
	"ALTER TABLE dd ALTER COLUMN n SET DEFAULT 2 * 5",
	"INSERT INTO dd (id) VALUES (2)",
}

// The same script on the embedded engine (written through node 1) and on
// a real PostgreSQL: each statement must succeed on both or fail with the
// same SQLSTATE, and the rows read back through node 2 must be the same.
func TestAlterTableAgainstPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 3, testArgs...)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	writer, reader := syncConn(t, c, 0), syncConn(t, c, 1)
	for _, sql := range alterScript {
		_, refErr := ref.Exec(ctx, sql)
		_, err := writer.Exec(ctx, sql)
		if got, want := pgclient.SQLState(err), pgclient.SQLState(refErr); got != want {
			t.Errorf("%s\n  certa:      %q %v\n  PostgreSQL: %q %v", sql, got, err, want, refErr)
		}
	}
	for _, sql := range []string{
		"SELECT id, name FROM ap ORDER BY id",
		"SELECT id, p_id, note, extra FROM ac ORDER BY id",
		"SELECT id, tp_id FROM tc ORDER BY id",
		"SELECT installed_rank, version, success FROM hist ORDER BY installed_rank",
		"SELECT id, label, n, at IS NOT NULL FROM dd ORDER BY id",
	} {
		if got, want := describedOutcome(ctx, reader, sql, false), describedOutcome(ctx, ref, sql, false); got != want {
			t.Errorf("%s\n  certa:      %s\n  PostgreSQL: %s", sql, got, want)
		}
	}
}
