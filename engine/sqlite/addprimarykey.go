package sqlite

import (
	"fmt"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// ALTER TABLE ... ADD PRIMARY KEY, as migration tools (Flyway) add one to a
// table they have just made. SQLite cannot add a primary key to a table,
// so the table is made again: a copy with the new definition takes its
// rows, the table is dropped, the copy renamed and the table's indexes
// made again. Every node runs this in the same order on the same rows
// (a table without a primary key has the same rows under the same rowids
// everywhere: rowid.go), so the copy is the same on every node.

// addPrimaryKey rebuilds table (as the schema spells it; def its
// definition) with primary key k.
func addPrimaryKey(c *conn, table, def string, ct *pgparse.CreateTable, k pgparse.Constraint) error {
	ti, err := c.table(table)
	if err != nil {
		return err
	}
	if ti.hasPK {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "multiple primary keys for table %q are not allowed", table)
	}
	referenced := false
	err = c.execResult(`SELECT 1 FROM sqlite_schema s, pragma_foreign_key_list(s.name) f
		WHERE s.type = 'table' AND f."table" = ? COLLATE NOCASE LIMIT 1`, func(*sqlite.Stmt) { referenced = true }, table)
	if err != nil {
		return err
	}
	if referenced {
		return errAlterRefused("ADD PRIMARY KEY to a table a foreign key references")
	}
	name := k.Name
	if name == "" {
		name = table + "_pkey"
	}
	cols := make([]string, len(k.Columns))
	for i, col := range k.Columns {
		cols[i] = quoteIdent(col)
		if !slices.ContainsFunc(ti.columns, func(c string) bool { return strings.EqualFold(c, col) }) {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", col, table)
		}
		err := noRow(c, fmt.Sprintf("SELECT 1 FROM %s WHERE %s IS NULL LIMIT 1", quoteIdent(table), quoteIdent(col)),
			sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", col, table))
		if err != nil {
			return err
		}
	}
	list := strings.Join(cols, ", ")
	err = noRow(c, fmt.Sprintf("SELECT 1 FROM %s GROUP BY %s HAVING count(*) > 1 LIMIT 1", quoteIdent(table), list),
		sqlerr.New(sqlerr.UniqueViolation, "could not create unique index %q", name))
	if err != nil {
		return err
	}
	var indexes []string
	err = c.execResult("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
		func(s *sqlite.Stmt) { indexes = append(indexes, s.ColumnText(0)) }, table)
	if err != nil {
		return err
	}
	copyName := "_certa_rebuild_" + table
	newDef := def[:ct.ListEnd] + ", CONSTRAINT " + quoteIdent(name) + " PRIMARY KEY (" + list + ")" + def[ct.ListEnd:]
	newDef = newDef[:ct.NameSpan.Start] + quoteIdent(copyName) + newDef[ct.NameSpan.End:]
	if newDef, err = translateCreateTable(newDef); err != nil {
		return err
	}
	// The copy's rows are the table's: the touch triggers (touched.go)
	// must not count them as updates.
	touched := c.touched
	c.touched = nil
	defer func() { c.touched = touched }()
	defer c.exec("PRAGMA legacy_alter_table = OFF")
	for _, sql := range append([]string{
		newDef,
		fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", quoteIdent(copyName), quoteIdent(table)),
		"DROP TABLE " + quoteIdent(table),
		// Legacy: views reading the table read the copy by the name it
		// takes; SQLite would check them while the name has no table.
		"PRAGMA legacy_alter_table = ON",
		fmt.Sprintf("ALTER TABLE %s RENAME TO %s", quoteIdent(copyName), quoteIdent(table)),
	}, indexes...) {
		if err := c.exec(sql); err != nil {
			return err
		}
	}
	return nil
}
