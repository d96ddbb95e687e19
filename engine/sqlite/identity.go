package sqlite

import (
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// Identity columns, DEFAULT and OVERRIDING in client statements.
//
// PostgreSQL refuses a value given to a GENERATED ALWAYS identity column
// (428C9) unless the INSERT says OVERRIDING SYSTEM VALUE, and lets an
// UPDATE set it only to DEFAULT; OVERRIDING USER VALUE makes an INSERT
// ignore the values given to identity columns; and DEFAULT stands for a
// column's default in VALUES and SET. SQLite knows none of this, so the
// engine does it while it prepares a client statement (prepareCached, and
// describe for the extended protocol), on the node the client talks to:
//
//   - An identity column says what it is in its default,
//     nextval('t_c_seq', 'always', ...) (createtable.go), so the rule comes
//     with the schema, which every node has in the same state at every
//     position of the log, and with every snapshot; no table of our own
//     has to follow renames and drops.
//   - The statement is read with PostgreSQL's parser (pgparse.ParseWrite)
//     when its text says DEFAULT or OVERRIDING, or when it writes a table
//     with a GENERATED ALWAYS column: checked against the rules above, then
//     rewritten for SQLite (the OVERRIDING clause dropped, DEFAULT replaced
//     by the column's default expression, or NULL without one, as
//     PostgreSQL does). A statement that writes such a table and that the
//     parser cannot read (SQLite's own syntax, such as INSERT OR REPLACE)
//     is refused: the rule could not be checked.
//   - Nothing is checked where write sets are applied, and nothing need
//     be: the applier applies rows (changesets), not statements, and the
//     rows are those the origin's checked statements made. A trigger would
//     have run on the applier too, and on foreign-key actions, which
//     PostgreSQL does not check either (certa refuses triggers anyway).
//
// A statement is prepared once per connection (stmtcache.go), so it is
// read and rewritten once, not at every execution.

// rewriteWrite returns what SQLite runs for the client statement sql:
// sql with its constants for time and uuid columns in their stored form
// (storedForms), and, when it says DEFAULT or OVERRIDING, checked
// (checkIdentity) and rewritten. parsed is true when sql was read
// and checked. c's table cache must be fresh (refreshSchema).
func (c *conn) rewriteWrite(sql string) (run string, parsed bool, err error) {
	switch firstKeyword(sql) {
	case "INSERT", "UPDATE", "WITH":
	default:
		return sql, false, nil
	}
	if sql, err = c.storedForms(sql); err != nil { // storedform.go
		return "", false, err
	}
	if !hasKeyword(sql, "DEFAULT") && !hasKeyword(sql, "OVERRIDING") {
		return sql, false, nil
	}
	w, _ := pgparse.ParseWrite(sql)
	if w == nil {
		return sql, false, nil // SQLite tells what it does not understand
	}
	ti, err := c.table(w.Table)
	if err != nil {
		return "", false, err
	}
	if err := checkIdentity(w, ti); err != nil {
		return "", false, err
	}
	run, err = rewriteDefaults(sql, w, ti)
	return run, true, err
}

// prepareWrite prepares a client statement as SQLite runs it (run):
// rewritten for PostgreSQL's DEFAULT, OVERRIDING and identity rules
// (rewriteWrite), and, if SQLite finds an INSERT's rows shorter than its
// table, given the list of the columns they fill (withColumnList).
func (c *conn) prepareWrite(sql string) (stmt *sqlite.Stmt, rec record, trailing, run string, parsed bool, err error) {
	run, parsed, err = c.rewriteWrite(sql)
	if err != nil {
		return nil, record{}, "", "", false, err
	}
	stmt, rec, trailing, err = c.prepare(run, modeLocal)
	if err == nil || !strings.Contains(err.Error(), "values were supplied") {
		return stmt, rec, trailing, run, parsed, err
	}
	listed, ok, lerr := c.withColumnList(sql)
	if lerr != nil || !ok {
		return stmt, rec, trailing, run, parsed, err
	}
	if run, parsed, err = c.rewriteWrite(listed); err != nil {
		return nil, record{}, "", "", false, err
	}
	stmt, rec, trailing, err = c.prepare(run, modeLocal)
	return stmt, rec, trailing, run, parsed, err
}

// withColumnList gives an INSERT ... VALUES without a column list whose
// rows are shorter than the table the list of the columns they fill, the
// table's first ones: PostgreSQL fills the others with their defaults,
// where SQLite refuses the statement. ok is false for any other
// statement. c's table cache must be fresh.
func (c *conn) withColumnList(sql string) (string, bool, error) {
	w, _ := pgparse.ParseWrite(sql)
	if w == nil || !w.Insert || w.Columns != nil || len(w.Rows) == 0 || w.ValuesAt == 0 {
		return "", false, nil
	}
	ti, err := c.table(w.Table)
	if err != nil || !ti.exists {
		return "", false, err
	}
	width := 0
	for _, r := range w.Rows {
		width = max(width, len(r))
	}
	if width == 0 || width >= len(ti.columns) {
		return "", false, nil
	}
	cols := make([]string, width)
	for i := range cols {
		cols[i] = quoteIdent(ti.columns[i])
	}
	return sql[:w.ValuesAt] + "(" + strings.Join(cols, ", ") + ") " + sql[w.ValuesAt:], true, nil
}

// checkWrites checks a client statement that writes a table with a
// GENERATED ALWAYS column, unless rewriteWrite did. rec is what the
// authorizer saw while SQLite prepared it.
func (c *conn) checkWrites(sql string, parsed bool, rec *record) error {
	if parsed || len(rec.writes) == 0 || firstKeyword(sql) == "DELETE" {
		return nil
	}
	var always *tableInfo
	for _, t := range rec.writes {
		ti, err := c.table(t)
		if err != nil {
			return err
		}
		for _, kind := range ti.identity {
			if kind == identityAlways {
				always = ti
			}
		}
	}
	if always == nil {
		return nil
	}
	w, ok := pgparse.ParseWrite(sql)
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported,
			"table %q has a GENERATED ALWAYS identity column, and certa checks statements that write it with PostgreSQL's parser, which cannot read this one", always.name)
	}
	if w == nil {
		return nil // DELETE
	}
	ti, err := c.table(w.Table)
	if err != nil {
		return err
	}
	return checkIdentity(w, ti)
}

// insertTargets returns the columns an INSERT gives values to, as the
// table spells them: its column list, or as many of the table's columns as
// its rows have values (all of them for a SELECT with *).
func insertTargets(w *pgparse.Write, ti *tableInfo) []string {
	if w.Columns != nil {
		out := make([]string, len(w.Columns))
		for i, name := range w.Columns {
			out[i] = columnName(ti, name)
		}
		return out
	}
	n := len(ti.columns)
	switch {
	case w.DefaultValues:
		n = 0
	case len(w.Rows) > 0:
		n = len(w.Rows[0])
	case w.SelectWidth >= 0:
		n = w.SelectWidth
	}
	return ti.columns[:min(n, len(ti.columns))]
}

// columnName returns a column's name as ti spells it (name itself if ti
// has no such column).
func columnName(ti *tableInfo, name string) string {
	for _, c := range ti.columns {
		if strings.EqualFold(c, name) {
			return c
		}
	}
	return name
}

// checkIdentity applies PostgreSQL's rules for GENERATED ALWAYS identity
// columns to the INSERT or UPDATE w on table ti.
func checkIdentity(w *pgparse.Write, ti *tableInfo) error {
	if !ti.exists || len(ti.identity) == 0 {
		return nil
	}
	always := func(col string) bool { return ti.identity[strings.ToLower(col)] == identityAlways }
	if w.Insert && w.Override == "" {
		for i, col := range insertTargets(w, ti) {
			if !always(col) || len(w.Rows) > 0 && allDefault(w.Rows, i) {
				continue
			}
			return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
				Message: `cannot insert a non-DEFAULT value into column "` + col + `"`,
				Detail:  `Column "` + col + `" is an identity column defined as GENERATED ALWAYS.`,
				Hint:    "Use OVERRIDING SYSTEM VALUE to override."}
		}
	}
	for _, it := range w.Set { // UPDATE, or INSERT ... ON CONFLICT DO UPDATE (whatever OVERRIDING says)
		if always(it.Column) && !it.Default {
			col := columnName(ti, it.Column)
			return &sqlerr.Error{Code: sqlerr.GeneratedAlways,
				Message: `column "` + col + `" can only be updated to DEFAULT`,
				Detail:  `Column "` + col + `" is an identity column defined as GENERATED ALWAYS.`}
		}
	}
	return nil
}

// allDefault reports whether value i of every row is DEFAULT.
func allDefault(rows [][]pgparse.Item, i int) bool {
	for _, r := range rows {
		if i >= len(r) || !r[i].Default {
			return false
		}
	}
	return true
}

// rewriteDefaults rewrites w (the text sql) for SQLite: without its
// OVERRIDING clause, DEFAULT replaced by the column's default, and, with
// OVERRIDING USER VALUE, the values given to identity columns too.
func rewriteDefaults(sql string, w *pgparse.Write, ti *tableInfo) (string, error) {
	type edit struct {
		pgparse.Span
		text string
	}
	var edits []edit
	dflt := func(col string) string {
		if d, ok := ti.defaults[strings.ToLower(col)]; ok {
			return "(" + d + ")"
		}
		return "NULL"
	}
	if w.Override != "" {
		edits = append(edits, edit{w.OverrideSpan, ""})
	}
	if w.Insert {
		targets := insertTargets(w, ti)
		if w.Override == "USER" && len(w.Rows) == 0 {
			for _, col := range targets {
				if ti.identity[strings.ToLower(col)] != "" {
					return "", sqlerr.New(sqlerr.FeatureNotSupported,
						"OVERRIDING USER VALUE is supported with INSERT ... VALUES only")
				}
			}
		}
		for _, r := range w.Rows {
			for i, it := range r {
				if i >= len(targets) {
					break // SQLite refuses the row
				}
				col := targets[i]
				if it.Default || w.Override == "USER" && ti.identity[strings.ToLower(col)] != "" {
					edits = append(edits, edit{it.Span, dflt(col)})
				}
			}
		}
	}
	for _, it := range w.Set {
		if it.Default {
			edits = append(edits, edit{it.Span, dflt(it.Column)})
		}
	}
	// Back to front, so that earlier offsets stay true.
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].Start > edits[j-1].Start; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	for _, e := range edits {
		sql = sql[:e.Start] + e.text + sql[e.End:]
	}
	return sql, nil
}
