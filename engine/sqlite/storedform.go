package sqlite

import (
	"errors"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

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
	kept := len(ti.charOIDs) > 0
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
		if n, ok := ti.charLength(col); ok && it.Str != nil {
			cut := cutExcessSpaces(*it.Str, n)
			if ti.charOIDs[strings.ToLower(col)] == bpcharOID {
				// char(n) is kept without its padding, which it is
				// read back with; its trailing spaces mean nothing.
				cut = strings.TrimRight(cut, " ")
			}
			if cut != *it.Str {
				edits = append(edits, edit{it.Span, quoteLiteral(cut)})
			}
			return nil
		}
		if it.Str != nil && isNumber(typ) {
			// Read as PostgreSQL's parser reads it, in the same order
			// as the others: the first that fails is the error.
			if _, err := typedConst(typ, *it.Str); err != nil {
				return atConstant(err, sql, it.Span)
			}
			return nil
		}
		if it.Str == nil || !hasStoredForm(typ) {
			return nil
		}
		form, err := storedForm(typ, *it.Str)
		if err != nil {
			return atConstant(err, sql, it.Span)
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

// atConstant is err, an error of reading the constant at span of sql,
// with its place in sql as PostgreSQL's parser gives it.
func atConstant(err error, sql string, span pgparse.Span) error {
	if span.Start < 0 || span.Start > len(sql) {
		return err
	}
	return atPosition(err, utf8.RuneCountInString(sql[:span.Start])+1)
}

// atPosition is err with position pos (characters from 1) where it is a
// client error without one and pos is known (above 0).
func atPosition(err error, pos int) error {
	var se *sqlerr.Error
	if pos <= 0 || !errors.As(err, &se) || se.Position != 0 {
		return err
	}
	e := *se
	e.Position = int32(pos)
	return &e
}

// charLength returns n of a varchar(n) or char(n) column.
func (ti *tableInfo) charLength(col string) (int, bool) {
	col = strings.ToLower(col)
	if ti.charOIDs[col] == 0 || ti.mods[col] < 4 {
		return 0, false
	}
	return int(ti.mods[col] - 4), true
}

// cutExcessSpaces is s given to a varchar(n) or char(n) column: longer
// than n characters only by spaces, it is cut to n, as PostgreSQL does
// (a longer value fails the column's check: 22001).
func cutExcessSpaces(s string, n int) string {
	i := 0
	for range n {
		if i == len(s) {
			return s
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if strings.TrimRight(s[i:], " ") != "" {
		return s
	}
	return s[:i]
}

// hasStoredForm reports whether values of typ are kept in one form.
func hasStoredForm(typ result.Type) bool {
	switch typ {
	case result.Date, result.Time, result.Timestamp, result.Timestamptz, result.UUID,
		result.Bool, result.Float8, result.JSON, result.JSONB, pgtext.TextArray, pgtext.VarcharArray:
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
		f, err := float8Input(s)
		switch {
		case err != nil:
			return "", err
		case math.IsNaN(f):
			return "", errNaN
		case math.IsInf(f, 1):
			return "9e999", nil
		case math.IsInf(f, -1):
			return "-9e999", nil
		}
		return strconv.FormatFloat(f, 'g', -1, 64), nil
	case result.JSON, result.JSONB, pgtext.TextArray, pgtext.VarcharArray:
		v, err := pgtext.ParseValue(typ, s) // as a parameter of the type is read
		if err != nil {
			return "", err
		}
		return v.(string), nil
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

// registerTypedConst makes pgparse.TypedConstFunction on c: a string
// constant compared with a column is read as a value of the column's
// type, in the form the engine keeps it in (storedForm), so that
// WHERE b = 't' finds the rows of a boolean column that are true, and a
// timestamptz written with another offset finds its instant. A constant
// of a column of another type, or of a column not found in exactly one
// of the tables named (among those c has cached: prepare caches them),
// is compared as written. A failure is kept on c (funcErr), as pg_cast's
// is: the statement fails with it, as PostgreSQL fails on a constant
// its column's type does not read.
func registerTypedConst(c *conn) error {
	return c.c.CreateFunction(pgparse.TypedConstFunction, &sqlite.FunctionImpl{
		NArgs:         3,
		Deterministic: true,
		AllowIndirect: true, // in views' queries too
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			v := args[0]
			typ, ok := c.cachedColumnType(args[1].Text(), args[2].Text())
			if !ok || v.Type() != sqlite.TypeText || !hasStoredForm(typ) && !isNumber(typ) {
				return v, nil
			}
			out, err := typedConst(typ, v.Text())
			if err != nil {
				if se, ok := err.(*sqlerr.Error); ok {
					c.failInput(se, constantInput{set: true, value: v.Text()})
				}
				return sqlite.Value{}, nil
			}
			return out, nil
		},
	})
}

// intBits is the width of integer type typ.
func intBits(typ result.Type) int {
	switch typ {
	case result.Int2:
		return 16
	case result.Int4:
		return 32
	}
	return 64
}

// isNumber reports whether typ is an integer or numeric: a constant
// compared with such a column is read as a number of its type.
func isNumber(typ result.Type) bool { return typ.IsInteger() || typ == result.Numeric }

// typedConst is s, a constant compared with a column of typ, as the
// value the column keeps: storedForm's, as the column's affinity would
// make it of that text (a boolean an integer, a double a real).
func typedConst(typ result.Type, s string) (sqlite.Value, error) {
	switch typ {
	case result.Int2, result.Int4, result.Int8:
		// Read as the column's type reads it ('zz' fails, ' 7 ' is 7),
		// not as SQLite's affinity would (no row equal, no error).
		return castInt(sqlite.TextValue(s), intBits(typ))
	case result.Numeric:
		return castNumeric(sqlite.TextValue(s), nil)
	}
	form, err := storedForm(typ, s)
	switch {
	case err != nil:
		return sqlite.Value{}, err
	case typ == result.Bool && form == "1":
		return sqlite.IntegerValue(1), nil
	case typ == result.Bool:
		return sqlite.IntegerValue(0), nil
	case typ == result.Float8:
		f, _ := strconv.ParseFloat(form, 64) // ±9e999 reads as ±Inf (with ErrRange)
		return sqlite.FloatValue(f), nil
	}
	return sqlite.TextValue(form), nil
}

// cachedColumnType returns the declared type of column col in the one
// of tables (comma-separated) that has it, from c's cache (prepare fills
// it with the statement's tables); a table of a view's query is read
// then, by a nested statement. ok is false when no table, or more than
// one, has the column.
// columnKind is the kind (as pgparse.CastKind names kinds) of column col
// of one of tables (cachedColumnType), "" if none or several have it.
func (c *conn) columnKind(tables, col string) string {
	typ, ok := c.cachedColumnType(tables, col)
	if !ok {
		return ""
	}
	for kind, r := range castResults {
		if r.typ == typ && kind != "varchar" {
			return kind
		}
	}
	return ""
}

func (c *conn) cachedColumnType(tables, col string) (typ result.Type, ok bool) {
	col = strings.ToLower(col)
	for _, t := range strings.Split(tables, ",") {
		ti, _ := c.table(t)
		if ti == nil || !ti.exists {
			continue
		}
		if tt, has := ti.types[col]; has {
			if ok {
				return 0, false
			}
			typ, ok = tt, true
		}
	}
	return typ, ok
}

// cacheTables reads the tables of a printed statement that compares
// constants with columns or casts a column into c's cache, for
// registerTypedConst and registerCastKind.
func (c *conn) cacheTables(printed *pgparse.SQLite) {
	if !strings.Contains(printed.SQL, pgparse.TypedConstFunction) && !strings.Contains(printed.SQL, pgparse.CastKindFunction) {
		return
	}
	for _, t := range printed.Tables {
		c.table(t) // a table that is not there is the statement's error
	}
}

// typedConstCall is a call of pgparse.TypedConstFunction as pgparse
// prints it: the constant, the tables, the column, as SQLite strings.
var typedConstCall = regexp.MustCompile(pgparse.TypedConstFunction + `\('((?:[^']|'')*)', '((?:[^']|'')*)', '((?:[^']|'')*)'\)`)

// checkTypedConsts reads the constants printed compares with columns
// (registerTypedConst) as values of their columns' types before the
// statement runs: PostgreSQL's parser reads them, and fails on one its
// type does not read whether or not a row is ever compared with it
// (an empty table, an IN list that matched earlier, COALESCE of a value
// that is not null), where SQLite calls the function only for the rows
// it compares. sql is the client's statement (the error's position).
// c's cache holds the tables (cacheTables).
func (c *conn) checkTypedConsts(sql string, printed *pgparse.SQLite) error {
	if !strings.Contains(printed.SQL, pgparse.TypedConstFunction) {
		return nil
	}
	unquote := func(s string) string { return strings.ReplaceAll(s, "''", "'") }
	for _, m := range typedConstCall.FindAllStringSubmatch(printed.SQL, -1) {
		typ, ok := c.cachedColumnType(unquote(m[2]), unquote(m[3]))
		if !ok || !hasStoredForm(typ) && !isNumber(typ) {
			continue
		}
		value := unquote(m[1])
		if _, err := typedConst(typ, value); err != nil {
			return atPosition(err, pgparse.LiteralPosition(sql, "", value))
		}
	}
	return nil
}

// registerCastKind makes pgparse.CastKindFunction on c: the kind of a
// cast of a column (pg_cast's second argument), with what pg_cast must
// know of the column's declared type (pgparse castSource): a boolean
// made text is true or false, not 1; a double made text is written as
// float8 is (3.4e+39, Infinity), not as a numeric; a double made an
// integer is rounded half to even. Other columns' casts are as written.
func registerCastKind(c *conn) error {
	return c.c.CreateFunction(pgparse.CastKindFunction, &sqlite.FunctionImpl{
		NArgs:         3,
		Deterministic: true,
		AllowIndirect: true, // in views' queries too
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			kind := args[0].Text()
			typ, ok := c.cachedColumnType(args[1].Text(), args[2].Text())
			switch {
			case !ok:
			case typ == result.Bool && (kind == "text" || kind == "varchar"):
				kind += ":bool"
			case typ == result.Float8 && (kind == "text" || kind == "varchar"):
				kind += ":float8"
			case typ == result.Float8 && (kind == "int2" || kind == "int4" || kind == "int8"):
				kind += ":float"
			}
			return sqlite.TextValue(kind), nil
		},
	})
}
