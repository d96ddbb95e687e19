package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// RoleStatement is a statement that makes, changes or drops a role or a
// role's membership: a change of the server's shared catalogs, which
// every node must make alike.
type RoleStatement struct {
	// Tag is the command tag PostgreSQL answers it with (CREATE ROLE,
	// ALTER ROLE, DROP ROLE, GRANT ROLE, REVOKE ROLE, COMMENT).
	Tag string
	// Created is the role CREATE ROLE (USER, GROUP) makes.
	Created string
	// Roles are the roles it names, Created among them, as PostgreSQL
	// folds them; nil for ALTER ROLE ALL.
	Roles []string
	// Special is the first of CURRENT_USER, CURRENT_ROLE or SESSION_USER
	// it names instead of a role, if any: names that depend on who runs
	// it.
	Special string
	// SetsOwnSettings: ALTER ROLE name (or CURRENT_USER...) SET or
	// RESET, which a role may run for itself.
	SetsOwnSettings bool
	// Setting is the setting ALTER ROLE ... SET or RESET names, lower
	// case ("" for RESET ALL).
	Setting string
}

// ParseRoleStatement returns what sql, one statement, does to roles, if
// it is a role statement: CREATE, ALTER (SET, RENAME) or DROP of a ROLE,
// USER or GROUP, GRANT or REVOKE of a role, COMMENT ON ROLE.
func ParseRoleStatement(sql string) (RoleStatement, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return RoleStatement{}, false
	}
	stmt := tree.Stmts[0].Stmt
	var rs RoleStatement
	switch {
	case stmt.GetCreateRoleStmt() != nil:
		rs.Tag, rs.Created = "CREATE ROLE", stmt.GetCreateRoleStmt().Role
		rs.Roles = append(rs.Roles, rs.Created)
	case stmt.GetAlterRoleStmt() != nil:
		rs.Tag = "ALTER ROLE"
	case stmt.GetAlterRoleSetStmt() != nil:
		rs.Tag = "ALTER ROLE"
		rs.Setting = strings.ToLower(stmt.GetAlterRoleSetStmt().GetSetstmt().GetName())
		if stmt.GetAlterRoleSetStmt().Role == nil {
			return rs, true // ALL: the server's superuser's alone
		}
		rs.SetsOwnSettings = true
	case stmt.GetDropRoleStmt() != nil:
		rs.Tag = "DROP ROLE"
	case stmt.GetGrantRoleStmt() != nil:
		g := stmt.GetGrantRoleStmt()
		rs.Tag = "REVOKE ROLE"
		if g.IsGrant {
			rs.Tag = "GRANT ROLE"
		}
		for _, n := range g.GrantedRoles {
			rs.Roles = append(rs.Roles, n.GetAccessPriv().GetPrivName())
		}
	case stmt.GetRenameStmt().GetRenameType() == pg_query.ObjectType_OBJECT_ROLE:
		r := stmt.GetRenameStmt()
		rs.Tag = "ALTER ROLE"
		rs.Roles = append(rs.Roles, r.Subname, r.Newname)
	case stmt.GetCommentStmt().GetObjtype() == pg_query.ObjectType_OBJECT_ROLE:
		rs.Tag = "COMMENT"
		rs.Roles = append(rs.Roles, stmt.GetCommentStmt().GetObject().GetString_().GetSval())
	default:
		return RoleStatement{}, false
	}
	// Every other role it names is a RoleSpec, wherever it stands (the
	// role altered or dropped, IN ROLE, ROLE, ADMIN, the grantees,
	// GRANTED BY).
	walkMessages(stmt.ProtoReflect(), func(m protoreflect.Message) {
		spec, ok := m.Interface().(*pg_query.RoleSpec)
		if !ok {
			return
		}
		switch spec.Roletype {
		case pg_query.RoleSpecType_ROLESPEC_CSTRING:
			rs.Roles = append(rs.Roles, spec.Rolename)
		case pg_query.RoleSpecType_ROLESPEC_PUBLIC:
		default:
			if rs.Special == "" {
				rs.Special = strings.TrimPrefix(spec.Roletype.String(), "ROLESPEC_")
			}
		}
	})
	if rs.SetsOwnSettings && len(rs.Roles) > 1 {
		rs.SetsOwnSettings = false
	}
	return rs, true
}
