package sqlite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/pgtext"
	"certa/result"
)

// PostgreSQL's DETAIL of constraint violations, found again from the
// statement where SQLite's error does not say it: SQLite names the
// constraint, not the row. Only an INSERT of VALUES says its rows; what
// a default, an expression or a parameter gave is not known here, and
// the violation then comes without DETAIL.

// uniqueDetail is PostgreSQL's DETAIL of a unique violation of the key
// columns cols of table by sql, an INSERT of VALUES: "Key (a)=(1)
// already exists.", for the first row whose key is already in the
// table or in a row before it, as PostgreSQL inserts them in order. It
// is "" where the key is not all constants of integer, text or uuid columns
// (a default, an expression: the value is not known here), or no row is
// found.
func (c *conn) uniqueDetail(sql, table string, cols []string) string {
	ins, ok := pgparse.InsertRows(sql)
	if !ok || ins.Upsert || !strings.EqualFold(ins.Table, table) {
		return ""
	}
	listed, rows := ins.Columns, ins.Rows
	ti, err := c.table(table)
	if err != nil || ti == nil || !ti.exists {
		return ""
	}
	if len(listed) == 0 {
		listed = ti.columns
	}
	at := make([]int, len(cols))
	for i, col := range cols {
		at[i] = slices.IndexFunc(listed, func(l string) bool { return strings.EqualFold(l, col) })
		switch ti.types[strings.ToLower(col)] {
		case result.Int2, result.Int4, result.Int8, result.Text, result.UUID:
		default:
			return "" // written otherwise than it is kept, or not kept as text
		}
		if _, ok := ti.charOIDs[strings.ToLower(col)]; ok {
			return "" // varchar(n) and char(n) keep constants cut (storedForms)
		}
		if at[i] < 0 {
			return "" // a default
		}
	}
	seen := map[string]bool{}
	for _, row := range rows {
		key := make([]any, len(cols))
		texts := make([]string, len(cols))
		for i, col := range cols {
			if at[i] >= len(row) || !row[at[i]].Known || row[at[i]].Null {
				return ""
			}
			texts[i] = row[at[i]].Text
			key[i] = texts[i]
			switch typ := ti.types[strings.ToLower(col)]; {
			case typ.IsInteger():
				v, err := castInt(sqlite.TextValue(texts[i]), 64)
				if err != nil {
					return ""
				}
				key[i], texts[i] = v.Int64(), strconv.FormatInt(v.Int64(), 10)
			case typ == result.UUID:
				u, ok := parseUUID(texts[i])
				if !ok {
					return ""
				}
				key[i], texts[i] = u, u
			}
		}
		k := strings.Join(texts, "\x00")
		exists := seen[k]
		if !exists {
			where := make([]string, len(cols))
			for i, col := range cols {
				where[i] = fmt.Sprintf("%s = ?%d", quoteIdent(col), i+1)
			}
			_ = execResult(c.c, fmt.Sprintf("SELECT 1 FROM %s WHERE %s", quoteIdent(table), strings.Join(where, " AND ")),
				func(*sqlite.Stmt) { exists = true }, key...)
		}
		if exists {
			names := make([]string, len(cols))
			for i, col := range cols {
				names[i] = pgparse.QuoteIdent(col)
			}
			return fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(texts, ", "))
		}
		seen[k] = true
	}
	return ""
}

// failingRowDetail is PostgreSQL's DETAIL of a violated CHECK or NOT NULL
// constraint of table by sql, an INSERT of one row of VALUES: "Failing
// row contains (1, x, null).", every column's value as PostgreSQL writes
// it, cut at 64 bytes. It is "" where a value is not known: an
// expression, a default other than a constant, a type whose text the
// engine writes otherwise than the constant was given (numeric with its
// scale, floats, dates...), a generated column.
func (c *conn) failingRowDetail(sql, table string) string {
	ins, ok := pgparse.InsertRows(sql)
	if !ok || ins.Upsert || len(ins.Rows) != 1 || !strings.EqualFold(ins.Table, table) {
		return ""
	}
	listed, rows := ins.Columns, ins.Rows
	type column struct {
		name, def string
		hidden    bool
	}
	var cols []column
	err := execResult(c.c, "SELECT name, dflt_value, hidden FROM pragma_table_xinfo(?1) ORDER BY cid", func(s *sqlite.Stmt) {
		cols = append(cols, column{s.ColumnText(0), s.ColumnText(1), s.ColumnInt(2) != 0})
	}, table)
	ti, terr := c.table(table)
	if err != nil || terr != nil || ti == nil || !ti.exists || len(cols) == 0 {
		return ""
	}
	row := rows[0]
	vals := make([]string, len(cols))
	for i, col := range cols {
		if col.hidden {
			return "" // generated: computed, not given
		}
		v, given := pgparse.InsertValue{}, false
		switch {
		case len(listed) == 0 && i < len(row):
			v, given = row[i], true
		case len(listed) > 0:
			if k := slices.IndexFunc(listed, func(l string) bool { return strings.EqualFold(l, col.name) }); k >= 0 && k < len(row) {
				v, given = row[k], true
			}
		}
		if !given {
			v = constantDefault(col.def)
		}
		text, ok := valueText(ti, col.name, v)
		if !ok {
			return ""
		}
		vals[i] = text
	}
	return "Failing row contains (" + strings.Join(vals, ", ") + ")."
}

// constantDefault is a column's default (SQLite's dflt_value) as a value
// of VALUES: NULL where it has none; unknown unless it is a constant.
func constantDefault(def string) pgparse.InsertValue {
	switch {
	case def == "" || strings.EqualFold(def, "NULL"):
		return pgparse.InsertValue{Null: true, Known: true}
	case strings.EqualFold(def, "TRUE"), strings.EqualFold(def, "FALSE"):
		return pgparse.InsertValue{Text: strings.ToLower(def), Known: true}
	case len(def) >= 2 && def[0] == '\'' && def[len(def)-1] == '\'':
		return pgparse.InsertValue{Text: strings.ReplaceAll(def[1:len(def)-1], "''", "'"), Known: true}
	}
	if _, err := strconv.ParseInt(def, 10, 64); err == nil {
		return pgparse.InsertValue{Text: def, Known: true}
	}
	return pgparse.InsertValue{}
}

// valueText is v, given to column col of ti, as PostgreSQL's DETAIL
// writes it: null, an integer's digits, t or f, a text as it is (cut at
// 64 bytes, as PostgreSQL cuts each value); ok is false for other types.
func valueText(ti *tableInfo, col string, v pgparse.InsertValue) (string, bool) {
	if !v.Known {
		return "", false
	}
	if v.Null {
		return "null", true
	}
	lower := strings.ToLower(col)
	if _, ok := ti.charOIDs[lower]; ok {
		return "", false // varchar(n) and char(n) keep constants cut (storedForms)
	}
	switch typ := ti.types[lower]; {
	case typ.IsInteger():
		n, err := castInt(sqlite.TextValue(v.Text), 64)
		if err != nil {
			return "", false
		}
		return strconv.FormatInt(n.Int64(), 10), true
	case typ == result.Bool:
		b, ok := pgtext.ParseBool(v.Text)
		if !ok {
			return "", false
		}
		return map[bool]string{true: "t", false: "f"}[b], true
	case typ == result.Text:
		s := v.Text
		if len(s) > 64 {
			n := 64
			for n > 0 && !utf8.RuneStart(s[n]) {
				n--
			}
			s = s[:n] + "..."
		}
		return s, true
	}
	return "", false
}
