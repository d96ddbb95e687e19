package sqlite

import (
	"sort"
	"strings"

	"certa/pgparse"
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
//     SMALLSERIAL, GENERATED ... AS IDENTITY) become integer columns with
//     NOT NULL DEFAULT (nextval('table_column_seq')), whose values no two
//     nodes hand out twice (sequence.go). GENERATED ALWAYS accepts a value
//     given explicitly, as BY DEFAULT does (PostgreSQL refuses it).
//
// Statements PostgreSQL's parser does not read as a CREATE TABLE with
// columns are returned unchanged; keys.go checks the table they make. The
// rewrite is idempotent, so a translated statement may be translated again.
func translateCreateTable(sql string) string {
	ct := pgparse.ParseCreateTable(sql)
	if ct == nil {
		return sql
	}
	type edit struct {
		at, end int // replace sql[at:end]
		text    string
	}
	var edits []edit
	for _, col := range ct.Columns {
		notNull := col.PrimaryKey
		seq := ""
		if typ, ok := generatedTypes[col.Type]; ok {
			seq = sequenceFor(ct.Table, col.Name)
			edits = append(edits, edit{col.TypeWord.Start, col.TypeWord.End, typ})
			edits = append(edits, edit{col.End, col.End, " DEFAULT (nextval(" + seq + "))"})
			notNull = true
		}
		if col.Identity != nil {
			seq = sequenceFor(ct.Table, col.Name)
			edits = append(edits, edit{col.Identity.Start, col.Identity.End, "DEFAULT (nextval(" + seq + "))"})
			notNull = true
		}
		if w := col.TypeWord; col.PrimaryKey && seq == "" && strings.EqualFold(sql[w.Start:w.End], "integer") {
			edits = append(edits, edit{w.Start, w.End, "INT"})
		}
		if notNull && !col.NotNull {
			edits = append(edits, edit{col.End, col.End, " NOT NULL"})
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	for _, e := range edits {
		sql = sql[:e.at] + e.text + sql[e.end:]
	}
	return sql
}

// generatedTypes maps PostgreSQL's type names that give a column a
// sequence to the integer type it has. INT, not INTEGER: an INTEGER PRIMARY
// KEY would be SQLite's rowid, which fills in a NULL itself.
var generatedTypes = map[string]string{
	"serial": "INT", "serial4": "INT", "bigserial": "BIGINT", "serial8": "BIGINT",
	"smallserial": "SMALLINT", "serial2": "SMALLINT",
}

// sequenceFor is the quoted name of the sequence of a generated column, as
// PostgreSQL names it.
func sequenceFor(table, column string) string {
	return "'" + strings.ReplaceAll(table+"_"+column+"_seq", "'", "''") + "'"
}
