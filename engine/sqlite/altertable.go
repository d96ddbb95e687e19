package sqlite

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// PostgreSQL's ALTER TABLE forms that SQLite's ALTER TABLE lacks: ALTER
// COLUMN TYPE, SET/DROP DEFAULT, SET/DROP NOT NULL, ADD and DROP
// CONSTRAINT. SQLite's answer is to rebuild the table, which needs foreign
// keys off, and that cannot change inside a transaction; but changes of
// constraints, defaults and declared types leave the stored rows as they
// are, and SQLite documents editing the table's definition in sqlite_schema
// for them (its ALTER TABLE page, "making other kinds of table schema
// changes"). So the definition is edited as text, at the spans PostgreSQL's
// parser finds; the new text is first made into a scratch table, so that
// SQLite is known to read it, and the rows are checked against what the
// statement added, as PostgreSQL checks them. A UNIQUE constraint is a
// unique index of the same name. The statement runs like this on every
// node, at its position in the log.

// isEditAlter reports whether at has a command that alterTable carries out
// by editing the table's definition, or by SQLite's ALTER TABLE with more
// done around it (DROP COLUMN).
func isEditAlter(at *pgparse.AlterTable) bool {
	for _, cmd := range at.Cmds {
		if cmd.Kind != pgparse.AlterOther {
			return true
		}
	}
	return false
}

// editsDefinition reports whether at has a command that edits the table's
// definition (not only DROP COLUMN, which SQLite runs).
func editsDefinition(at *pgparse.AlterTable) bool {
	for _, cmd := range at.Cmds {
		if cmd.Kind != pgparse.AlterOther && cmd.Kind != pgparse.AlterDropColumn {
			return true
		}
	}
	return false
}

// alterTable runs an ALTER TABLE with commands isEditAlter names: each in
// turn, the others by SQLite's ALTER TABLE. It runs in the caller's
// transaction.
func alterTable(c *conn, sql string, at *pgparse.AlterTable) error {
	if err := c.refreshSchema(); err != nil {
		return err
	}
	ti, err := c.table(at.Table)
	if err != nil {
		return err
	}
	if !ti.exists {
		if at.IfExists {
			return nil
		}
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", at.Table)
	}
	for _, cmd := range at.Cmds {
		switch cmd.Kind {
		case pgparse.AlterOther:
			add := "ALTER TABLE " + quoteIdent(ti.name) + " " + sql[cmd.Span.Start:cmd.Span.End]
			if err = refusedAddColumn(add); err == nil {
				err = c.exec(translateAddColumn(add))
			}
		case pgparse.AlterDropColumn:
			err = dropColumn(c, ti.name, cmd)
		default:
			err = alterCommand(c, ti.name, cmd)
		}
		if err != nil {
			return err
		}
		if err := c.refreshSchema(); err != nil {
			return err
		}
	}
	return nil
}

// dropColumn drops a column and, as PostgreSQL does, the indexes that
// use it (SQLite refuses to drop an indexed column).
func dropColumn(c *conn, table string, cmd pgparse.AlterCmd) error {
	var indexes []string
	found := false
	err := c.execResult(`SELECT DISTINCT il.name, il.origin FROM pragma_index_list(?) il, pragma_index_info(il.name) ii WHERE ii.name = ?`,
		func(s *sqlite.Stmt) {
			found = true
			if s.ColumnText(1) == "c" { // made by CREATE INDEX, not by a constraint of the table
				indexes = append(indexes, s.ColumnText(0))
			}
		}, table, cmd.Column)
	if err != nil {
		return err
	}
	if !found {
		exists := false
		if err := c.execResult("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", func(*sqlite.Stmt) { exists = true }, table, cmd.Column); err != nil {
			return err
		}
		if !exists {
			if cmd.MissingOK {
				return nil
			}
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Column, table)
		}
	}
	for _, ix := range indexes {
		if err := c.exec("DROP INDEX " + quoteIdent(ix)); err != nil {
			return err
		}
	}
	return c.exec(fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", quoteIdent(table), quoteIdent(cmd.Column)))
}

// alterCommand carries out one command on table (named as the schema
// spells it).
func alterCommand(c *conn, table string, cmd pgparse.AlterCmd) error {
	def, err := c.tableSQL(table)
	if err != nil {
		return err
	}
	ct := pgparse.ParseCreateTable(def)
	if ct == nil {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER TABLE cannot change table %q: its definition is not one the embedded engine can edit", table)
	}
	var col *pgparse.Column
	if cmd.Column != "" {
		for i := range ct.Columns {
			if ct.Columns[i].Name == cmd.Column {
				col = &ct.Columns[i]
			}
		}
		if col == nil {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", cmd.Column, table)
		}
	}
	var e defEdits
	// What the rows must satisfy: checked before the definition is
	// written (SQLite takes "x IS NULL" of a NOT NULL column for false),
	// or after, when the check needs it.
	var before, check func() error
	switch cmd.Kind {
	case pgparse.AlterType:
		if check, err = alterType(c, table, def, col, cmd, &e); err != nil {
			return err
		}
	case pgparse.AlterSetDefault, pgparse.AlterDropDefault:
		for _, k := range col.Constraints {
			if k.Kind == pgparse.ConstraintDefault {
				if d := def[k.Start:k.End]; strings.Contains(d, "'"+identityAlways+"'") || strings.Contains(d, "'"+identityByDefault+"'") {
					return sqlerr.New(sqlerr.SyntaxError, "column %q of relation %q is an identity column", col.Name, table)
				}
				e.remove(def, k.Span)
			}
		}
		if cmd.Kind == pgparse.AlterSetDefault {
			kind, mods, err := pgparse.CastKind(col.Type)
			if err != nil {
				kind = ""
			}
			d, ok, err := defaultString(cmd.Default, kind, mods)
			if err != nil {
				return err
			}
			if !ok {
				if d, err = pgparse.DefaultToSQLite(cmd.Default, kind); err != nil {
					return err
				}
			}
			e.insert(col.End, " DEFAULT ("+d+")")
		}
		// A row older than the column (ADD COLUMN) holds no value of it:
		// SQLite reads the default the definition has at the time. So
		// every row's value is written before the default changes.
		before = func() error {
			q := quoteIdent(col.Name)
			return c.exec(fmt.Sprintf("UPDATE %s SET %s = %s", quoteIdent(table), q, q))
		}
	case pgparse.AlterAddIdentity:
		if err := addIdentity(c, table, def, col, cmd, &e); err != nil {
			return err
		}
	case pgparse.AlterSetNotNull:
		if !col.NotNull {
			e.insert(col.End, " NOT NULL")
		}
		before = func() error {
			return noRow(c, fmt.Sprintf("SELECT 1 FROM %s WHERE %s IS NULL LIMIT 1", quoteIdent(table), quoteIdent(col.Name)),
				sqlerr.New(sqlerr.NotNullViolation, "column %q of relation %q contains null values", col.Name, table))
		}
	case pgparse.AlterDropNotNull:
		if col.PrimaryKey {
			return sqlerr.New(sqlerr.InvalidTableDefinition, "column %q is in a primary key", col.Name)
		}
		for _, k := range col.Constraints {
			if k.Kind == pgparse.ConstraintNotNull {
				e.remove(def, k.Span)
			}
		}
	case pgparse.AlterAddConstraint:
		if before, check, err = addConstraint(c, table, def, ct, cmd, &e); err != nil || e.empty() {
			return err
		}
	case pgparse.AlterDropConstraint:
		if done, err := dropConstraint(c, table, def, ct, cmd, &e); done || err != nil {
			return err
		}
	}
	if before != nil {
		if err := before(); err != nil {
			return err
		}
	}
	if err := c.writeTableSQL(table, e.apply(def), ct.NameSpan); err != nil {
		return err
	}
	if check != nil {
		return check()
	}
	return nil
}

// addIdentity makes a column an identity column (ALTER COLUMN ... ADD
// GENERATED ... AS IDENTITY, as pg_dump writes each identity column): its
// default becomes the identity's, as CREATE TABLE makes it, and its
// sequence is made (syncSequences). As in PostgreSQL, the column must be
// NOT NULL and have no default.
func addIdentity(c *conn, table, def string, col *pgparse.Column, cmd pgparse.AlterCmd, e *defEdits) error {
	if !col.NotNull && !col.PrimaryKey {
		return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column %q of relation %q must be declared NOT NULL before identity can be added", col.Name, table)
	}
	for _, k := range col.Constraints {
		if k.Kind == pgparse.ConstraintDefault {
			if d := def[k.Start:k.End]; strings.Contains(d, "'"+identityAlways+"'") || strings.Contains(d, "'"+identityByDefault+"'") {
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column %q of relation %q is already an identity column", col.Name, table)
			}
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "column %q of relation %q already has a default value", col.Name, table)
		}
	}
	seq := table + "_" + col.Name + "_seq"
	if cmd.SeqName != "" && cmd.SeqName != seq {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"identity option SEQUENCE NAME %q is not supported: the embedded engine names the sequence of %s.%s %q", cmd.SeqName, table, col.Name, seq)
	}
	if _, ok, err := sequenceOwner(c, seq); err != nil || ok || tableExists(c, seq) {
		return errOr(err, sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", seq))
	}
	start, max, err := identityBounds(col.Type, cmd.Identity.Options)
	if err != nil {
		return err
	}
	kind := identityByDefault
	if cmd.Identity.Always {
		kind = identityAlways
	}
	e.insert(col.End, fmt.Sprintf(" DEFAULT (nextval(%s, '%s', %d, %d))", sequenceFor(table, col.Name), kind, start, max))
	return nil
}

// alterType changes a column's declared type and the constraints that
// come with it (typeChecks); stored values are converted where the new
// type's SQLite affinity differs, as a write would convert them, and
// must then satisfy the new type's constraints.
func alterType(c *conn, table, def string, col *pgparse.Column, cmd pgparse.AlterCmd, e *defEdits) (func() error, error) {
	if _, ok := generatedTypes[cmd.Type]; ok {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", cmd.Type)
	}
	if err := refusedType(pgparse.Column{Name: col.Name, Type: cmd.Type, TypeMods: cmd.TypeMods, Array: cmd.Array}); err != nil {
		return nil, err
	}
	if cmd.Using != "" && !pgparse.IsColumnCast(cmd.Using, col.Name) {
		err := sqlerr.New(sqlerr.FeatureNotSupported, "ALTER COLUMN TYPE ... USING an expression other than the column itself is not supported by the embedded engine (SQLite)")
		err.Hint = "Add a column, fill it with UPDATE, drop the old one and rename the new. The PostgreSQL engine (--engine postgres) supports USING."
		return nil, err
	}
	newCol := pgparse.Column{Name: col.Name, Type: cmd.Type, TypeMods: cmd.TypeMods, Array: cmd.Array}
	typ := cmd.TypeText
	switch {
	case col.PrimaryKey && strings.EqualFold(typ, "integer"):
		typ = "INT" // not SQLite's rowid alias (createtable.go)
	case cmd.Type == "numeric":
		if w := strings.ToLower(strings.Fields(typ)[0]); strings.HasPrefix(w, "numeric") || strings.HasPrefix(w, "decimal") {
			typ = numericType + typ[len("numeric"):]
		}
	}
	e.replace(col.TypeSpan, typ)
	for _, k := range col.Constraints {
		if k.Kind == pgparse.ConstraintCheck && typeCheckCode(k.Name) != "" {
			e.remove(def, k.Span)
		}
	}
	conds := typeConditions(newCol)
	for _, nc := range conds {
		e.insert(col.End, fmt.Sprintf(" CONSTRAINT %s CHECK (%s)", quoteIdent(nc[0]), nc[1]))
	}
	convert := affinity(def[col.TypeSpan.Start:col.TypeSpan.End]) != affinity(typ)
	return func() error {
		if convert {
			// Stored again, a value takes the column's new affinity. The
			// touch triggers (touched.go) must not count these rows.
			touched := c.touched
			c.touched = nil
			err := c.exec(fmt.Sprintf("UPDATE %s SET %s = %s", quoteIdent(table), quoteIdent(col.Name), quoteIdent(col.Name)))
			c.touched = touched
			if err != nil {
				return err
			}
		}
		for _, nc := range conds {
			err := sqlerr.New(typeCheckCode(nc[0]), "%s", nc[0])
			if err := noRow(c, fmt.Sprintf("SELECT 1 FROM %s WHERE NOT (%s) LIMIT 1", quoteIdent(table), nc[1]), err); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// addConstraint adds a CHECK or FOREIGN KEY constraint to the definition,
// or makes a UNIQUE one as a unique index (then e stays empty). It returns
// the checks of the rows, before and after the definition is written.
func addConstraint(c *conn, table, def string, ct *pgparse.CreateTable, cmd pgparse.AlterCmd, e *defEdits) (before, after func() error, err error) {
	k := cmd.Constraint
	name := k.Name
	text := cmd.ConstraintText
	switch k.Kind {
	case pgparse.ConstraintCheck:
		if name == "" {
			base := table + "_check"
			if c := k.Condition; c.End > c.Start {
				base = pgparse.CheckBaseName(table, text[c.Start-k.Start:c.End-k.Start])
			}
			name = base
			for n := 1; constraintNamed(ct, name); n++ {
				name = fmt.Sprintf("%s%d", base, n)
			}
		}
		if c := k.Condition; c.End > c.Start {
			cond, err := pgparse.CheckToSQLite(text[c.Start-k.Start : c.End-k.Start])
			if err != nil {
				return nil, nil, err
			}
			text = text[:c.Start-k.Start] + cond + text[c.End-k.Start:]
		}
	case pgparse.ConstraintForeignKey:
		if name == "" {
			name = table + "_" + strings.Join(k.Columns, "_") + "_fkey"
		}
		ref, err := c.table(k.RefTable)
		if err != nil {
			return nil, nil, err
		}
		if !ref.exists {
			return nil, nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", k.RefTable)
		}
	case pgparse.ConstraintUnique:
		if k.Deferrable {
			return nil, nil, errAlterRefused("a DEFERRABLE UNIQUE constraint")
		}
		if name == "" {
			name = table + "_" + strings.Join(k.Columns, "_") + "_key"
		}
		cols := make([]string, len(k.Columns))
		for i, col := range k.Columns {
			cols[i] = quoteIdent(col)
		}
		return nil, nil, c.exec(fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)", quoteIdent(name), quoteIdent(table), strings.Join(cols, ", ")))
	case pgparse.ConstraintPrimaryKey:
		return nil, nil, addPrimaryKey(c, table, def, ct, k)
	default:
		return nil, nil, errAlterRefused("this kind of constraint")
	}
	if k.Name == "" {
		text = "CONSTRAINT " + quoteIdent(name) + " " + text
	}
	if slices.ContainsFunc(ct.Constraints, func(o pgparse.Constraint) bool { return o.Name == name }) {
		return nil, nil, sqlerr.New(sqlerr.DuplicateObject, "constraint %q for relation %q already exists", name, table)
	}
	e.insert(ct.ListEnd, ", "+text)
	var fullCheck string
	if k.Kind == pgparse.ConstraintForeignKey {
		// MATCH FULL, which SQLite's keys ignore, is a CHECK beside the
		// key, as CREATE TABLE makes it (matchFullChecks).
		fulls, err := matchFullChecks("CREATE TABLE "+quoteIdent(table)+" ("+text+")", table)
		if err != nil {
			return nil, nil, err
		}
		for _, checks := range fulls {
			for _, nc := range checks {
				e.insert(ct.ListEnd, fmt.Sprintf(", CONSTRAINT %s CHECK (%s)", quoteIdent(nc[0]), nc[1]))
				fullCheck = nc[1]
			}
		}
	}
	switch {
	case k.NotValid:
		return nil, nil, nil
	case fullCheck != "":
		return func() error {
			err := sqlerr.New(sqlerr.ForeignKeyViolation, "insert or update on table %q violates foreign key constraint %q", table, name)
			err.Detail = matchFullDetail
			return noRow(c, fmt.Sprintf("SELECT 1 FROM %s WHERE NOT (%s) LIMIT 1", quoteIdent(table), fullCheck), err)
		}, c.foreignKeyCheck(table, name), nil
	case k.Kind == pgparse.ConstraintCheck:
		return func() error {
			return noRow(c, fmt.Sprintf("SELECT 1 FROM %s WHERE NOT (%s) LIMIT 1", quoteIdent(table), checkCondition(text)),
				sqlerr.New(sqlerr.CheckViolation, "check constraint %q of relation %q is violated by some row", name, table))
		}, nil, nil
	}
	return nil, c.foreignKeyCheck(table, name), nil
}

// foreignKeyCheck returns the check, once the table's new definition is
// written, that every row of table has its parent row (constraint name).
func (c *conn) foreignKeyCheck(table, name string) func() error {
	return func() error {
		return noRow(c, fmt.Sprintf("SELECT 1 FROM pragma_foreign_key_check(%s) LIMIT 1", quoteLiteral(table)),
			sqlerr.New(sqlerr.ForeignKeyViolation, "insert or update on table %q violates foreign key constraint %q", table, name))
	}
}

// dropConstraint removes a named constraint from the definition, or drops
// the unique index of that name (done: nothing left to write).
func dropConstraint(c *conn, table, def string, ct *pgparse.CreateTable, cmd pgparse.AlterCmd, e *defEdits) (done bool, err error) {
	for _, k := range ct.Constraints {
		if k.Name == cmd.Name || k.Name == "" && k.Kind == pgparse.ConstraintForeignKey && table+"_"+strings.Join(k.Columns, "_")+"_fkey" == cmd.Name {
			if k.Kind == pgparse.ConstraintPrimaryKey {
				return true, errAlterRefused("DROP of the primary key")
			}
			e.removeElement(def, k.Span)
			return false, nil
		}
	}
	for _, col := range ct.Columns {
		for _, k := range col.Constraints {
			if k.Kind != pgparse.ConstraintPrimaryKey && typeCheckCode(k.Name) == "" &&
				(k.Name == cmd.Name || k.Name == "" && k.Kind == pgparse.ConstraintForeignKey && table+"_"+col.Name+"_fkey" == cmd.Name) {
				e.remove(def, k.Span)
				return false, nil
			}
		}
	}
	var index string
	err = c.execResult("SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND name = ?",
		func(s *sqlite.Stmt) { index = s.ColumnText(0) }, table, cmd.Name)
	switch {
	case err != nil:
		return true, err
	case index != "":
		return true, c.exec("DROP INDEX " + quoteIdent(index))
	case cmd.MissingOK:
		return true, nil
	}
	return true, sqlerr.New(sqlerr.UndefinedObject, "constraint %q of relation %q does not exist", cmd.Name, table)
}

func errAlterRefused(what string) *sqlerr.Error {
	err := sqlerr.New(sqlerr.FeatureNotSupported, "ALTER TABLE: %s is not supported by the embedded engine (SQLite)", what)
	err.Hint = "The PostgreSQL engine (--engine postgres) supports it."
	return err
}

// checkCondition returns the condition of a CHECK constraint's text
// (CONSTRAINT name CHECK (condition) ...).
func checkCondition(text string) string {
	i := strings.Index(strings.ToUpper(text), "CHECK")
	open := strings.Index(text[i:], "(") + i
	depth := 0
	for j := open; j < len(text); j++ {
		switch text[j] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return text[open+1 : j]
			}
		}
	}
	return "1"
}

// noRow runs query and returns fail if it returns a row.
func noRow(c *conn, query string, fail *sqlerr.Error) error {
	found := false
	if err := c.execResult(query, func(*sqlite.Stmt) { found = true }); err != nil {
		return err
	}
	if found {
		return fail
	}
	return nil
}

// tableSQL returns the CREATE TABLE statement SQLite keeps for table.
func (c *conn) tableSQL(table string) (string, error) {
	var def string
	err := c.execResult("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", func(s *sqlite.Stmt) { def = s.ColumnText(0) }, table)
	return def, err
}

// writeTableSQL replaces table's definition with def, in the caller's
// transaction. def is first made into a scratch table (nameSpan is the
// table's name in it), so that SQLite is known to read it: a definition
// it could not read would leave the database unreadable.
func (c *conn) writeTableSQL(table, def string, nameSpan pgparse.Span) error {
	const scratch = "_certa_alter_check"
	if err := c.exec(def[:nameSpan.Start] + scratch + def[nameSpan.End:]); err != nil {
		return sqlerr.Wrap(err, sqlerr.FeatureNotSupported, "ALTER TABLE: the embedded engine (SQLite) cannot make table %q so: %v", table, err)
	}
	if err := c.exec("DROP TABLE " + scratch); err != nil {
		return err
	}
	return c.writeSchemaSQL("table", table, def)
}

// writeSchemaSQL writes sql as the definition of the table or index name
// (typ) in sqlite_schema, which SQLite reads it from: sql must make what
// name is.
func (c *conn) writeSchemaSQL(typ, name, sql string) error {
	version, _, err := c.queryInt("PRAGMA schema_version")
	if err != nil {
		return err
	}
	if err := c.exec("PRAGMA writable_schema = ON"); err != nil {
		return err
	}
	err = c.exec("UPDATE sqlite_schema SET sql = ? WHERE type = ? AND name = ?", sql, typ, name)
	if err == nil {
		// A new schema version makes every connection read the
		// definition again.
		err = c.exec(fmt.Sprintf("PRAGMA schema_version = %d", version+1))
	}
	if offErr := c.exec("PRAGMA writable_schema = OFF"); err == nil {
		err = offErr
	}
	return err
}

// affinity is the SQLite type affinity of a declared type (SQLite's
// "Determination Of Column Affinity").
func affinity(decl string) string {
	d := strings.ToUpper(decl)
	switch {
	case strings.Contains(d, "INT"):
		return "INTEGER"
	case strings.Contains(d, "CHAR"), strings.Contains(d, "CLOB"), strings.Contains(d, "TEXT"):
		return "TEXT"
	case strings.Contains(d, "BLOB"), d == "":
		return "BLOB"
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return "REAL"
	}
	return "NUMERIC"
}

// defEdits are replacements in a table's definition, made at once.
type defEdits struct{ list []defEdit }

type defEdit struct {
	pgparse.Span
	text string
}

func (e *defEdits) empty() bool { return len(e.list) == 0 }

func (e *defEdits) replace(sp pgparse.Span, text string) { e.list = append(e.list, defEdit{sp, text}) }

func (e *defEdits) insert(at int, text string) { e.replace(pgparse.Span{Start: at, End: at}, text) }

// remove removes a column constraint and the blanks before it.
func (e *defEdits) remove(def string, sp pgparse.Span) {
	for sp.Start > 0 && isBlankByte(def[sp.Start-1]) {
		sp.Start--
	}
	e.replace(sp, "")
}

// removeElement removes a table constraint and the comma before it.
func (e *defEdits) removeElement(def string, sp pgparse.Span) {
	for sp.Start > 0 && (isBlankByte(def[sp.Start-1]) || def[sp.Start-1] == ',') {
		sp.Start--
		if def[sp.Start] == ',' {
			break
		}
	}
	e.replace(sp, "")
}

func (e *defEdits) apply(def string) string {
	sort.SliceStable(e.list, func(i, j int) bool { return e.list[i].Start > e.list[j].Start })
	for _, d := range e.list {
		def = def[:d.Start] + d.text + def[d.End:]
	}
	return def
}

func isBlankByte(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// constraintNamed reports whether table definition ct has a constraint
// named name.
func constraintNamed(ct *pgparse.CreateTable, name string) bool {
	if ct == nil {
		return false
	}
	for _, k := range ct.Constraints {
		if k.Name == name {
			return true
		}
	}
	for _, col := range ct.Columns {
		for _, k := range col.Constraints {
			if k.Name == name {
				return true
			}
		}
	}
	return false
}
