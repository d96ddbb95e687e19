package postgres

import (
	"reflect"
	"slices"
	"testing"
)

// The tools get the DSN's TLS settings in either form of DSN, as libpq
// reads them: quoted values with escapes, the last of a repeated keyword,
// percent-encoded URL parameters; and nothing else of it. A string libpq
// would refuse is refused.
func TestToolEnv(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		want []string
		bad  bool
	}{
		{dsn: `host=db sslmode=require sslmode=verify-ca sslrootcert='/etc/certa/ca one.pem' sslcert = /c\ d.pem sslkey='/k\'.pem' password=secret`,
			want: []string{"PGSSLCERT=/c d.pem", "PGSSLKEY=/k'.pem", "PGSSLMODE=verify-ca", "PGSSLROOTCERT=/etc/certa/ca one.pem"}},
		{dsn: "postgres://admin:secret@db:5432/certa?sslmode=verify-full&sslrootcert=%2Fca.pem&application_name=x",
			want: []string{"PGSSLMODE=verify-full", "PGSSLROOTCERT=/ca.pem"}},
		{dsn: "postgresql://db1:5432,db2:5433/certa"},
		{dsn: "host=db dbname=certa"},
		{dsn: "host=db password='it''s'", bad: true}, // '' is no escape in libpq
		{dsn: "host=db sslmode='verify-full", bad: true},
		{dsn: "host", bad: true},
	} {
		got, err := toolEnv(c.dsn)
		if c.bad {
			if err == nil {
				t.Errorf("%s: %q, want a syntax error", c.dsn, got)
			}
			continue
		}
		slices.Sort(got)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
}
