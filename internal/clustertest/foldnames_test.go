package clustertest

import (
	"fmt"
	"testing"

	"certa/internal/testcluster"
)

// foldNamesScript makes tables, columns, indexes, sequences and views
// with unquoted names in upper and mixed case (which PostgreSQL folds to
// lower case), and quoted ones (which it keeps), and reads them back as
// clients do: SELECT *, psql's \d, the catalogs.
const foldNamesScript = `CREATE TABLE MixT (Id int PRIMARY KEY, ColA int, NAME text, "Big" int);
INSERT INTO MixT VALUES (1, 2, 'n', 3);
SELECT * FROM mixt;
SELECT * FROM "mixt";
CREATE INDEX MyIdx ON MIXT (ColA);
ALTER TABLE MixT ADD COLUMN NewCol int;
CREATE SEQUENCE MySeq;
CREATE VIEW MyView AS SELECT Id, ColA AS Renamed FROM MixT;
SELECT * FROM myview;
SELECT relname FROM pg_class WHERE relname IN ('mixt', 'mixt_pkey', 'myidx', 'myseq', 'myview', 'MixT') ORDER BY 1;
SELECT attname FROM pg_attribute WHERE attrelid = 'mixt'::regclass AND attnum > 0 ORDER BY attnum;
\d mixt
CREATE TABLE "Quoted" ("Big" int PRIMARY KEY, Small int);
SELECT * FROM "Quoted";
SELECT relname FROM pg_class WHERE relname LIKE 'Quoted%' ORDER BY 1;
`

// Unquoted names are folded to lower case by the embedded engine as by
// PostgreSQL: SQLite would keep them as written and show them so (SELECT
// * headers, the catalogs, psql's \d not finding the table).
func TestNamesFoldedAsPostgreSQL(t *testing.T) {
	c := testcluster.Start(t, 1)
	pg := referencePostgres(t)
	got := psqlScript(t, c.Nodes[0].PGAddr, foldNamesScript)
	if want := psqlScript(t, fmt.Sprintf("127.0.0.1:%d", pg.Port), foldNamesScript); got != want {
		t.Fatalf("through certa:\n%s\nPostgreSQL:\n%s", got, want)
	}
}
