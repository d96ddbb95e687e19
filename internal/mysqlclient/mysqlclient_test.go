package mysqlclient

import (
	"reflect"
	"testing"
)

func TestPlaceholdersFollowTheNumbers(t *testing.T) {
	q, args, err := placeholders("UPDATE t SET v = $2 WHERE id = $1 AND w = $2", []any{1, "x"})
	if err != nil {
		t.Fatal(err)
	}
	if q != "UPDATE t SET v = ? WHERE id = ? AND w = ?" || !reflect.DeepEqual(args, []any{"x", 1, "x"}) {
		t.Fatalf("got %q %v", q, args)
	}
	if _, _, err := placeholders("SELECT $3", []any{1}); err == nil {
		t.Fatal("$3 with one argument was accepted")
	}
}

func TestParseURL(t *testing.T) {
	cfg, err := parseURL("mysql://bench:pw@127.0.0.1:13306/bench")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.User != "bench" || cfg.Passwd != "pw" || cfg.Addr != "127.0.0.1:13306" || cfg.DBName != "bench" {
		t.Fatalf("got %+v", cfg)
	}
	if _, err := parseURL("127.0.0.1:13306"); err == nil {
		t.Fatal("a bare address was accepted")
	}
}
