package pgwire

import (
	"strings"
	"testing"
	"time"

	"certa/pgtext"
	"certa/result"
)

func TestConfigDefaultsAndValidate(t *testing.T) {
	var zero Config
	if err := zero.Validate(); err != nil {
		t.Fatalf("zero Config: %v", err)
	}
	d := zero.withDefaults()
	if d.ServerVersion != DefaultServerVersion || d.MaxMessageSize != 64<<20 || d.MaxConns != 1000 ||
		d.StartupTimeout != 10*time.Second || d.MaxPending != 250 || d.MaxPendingPerAddress != 32 || d.Logger == nil {
		t.Fatalf("defaults: %+v", d)
	}
	for _, v := range []string{"16", "16.0", "16.0 (certa)", "9.6.24", "17beta1"} {
		if err := (Config{ServerVersion: v}).Validate(); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{ServerVersion: "certa 1.0"}, "ServerVersion"},
		{Config{ServerVersion: "16."}, "ServerVersion"},
		{Config{MaxMessageSize: 100}, "MaxMessageSize"},
		{Config{MaxMessageSize: 1 << 30}, "MaxMessageSize"},
		{Config{MaxConns: -1}, "MaxConns"},
		{Config{StartupTimeout: -time.Second}, "StartupTimeout"},
	} {
		err := c.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want an error about %s", c.cfg, err, c.want)
		}
	}
}

func TestAppendText(t *testing.T) {
	for _, c := range []struct {
		v    result.Value
		want string
	}{
		{int64(0), "0"},
		{int64(-9223372036854775808), "-9223372036854775808"},
		{"", ""},
		{"a\x00b", "a\x00b"},
		{[]byte{}, `\x`},
		{[]byte{0x00, 0x0f, 0xab}, `\x000fab`},
		{true, "t"},
		{false, "f"},
	} {
		got, err := pgtext.AppendValue(nil, c.v)
		if err != nil || string(got) != c.want {
			t.Errorf("%#v: %q, %v; want %q", c.v, got, err, c.want)
		}
	}
	for _, f := range testFloats {
		if got := string(pgtext.AppendFloat8(nil, f.f)); got != f.text {
			t.Errorf("%v: %q, want %q", f.f, got, f.text)
		}
	}
	if _, err := pgtext.AppendValue(nil, 3); err == nil || !strings.Contains(err.Error(), "int") {
		t.Errorf("int accepted: %v", err)
	}
}
