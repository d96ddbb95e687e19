package sqlite

import (
	"strings"

	"certa/pgparse"
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
		if err != nil {
			return err
		}
		if why == "" {
			continue // the next part may differ (ADD COLUMN a ..., ADD COLUMN b ...)
		}
		if r.Table != "" {
			n, _, err := c.queryInt("SELECT EXISTS (SELECT 1 FROM " + strings.TrimPrefix(r.Table, `"public".`) + ")")
			if err != nil {
				return err
			}
			if n == 0 {
				continue
			}
		}
		return r.Refusal(why)
	}
	return nil
}

// nodeDependence says why r computes values that may differ between
// nodes, or "".
func nodeDependence(c *conn, r pgparse.Recompute) (string, error) {
	if why := r.Reason(); why != "" {
		return why, nil
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
