package pgtext

import (
	"io"
	"reflect"
	"strings"
	"testing"

	"certa/sqlerr"
)

var (
	textFormat = CopyFormat{Delimiter: '\t', Null: `\N`}
	csvFormat  = CopyFormat{CSV: true, Delimiter: ',', Quote: '"', Escape: '"'}
)

func str(s string) *string { return &s }

// readAll reads every row of data, or the first error's SQLSTATE.
func readAll(data string, f CopyFormat, columns int) ([][]*string, string) {
	cols := make([]string, columns)
	for i := range cols {
		cols[i] = string(rune('a' + i))
	}
	r := NewCopyReader(strings.NewReader(data), f, cols)
	var rows [][]*string
	for {
		row, err := r.Next()
		if err == io.EOF {
			return rows, ""
		}
		if err != nil {
			return rows, sqlerr.Code(err)
		}
		rows = append(rows, row)
	}
}

func TestCopyReaderText(t *testing.T) {
	for _, c := range []struct {
		data string
		cols int
		want [][]*string
		code string
	}{
		{"1\tx\n2\t\\N\n", 2, [][]*string{{str("1"), str("x")}, {str("2"), nil}}, ""},
		{"1\tx", 2, [][]*string{{str("1"), str("x")}}, ""}, // no newline at the end
		{`a\tb\nc\\d\x41\101\.\q` + "\n", 1, [][]*string{{str("a\tb\nc\\dAA.q")}}, ""},
		{"a\\\nb\n", 1, [][]*string{{str("a\nb")}}, ""}, // an escaped newline is data
		{"\\\\N\n", 1, [][]*string{{str(`\N`)}}, ""},    // an escaped backslash: not NULL
		{"\n", 1, [][]*string{{str("")}}, ""},
		{"1\r\n2\r\n", 1, [][]*string{{str("1")}, {str("2")}}, ""},
		{"1\n\\.\n2\n", 1, [][]*string{{str("1")}}, ""},
		{"1\tx\ty\n", 2, nil, "22P04"},
		{"1\n", 2, nil, "22P04"},
		{"1\n2\r\n", 1, [][]*string{{str("1")}}, "22P04"},
		{"a\xffb\n", 1, nil, "22021"},
		{`\xff` + "\n", 1, nil, "22021"},
		{`\000` + "\n", 1, nil, "22021"},
	} {
		got, code := readAll(c.data, textFormat, c.cols)
		if code != c.code || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %s, %s; want %s, %s", c.data, show(got), code, show(c.want), c.code)
		}
	}
}

func TestCopyReaderCSV(t *testing.T) {
	header := csvFormat
	header.Header = true
	match := header
	match.HeaderMatch = true
	forced := csvFormat
	forced.ForceNotNull, forced.ForceNull = []bool{true, false}, []bool{false, true}
	for _, c := range []struct {
		data string
		f    CopyFormat
		want [][]*string
		code string
	}{
		{"1,x\n2,\n3,\"\"\n", csvFormat, [][]*string{{str("1"), str("x")}, {str("2"), nil}, {str("3"), str("")}}, ""},
		{"\"a,b\",\"c\"\"d\"\n", csvFormat, [][]*string{{str("a,b"), str(`c"d`)}}, ""},
		{"\"line\none\",2\r\n", csvFormat, [][]*string{{str("line\none"), str("2")}}, ""},
		{"ab\"c,d\"e,f\n", csvFormat, [][]*string{{str("abc,de"), str("f")}}, ""},
		{"a,b\n1,2\n", header, [][]*string{{str("1"), str("2")}}, ""},
		{"a,b\n1,2\n", match, [][]*string{{str("1"), str("2")}}, ""},
		{"a,x\n1,2\n", match, nil, "22P04"},
		{",\"\"\n", forced, [][]*string{{str(""), nil}}, ""},
		{"\"open,1\n", csvFormat, nil, "22P04"},
		{"1,2\n\\.\n3,4\n", csvFormat, [][]*string{{str("1"), str("2")}}, ""},
	} {
		got, code := readAll(c.data, c.f, 2)
		if code != c.code || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: got %s, %s; want %s, %s", c.data, show(got), code, show(c.want), c.code)
		}
	}
	escaped := csvFormat
	escaped.Escape = '\\'
	got, code := readAll(`"a\"b","c\\d"`+"\n", escaped, 2)
	if code != "" || !reflect.DeepEqual(got, [][]*string{{str(`a"b`), str(`c\d`)}}) {
		t.Errorf("ESCAPE '\\': got %s, %s", show(got), code)
	}
}

// TestCopyRowsRoundTrip: what AppendCopyRow writes reads back the same.
func TestCopyRowsRoundTrip(t *testing.T) {
	rows := [][]*string{
		{str("plain"), nil},
		{str("tab\tnew\nline\rback\\slash"), str(`\N`)},
		{str(""), str(`"quoted", with comma`)},
		{str(`\.`), str("\b\f\v")},
	}
	for _, f := range []CopyFormat{textFormat, csvFormat} {
		var data []byte
		for _, r := range rows {
			data = AppendCopyRow(data, f, r)
		}
		got, code := readAll(string(data), f, 2)
		if code != "" || !reflect.DeepEqual(got, rows) {
			t.Errorf("csv %v: %q read back as %s, %s", f.CSV, data, show(got), code)
		}
	}
	if got := string(AppendCopyRow(nil, textFormat, rows[1])); got != `tab\tnew\nline\rback\\slash`+"\t"+`\\N`+"\n" {
		t.Errorf("text: %q", got)
	}
	if got := string(AppendCopyRow(nil, csvFormat, rows[2])); got != `"","""quoted"", with comma"`+"\n" {
		t.Errorf("csv: %q", got)
	}
}

func show(rows [][]*string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("[")
		for i, v := range r {
			if i > 0 {
				b.WriteString(" ")
			}
			if v == nil {
				b.WriteString("NULL")
			} else {
				b.WriteString(strings.ReplaceAll(*v, "\n", `⏎`))
			}
		}
		b.WriteString("]")
	}
	return b.String()
}
