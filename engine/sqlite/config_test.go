package sqlite

import (
	"path/filepath"
	"testing"
	"time"
)

func TestConfigValidateAndDefaults(t *testing.T) {
	for _, c := range []Config{
		{},
		{Path: "x", MaxConns: -1},
		{Path: "x", ApplyGrace: -time.Second},
		{Path: "x", LockTimeout: -time.Second},
		{Path: "x", SchemaGrace: -time.Second},
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: valid", c)
		}
		if _, err := Open(c); err == nil {
			t.Errorf("%+v: opened", c)
		}
	}
	c := Config{Path: filepath.Join(t.TempDir(), "db")}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	e, err := Open(c)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want := Config{Path: c.Path, MaxConns: DefaultMaxConns, ApplyGrace: DefaultApplyGrace, LockTimeout: DefaultLockTimeout, SchemaGrace: DefaultSchemaGrace}
	if e.cfg != want {
		t.Fatalf("config %+v, want %+v", e.cfg, want)
	}
}
