package sqlite

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/writeset"
)

// Rows an UPDATE sets to the values they had.
//
// PostgreSQL counts such a row as written: a concurrent update of it fails
// with 40001, which is how applications make snapshot isolation refuse
// write skew (UPDATE t SET v = v WHERE ...). SQLite's session records no
// change for it, so its key would be missing from the write set and the
// transaction would certify as if it had only read. A Tx therefore
// records the key of every row an UPDATE touches, through a TEMP trigger
// per table on its connection (AFTER UPDATE ... FOR EACH ROW, calling
// touchFunction with the old key), made before a transaction begins on a
// schema version the connection has no triggers for. The triggers live on
// local connections only: the applier applies rows and never fires them.

// touchFunction is the SQL function the triggers call.
const touchFunction = "certa_touch"

// registerTouch adds touchFunction to c: it appends the key of the row
// given (table, key values...) to the running Tx's touched keys.
func registerTouch(c *conn) error {
	return c.c.CreateFunction(touchFunction, &sqlite.FunctionImpl{
		NArgs:         -1,
		AllowIndirect: true, // called by triggers
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if c.touched == nil || len(args) < 2 {
				return sqlite.Value{}, nil
			}
			pk := make([]any, len(args)-1)
			for i, a := range args[1:] {
				pk[i] = sqliteKeyValue(a)
			}
			*c.touched = append(*c.touched, writeset.EncodeKey(args[0].Text(), pk...))
			return sqlite.Value{}, nil
		},
	})
}

// sqliteKeyValue converts a key value as keyValue does for changesets.
func sqliteKeyValue(v sqlite.Value) any {
	switch v.Type() {
	case sqlite.TypeInteger:
		return v.Int64()
	case sqlite.TypeFloat:
		return v.Float()
	case sqlite.TypeText:
		return v.Text()
	case sqlite.TypeBlob:
		return v.Blob()
	}
	return nil
}

// syncTouchTriggers makes c's touch triggers those of the current schema:
// one per table whose rows have keys (rowid.go). It returns the schema version they
// were made for. c must be outside a transaction; the work is done once
// per schema version.
func (c *conn) syncTouchTriggers() (version int64, err error) {
	version, _, err = c.queryInt("PRAGMA schema_version")
	if err != nil || version == c.touchVersion {
		return version, err
	}
	if err := c.refreshSchema(); err != nil {
		return 0, err
	}
	var old, tables []string
	if err := c.execResult("SELECT name FROM sqlite_temp_schema WHERE type = 'trigger' AND name LIKE 'certa_touch_%'",
		func(s *sqlite.Stmt) { old = append(old, s.ColumnText(0)) }); err != nil {
		return 0, err
	}
	if err := c.execResult("SELECT name FROM sqlite_schema WHERE type = 'table'",
		func(s *sqlite.Stmt) { tables = append(tables, s.ColumnText(0)) }); err != nil {
		return 0, err
	}
	var script strings.Builder
	for _, name := range old {
		// IF EXISTS: a trigger whose table another connection dropped is
		// listed but gone.
		script.WriteString("DROP TRIGGER IF EXISTS temp." + quoteIdent(name) + ";")
	}
	for _, t := range tables {
		if isInternalTable(t) || isSQLiteTable(t) {
			continue
		}
		ti, err := c.table(t)
		if err != nil {
			return 0, err
		}
		keyCols := ti.keyColumns()
		if len(keyCols) == 0 {
			continue
		}
		keys := make([]string, len(keyCols))
		for i, col := range keyCols {
			keys[i] = "OLD." + quoteIdent(col)
		}
		fmt.Fprintf(&script, "CREATE TEMP TRIGGER %s AFTER UPDATE ON main.%s BEGIN SELECT %s(%s, %s); END;",
			quoteIdent(fmt.Sprintf("certa_touch_%d_%s", version, ti.name)), quoteIdent(ti.name), touchFunction, quoteLiteral(ti.name), strings.Join(keys, ", "))
	}
	restore := c.internal()
	defer restore()
	if err := execScript(c.c, script.String()); err != nil { // one transaction
		return 0, fmt.Errorf("make touch triggers: %w", err)
	}
	c.touchVersion = version
	return version, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
