package sqlite

import (
	"context"
	"testing"

	"certa/sqlerr"
	"certa/writeset"
)

// A schema statement that would compute other values on each node (a new
// table's rows from random() or the clock, a serial column numbering the
// rows there are) is refused with 0A000 by CheckDDL, and alike at apply
// when ordered anyway; the same from the rows alone, or over an empty
// table, runs.
func TestNodeDependentSchemaChanges(t *testing.T) {
	e := openTest(t, Config{})
	ctx := context.Background()
	e.ddl("CREATE TABLE t (id integer PRIMARY KEY, v text)")
	e.ddl("CREATE TABLE empty (id integer PRIMARY KEY)")
	e.ddl("ALTER TABLE empty ADD COLUMN n serial")
	e.commit("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
	for _, stmt := range []string{
		"CREATE TABLE r AS SELECT id, random() AS x FROM t",
		"CREATE TABLE r AS SELECT id, now() AS x FROM t",
		"CREATE TABLE r AS SELECT id, gen_random_uuid() AS x FROM t",
		"CREATE TABLE r AS SELECT id, CURRENT_TIMESTAMP AS x FROM t",
		"CREATE TABLE r AS SELECT id FROM t LIMIT 1",
		"ALTER TABLE t ADD COLUMN n serial",
		"ALTER TABLE t ADD COLUMN k integer DEFAULT 7, ADD COLUMN u uuid DEFAULT gen_random_uuid()",
		"CREATE TABLE r AS SELECT string_agg(v, ',') AS vs FROM t",
		"CREATE TABLE r AS SELECT string_agg(id::text, ',' ORDER BY v) AS vs FROM t", // v may tie
		"CREATE TABLE r AS SELECT row_number() OVER (ORDER BY v) AS n, id FROM t",
	} {
		_, err := e.CheckDDL(ctx, stmt)
		wantCode(t, err, sqlerr.FeatureNotSupported)
		items := e.apply(&writeset.WriteSet{DDL: stmt})
		wantCode(t, items[0].Err, sqlerr.FeatureNotSupported)
	}
	e.ddl("CREATE TABLE r AS SELECT id, upper(v) AS u, length(v) AS n FROM t")
	wantRows(t, e.query("SELECT count(*) FROM r"), row(int64(2)))

}
