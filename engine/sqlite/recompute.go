package sqlite

import (
	"strings"

	"certa/pgparse"
	"certa/sqlerr"
)

// refuseNodeDependent refuses a schema statement that would compute other
// values on each node: every node runs it again at its position, so what
// it computes must depend on the rows alone. A serial column added to a
// table that holds rows numbers them in each node's order, and a new
// table's rows computed with a function SQLite does not call
// deterministic (now(), random(), gen_random_uuid()), from the clock, or
// by LIMIT without an order, differ between nodes: refused with 0A000
// and a hint, alike on every node (the check runs in CheckDDL and at
// apply, where every node holds the same rows). What is computed is read
// from the statement's parse tree (pgparse.Recomputes), whether a
// function is deterministic from SQLite (SQLITE_DETERMINISTIC in
// pragma_function_list).
func refuseNodeDependent(c *conn, sql string) error {
	for _, r := range pgparse.Recomputes(sql) {
		why, err := nodeDependence(c, r)
		if err != nil || why == "" {
			return err
		}
		if r.Table != "" {
			n, _, err := c.queryInt("SELECT EXISTS (SELECT 1 FROM " + strings.TrimPrefix(r.Table, `"public".`) + ")")
			if err != nil || n == 0 {
				return err
			}
		}
		e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: %s %s: every node runs a schema change again and would store other values", r.What, why)
		switch {
		case r.Table == "":
			e.Hint = "Create the table, then fill it with INSERT ... SELECT: inserted rows are computed once and replicated."
		case r.Numbering:
			e.Hint = "Add the column as a plain integer, number the rows with UPDATE (rows are replicated as computed), then give it a default."
		default:
			e.Hint = "Add the column without a default, fill it with UPDATE (rows are replicated as computed), then SET DEFAULT."
		}
		return e
	}
	return nil
}

// nodeDependence says why r computes values that may differ between
// nodes, or "".
func nodeDependence(c *conn, r pgparse.Recompute) (string, error) {
	switch {
	case r.Numbering:
		return "numbers the rows in the order this node stores them", nil
	case r.Context:
		return "reads the time or the session it runs in", nil
	case r.Order:
		return "keeps rows by the order this node stores them (LIMIT, OFFSET, DISTINCT ON, TABLESAMPLE)", nil
	}
	for _, f := range r.Funcs {
		det, _, err := c.queryInt("SELECT max(flags & 2048) FROM pragma_function_list WHERE name = ?", pgparse.SQLiteFunction(f))
		if err != nil {
			return "", err
		}
		if det == 0 {
			return "calls " + f + "(), which is not deterministic", nil
		}
	}
	return "", nil
}
