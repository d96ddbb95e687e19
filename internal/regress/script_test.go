package regress

import "testing"

func TestScript(t *testing.T) {
	in := `\getenv abs_srcdir PG_ABS_SRCDIR
\set filename :abs_srcdir '/data/onek.data'
COPY onek FROM :'filename';
-- COPY onek FROM :'filename';
\set filename :abs_builddir '/results/copytest.csv'
copy copytest to :'filename' csv quote '''' escape E'\\';
copy tab_progress_reporting from :'filename'
	where (salary < 2000);
COPY x FROM stdin;
SELECT 1;`
	want := `\getenv abs_srcdir PG_ABS_SRCDIR
\set filename :abs_srcdir '/data/onek.data'
\COPY onek FROM '/src/data/onek.data'
-- COPY onek FROM :'filename';
\set filename :abs_builddir '/results/copytest.csv'
\copy copytest to '/build/results/copytest.csv' csv quote '''' escape E'\\'
\copy tab_progress_reporting from '/build/results/copytest.csv' where (salary < 2000)
COPY x FROM stdin;
SELECT 1;`
	if got := Script(in, "/src", "/build"); got != want {
		t.Errorf("Script:\n%s\nwant:\n%s", got, want)
	}
}
