package sqlite

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
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

// errConnRenewed is what beginTx and checkDDL do on a connection they
// closed for a lingering touch trigger (conn.lingering): nothing ran yet,
// so they try again on another.
var errConnRenewed = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "certa: the connection was renewed (a trigger of a table dropped elsewhere lingered on it); try again"}

// maxRenewals bounds the connections one Begin or CheckDDL renews: far
// more than a pool holds, a safety net.
const maxRenewals = 1000

// touchTrigger is a table's touch trigger on one connection.
type touchTrigger struct {
	name     string // "" for a table without keys: no trigger
	tableSQL string // the table's definition it was made for
}

// syncTouchTriggers makes c's touch triggers those of the current schema:
// one per table whose rows have keys (rowid.go). It returns the schema
// version they were made for. c must be outside a transaction; the work
// is done once per schema version, and only for the tables whose
// definition changed since (c.touch), so that a schema statement costs
// each connection the same in a large schema as in a small one. (A
// trigger outlives its table's DROP and re-creation by another
// connection: SQLite attaches it to the table of that name again.)
func (c *conn) syncTouchTriggers() (version int64, err error) {
	version, _, err = c.queryInt("PRAGMA schema_version")
	if err != nil || version == c.touchVersion {
		return version, err
	}
	if err := c.refreshSchema(); err != nil {
		return 0, err
	}
	tables := map[string]string{}
	if err := c.execResult("SELECT name, sql FROM sqlite_schema WHERE type = 'table'",
		func(s *sqlite.Stmt) { tables[s.ColumnText(0)] = s.ColumnText(1) }); err != nil {
		return 0, err
	}
	touch := make(map[string]touchTrigger, len(tables))
	kept := map[string]bool{}
	for t, had := range c.touch {
		if sql, ok := tables[t]; ok && sql == had.tableSQL {
			touch[t] = had
			kept[had.name] = true
		}
	}
	// Every other trigger goes, also one whose table another connection
	// dropped: listed but gone until a table of its name is made again,
	// when it would come back to life (IF EXISTS: gone now).
	var old []string
	if err := c.execResult("SELECT name FROM sqlite_temp_schema WHERE type = 'trigger' AND name LIKE 'certa_touch_%'",
		func(s *sqlite.Stmt) { old = append(old, s.ColumnText(0)) }); err != nil {
		return 0, err
	}
	var script strings.Builder
	for _, name := range old {
		if !kept[name] {
			script.WriteString("DROP TRIGGER IF EXISTS temp." + quoteIdent(name) + ";")
		}
	}
	for t, sql := range tables {
		if _, ok := touch[t]; ok || isInternalTable(t) || isSQLiteTable(t) {
			continue
		}
		ti, err := c.table(t)
		if err != nil {
			return 0, err
		}
		keyCols := ti.keyColumns()
		if len(keyCols) == 0 {
			touch[t] = touchTrigger{tableSQL: sql}
			continue
		}
		keys := make([]string, len(keyCols))
		for i, col := range keyCols {
			keys[i] = "OLD." + quoteIdent(col)
		}
		name := fmt.Sprintf("certa_touch_%d_%s", version, ti.name)
		fmt.Fprintf(&script, "CREATE TEMP TRIGGER %s AFTER UPDATE ON main.%s BEGIN SELECT %s(%s, %s); END;",
			quoteIdent(name), quoteIdent(ti.name), touchFunction, quoteLiteral(ti.name), strings.Join(keys, ", "))
		touch[t] = touchTrigger{name: name, tableSQL: sql}
	}
	restore := c.internal()
	defer restore()
	if err := execScript(c.c, script.String()); err != nil { // one transaction
		return 0, fmt.Errorf("make touch triggers: %w", err)
	}
	c.touch, c.touchVersion = touch, version
	// A trigger whose table another connection dropped or renamed cannot
	// always be dropped (SQLite lists it, but finds no trigger of its
	// name), and SQLite's next rename of any table or column fails on it:
	// such a connection lingers, and is closed before its next use
	// (beginTx, checkDDL).
	current := map[string]bool{}
	for _, tt := range touch {
		current[tt.name] = true
	}
	c.lingering = false
	if err := c.execResult("SELECT name FROM sqlite_temp_schema WHERE type = 'trigger' AND name LIKE 'certa_touch_%'",
		func(s *sqlite.Stmt) { c.lingering = c.lingering || !current[s.ColumnText(0)] }); err != nil {
		return 0, err
	}
	return version, nil
}

// quoteLiteral quotes s as an SQL string literal.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
