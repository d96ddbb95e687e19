package sqlite

import (
	"fmt"
	"slices"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
	"certa/writeset"
)

// Foreign keys. Local connections run with foreign_keys=ON: SQLite checks
// every foreign key and runs the ON DELETE/ON UPDATE actions in the origin's
// local transaction, and the session records the rows the actions change,
// so the write set carries them. The applier's connection runs with
// foreign_keys=OFF and applies those rows exactly: an action never runs a
// second time (conn.go).
//
// Two things SQLite cannot do for us:
//
//   - Concurrent transactions on different nodes. A transaction that inserts
//     a child of parent P and one that deletes P touch different rows, so
//     both would pass certification and leave an orphan. So a write set that
//     inserts a child row, or changes its foreign-key columns, also carries
//     the certification key of the parent row it references (found by
//     looking the parent up, so a foreign key to a UNIQUE column gets the
//     parent's primary key), as a shared key: it conflicts with a concurrent
//     delete or key change of that parent, not with another child's insert.
//     The cost is a false conflict between a child insert and an update of
//     the parent's other columns (which writes the parent's key).
//   - DEFERRABLE INITIALLY DEFERRED keys are checked by SQLite at COMMIT,
//     which a local transaction never reaches (its changes are captured and
//     rolled back). WriteSet checks the rows it changed instead: the parent
//     lookup above checks the child side; deleted or re-keyed parents of a
//     deferrable key are checked for remaining children.
//
// Re-applying a transaction's changes on its own connection (a parked
// transaction's spill, park.go; row images, rowimage.go) would run the
// actions again, and PRAGMA foreign_keys cannot change inside a
// transaction. An action run again changes only rows whose own recorded
// changes then no longer match (every row the first run's action changed is
// among them, with its old values), so re-applying fails (40001) rather
// than diverging; but it would fail every time. So a transaction that wrote
// a table referenced by a foreign key with an action is re-run when it
// parks (Tx.fkActions), as long as its statement log allows; and tables
// with foreign keys on either side are never key writes (keywrite.go) nor
// written in image mode (SQLite counts only the named row in changes(), not
// the rows an action changed, and the images would miss them). Re-applying
// other changes runs only checks, on a state where the tables the
// transaction read (parents and children included) are unchanged; one that
// fails there fails the transaction (40001), never silently.

// foreignKey is one foreign key of table child referencing table parent.
type foreignKey struct {
	child, parent string
	from          []string // child columns
	to            []string // parent columns; nil: the parent's primary key
	// deferrable: the child table declares a deferred foreign key; this one
	// may be checked only at COMMIT.
	deferrable bool
	// action: deleting or updating a parent row changes children (CASCADE,
	// SET NULL, SET DEFAULT).
	action bool
}

// hasForeignKeys reports whether ti has foreign keys or is referenced by one.
func (ti *tableInfo) hasForeignKeys() bool { return len(ti.fks) > 0 || len(ti.refs) > 0 }

// hasActions reports whether changing a row of ti may make SQLite change
// rows of a child table.
func (ti *tableInfo) hasActions() bool {
	for _, fk := range ti.refs {
		if fk.action {
			return true
		}
	}
	return false
}

// loadForeignKeys reads ti's foreign keys and those that reference it.
func (c *conn) loadForeignKeys(ti *tableInfo) error {
	var err error
	ti.fks, err = c.readForeignKeys(`SELECT ?1, f.id, f."table", f."from", f."to", f.on_update, f.on_delete,
			(SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?1 COLLATE NOCASE)
		FROM pragma_foreign_key_list(?1, 'main') f ORDER BY f.id, f.seq`, ti.name)
	if err != nil {
		return err
	}
	if c.refs == nil {
		// Every table's foreign keys at once, once per schema version:
		// read table by table, each would scan them all.
		all, err := c.readForeignKeys(`SELECT m.name, f.id, f."table", f."from", f."to", f.on_update, f.on_delete, m.sql
			FROM sqlite_schema m JOIN pragma_foreign_key_list(m.name, 'main') f
			WHERE m.type = 'table' ORDER BY m.name, f.id, f.seq`)
		if err != nil {
			return err
		}
		c.refs = map[string][]foreignKey{}
		for _, fk := range all {
			p := strings.ToLower(fk.parent)
			c.refs[p] = append(c.refs[p], fk)
		}
	}
	ti.refs = c.refs[strings.ToLower(ti.name)]
	return nil
}

// readForeignKeys runs query with args (rows of child, id, parent, from,
// to, on_update, on_delete and the child's declaration, one per column)
// and groups its rows into foreign keys.
func (c *conn) readForeignKeys(query string, args ...any) ([]foreignKey, error) {
	var fks []foreignKey
	lastChild, lastID := "", int64(-1)
	err := c.execResult(query, func(s *sqlite.Stmt) {
		child, id := s.ColumnText(0), s.ColumnInt64(1)
		if child != lastChild || id != lastID {
			// SQLite's pragmas do not say which keys are deferred; reading
			// the declaration errs on the side of checking (a key that is
			// not deferred passes the check trivially).
			decl := strings.Join(strings.Fields(strings.ToLower(s.ColumnText(7))), " ")
			fks = append(fks, foreignKey{child: child, parent: s.ColumnText(2),
				action:     isAction(s.ColumnText(5)) || isAction(s.ColumnText(6)),
				deferrable: strings.Contains(decl, "initially deferred")})
			lastChild, lastID = child, id
		}
		fk := &fks[len(fks)-1]
		fk.from = append(fk.from, s.ColumnText(3))
		if s.ColumnType(4) != sqlite.TypeNull {
			fk.to = append(fk.to, s.ColumnText(4))
		}
	}, args...)
	if err != nil {
		return nil, err
	}
	for i := range fks {
		fk := &fks[i]
		if len(fk.to) != len(fk.from) {
			fk.to = nil // references the parent's primary key
		}
	}
	return fks, nil
}

func isAction(a string) bool {
	switch strings.ToUpper(a) {
	case "NO ACTION", "RESTRICT", "":
		return false
	}
	return true
}

// parentColumns returns the parent columns fk references.
func (c *conn) parentColumns(fk *foreignKey) (*tableInfo, []string, error) {
	pti, err := c.table(fk.parent)
	if err != nil {
		return nil, nil, err
	}
	if fk.to != nil {
		return pti, fk.to, nil
	}
	return pti, pti.pk, nil
}

// foreignKeyRows adds to ws the certification keys of the parent rows that
// the child rows it inserts or re-points reference, and checks the
// deferrable foreign keys of the rows it changes. tx.mu is held, and the
// Tx's SQLite transaction holds the changes of ws.
func (tx *Tx) foreignKeyRows(ws *writeset.WriteSet) error {
	c := tx.conn
	if err := c.refreshSchema(); err != nil {
		return err
	}
	return forEachRowChange(ws, func(ch *rowChange) error {
		ti, err := c.table(ch.table)
		if err != nil || !ti.exists || !ti.hasForeignKeys() {
			return err
		}
		var pk []rowValue
		for i, isPK := range ch.pk {
			if !isPK {
				continue
			}
			if ch.op == opInsert {
				pk = append(pk, ch.new[i])
			} else {
				pk = append(pk, ch.old[i])
			}
		}
		if ch.op != opDelete {
			for i := range ti.fks {
				if err := tx.parentKey(ws, ti, &ti.fks[i], ch, pk); err != nil {
					return err
				}
			}
		}
		if ch.op != opInsert {
			for i := range ti.refs {
				if err := tx.checkNoChildren(ti, &ti.refs[i], ch, pk); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// parentKey adds the key of the parent row that the child row ch (with
// primary key pk) references through fk, if ch set its foreign-key columns
// and none is NULL; no such parent is a foreign-key violation (a deferred
// key: immediate ones were checked by SQLite).
func (tx *Tx) parentKey(ws *writeset.WriteSet, ti *tableInfo, fk *foreignKey, ch *rowChange, pk []rowValue) error {
	c := tx.conn
	from := changeIndexes(ti, fk.from)
	if from == nil {
		return nil
	}
	if ch.op == opUpdate && !anyDefined(ch.new, from) {
		return nil // the update left the foreign key as it was
	}
	vals, found, err := c.queryRow(selectSQL(ti.name, fk.from, ti.keyColumns()), pk)
	if err != nil || !found {
		return err
	}
	for _, v := range vals {
		if v.kind == kindNull {
			return nil // MATCH SIMPLE: a NULL column means no reference
		}
	}
	pti, to, err := c.parentColumns(fk)
	if err != nil || !pti.exists || len(pti.keyColumns()) == 0 {
		return err
	}
	pvals, found, err := c.queryRow(selectSQL(pti.name, pti.keyColumns(), to), vals)
	if err != nil {
		return err
	}
	if !found {
		return errFKChild(ti.name, fk, vals, pti.name)
	}
	key := make([]any, len(pvals))
	for i, v := range pvals {
		if key[i], err = keyValue(v); err != nil {
			return err
		}
	}
	// Shared: the child relies on the parent row and does not write it.
	ws.SharedKeys = append(ws.SharedKeys, writeset.EncodeKey(pti.name, key...))
	ws.Tables = append(ws.Tables, pti.name)
	return nil
}

// checkNoChildren checks, for a deferrable foreign key fk referencing ti,
// that no child row still references the old values of the parent row ch
// deletes or whose referenced columns it changes.
func (tx *Tx) checkNoChildren(ti *tableInfo, fk *foreignKey, ch *rowChange, pk []rowValue) error {
	if !fk.deferrable {
		return nil // SQLite checked it at the statement
	}
	c := tx.conn
	_, to, err := c.parentColumns(fk)
	if err != nil {
		return err
	}
	toIdx := changeIndexes(ti, to)
	if toIdx == nil || ch.op == opUpdate && !anyDefined(ch.new, toIdx) {
		return nil
	}
	old := make([]rowValue, len(toIdx))
	var cur []rowValue
	for k, i := range toIdx {
		if ch.old[i].kind != kindUndefined {
			old[k] = ch.old[i]
			continue
		}
		// An update records old values of changed columns only: the
		// others are as the row has them now.
		if cur == nil {
			var found bool
			if cur, found, err = c.queryRow(selectSQL(ti.name, to, ti.keyColumns()), pk); err != nil || !found {
				return err
			}
		}
		old[k] = cur[k]
	}
	for _, v := range old {
		if v.kind == kindNull {
			return nil
		}
	}
	_, found, err := c.queryRow(selectSQL(fk.child, fk.from, fk.from), old)
	if err != nil || !found {
		return err
	}
	return errFKParent(ti.name, fk, to, old)
}

// selectSQL is SELECT cols FROM table WHERE where1 = ?1 AND ... LIMIT 1.
func selectSQL(table string, cols, where []string) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, col := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(col))
	}
	b.WriteString(" FROM " + quoteIdent(table) + " WHERE ")
	for i, col := range where {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString(quoteIdent(col) + " = ?")
	}
	b.WriteString(" LIMIT 1")
	return b.String()
}

// queryRow runs one of our own queries with args and returns its first row.
func (c *conn) queryRow(query string, args []rowValue) (vals []rowValue, found bool, err error) {
	defer c.internal()()
	stmt, err := c.c.Prepare(query)
	if err != nil {
		return nil, false, err
	}
	defer stmt.Reset()
	for i, v := range args {
		bindValue(stmt, i+1, v)
	}
	hasRow, err := stmt.Step()
	if err != nil || !hasRow {
		return nil, false, err
	}
	vals = make([]rowValue, stmt.ColumnCount())
	for i := range vals {
		vals[i] = storedValue(stmt, i)
	}
	return vals, true, nil
}

// changeIndexes returns the indexes of cols in ti's change records (nil if
// one is missing): a rowid table's start with the rowid (rowid.go).
func changeIndexes(ti *tableInfo, cols []string) []int {
	first := 0
	if ti.rowid != "" {
		first = 1
	}
	idx := make([]int, len(cols))
	for k, col := range cols {
		idx[k] = -1
		for i, name := range ti.columns {
			if strings.EqualFold(name, col) {
				idx[k] = first + i
				break
			}
		}
		if idx[k] < 0 {
			return nil
		}
	}
	return idx
}

func anyDefined(vals []rowValue, idx []int) bool {
	for _, i := range idx {
		if vals[i].kind != kindUndefined {
			return true
		}
	}
	return false
}

// errFKChild is PostgreSQL's error for a child row whose parent is missing.
func errFKChild(child string, fk *foreignKey, vals []rowValue, parent string) *sqlerr.Error {
	err := sqlerr.New(sqlerr.ForeignKeyViolation, "insert or update on table %q violates foreign key constraint %q", child, fkName(fk))
	err.Detail = "Key (" + strings.Join(fk.from, ", ") + ")=(" + formatValues(vals) + ") is not present in table \"" + parent + "\"."
	return err
}

// errFKParent is PostgreSQL's error for a parent row still referenced.
func errFKParent(parent string, fk *foreignKey, to []string, vals []rowValue) *sqlerr.Error {
	err := sqlerr.New(sqlerr.ForeignKeyViolation, "update or delete on table %q violates foreign key constraint %q on table %q", parent, fkName(fk), fk.child)
	err.Detail = "Key (" + strings.Join(to, ", ") + ")=(" + formatValues(vals) + ") is still referenced from table \"" + fk.child + "\"."
	return err
}

// fkName is the name PostgreSQL gives a foreign key by default (SQLite
// keeps no names).
func fkName(fk *foreignKey) string {
	return fk.child + "_" + strings.Join(fk.from, "_") + "_fkey"
}

func formatValues(vals []rowValue) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		switch v.kind {
		case kindText:
			s[i] = string(v.bytes)
		case kindNull:
			s[i] = "null"
		default:
			k, _ := keyValue(v)
			s[i] = fmt.Sprint(k)
		}
	}
	return strings.Join(s, ", ")
}

// errFKStatement says SQLite's "FOREIGN KEY constraint failed" in
// PostgreSQL's words, as far as SQLite tells which key failed: it does not,
// so the message names the statement's table and the side it must be on.
func errFKStatement(err error, rec *record, c *conn) *sqlerr.Error {
	table := ""
	if len(rec.writes) > 0 {
		table = rec.writes[0]
	}
	msg := "insert or update on table %q violates a foreign key constraint"
	if rec.firstOp == sqlite.OpDelete {
		msg = "update or delete on table %q violates a foreign key constraint"
	} else if rec.firstOp == sqlite.OpUpdate && c != nil {
		if ti, terr := c.table(table); terr == nil && len(ti.fks) == 0 && len(ti.refs) > 0 {
			msg = "update or delete on table %q violates a foreign key constraint"
		}
	}
	return sqlerr.Wrap(err, sqlerr.ForeignKeyViolation, msg, table)
}

// checkDropReferenced refuses DROP TABLE of tables that another table's
// foreign key references, one not dropped with them, as PostgreSQL does
// without CASCADE (2BP01); with CASCADE PostgreSQL drops the foreign key,
// which is refused here (0A000). SQLite would drop the table (the applier
// runs without foreign keys) and leave the children referencing a table
// that is gone.
func (c *conn) checkDropReferenced(tables []string, cascade bool) error {
	if err := c.refreshSchema(); err != nil {
		return err
	}
	for _, t := range tables {
		ti, err := c.table(t)
		if err != nil {
			return err
		}
		for _, fk := range ti.refs {
			if slices.ContainsFunc(tables, func(d string) bool { return strings.EqualFold(d, fk.child) }) {
				continue // dropped by the same statement
			}
			if cascade {
				err := sqlerr.New(sqlerr.FeatureNotSupported,
					"DROP TABLE ... CASCADE of a table that other tables reference is not supported by the embedded engine (SQLite)")
				err.Detail = fmt.Sprintf("constraint %s on table %s depends on table %s", fkName(&fk), fk.child, ti.name)
				err.Hint = "Drop the foreign keys that reference it (ALTER TABLE ... DROP CONSTRAINT) first. The PostgreSQL engine (--engine postgres) supports CASCADE."
				return err
			}
			err := sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop table %s because other objects depend on it", ti.name)
			err.Detail = fmt.Sprintf("constraint %s on table %s depends on table %s", fkName(&fk), fk.child, ti.name)
			err.Hint = "Drop the tables that reference it (or their foreign keys) first."
			return err
		}
	}
	return nil
}

// matchFullChecks returns, per column, the named CHECK constraints (name,
// condition) that enforce
// what SQLite ignores in the foreign keys of the CREATE TABLE sql: MATCH
// FULL, under which a key of several columns is either all NULL or has no
// NULL (SQLite treats every key as MATCH SIMPLE, which lets a partly NULL
// key through unchecked). Each constraint goes with the key's last column
// (SQLite lets a column's CHECK read the others), named with PostgreSQL's
// message, which mapErr turns back into 23503 (matchFullCode). MATCH
// PARTIAL, which PostgreSQL does not implement either, is refused.
func matchFullChecks(sql, table string) (map[string][][2]string, error) {
	fks, ok := pgparse.ParseForeignKeys(sql)
	if !ok {
		return nil, nil
	}
	taken := map[string]bool{}
	for _, fk := range fks {
		taken[fk.Name] = fk.Name != ""
	}
	checks := map[string][][2]string{}
	for _, fk := range fks {
		name := fk.Name
		if name == "" {
			name = foreignKeyName(table, fk.Columns, taken)
		}
		switch {
		case fk.Match == "PARTIAL":
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "MATCH PARTIAL not yet implemented")
		case fk.Match != "FULL" || len(fk.Columns) < 2:
			continue
		}
		var all, none []string
		for _, c := range fk.Columns {
			all = append(all, quoteIdent(c)+" IS NULL")
			none = append(none, quoteIdent(c)+" IS NOT NULL")
		}
		last := fk.Columns[len(fk.Columns)-1]
		constraint := fmt.Sprintf("insert or update on table %q violates foreign key constraint %q", table, name)
		checks[last] = append(checks[last], [2]string{constraint,
			fmt.Sprintf("(%s) OR (%s)", strings.Join(all, " AND "), strings.Join(none, " AND "))})
	}
	return checks, nil
}

// matchFullDetail is PostgreSQL's detail for a MATCH FULL key that is
// partly NULL.
const matchFullDetail = "MATCH FULL does not allow mixing of null and nonnull key values."

// isMatchFullCheck reports whether a CHECK constraint's name is one that
// matchFullChecks made.
func isMatchFullCheck(name string) bool {
	return strings.HasPrefix(name, "insert or update on table ") && strings.Contains(name, " violates foreign key constraint ")
}
