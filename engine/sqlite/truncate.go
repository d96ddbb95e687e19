package sqlite

import (
	"fmt"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// TRUNCATE empties tables at its position in the log, on every node alike:
// a DELETE of every row of each, run as a schema statement (so that a
// transaction that wrote them from an older snapshot fails certification,
// as after any schema change). With CASCADE the tables whose foreign keys
// reference them are emptied too; without, such a table not named is
// refused as PostgreSQL refuses it. RESTART IDENTITY of a table that owns a
// sequence is refused: the cluster's sequences hand out values in blocks
// reserved through the log, which cannot be taken back.

// truncateTables returns the tables a TRUNCATE empties, those that
// reference others first, or ok false for another statement. c's schema
// cache must be fresh.
func (c *conn) truncateTables(sql string) (tables []string, ok bool, err error) {
	t := pgparse.ParseTruncate(sql)
	if t == nil {
		return nil, false, nil
	}
	if t.Schema != "" {
		return nil, true, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", t.Schema+"."+t.Tables[0])
	}
	if t.RestartIdentity {
		owned := false
		for _, name := range t.Tables {
			if err := c.execResult("SELECT 1 FROM _certa_sequences WHERE tbl = ? COLLATE NOCASE", func(*sqlite.Stmt) { owned = true }, name); err != nil {
				return nil, true, err
			}
		}
		if owned {
			err := sqlerr.New(sqlerr.FeatureNotSupported, "TRUNCATE ... RESTART IDENTITY of a table with SERIAL or identity columns is not supported by the embedded engine (SQLite): its sequences hand out values reserved cluster-wide, which cannot be taken back")
			err.Hint = "Use TRUNCATE without RESTART IDENTITY. The PostgreSQL engine (--engine postgres) supports it."
			return nil, true, err
		}
	}
	for i := 0; i < len(t.Tables); i++ {
		ti, err := c.table(t.Tables[i])
		if err != nil {
			return nil, true, err
		}
		if !ti.exists {
			return nil, true, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", t.Tables[i])
		}
		tables = append(tables, ti.name)
		for _, fk := range ti.refs {
			if slices.ContainsFunc(t.Tables, func(n string) bool { return strings.EqualFold(n, fk.child) }) {
				continue
			}
			if !t.Cascade {
				err := sqlerr.New(sqlerr.FeatureNotSupported, "cannot truncate a table referenced in a foreign key constraint")
				err.Detail = fmt.Sprintf("Table %q references %q.", fk.child, ti.name)
				err.Hint = fmt.Sprintf("Truncate table %q at the same time, or use TRUNCATE ... CASCADE.", fk.child)
				return nil, true, err
			}
			t.Tables = append(t.Tables, fk.child)
		}
	}
	tables, err = c.referencingFirst(tables)
	return tables, true, err
}

// runTruncate empties tables (truncateTables) in the caller's transaction.
func runTruncate(c *conn, tables []string) error {
	for _, t := range tables {
		if err := c.exec("DELETE FROM " + quoteIdent(t)); err != nil {
			return err
		}
	}
	return nil
}
