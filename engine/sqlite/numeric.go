package sqlite

import (
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Numbers the embedded engine would change.
//
// PostgreSQL reads 0.10000000000000001 and '12345678901234.500001' into a
// numeric exactly; SQLite turns both into the nearest double, before any
// CHECK constraint of the column (createtable.go: typeChecks) can see what
// was written, and would store 0.1 and 12345678901234.5 without a word.
// So what reaches SQLite as the client wrote it is checked first, and a
// number the double would change is refused (0A000):
//
//   - every numeric constant of a client statement (checkNumbers);
//   - a string constant given to a numeric column in VALUES or SET, and a
//     parameter given to one there, whose value is checked when it is
//     bound (numericInputs, checkNumericArgs).
//
// Values computed by expressions are doubles in SQLite; the column's
// CHECK constraints refuse those a double cannot hold to 15 significant
// digits. Numeric columns have REAL affinity (numericType), so that
// arithmetic on them is never SQLite's integer arithmetic: 3.00 / 2 is 1.5
// as in PostgreSQL, not 1.

// numericType is the type a numeric or decimal column is declared with in
// SQLite: "REAL" in the name gives it REAL affinity (SQLite keeps 3.00 as
// the double 3.0, not the integer 3), and declaredType reports it as
// numeric. PostgreSQL's parser reads it as a type name, so a translated
// CREATE TABLE can be translated again.
const numericType = "numeric_real"

var decimalNumber = regexp.MustCompile(`^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// storedNumber returns what SQLite stores for the number s (in decimal
// notation, as PostgreSQL's numeric input reads it) and whether that is s's
// value exactly. Text that is no such number is returned as kept: it is
// refused elsewhere or is not a number at all.
func storedNumber(s string) (stored string, kept bool) {
	s = strings.TrimSpace(s)
	if !decimalNumber.MatchString(s) {
		return s, true
	}
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false // out of a double's range
	}
	stored = strconv.FormatFloat(f, 'f', -1, 64)
	if math.Abs(f) >= 1e21 || f != 0 && math.Abs(f) < 1e-6 {
		stored = strconv.FormatFloat(f, 'g', -1, 64)
	}
	exact, ok1 := new(big.Rat).SetString(s)
	got, ok2 := new(big.Rat).SetString(stored)
	return stored, ok1 && ok2 && exact.Cmp(got) == 0
}

// errNumberChanged refuses the number s, which SQLite would store as stored
// ("": s is beyond a double's range).
func errNumberChanged(s, stored, where string) error {
	if stored == "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "the number %s%s is beyond the range of the embedded engine's numbers (doubles: about 1e308)", strings.TrimSpace(s), where)
	}
	return &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
		Message: "the number " + strings.TrimSpace(s) + where + " has more significant digits than the embedded engine keeps: it would become " + stored,
		Hint:    "Round it to 15 significant digits; SQLite holds numbers as 64-bit integers or doubles."}
}

// checkNumbers refuses a client statement with a numeric constant that
// SQLite would read as another number.
func checkNumbers(sql string) error {
	if !strings.ContainsAny(sql, ".eE") && len(sql) < 19 && !newerLiteral(sql) {
		return nil // no constant beyond an int64 or with a fraction
	}
	numbers, ok := pgparse.FindNumbers(sql)
	if !ok {
		return nil // SQLite reports what it cannot read
	}
	for _, n := range numbers {
		if strings.ContainsRune(n, '_') || len(n) > 1 && n[0] == '0' && strings.ContainsRune("xXoObB", rune(n[1])) {
			// PostgreSQL 16's forms (1_000, 0x1F), which the parser
			// certa uses reads; PostgreSQL 15 does not.
			err := sqlerr.New(sqlerr.SyntaxError, "trailing junk after numeric literal at or near %q", n)
			err.Position = int32(utf8.RuneCountInString(sql[:strings.Index(sql, n)]) + 1)
			return err
		}
		if stored, kept := storedNumber(n); !kept {
			return errNumberChanged(n, stored, "")
		}
	}
	return nil
}

// newerLiteral reports whether sql may hold a number in a form PostgreSQL
// 15 does not read: digits joined by _, or 0x, 0o, 0b, where the digits
// start no name (events_2024_01 is a name). Every client statement passes
// here: a byte scan, so that only those go to the scanner.
func newerLiteral(sql string) bool {
	for i := 1; i+1 < len(sql); i++ {
		c := sql[i]
		if c != '_' && strings.IndexByte("xXoObB", c) < 0 || !isDigit(sql[i-1]) {
			continue
		}
		j := i - 1
		for j > 0 && isDigit(sql[j-1]) {
			j--
		}
		if j > 0 && isWordByte(sql[j-1]) {
			continue // digits inside a name
		}
		if c == '_' && isDigit(sql[i+1]) || c != '_' && j == i-1 && sql[j] == '0' {
			return true
		}
	}
	return false
}

func isDigit(b byte) bool { return '0' <= b && b <= '9' }

// numericInputs checks the string constants a client INSERT or UPDATE
// gives numeric columns of ti, and returns the parameters it gives them,
// whose values checkNumericArgs checks when they are bound.
func numericInputs(w *pgparse.Write, ti *tableInfo) (params []int, err error) {
	check := func(col string, it pgparse.Item) error {
		if ti.types[strings.ToLower(col)] != result.Numeric {
			return nil
		}
		if it.Param > 0 {
			params = append(params, it.Param)
		}
		if it.Str != nil {
			if stored, kept := storedNumber(*it.Str); !kept {
				return errNumberChanged(*it.Str, stored, " for column \""+col+"\"")
			}
		}
		return nil
	}
	if err := eachInput(w, ti, check); err != nil {
		return nil, err
	}
	return params, nil
}

// eachInput calls f with each value an INSERT's VALUES or an UPDATE's
// (or ON CONFLICT's) SET gives a column of ti, and that column's name,
// until f fails.
func eachInput(w *pgparse.Write, ti *tableInfo, f func(col string, it pgparse.Item) error) error {
	targets := insertTargets(w, ti)
	for _, row := range w.Rows {
		for i, it := range row {
			if i < len(targets) {
				if err := f(targets[i], it); err != nil {
					return err
				}
			}
		}
	}
	for _, it := range w.Set {
		if err := f(it.Column, it.Item); err != nil {
			return err
		}
	}
	return nil
}

// checkNumericArgs refuses text bound to a parameter numericInputs found
// that SQLite would store as another number.
func checkNumericArgs(params []int, args []any) error {
	for _, n := range params {
		if n > len(args) {
			continue // bindArgs reports it
		}
		if s, ok := args[n-1].(string); ok {
			if stored, kept := storedNumber(s); !kept {
				return errNumberChanged(s, stored, " (parameter $"+strconv.Itoa(n)+")")
			}
		}
	}
	return nil
}

// checkNumericWrites finds what numericInputs checks in a client statement
// that writes a table with a numeric column, and records the parameters to
// check in rec.
func (c *conn) checkNumericWrites(sql string, rec *record) error {
	if len(rec.writes) == 0 || firstKeyword(sql) == "DELETE" {
		return nil
	}
	numeric := false
	for _, t := range rec.writes {
		ti, err := c.table(t)
		if err != nil {
			return err
		}
		for _, typ := range ti.types {
			numeric = numeric || typ == result.Numeric
		}
	}
	if !numeric {
		return nil
	}
	w, _ := pgparse.ParseWrite(sql)
	if w == nil {
		return nil
	}
	ti, err := c.table(w.Table)
	if err != nil {
		return err
	}
	rec.numericParams, err = numericInputs(w, ti)
	return err
}
