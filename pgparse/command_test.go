package pgparse

import (
	"reflect"
	"strings"
	"testing"

	"certa/sqlerr"
)

func TestParseCommand(t *testing.T) {
	for sql, want := range map[string]Command{
		"SELECT 1":                                 {"SelectStmt", "SELECT"},
		"CREATE ROLE r":                            {"CreateRoleStmt", "CREATE ROLE"},
		"/* c */ NOTIFY x":                         {"NotifyStmt", "NOTIFY"},
		"EXPLAIN (COSTS OFF) SELECT 1":             {"ExplainStmt", "EXPLAIN"},
		"SECURITY LABEL ON TABLE t IS 'x'":         {"SecLabelStmt", "SECURITY LABEL"},
		"DO $$ BEGIN END $$":                       {"DoStmt", "DO"},
		"create unique index i on t (a); select 1": {"IndexStmt", "CREATE UNIQUE"},
	} {
		got, err := ParseCommand(sql)
		if err != nil || got != want {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v", sql, got, err, want)
		}
	}
	if _, err := ParseCommand("DROP OPERATOR;"); sqlerr.Code(err) != sqlerr.SyntaxError || !strings.Contains(err.Error(), `at or near ";"`) {
		t.Errorf("ParseCommand of what PostgreSQL's parser refuses: %v, want its syntax error", err)
	}
}

func TestParseSetValue(t *testing.T) {
	for sql, want := range map[string]Set{
		"SET ROLE r2":                         {Name: "role", Value: "r2", Items: []string{"r2"}},
		"SET SESSION AUTHORIZATION 'u'":       {Name: "session_authorization", Value: "u", Items: []string{"u"}},
		"SET LOCAL search_path TO s":          {Name: "search_path", Local: true, Value: "s", Items: []string{"s"}},
		"RESET ROLE":                          {Name: "role", Reset: true},
		"SET SESSION AUTHORIZATION DEFAULT":   {Name: "session_authorization", Reset: true},
		"SET search_path TO a, 'b, c', \"D\"": {Name: "search_path", Items: []string{"a", "b, c", "D"}},
		"SET lock_timeout = -1":               {Name: "lock_timeout", Items: []string{"-1"}},
		"SET seq_page_cost = 2.5":             {Name: "seq_page_cost", Items: []string{"2.5"}},
		"SET enable_seqscan = off":            {Name: "enable_seqscan", Value: "off", Items: []string{"off"}},
	} {
		if got, ok := ParseSet(sql); !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseSet(%q) = %+v, %v; want %+v", sql, got, ok, want)
		}
	}
}
