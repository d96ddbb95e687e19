package sqlite

import (
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// COMMENT ON. SQLite keeps no comments: they are rows of _certa_comments,
// written by the statement at its position in the log on every node (it
// is a schema statement), read by the catalog (pg_description,
// obj_description, col_description), and dropped with their object
// (syncComments). Comments on tables, views, indexes, sequences, columns
// and the public schema; other kinds of object are refused (0A000).

// commentsTable holds the comments: kind (as pgparse.Comment says), the
// object's name, the column of a COLUMN comment ("" otherwise), the text.
const commentsTable = "_certa_comments"

// runComment runs a COMMENT ON statement in c's transaction.
func runComment(c *conn, cm pgparse.Comment) error {
	if cm.Schema != "" {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", cm.Schema)
	}
	var exists bool
	var err error
	switch cm.Kind {
	case "TABLE", "VIEW", "INDEX":
		exists, err = c.schemaObjectExists(strings.ToLower(cm.Kind), cm.Name)
	case "SEQUENCE":
		_, exists, err = sequenceOwner(c, cm.Name)
	case "COLUMN":
		if exists, err = c.schemaObjectExists("table", cm.Name); exists && err == nil {
			if err := c.refreshSchema(); err != nil {
				return err
			}
			ti, err := c.table(cm.Name)
			if err != nil {
				return err
			}
			found := false
			for _, col := range ti.columns {
				if strings.EqualFold(col, cm.Column) {
					cm.Column, found = col, true
				}
			}
			if !found {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cm.Column, cm.Name)
			}
		}
	case "SCHEMA":
		if cm.Name != "public" {
			return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", cm.Name)
		}
		exists = true
	default:
		return sqlerr.New(sqlerr.FeatureNotSupported, "COMMENT ON %s is not supported by the embedded SQLite engine", cm.Kind)
	}
	if err != nil {
		return err
	}
	if !exists {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", cm.Name)
	}
	if err := c.exec("DELETE FROM "+commentsTable+" WHERE kind = ? AND name = ? COLLATE NOCASE AND col = ?", cm.Kind, cm.Name, cm.Column); err != nil {
		return err
	}
	if cm.Text == "" {
		return nil
	}
	return c.exec("INSERT INTO "+commentsTable+" (kind, name, col, comment) VALUES (?, ?, ?, ?)", cm.Kind, cm.Name, cm.Column, cm.Text)
}

// schemaObjectExists reports whether the schema has an object of type
// typ ("table", "view", "index") named name.
func (c *conn) schemaObjectExists(typ, name string) (bool, error) {
	_, ok, err := c.queryInt("SELECT 1 FROM sqlite_schema WHERE type = ? AND name = ? COLLATE NOCASE", typ, name)
	return ok, err
}

// syncComments drops the comments of objects the last schema statement
// dropped (or renamed: SQLite keeps no identity across a rename). It runs
// in the statement's transaction, on every node alike.
func syncComments(c *conn) error {
	return c.exec(`DELETE FROM ` + commentsTable + ` WHERE
		kind IN ('TABLE', 'VIEW', 'INDEX') AND NOT EXISTS (SELECT 1 FROM sqlite_schema s WHERE s.type = lower(kind) AND s.name = ` + commentsTable + `.name COLLATE NOCASE)
		OR kind = 'SEQUENCE' AND NOT EXISTS (SELECT 1 FROM _certa_sequences q WHERE q.name = ` + commentsTable + `.name)
		OR kind = 'COLUMN' AND NOT EXISTS (SELECT 1 FROM sqlite_schema s, pragma_table_info(s.name) p
			WHERE s.type = 'table' AND s.name = ` + commentsTable + `.name COLLATE NOCASE AND p.name = ` + commentsTable + `.col COLLATE NOCASE)`)
}

// catalogComment is one comment, for the catalog.
type catalogComment struct{ kind, name, column, text string }

// readCatalogComments reads the comments for the catalog.
func readCatalogComments(c *conn) ([]catalogComment, error) {
	var out []catalogComment
	err := execResult(c.c, "SELECT kind, name, col, comment FROM "+commentsTable+" ORDER BY kind, name, col", func(s *sqlite.Stmt) {
		out = append(out, catalogComment{s.ColumnText(0), s.ColumnText(1), s.ColumnText(2), s.ColumnText(3)})
	})
	return out, err
}

// fillComments writes the comments into pg_description and db's
// descriptions (obj_description, col_description).
func fillComments(w *rowWriter, db *catalogDB, tables []*catalogTable, seqs []catalogSequence, comments []catalogComment) {
	byName := map[string]*catalogTable{}
	indexes := map[string]int64{}
	for _, t := range tables {
		byName[strings.ToLower(t.name)] = t
		for _, ix := range t.indexes {
			indexes[strings.ToLower(ix.name)] = ix.oid
		}
	}
	seqOIDs := map[string]int64{}
	for i, s := range seqs {
		seqOIDs[s.name] = sequenceOID(i)
	}
	for _, cm := range comments {
		var oid, class, sub int64 = 0, oidPgClass, 0
		switch cm.kind {
		case "TABLE", "COLUMN":
			t := byName[strings.ToLower(cm.name)]
			if t == nil {
				continue
			}
			oid = t.oid
			if cm.kind == "COLUMN" {
				if sub = int64(t.column(cm.column)); sub == 0 {
					continue
				}
			}
		case "INDEX":
			oid = indexes[strings.ToLower(cm.name)]
		case "SEQUENCE":
			oid = seqOIDs[cm.name]
		case "SCHEMA":
			oid, class = oidPublic, oidPgNamespace
		}
		if oid == 0 {
			continue
		}
		w.row("pg_description", map[string]any{"objoid": oid, "classoid": class, "objsubid": sub, "description": cm.text})
		db.descriptions[[2]int64{oid, sub}] = cm.text
	}
}
