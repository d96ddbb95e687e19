package regress

import (
	"slices"
	"testing"
)

func TestCompare(t *testing.T) {
	const pg = `SELECT 1/0;
ERROR:  division by zero
SELECT bool 'x';
ERROR:  invalid input syntax for type boolean: "x"
LINE 1: SELECT bool 'x';
                    ^
CREATE TABLE t (a int) INHERITS (p);
NOTICE:  merging column "a" with inherited definition
SELECT 1 AS one;
 one 
-----
   1
(1 row)

`
	for _, tc := range []struct {
		name  string
		certa string
		class Class
		line  int
		want  []string // the first lines of Difference.Want
		got   []string // the first lines of Difference.Got
	}{
		{"identical", pg, Identical, 0, nil, nil},
		{"no caret, no notice", `SELECT 1/0;
ERROR:  division by zero
SELECT bool 'x';
ERROR:  invalid input syntax for type boolean: "x"
CREATE TABLE t (a int) INHERITS (p);
SELECT 1 AS one;
 one 
-----
   1
(1 row)

`, Messages, 5, []string{"LINE 1: SELECT bool 'x';"}, []string{"CREATE TABLE t (a int) INHERITS (p);"}},
		{"other error text, a hint more", `SELECT 1/0;
ERROR:  integer division by zero
HINT:  Do not.
SELECT bool 'x';
ERROR:  invalid input syntax for type boolean: "x"
LINE 1: SELECT bool 'x';
                    ^
CREATE TABLE t (a int) INHERITS (p);
NOTICE:  merging column "a" with inherited definition
SELECT 1 AS one;
 one 
-----
   1
(1 row)

`, Messages, 2, []string{"ERROR:  division by zero"}, []string{"ERROR:  integer division by zero"}},
		{"error on one side only", `SELECT 1/0;
SELECT bool 'x';
ERROR:  invalid input syntax for type boolean: "x"
LINE 1: SELECT bool 'x';
                    ^
CREATE TABLE t (a int) INHERITS (p);
NOTICE:  merging column "a" with inherited definition
SELECT 1 AS one;
 one 
-----
   1
(1 row)

`, Differs, 2, []string{"ERROR:  division by zero"}, []string{"SELECT bool 'x';"}},
		{"other result", `SELECT 1/0;
ERROR:  division by zero
SELECT bool 'x';
ERROR:  invalid input syntax for type boolean: "x"
CREATE TABLE t (a int) INHERITS (p);
SELECT 1 AS one;
 one 
-----
   2
(1 row)

`, Differs, 12, []string{"   1", "(1 row)"}, []string{"   2", "(1 row)"}},
		{"output cut short", `SELECT 1/0;
ERROR:  division by zero
SELECT bool 'x';
`, Differs, 4, []string{`ERROR:  invalid input syntax for type boolean: "x"`}, []string{"(end of output)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			class, d := Compare([]byte(pg), []byte(tc.certa))
			if class != tc.class {
				t.Fatalf("class %s, want %s", class, tc.class)
			}
			if class == Identical {
				return
			}
			if d.Line != tc.line {
				t.Errorf("first difference at line %d, want %d", d.Line, tc.line)
			}
			if len(d.Want) > excerptLines || len(d.Got) > excerptLines {
				t.Errorf("excerpts longer than %d lines: %q %q", excerptLines, d.Want, d.Got)
			}
			if !slices.Equal(d.Want[:min(len(tc.want), len(d.Want))], tc.want) {
				t.Errorf("PostgreSQL's lines %q, want them to start with %q", d.Want, tc.want)
			}
			if !slices.Equal(d.Got[:min(len(tc.got), len(d.Got))], tc.got) {
				t.Errorf("certa's lines %q, want them to start with %q", d.Got, tc.got)
			}
		})
	}
}

// A message line is recognized with psql's location prefix too, and a
// result row that merely starts like one is not a message.
func TestMessageLines(t *testing.T) {
	for line, want := range map[string]bool{
		"NOTICE:  table \"x\" does not exist, skipping": true,
		"psql:<stdin>:12: WARNING:  something":          true,
		"LINE 3:     FROM t":                            true,
		"CONTEXT:  PL/pgSQL function f() line 3":        true,
		" NOTICE: in a result":                          false,
		"NOTICES":                                       false,
		"ERROR:  division by zero":                      false, // counted, not dropped
	} {
		if got := messageLine.MatchString(line); got != want {
			t.Errorf("messageLine(%q) = %v, want %v", line, got, want)
		}
	}
	if !errorLine.MatchString("psql:<stdin>:3: ERROR:  x") || errorLine.MatchString(" ERROR:  in a result") {
		t.Error("errorLine")
	}
	if !caretLine.MatchString("                    ^") || caretLine.MatchString(" ^ x") {
		t.Error("caretLine")
	}
}
