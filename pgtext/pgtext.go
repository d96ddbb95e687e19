// Package pgtext reads and writes values in PostgreSQL's text forms: what
// PostgreSQL accepts as input for a type, and what it prints (DateStyle
// ISO, TimeZone UTC). The wire front end decodes parameters with it, and
// the SQLite engine's casts follow the same rules.
package pgtext

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"certa/result"
	"certa/sqlerr"
)

// ParseInt reads PostgreSQL's integer input for a type of bits (16, 32,
// 64): blanks around, an optional sign, decimal digits. Errors: 22P02 for
// other text, 22003 for a value out of the type's range.
func ParseInt(s string, bits int) (int64, error) {
	t := strings.TrimSpace(s)
	digits := strings.TrimLeft(t, "+-")
	if len(t)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
		return 0, sqlerr.New(sqlerr.InvalidTextRepresentation, "invalid input syntax for type %s: %q", IntTypeName(bits), s)
	}
	v, err := strconv.ParseInt(t, 10, bits)
	if err != nil {
		return 0, IntOutOfRange(bits)
	}
	return v, nil
}

// IntTypeName is the name of PostgreSQL's integer type of bits.
func IntTypeName(bits int) string {
	switch bits {
	case 16:
		return "smallint"
	case 32:
		return "integer"
	}
	return "bigint"
}

// IntOutOfRange is PostgreSQL's error for a value out of the range of
// the integer type of bits.
func IntOutOfRange(bits int) error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "%s out of range", IntTypeName(bits))
}

// ParseFloat reads PostgreSQL's double precision input, NaN and the
// infinities included.
func ParseFloat(s string) (float64, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "nan":
		return math.NaN(), nil
	case "infinity", "+infinity", "inf", "+inf":
		return math.Inf(1), nil
	case "-infinity", "-inf":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// ParseBool reads PostgreSQL's boolean input: true, yes, on, 1 and
// false, no, off, 0 in any case, blanks around, and any prefix that is
// not ambiguous (t, y, f, n, "of" but not "o"). ok is false for others.
func ParseBool(s string) (v, ok bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch {
	case t == "":
		return false, false
	case t == "1":
		return true, true
	case t == "0":
		return false, true
	case strings.HasPrefix("true", t), strings.HasPrefix("yes", t):
		return true, true
	case strings.HasPrefix("false", t), strings.HasPrefix("no", t):
		return false, true
	case t == "on":
		return true, true
	case len(t) >= 2 && strings.HasPrefix("off", t):
		return false, true
	}
	return false, false
}

// timeLayouts are the text forms of dates and times accepted: PostgreSQL's
// output and what drivers send, and SQLite's own.
var timeLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999 Z07:00", // a space before the offset: Sequelize
	"2006-01-02 15:04:05.999999999 Z07",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	// Without seconds, as PostgreSQL reads them too.
	"2006-01-02 15:04Z07:00",
	"2006-01-02 15:04Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
	"15:04:05.999999999",
	"15:04",
}

// FormatTime is PostgreSQL's output form (DateStyle ISO, TimeZone UTC) of
// a date, time, timestamp or timestamptz.
func FormatTime(typ result.Type, t time.Time) string {
	switch typ {
	case result.Date:
		return t.Format("2006-01-02")
	case result.Time:
		return t.Format("15:04:05.999999")
	case result.Timestamptz:
		return t.UTC().Format("2006-01-02 15:04:05.999999") + "+00"
	}
	return t.Format("2006-01-02 15:04:05.999999")
}

// TimeTypeName is PostgreSQL's name of a date or time type.
func TimeTypeName(typ result.Type) string {
	switch typ {
	case result.Date:
		return "date"
	case result.Time:
		return "time"
	case result.Timestamptz:
		return "timestamp with time zone"
	}
	return "timestamp"
}

// isoEra and isoZone match what PostgreSQL reads after an ISO date or
// time besides timeLayouts' offsets: an era, an offset without a colon
// (+0100) and a zone name (PST, Europe/Paris).
var (
	isoEra    = regexp.MustCompile(`(?i)\s+(AD|BC)$`)
	isoOffset = regexp.MustCompile(`\s*([+-]\d{2})(\d{2})$`)
	isoZone   = regexp.MustCompile(`\d:\d\d(?::\d\d(?:\.\d*)?)?\s*([A-Za-z][A-Za-z_/+-]*)$`)
)

// isoVariant reads what follows an ISO date or time that timeLayouts do
// not: it returns s in a form they do ("" if none), or the refusal of a
// form PostgreSQL reads and the embedded engine does not, rather than
// call valid input malformed (22007).
func isoVariant(typ result.Type, s string) (string, error) {
	if !isoLike.MatchString(s) {
		return "", nil
	}
	if m := isoEra.FindStringSubmatch(s); m != nil {
		if strings.EqualFold(m[1], "AD") {
			return strings.TrimSpace(s[:len(s)-len(m[0])]), nil
		}
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "%s input %q is before the common era: the embedded engine keeps dates from 0001-01-01 on", TimeTypeName(typ), s)
	}
	if m := isoOffset.FindStringSubmatchIndex(s); m != nil && strings.Count(s, ":") > 0 {
		return s[:m[0]] + s[m[2]:m[3]] + ":" + s[m[4]:m[5]], nil
	}
	if m := isoZone.FindStringSubmatchIndex(s); m != nil {
		zone := s[m[2]:m[3]]
		switch strings.ToUpper(zone) {
		case "UTC", "GMT", "Z", "ZULU", "UT":
			return strings.TrimSpace(s[:m[2]]) + "+00", nil
		}
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "%s input %q names the time zone %q, which the embedded engine does not read: write its offset (+02, -05:30)", TimeTypeName(typ), s, zone)
	}
	return "", nil
}

// isoLike matches the start of an ISO 8601 date or time.
var isoLike = regexp.MustCompile(`^(\d{4}-\d{1,2}-\d{1,2}|\d{1,2}:\d{2})`)

// ParseTime reads a date or time in one of the ISO forms (timeLayouts); a
// timestamptz without a zone is in UTC. An ISO form with a field out of
// range is refused with 22008 and a malformed one with 22007, as
// PostgreSQL does; the other forms PostgreSQL reads ('Jan 1 2024', ...)
// are refused with 0A000.
func ParseTime(typ result.Type, s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var lastErr error
	for _, layout := range timeLayouts {
		t, err := time.Parse(layout, s)
		if err != nil {
			if lastErr == nil || strings.Contains(err.Error(), "out of range") {
				lastErr = err
			}
			continue
		}
		if typ == result.Timestamptz {
			t = t.UTC()
		}
		if typ == result.Timestamp || typ == result.Date {
			t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
		}
		return t, nil
	}
	if again, err := isoVariant(typ, s); err != nil || again != "" {
		if err != nil {
			return time.Time{}, err
		}
		return ParseTime(typ, again)
	}
	switch {
	case !isoLike.MatchString(s):
		return time.Time{}, sqlerr.New(sqlerr.FeatureNotSupported,
			"%s input %q is not in a form the embedded engine reads: write it as ISO 8601 (2024-01-31 13:45:00+02)", TimeTypeName(typ), s)
	case lastErr != nil && strings.Contains(lastErr.Error(), "out of range"):
		e := sqlerr.New(sqlerr.DatetimeFieldOverflow, "date/time field value out of range: %q", s)
		if strings.Contains(lastErr.Error(), "month out of range") {
			// A month past 12 may be a day written first.
			e.Hint = `Perhaps you need a different "datestyle" setting.`
		}
		return time.Time{}, e
	}
	return time.Time{}, sqlerr.New(sqlerr.InvalidDatetimeFormat, "invalid input syntax for type %s: %q", TimeTypeName(typ), s)
}
