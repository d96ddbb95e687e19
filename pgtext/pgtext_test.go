package pgtext

import (
	"testing"

	"certa/result"
	"certa/sqlerr"
)

func TestParseBool(t *testing.T) {
	for in, want := range map[string]bool{"t": true, "TRUE": true, " yes ": true, "y": true, "on": true, "1": true, "tr": true,
		"f": false, "False": false, "no": false, "n": false, "off": false, "of": false, "0": false} {
		if got, ok := ParseBool(in); !ok || got != want {
			t.Errorf("ParseBool(%q) = %v, %v", in, got, ok)
		}
	}
	for _, in := range []string{"", "o", "maybe", "2", "truee", "yess"} {
		if _, ok := ParseBool(in); ok {
			t.Errorf("ParseBool(%q) accepted", in)
		}
	}
}

func TestParseInt(t *testing.T) {
	if v, err := ParseInt(" -42 ", 32); err != nil || v != -42 {
		t.Errorf("-42: %d %v", v, err)
	}
	for in, code := range map[string]string{"12abc": sqlerr.InvalidTextRepresentation, "": sqlerr.InvalidTextRepresentation,
		"--1": sqlerr.InvalidTextRepresentation, "4.5": sqlerr.InvalidTextRepresentation, "2147483648": sqlerr.NumericValueOutOfRange} {
		if _, err := ParseInt(in, 32); err == nil || err.(*sqlerr.Error).Code != code {
			t.Errorf("ParseInt(%q): %v, want %s", in, err, code)
		}
	}
}

func TestParseTimeErrors(t *testing.T) {
	for in, code := range map[string]string{"2024-02-30": sqlerr.DatetimeFieldOverflow, "2024-01-0x": sqlerr.InvalidDatetimeFormat,
		"Jan 1 2024": sqlerr.FeatureNotSupported} {
		if _, err := ParseTime(result.Date, in); err == nil || err.(*sqlerr.Error).Code != code {
			t.Errorf("ParseTime(%q): %v, want %s", in, err, code)
		}
	}
}

func TestFormatJSONB(t *testing.T) {
	for in, want := range map[string]string{
		`{"pages":412}`: `{"pages": 412}`,
		` {"bb":1,"a":[1,2.50,1e2,-0,1.5e-3],"a":"x\u00e9\n"} `: `{"a": "xé\n", "bb": 1}`,
		`[true,false,null,{}]`:   `[true, false, null, {}]`,
		`"q\"\\"`:                `"q\"\\"`,
		`[1.50e1, 12E-1, 0.000]`: `[15.0, 1.2, 0.000]`,
	} {
		if got, err := FormatJSONB(in); err != nil || got != want {
			t.Errorf("FormatJSONB(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`{`, `1 2`, `{'a':1}`, ``, `1f2`, `true, false`, `[1]]`, `{"a":1}x`} {
		if _, err := FormatJSONB(bad); err == nil {
			t.Errorf("FormatJSONB(%q): no error", bad)
		}
	}
}

func TestParseTimeOffsets(t *testing.T) {
	for in, want := range map[string]string{
		"2026-11-27 02:38:04.113 +00:00": "2026-11-27 02:38:04.113+00", // Sequelize's form
		"2026-11-27 04:38:04 +02":        "2026-11-27 02:38:04+00",
		"2026-11-27T02:38:04Z":           "2026-11-27 02:38:04+00",
	} {
		got, err := ParseTime(result.Timestamptz, in)
		if err != nil || FormatTime(result.Timestamptz, got) != want {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", in, FormatTime(result.Timestamptz, got), err, want)
		}
	}
}

func TestFormatArray(t *testing.T) {
	a, b, c, d := "id", "a b", "", "NULL"
	if got := FormatArray([]*string{&a, nil, &b, &c, &d}); got != `{id,NULL,"a b","","NULL"}` {
		t.Errorf("FormatArray = %s", got)
	}
}

// Input PostgreSQL reads after an ISO date or time is read too, or
// refused as not supported (0A000), never called malformed (22007).
func TestParseTimeVariants(t *testing.T) {
	for in, want := range map[string]string{
		"1999-01-08 04:05:06 +0100": "1999-01-08 03:05:06+00",
		"1999-01-08 04:05:06-0530":  "1999-01-08 09:35:06+00",
		"1999-01-08 04:05:06 UTC":   "1999-01-08 04:05:06+00",
		"1999-01-08 04:05:06 AD":    "1999-01-08 04:05:06+00",
	} {
		got, err := ParseTime(result.Timestamptz, in)
		if err != nil || FormatTime(result.Timestamptz, got) != want {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", in, FormatTime(result.Timestamptz, got), err, want)
		}
	}
	for in, typ := range map[string]result.Type{
		"2040-04-10 BC":                 result.Date,
		"2000-01-01 00:00:00 BC":        result.Timestamp,
		"1999-01-08 04:05:06 PST":       result.Timestamptz,
		"1999-01-08 04:05 Europe/Paris": result.Timestamptz,
	} {
		if _, err := ParseTime(typ, in); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("ParseTime(%q): %v, want 0A000", in, err)
		}
	}
	if _, err := ParseTime(result.Date, "2024-01-0x"); sqlerr.Code(err) != sqlerr.InvalidDatetimeFormat {
		t.Errorf("2024-01-0x: %v, want 22007", err)
	}
}
