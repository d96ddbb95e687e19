package sqlite

import (
	"sort"
	"strings"

	"certa/pgparse"
	"certa/sqlerr"
)

// translateCreateTable rewrites a PostgreSQL CREATE TABLE so that SQLite
// means by it what PostgreSQL does where replication depends on it:
//
//   - every primary-key column gets NOT NULL, which PostgreSQL implies and
//     SQLite does not (keys.go: a row whose key holds NULL is never
//     replicated);
//   - a key column declared "integer" is declared INT: SQLite makes an
//     INTEGER PRIMARY KEY the rowid, which takes a NULL or omitted key as a
//     request for the next free value (two nodes would hand out the same),
//     where PostgreSQL refuses it with 23502;
//   - columns whose values PostgreSQL generates (SERIAL, BIGSERIAL,
//     SMALLSERIAL, GENERATED ... AS IDENTITY) are refused with 0A000 until
//     certa generates values that no two nodes hand out twice: in SQLite they
//     would be NULL.
//
// Statements PostgreSQL's parser does not read as a CREATE TABLE with
// columns are returned unchanged; keys.go checks the table they make. The
// rewrite is idempotent, so a translated statement may be translated again.
func translateCreateTable(sql string) (string, error) {
	ct := pgparse.ParseCreateTable(sql)
	if ct == nil {
		return sql, nil
	}
	type edit struct {
		at, end int // replace sql[at:end]
		text    string
	}
	var edits []edit
	for _, col := range ct.Columns {
		switch {
		case generatedTypes[col.Type]:
			return "", sqlerr.New(sqlerr.FeatureNotSupported,
				"column %q of table %q: %s is not supported yet: certa does not generate cluster-wide unique values; declare the column integer or bigint and give its values explicitly",
				col.Name, ct.Table, col.Type)
		case col.Identity != nil:
			return "", sqlerr.New(sqlerr.FeatureNotSupported,
				"column %q of table %q: identity columns are not supported yet: certa does not generate cluster-wide unique values; give the column's values explicitly",
				col.Name, ct.Table)
		}
		if !col.PrimaryKey {
			continue
		}
		if w := col.TypeWord; strings.EqualFold(sql[w.Start:w.End], "integer") {
			edits = append(edits, edit{w.Start, w.End, "INT"})
		}
		if !col.NotNull {
			edits = append(edits, edit{col.End, col.End, " NOT NULL"})
		}
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	for _, e := range edits {
		sql = sql[:e.at] + e.text + sql[e.end:]
	}
	return sql, nil
}

// generatedTypes are PostgreSQL's type names that give a column a sequence.
var generatedTypes = map[string]bool{
	"serial": true, "serial4": true, "bigserial": true, "serial8": true,
	"smallserial": true, "serial2": true,
}
