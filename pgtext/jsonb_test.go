package pgtext

import (
	"errors"
	"testing"

	"certa/sqlerr"
)

// Escapes PostgreSQL refuses in jsonb input are refused with its code and
// detail, not taken as U+FFFD; escaped backslashes and pairs are fine.
func TestFormatJSONBEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "\ud83d\ud83d"}`:   "22P02 Unicode high surrogate must not follow a high surrogate.",
		`{"a": "\ude04\ud83d"}`:   "22P02 Unicode low surrogate must follow a high surrogate.",
		`{"a": "\ud83dX"}`:        "22P02 Unicode low surrogate must follow a high surrogate.",
		`["\ud83d"]`:              "22P02 Unicode low surrogate must follow a high surrogate.",
		`{"a": "null \u0000 x"}`:  `22P05 \u0000 cannot be converted to text.`,
		`{"\u0000": 1}`:           `22P05 \u0000 cannot be converted to text.`,
		`{"a": "\ud83d\ude04"}`:   `{"a": "😄"}`,
		`{"a": "null \\u0000 x"}`: `{"a": "null \\u0000 x"}`,
		`{"a": "q\"\u00e9"}`:      `{"a": "q\"é"}`,
	} {
		got, err := FormatJSONB(in)
		if se := (*sqlerr.Error)(nil); errors.As(err, &se) {
			got = se.Code + " " + se.Detail
		} else if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
