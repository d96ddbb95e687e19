package pgparse

import (
	"reflect"
	"testing"
)

// Every role a role statement names is found, wherever it stands, and
// CURRENT_USER and the like are told apart from names.
func TestParseRoleStatement(t *testing.T) {
	cases := []struct {
		sql  string
		want RoleStatement
	}{
		{"CREATE ROLE r1 IN ROLE a ROLE b ADMIN c", RoleStatement{Tag: "CREATE ROLE", Created: "r1", Roles: []string{"r1", "a", "b", "c"}}},
		{`CREATE USER "Mixed" PASSWORD 'x' IN GROUP g`, RoleStatement{Tag: "CREATE ROLE", Created: "Mixed", Roles: []string{"Mixed", "g"}}},
		{"CREATE GROUP g USER u", RoleStatement{Tag: "CREATE ROLE", Created: "g", Roles: []string{"g", "u"}}},
		{"ALTER ROLE r1 CREATEROLE", RoleStatement{Tag: "ALTER ROLE", Roles: []string{"r1"}}},
		{"ALTER GROUP g ADD USER u1, u2", RoleStatement{Tag: "ALTER ROLE", Roles: []string{"g", "u1", "u2"}}},
		{"ALTER ROLE certa_client SET x = 1", RoleStatement{Tag: "ALTER ROLE", Roles: []string{"certa_client"}, SetsOwnSettings: true, Setting: "x"}},
		{"ALTER ROLE CURRENT_USER SET Role = 'r'", RoleStatement{Tag: "ALTER ROLE", Special: "CURRENT_USER", SetsOwnSettings: true, Setting: "role"}},
		{"ALTER ROLE r RESET ALL", RoleStatement{Tag: "ALTER ROLE", Roles: []string{"r"}, SetsOwnSettings: true}},
		{"ALTER ROLE ALL SET x = 1", RoleStatement{Tag: "ALTER ROLE", Setting: "x"}},
		{"DROP ROLE IF EXISTS a, b", RoleStatement{Tag: "DROP ROLE", Roles: []string{"a", "b"}}},
		{"GRANT a, b TO c WITH ADMIN OPTION GRANTED BY d", RoleStatement{Tag: "GRANT ROLE", Roles: []string{"a", "b", "c", "d"}}},
		{"REVOKE a FROM SESSION_USER", RoleStatement{Tag: "REVOKE ROLE", Roles: []string{"a"}, Special: "SESSION_USER"}},
		{"ALTER ROLE a RENAME TO b", RoleStatement{Tag: "ALTER ROLE", Roles: []string{"a", "b"}}},
		{"COMMENT ON ROLE a IS 'x'", RoleStatement{Tag: "COMMENT", Roles: []string{"a"}}},
	}
	for _, c := range cases {
		got, ok := ParseRoleStatement(c.sql)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %+v %v, want %+v", c.sql, got, ok, c.want)
		}
	}
	for _, sql := range []string{"GRANT SELECT ON t TO a", "COMMENT ON TABLE t IS 'x'", "SELECT 1", "CREATE ROLE a; CREATE ROLE b"} {
		if rs, ok := ParseRoleStatement(sql); ok {
			t.Errorf("%s: taken for a role statement: %+v", sql, rs)
		}
	}
}
