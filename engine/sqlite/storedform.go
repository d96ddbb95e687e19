package sqlite

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"certa/pgparse"
	"certa/pgtext"
	"certa/result"
	"certa/sqlerr"
)

// Values of dates, times, timestamps and uuids are kept as text in
// PostgreSQL's output form (the guide's "Types"): a parameter of such a
// column is parsed and stored in that form, and so is a cast. A string
// constant an INSERT or UPDATE gives such a column went in as written:
// '2006-08-13 12:34:56' and '2006-08-13 14:34:56+02' in a timestamptz
// column stayed two texts for one instant, each equal to neither the
// other nor the same instant sent as a parameter, and read back as
// written. storedForms writes such constants in the stored form before
// the statement is prepared, or refuses them as the parameter would be.

// storedForms returns sql with the string constants it gives, as an
// INSERT's values or an UPDATE's SET, to a date, time, timestamp,
// timestamptz or uuid column written in the form the engine keeps. c's
// table cache must be fresh.
func (c *conn) storedForms(sql string) (string, error) {
	if !strings.Contains(sql, "'") {
		return sql, nil
	}
	w, _ := pgparse.ParseWrite(sql)
	if w == nil {
		return sql, nil
	}
	ti, err := c.table(w.Table)
	if err != nil || !ti.exists {
		return sql, err
	}
	kept := false
	for _, typ := range ti.types {
		kept = kept || hasStoredForm(typ)
	}
	if !kept {
		return sql, nil
	}
	type edit struct {
		at   pgparse.Span
		text string
	}
	var edits []edit
	visit := func(col string, it pgparse.Item) error {
		typ := ti.types[strings.ToLower(col)]
		if it.Str == nil || !hasStoredForm(typ) {
			return nil
		}
		form, err := storedForm(typ, *it.Str)
		if err != nil {
			return err
		}
		if form != *it.Str {
			edits = append(edits, edit{it.Span, quoteLiteral(form)})
		}
		return nil
	}
	if err := eachInput(w, ti, visit); err != nil {
		return "", err
	}
	// Last first: the spans before an edit stay where they were.
	slices.SortFunc(edits, func(a, b edit) int { return b.at.Start - a.at.Start })
	for _, e := range edits {
		sql = sql[:e.at.Start] + e.text + sql[e.at.End:]
	}
	return sql, nil
}

// hasStoredForm reports whether values of typ are kept in one form.
func hasStoredForm(typ result.Type) bool {
	switch typ {
	case result.Date, result.Time, result.Timestamp, result.Timestamptz, result.UUID,
		result.Bool, result.Float8, result.JSON, result.JSONB:
		return true
	}
	return false
}

// storedForm is s, given a column of typ, in the form the engine keeps:
// as the cast to typ makes it (casts.go). A boolean is kept as 1 or 0
// and a double as a number, which the column's affinity makes of the
// text written here ('1', '9e999' for infinity); jsonb as PostgreSQL
// writes it back (keys ordered, duplicates dropped).
func storedForm(typ result.Type, s string) (string, error) {
	switch typ {
	case result.Bool:
		v, ok := pgtext.ParseBool(s)
		switch {
		case !ok:
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type boolean: %q", s)
		case v:
			return "1", nil
		}
		return "0", nil
	case result.Float8:
		f, err := pgtext.ParseFloat(s)
		switch {
		case err != nil:
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type double precision: %q", s)
		case math.IsNaN(f):
			return "", errNaN
		case math.IsInf(f, 1):
			return "9e999", nil
		case math.IsInf(f, -1):
			return "-9e999", nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case result.JSON:
		if !json.Valid([]byte(s)) {
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		}
		return s, nil
	case result.JSONB:
		form, err := pgtext.FormatJSONB(s)
		if err != nil {
			return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
		}
		return form, nil
	case result.UUID:
		if u, ok := parseUUID(s); ok {
			return u, nil
		}
		return "", sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type uuid: %q", s)
	}
	if inf := strings.ToLower(strings.TrimSpace(s)); inf == "infinity" || inf == "-infinity" {
		return inf, nil
	}
	t, err := pgtext.ParseTime(typ, s)
	if err != nil {
		return "", err
	}
	return pgtext.FormatTime(typ, t), nil
}
