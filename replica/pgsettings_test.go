package replica

import (
	"slices"
	"testing"

	"certa/sqlerr"
)

func TestSplitNameList(t *testing.T) {
	for list, want := range map[string][]string{
		`"$user", public`:           {"$user", "public"},
		`"public, pg_catalog"`:      {"public, pg_catalog"},
		`App ,  "My ""S"""`:         {"app", `My "S"`},
		``:                          nil,
		`public,pg_catalog,pg_temp`: {"public", "pg_catalog", "pg_temp"},
	} {
		if got := splitNameList(list); !slices.Equal(got, want) {
			t.Errorf("splitNameList(%q) = %q, want %q", list, got, want)
		}
	}
}

// The embedded engine takes a parameter only where it does what the value
// says, shows it as PostgreSQL does, and refuses the rest with
// PostgreSQL's codes.
func TestEmbeddedSetting(t *testing.T) {
	for _, c := range []struct {
		name, value, shown, code string
	}{
		{"work_mem", "65536", "64MB", ""},
		{"work_mem", "1536kB", "1536kB", ""},
		{"work_mem", "2GB", "2GB", ""},
		{"work_mem", "10", "", sqlerr.InvalidParameterValue},
		{"work_mem", "5 mb", "", sqlerr.InvalidParameterValue},
		{"temp_buffers", "1000", "8000kB", ""},
		{"statement_timeout", "90000", "90s", ""},
		{"statement_timeout", "1h", "1h", ""},
		{"vacuum_cost_delay", "0.5", "500us", ""},
		{"enable_seqscan", "of", "off", ""},
		{"enable_seqscan", "banana", "", sqlerr.InvalidParameterValue},
		{"intervalstyle", "ISO_8601", "iso_8601", ""},
		{"search_path", `"$user", public`, `"$user", public`, ""},
		{"search_path", "app, public", "", sqlerr.FeatureNotSupported},
		{"search_path", `"public, pg_catalog"`, "", sqlerr.FeatureNotSupported},
		{"standard_conforming_strings", "off", "", sqlerr.FeatureNotSupported},
		{"bytea_output", "escape", "", sqlerr.FeatureNotSupported},
		{"extra_float_digits", "0", "", sqlerr.FeatureNotSupported},
		{"extra_float_digits", "3", "3", ""},
		{"shared_buffers", "1GB", "", sqlerr.CantChangeRuntimeParam},
		{"log_statement", "all", "", sqlerr.InsufficientPrivilege},
		{"no_such_thing", "1", "", sqlerr.UndefinedObject},
		{"myapp.user_id", "7", "7", ""},
		{"work_mem", "", "", ""},
	} {
		shown, err := embeddedSetting(c.name, c.value, false)
		if sqlerr.Code(err) != c.code || err == nil && shown != c.shown {
			t.Errorf("%s = %q: %q, %v; want %q, %s", c.name, c.value, shown, err, c.shown, c.code)
		}
	}
	if _, err := embeddedSetting("log_connections", "on", false); sqlerr.Code(err) != sqlerr.CantChangeRuntimeParam {
		t.Errorf("log_connections by SET: %v", err)
	}
	if _, err := embeddedSetting("log_connections", "on", true); sqlerr.Code(err) != sqlerr.InsufficientPrivilege {
		t.Errorf("log_connections at startup: %v", err)
	}
}
