package postgres

import (
	"context"
	"strings"

	"certa/pgparse"
	"certa/sqlerr"

	"github.com/jackc/pgx/v5/pgconn"
)

// Roles are the server's, not the database's: no event trigger sees a
// role statement, and a function could change one on this node alone
// (certa.global_changes catches that). Clients make their roles with
// role statements of their own, which run in total order on every node
// like any schema statement, and always through certa.role_statement
// when the session acts as certa_client: certa_client has no CREATEROLE
// (in PostgreSQL 15 a role with CREATEROLE can grant itself
// pg_execute_server_program, and a client's function could do it before
// certa refused its transaction), the function's owner certa_roles has,
// and the function runs only what the engine passes with its token,
// after the engine checked what it names (execRoleStatement).
//
// A role made that way is a client role: certa_roles grants it to
// certa_client, which marks it (certa.client_role), lets the client SET
// ROLE to it, and lets certa_client (and the applier, a member of
// certa_client) act on what it owns, as the superuser that a plain
// PostgreSQL's owner would be. A client role has no CREATEROLE and is a
// member of client roles only; certa's roles, the predefined pg_* roles
// and the server's other roles are not the client's to change. A session
// acting as a client role runs role statements as itself: PostgreSQL
// then allows what that role may do (ADMIN OPTION) and refuses the rest,
// as it would.
//
// Schema statements run as the role the session acts as (schemaChange
// carries it), so objects have the same owner on every node; a snapshot
// carries the client roles to a node that restores it (snapshotroles.go).
// clientRoleCond tells whether the role of oid r is a client role: made
// through certa.role_statement, which has certa_roles grant it to
// certa_client. Also for a connection to another database than the
// node's, where certa.client_role is not.
const clientRoleCond = `EXISTS (SELECT 1 FROM pg_catalog.pg_auth_members m WHERE m.roleid = r
		AND m.member = 'certa_client'::regrole AND m.grantor = 'certa_roles'::regrole)`

// clientRoleSQL makes certa_roles and certa.client_role, which the event
// triggers' functions call: bootstrapSQL runs it before it makes them.
const clientRoleSQL = `
DO $r$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'certa_roles') THEN
		CREATE ROLE certa_roles;
	END IF;
END $r$;
ALTER ROLE certa_roles NOLOGIN NOSUPERUSER NOCREATEDB CREATEROLE NOREPLICATION NOBYPASSRLS;
CREATE OR REPLACE FUNCTION certa.client_role(r oid) RETURNS boolean LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	SELECT ` + clientRoleCond + `
$f$;
`

// rolesSQL makes certa.role_statement, appended to bootstrapSQL.
const rolesSQL = `
-- A session acting as a client role runs certa's own statements in its
-- transactions too (its write set's capture rows, its seqno): each reads
-- the capture rows of its own transaction alone, through
-- certa.captured (not a row security policy, which a session's SET
-- row_security = off turns into an error).
GRANT USAGE ON SCHEMA certa TO PUBLIC;
GRANT SELECT ON certa.applied, certa.node_slots TO PUBLIC;
REVOKE SELECT ON certa.capture FROM PUBLIC;
DROP POLICY IF EXISTS own_transaction ON certa.capture;
ALTER TABLE certa.capture DISABLE ROW LEVEL SECURITY;
CREATE OR REPLACE FUNCTION certa.captured() RETURNS TABLE (seq bigint, rel oid, op "char", old jsonb, new jsonb)
	LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
	SELECT c.seq, c.rel, c.op, c.old, c.new FROM certa.capture c WHERE c.xid = pg_current_xact_id_if_assigned()
$f$;
GRANT SELECT ON certa.token TO certa_roles;
DROP FUNCTION IF EXISTS certa.role_statement(text, text, text, text[]);
CREATE OR REPLACE FUNCTION certa.role_statement(token text, stmt text, created text, roles text[], path text) RETURNS void LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	name text;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = role_statement.token) THEN
		RAISE EXCEPTION 'certa: only the node may run role statements' USING ERRCODE = '42501';
	END IF;
	IF (SELECT count(*) FROM pg_roles WHERE rolname LIKE 'certa\_client\_%') > 1 THEN
		RAISE EXCEPTION 'certa: this PostgreSQL server holds the databases of several certa nodes, and roles are the whole server''s: each node would run the role statement on it'
			USING ERRCODE = '0A000', HINT = 'Give each node a PostgreSQL server of its own to make roles through certa.';
	END IF;
	FOREACH name IN ARRAY roles LOOP
		IF name IS DISTINCT FROM created AND EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = name AND NOT certa.client_role(r.oid)) THEN
			RAISE EXCEPTION 'certa: role "%" was not made through certa: clients may change only the roles clients made', name
				USING ERRCODE = '42501';
		END IF;
	END LOOP;
	-- Under the client's search path, which names objects in its messages
	-- (DETAIL: privileges for table t) as PostgreSQL would name them
	-- there; a role statement calls no function and names no operator.
	PERFORM set_config('search_path', path, true);
	EXECUTE stmt;
	PERFORM set_config('search_path', 'pg_catalog, pg_temp', true);
	IF created IS NOT NULL THEN
		EXECUTE format('GRANT %I TO certa_client', created);
	END IF;
	IF EXISTS (SELECT 1 FROM pg_roles r WHERE (r.rolcreaterole OR r.rolsuper OR r.rolreplication OR r.rolbypassrls) AND certa.client_role(r.oid)) THEN
		RAISE EXCEPTION 'certa: a role made through certa cannot have CREATEROLE: its sessions could change roles on one node, where no other node would see it'
			USING ERRCODE = '0A000', HINT = 'Make and change roles as certa_client (RESET ROLE), without CREATEROLE.';
	END IF;
	IF EXISTS (SELECT 1 FROM pg_auth_members m WHERE certa.client_role(m.member) AND NOT certa.client_role(m.roleid)) THEN
		RAISE EXCEPTION 'certa: a role made through certa can be a member only of roles made through certa'
			USING ERRCODE = '42501';
	END IF;
END
$f$;
ALTER FUNCTION certa.role_statement(text, text, text, text[], text) OWNER TO certa_roles;
`

// execRoleStatement runs rs, the role statement sql, on conn, in its
// transaction, as role (the role the session acts as; "" is
// certa_client): through certa.role_statement for certa_client, as
// itself for a client role. token is the engine's (certa.token).
func execRoleStatement(ctx context.Context, conn *pgconn.PgConn, token, role, sql string, rs pgparse.RoleStatement) error {
	if role == "" || role == "none" {
		role = clientRole
	}
	if rs.Setting == "role" || rs.Setting == "session_authorization" {
		// certa's roles would start their sessions as another: its
		// backends and applier run as the roles certa gives them.
		e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: ALTER ROLE cannot set %s", rs.Setting)
		e.Hint = "SET ROLE in the session instead."
		return e
	}
	own := rs.SetsOwnSettings && (rs.Special == "CURRENT_USER" || rs.Special == "CURRENT_ROLE" || len(rs.Roles) == 1 && rs.Roles[0] == role)
	if !own {
		if err := refuseRoleNames(rs); err != nil {
			return err
		}
	}
	if !own && role != clientRole {
		// A client role's (ADMIN OPTION): as certa.role_statement checks,
		// it names no role of the server's that clients did not make,
		// which another node's server may not have.
		r := conn.ExecParams(ctx, `SELECT n FROM pg_catalog.unnest($1::text[]) n JOIN pg_catalog.pg_roles r ON r.rolname = n
			WHERE n IS DISTINCT FROM $2 AND NOT certa.client_role(r.oid) LIMIT 1`,
			[][]byte{[]byte(textArray(rs.Roles)), nullable(rs.Created)}, nil, nil, nil).Read()
		if r.Err != nil {
			return r.Err
		}
		if len(r.Rows) > 0 {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "certa: role %q was not made through certa: clients may change only the roles clients made", string(r.Rows[0][0]))
		}
	}
	if own || role != clientRole || rs.Roles == nil && rs.Special == "" {
		// PostgreSQL decides: a role's own settings, a client role's
		// statements, ALTER ROLE ALL (a superuser's).
		return conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
	}
	r := conn.ExecParams(ctx, "SELECT certa.role_statement($1, $2, $3, $4::text[], pg_catalog.current_setting('search_path'))",
		[][]byte{[]byte(token), []byte(sql), nullable(rs.Created), []byte(textArray(rs.Roles))}, nil, nil, nil).Read()
	return r.Err
}

// refuseRoleNames refuses a role statement that names certa's roles, the
// predefined ones or a role by who runs it (CURRENT_USER would be the
// function's owner in certa.role_statement).
func refuseRoleNames(rs pgparse.RoleStatement) error {
	if rs.Special != "" {
		e := sqlerr.New(sqlerr.FeatureNotSupported, "certa: %s cannot stand for a role in a role statement", rs.Special)
		e.Hint = "Name the role."
		return e
	}
	for _, n := range rs.Roles {
		if strings.HasPrefix(n, "certa_") || strings.HasPrefix(n, "pg_") && n != rs.Created {
			e := sqlerr.New(sqlerr.InsufficientPrivilege, "certa: role %q is not the client's to change or grant", n)
			e.Hint = "Roles named certa_... are certa's own; pg_... are PostgreSQL's predefined roles, which only the server's superuser may grant."
			return e
		}
	}
	return nil
}

// sessionRole returns the client role conn's session acts as (SET ROLE),
// or "" for certa_client (or NONE: the login role, a member of
// certa_client).
func sessionRole(ctx context.Context, conn *pgconn.PgConn) (string, error) {
	r := conn.ExecParams(ctx, "SELECT pg_catalog.current_setting('role')", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return "", r.Err
	}
	role := string(r.Rows[0][0])
	if role == "none" || role == clientRole {
		return "", nil
	}
	return role, nil
}

// nullable is s as a parameter, NULL if empty.
func nullable(s string) []byte {
	if s == "" {
		return nil
	}
	return []byte(s)
}
