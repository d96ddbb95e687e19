package sqlite

import (
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// CREATE SEQUENCE and DROP SEQUENCE: a sequence of its own (no column
// owns it) is a row of _certa_sequences whose table is "", and hands out
// values as every sequence does (sequence.go). Its options are checked as
// an identity column's are; those certa cannot honour (INCREMENT other
// than 1, CYCLE) are refused.

// runSequenceStmt carries out s in c's transaction; created is the seqno
// of the statement (0 when it is only tried).
func runSequenceStmt(c *conn, s *pgparse.SequenceStmt, created uint64) error {
	if s.Schema != "" && s.Schema != "public" {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", s.Schema)
	}
	if s.Alter {
		return alterSequence(c, s)
	}
	if s.Create {
		name := s.Names[0]
		_, ok, err := sequenceOwner(c, name)
		if err != nil {
			return err
		}
		if ok || tableExists(c, name) {
			if s.Missing {
				return nil
			}
			return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name)
		}
		typ := s.Type
		switch typ {
		case "":
			typ = "int8"
		case "smallint", "integer", "bigint":
			typ = map[string]string{"smallint": "int2", "integer": "int4", "bigint": "int8"}[typ]
		}
		start, max, err := identityBounds(typ, s.Options)
		if err != nil {
			return err
		}
		return c.exec("INSERT INTO _certa_sequences (name, tbl, col, reserved, created, maxval) VALUES (?, '', '', ?, ?, ?)",
			name, start, int64(created), max)
	}
	for _, name := range s.Names {
		owner, ok, err := sequenceOwner(c, name)
		switch {
		case err != nil:
			return err
		case !ok && s.Missing:
			continue
		case !ok:
			return sqlerr.New(sqlerr.UndefinedTable, "sequence %q does not exist", name)
		case owner != "":
			return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop sequence %s because column of table %s requires it", name, owner)
		}
		tables, err := userTables(c)
		if err != nil {
			return err
		}
		used, _, err := columnSequences(c, tables)
		if err != nil {
			return err
		}
		if o, ok := used[name]; ok {
			return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop sequence %s because other objects depend on it: the default of table %s", name, o.table)
		}
		if err := c.exec("DELETE FROM _certa_sequences WHERE name = ?", name); err != nil {
			return err
		}
	}
	return nil
}

// alterSequence runs ALTER SEQUENCE ... OWNED BY, after which the
// sequence is dropped with the column's table or the column
// (syncSequences), and ALTER SEQUENCE ... RESTART WITH n (restartSequence):
// all of ALTER SEQUENCE the engine does.
func alterSequence(c *conn, s *pgparse.SequenceStmt) error {
	name := s.Names[0]
	restart := len(s.Options) == 1 && s.Options[0].Name == "restart" && s.OwnedBy == nil
	if !restart && (len(s.Options) > 0 || s.OwnedBy == nil) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER SEQUENCE other than OWNED BY and RESTART WITH is not supported by the embedded SQLite engine")
	}
	_, ok, err := sequenceOwner(c, name)
	switch {
	case err != nil:
		return err
	case !ok && s.Missing:
		return nil
	case !ok:
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	case restart:
		return restartSequence(c, name, s.Options[0])
	}
	var tbl, col string
	switch len(s.OwnedBy) {
	case 0: // OWNED BY NONE
	case 2:
		if err := c.refreshSchema(); err != nil {
			return err
		}
		ti, err := c.table(s.OwnedBy[0])
		if err != nil {
			return err
		}
		if !ti.exists {
			return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", s.OwnedBy[0])
		}
		for _, cn := range ti.columns {
			if strings.EqualFold(cn, s.OwnedBy[1]) {
				tbl, col = ti.name, cn
			}
		}
		if col == "" {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", s.OwnedBy[1], s.OwnedBy[0])
		}
	default:
		return sqlerr.New(sqlerr.SyntaxError, "invalid OWNED BY option: specify OWNED BY table.column or OWNED BY NONE")
	}
	return c.exec("UPDATE _certa_sequences SET tbl = ?, col = ? WHERE name = ?", tbl, col, name)
}

// restartSequence moves sequence name's next value to restart's, as
// setval(name, n, false) does (setval.go), here as a schema statement that
// every node runs in its place: the nodes drop the blocks they reserved
// before (created counts up) and reserve again from n. A RESTART without
// WITH is refused: the engine does not keep the sequence's start.
func restartSequence(c *conn, name string, restart pgparse.SeqOption) error {
	if !restart.HasValue {
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER SEQUENCE ... RESTART without WITH is not supported by the embedded SQLite engine: say the value (RESTART WITH 1)")
	}
	var max int64
	if err := c.execResult("SELECT maxval FROM "+sequencesTable+" WHERE name = ?", func(st *sqlite.Stmt) { max = st.ColumnInt64(0) }, name); err != nil {
		return err
	}
	if restart.Value > max {
		return sqlerr.New(sqlerr.InvalidParameterValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", restart.Value, max)
	}
	return c.exec("UPDATE "+sequencesTable+" SET reserved = ?, created = created + 1 WHERE name = ?", restart.Value, name)
}

// sequenceOwner returns the table that owns sequence name ("" if none),
// and whether the sequence exists.
func sequenceOwner(c *conn, name string) (owner string, ok bool, err error) {
	err = c.execResult("SELECT tbl FROM _certa_sequences WHERE name = ?", func(st *sqlite.Stmt) { owner, ok = st.ColumnText(0), true }, name)
	return owner, ok, err
}

// tableExists reports whether the schema has a table, view or index name.
func tableExists(c *conn, name string) bool {
	found := false
	c.execResult("SELECT 1 FROM sqlite_schema WHERE name = ? COLLATE NOCASE", func(*sqlite.Stmt) { found = true }, strings.TrimSpace(name))
	return found
}
