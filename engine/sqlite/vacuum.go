package sqlite

import (
	"strings"

	"certa/result"
	"certa/sqlerr"
)

// vacuum answers VACUUM and ANALYZE (tag) of tables (none: all). Both are
// accepted and change nothing: they tune PostgreSQL's storage and its
// planner's statistics, while each node's SQLite file is kept by certa and
// answers the same without them. Tools run them as routine (pgbench -i,
// maintenance scripts). The tables named must exist, as PostgreSQL checks.
// tx.mu is held.
func (tx *Tx) vacuum(tag string, tables []string, w result.Writer) error {
	if err := tx.checkTablesExist(tables); err != nil {
		return err
	}
	return w.Complete(tag)
}

// checkTablesExist fails with 42P01 unless every table (of public,
// qualified or not) exists in the transaction's snapshot. tx.mu is held.
func (tx *Tx) checkTablesExist(tables []string) error {
	c := tx.conn
	if err := c.refreshSchema(); err != nil {
		return tx.classify(err)
	}
	for _, name := range tables {
		table := name
		if schema, rest, ok := strings.Cut(name, "."); ok {
			if schema != "public" {
				return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
			}
			table = rest
		}
		ti, err := c.table(table)
		if err != nil {
			return tx.classify(err)
		}
		if !ti.exists {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
		}
	}
	return nil
}
