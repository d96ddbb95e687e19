package pgparse

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"certa/sqlerr"
)

var update = flag.Bool("update", false, "rewrite testdata/sqlite.golden from the printer's output")

// TestToSQLiteGolden prints every statement of testdata/sqlite.golden and
// compares with what the file says it prints: the SQLite text, or the
// error's SQLSTATE and message. Each case is a "-- pg" line, the
// PostgreSQL text, a "-- sqlite" line and the expected output. Run with
// -update to rewrite the file, then read the diff.
func TestToSQLiteGolden(t *testing.T) {
	const path = "testdata/sqlite.golden"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cases := strings.Split(string(data), "-- pg\n")
	out.WriteString(cases[0])
	for _, c := range cases[1:] {
		pg, want, ok := strings.Cut(c, "-- sqlite\n")
		if !ok {
			t.Fatalf("case without -- sqlite: %q", c)
		}
		got := printed(strings.TrimSpace(pg))
		if strings.TrimSpace(want) != got {
			t.Errorf("%s\n  printed: %s\n  want:    %s", strings.TrimSpace(pg), got, strings.TrimSpace(want))
		}
		out.WriteString("-- pg\n" + strings.TrimSpace(pg) + "\n-- sqlite\n" + got + "\n\n")
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.TrimRight(out.String(), "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// printed is the printer's output for sql as the golden file writes it.
func printed(sql string) string {
	s, err := ToSQLite(sql)
	switch {
	case errors.Is(err, ErrNotPrinted):
		return "(not printed)"
	case err != nil:
		e := sqlerr.As(err)
		return "ERROR " + e.Code + ": " + e.Message
	}
	out := s.SQL
	if len(s.Columns) > 0 {
		var cols []string
		for _, c := range s.Columns {
			col := c.Name
			if c.Cast != "" {
				col += " " + c.Cast
			}
			cols = append(cols, col)
		}
		out += "\n   columns: " + strings.Join(cols, ", ")
	}
	if len(s.Params) > 0 {
		var params []string
		for i, prm := range s.Params {
			desc := "?"
			switch {
			case prm.Kind != "":
				desc = prm.Kind
			case prm.Column != "" && prm.Table != "":
				desc = prm.Table + "." + prm.Column
			case prm.Column != "":
				desc = prm.Column + " of " + strings.Join(s.Tables, "/")
			case prm.Position >= 0:
				desc = fmt.Sprintf("%s column %d", prm.Table, prm.Position+1)
			}
			params = append(params, fmt.Sprintf("$%d %s", i+1, desc))
		}
		out += "\n   params: " + strings.Join(params, ", ")
	}
	if s.Rest != "" {
		out += "\n   rest: " + s.Rest
	}
	return out
}
