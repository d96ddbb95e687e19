package pgparse

import (
	"fmt"
	"testing"
)

func TestPinDefaults(t *testing.T) {
	v := func(s string) *string { return &s }
	for _, c := range []struct {
		sql    string
		values map[string]*string
		want   string
	}{
		{"ALTER TABLE t ADD COLUMN at timestamptz DEFAULT now()", map[string]*string{"at": v("2026-11-30 12:00:00+00")},
			"ALTER TABLE t ADD COLUMN at timestamptz DEFAULT '2026-11-30 12:00:00+00', ALTER COLUMN at SET DEFAULT now()"},
		{`alter table only s."T" add "Day" date not null default current_date, add n int default 1 -- comment`,
			map[string]*string{"Day": v("it's")},
			`ALTER TABLE ONLY s."T" ADD COLUMN "Day" date NOT NULL DEFAULT 'it''s', ADD COLUMN n int DEFAULT 1, ALTER COLUMN "Day" SET DEFAULT current_date`},
		{"ALTER TABLE t ADD COLUMN u text DEFAULT current_setting('x', true)", map[string]*string{"u": nil},
			"ALTER TABLE t ADD COLUMN u text DEFAULT NULL, ALTER COLUMN u SET DEFAULT current_setting('x', true)"},
	} {
		got, err := PinDefaults(c.sql, c.values)
		if err != nil || got != c.want {
			t.Errorf("PinDefaults(%q) =\n  %q, %v; want\n  %q", c.sql, got, err, c.want)
		}
	}
	if got, err := PinDefaults("ALTER TABLE t ADD COLUMN IF NOT EXISTS at timestamptz DEFAULT now()", map[string]*string{"at": v("x")}); err != nil ||
		got != "ALTER TABLE t ADD COLUMN IF NOT EXISTS at timestamptz DEFAULT 'x', ALTER COLUMN at SET DEFAULT now()" {
		t.Errorf("IF NOT EXISTS: %q, %v", got, err)
	}
	if _, err := PinDefaults("ALTER TABLE t ADD COLUMN at timestamptz DEFAULT now()", map[string]*string{"other": v("x")}); err == nil {
		t.Error("pinned a column the statement does not add")
	}
	for sql, want := range map[string]string{
		"ALTER TABLE t ADD COLUMN a int DEFAULT 1":                           "a false",
		"ALTER TABLE t ADD COLUMN IF NOT EXISTS a timestamptz DEFAULT now()": "a true",
		"ALTER TABLE t ADD COLUMN a int":                                     " false",
	} {
		if rs := Recomputes(sql); len(rs) != 1 || fmt.Sprint(rs[0].Column, " ", rs[0].IfNotExists) != want {
			t.Errorf("Recomputes(%q) = %+v, want %q", sql, rs, want)
		}
	}
}
