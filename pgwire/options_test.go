package pgwire

import (
	"reflect"
	"testing"

	"certa/sqlerr"
)

func TestStartupSettings(t *testing.T) {
	got, err := startupSettings(map[string]string{
		"user": "u", "database": "d", "client_encoding": "UTF8", "_pq_.x": "1",
		"application_name": "app", "search_path": "a, b",
		"options": `-c statement_timeout=5s  -csearch_path=my\ schema,public --lock-timeout=1s -c x.y=a\\b`,
	})
	want := [][2]string{{"statement_timeout", "5s"}, {"search_path", "my schema,public"}, {"lock_timeout", "1s"}, {"x.y", `a\b`},
		{"application_name", "app"}, {"search_path", "a, b"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v\nwant %q", got, err, want)
	}
	for _, opts := range []string{"-Z 100", "-c statement_timeout", "-c"} {
		if _, err := startupSettings(map[string]string{"options": opts}); sqlerr.Code(err) != sqlerr.SyntaxError {
			t.Errorf("options %q: %v, want 42601", opts, err)
		}
	}
}
