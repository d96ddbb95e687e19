package sqlite

import (
	"slices"
	"strings"

	"certa/pgparse"
	"certa/sqlerr"
)

// checkGrouping refuses a grouped query that reads a column outside its
// aggregates that is neither grouped nor of a table whose primary key is
// (functionally dependent on the GROUP BY), as PostgreSQL does: SQLite
// would answer with the column's value in some row of each group.
func (c *conn) checkGrouping(checks []pgparse.GroupCheck) error {
	for _, g := range checks {
		table, ok := c.columnTable(g.Column)
		if !ok {
			continue // not known here: left to SQLite
		}
		col := strings.ToLower(g.Column.Column)
		groupedOf := func(t *tableInfo) []string {
			var cols []string
			for _, part := range g.Grouped {
				if pt, ok := c.columnTable(part); ok && pt == t {
					cols = append(cols, strings.ToLower(part.Column))
				}
			}
			return cols
		}
		cols := groupedOf(table)
		if slices.Contains(cols, col) {
			continue
		}
		if table.hasPK && len(table.pk) > 0 && !slices.ContainsFunc(table.pk, func(k string) bool { return !slices.Contains(cols, strings.ToLower(k)) }) {
			continue
		}
		e := sqlerr.New(sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", g.Name)
		e.Position = int32(g.Position)
		return e
	}
	return nil
}

// columnTable returns the one table among part.Tables that has column
// part.Column.
func (c *conn) columnTable(part pgparse.KindPart) (*tableInfo, bool) {
	col := strings.ToLower(part.Column)
	var found *tableInfo
	for _, t := range strings.Split(part.Tables, ",") {
		ti, _ := c.table(t)
		if ti == nil || !ti.exists {
			continue
		}
		if _, has := ti.types[col]; has || slices.ContainsFunc(ti.columns, func(c string) bool { return strings.EqualFold(c, col) }) {
			if found != nil {
				return nil, false
			}
			found = ti
		}
	}
	return found, found != nil
}
