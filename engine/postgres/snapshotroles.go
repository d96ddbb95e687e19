package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// A snapshot carries the client roles (roles.go), which pg_dump leaves
// out (they are the server's): a header before the archive, rolesMagic,
// the length of a JSON array of snapshotRole and the array. An archive
// without it (from an older node) carries none.
const rolesMagic = "certa-roles\n"

// snapshotRole is a client role as a snapshot carries it.
type snapshotRole struct {
	Name       string   `json:"name"`
	Inherit    bool     `json:"inherit"`
	CreateDB   bool     `json:"createdb"`
	Login      bool     `json:"login"`
	ConnLimit  int      `json:"connlimit"`
	ValidUntil *string  `json:"validuntil"` // as PostgreSQL prints it with TimeZone UTC
	Password   *string  `json:"password"`   // its verifier
	MemberOf   []member `json:"memberof"`
	// Settings are its settings for every database (ALTER ROLE SET) and
	// for the node's (IN DATABASE), as name=value.
	Settings   []string `json:"settings"`
	DBSettings []string `json:"dbsettings"`
	Comment    *string  `json:"comment"`
}

type member struct {
	Role  string `json:"role"`
	Admin bool   `json:"admin"`
}

// readRolesSQL reads the client roles as a JSON array of snapshotRole
// (as the superuser: passwords), on the node's database.
const readRolesSQL = `SET LOCAL TimeZone = 'UTC'; SELECT coalesce(json_agg(json_build_object(
	'name', r.rolname, 'inherit', r.rolinherit, 'createdb', r.rolcreatedb, 'login', r.rolcanlogin,
	'connlimit', r.rolconnlimit, 'validuntil', r.rolvaliduntil::text, 'password', a.rolpassword,
	'memberof', (SELECT json_agg(json_build_object('role', g.rolname, 'admin', m.admin_option) ORDER BY g.rolname)
		FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = r.oid),
	'settings', (SELECT s.setconfig FROM pg_db_role_setting s WHERE s.setrole = r.oid AND s.setdatabase = 0),
	'dbsettings', (SELECT s.setconfig FROM pg_db_role_setting s WHERE s.setrole = r.oid
		AND s.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())),
	'comment', shobj_description(r.oid, 'pg_authid')) ORDER BY r.rolname), '[]')
	FROM pg_roles r JOIN pg_authid a ON a.oid = r.oid WHERE certa.client_role(r.oid)`

// readRoles returns the client roles, as JSON, on conn (in a transaction).
func readRoles(ctx context.Context, conn *pgconn.PgConn) ([]byte, error) {
	res, err := conn.Exec(ctx, readRolesSQL).ReadAll()
	if err != nil {
		return nil, err
	}
	return res[1].Rows[0][0], nil
}

// writeRoles writes the header of a snapshot with roles, a JSON array.
func writeRoles(w io.Writer, roles []byte) (int64, error) {
	n, err := fmt.Fprintf(w, "%s%d\n%s", rolesMagic, len(roles), roles)
	return int64(n), err
}

// readRolesHeader reads the header of a snapshot, if it has one, and
// returns its roles and the archive that follows.
func readRolesHeader(r io.Reader) ([]snapshotRole, io.Reader, error) {
	br := bufio.NewReader(r)
	head, err := br.Peek(len(rolesMagic))
	if err != nil || string(head) != rolesMagic {
		return nil, br, nil // an archive alone (or too short for either: pg_restore says so)
	}
	br.Discard(len(rolesMagic))
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, nil, fmt.Errorf("the snapshot's roles: %w", err)
	}
	size, err := strconv.Atoi(line[:len(line)-1])
	if err != nil || size < 0 || size > 1<<30 {
		return nil, nil, fmt.Errorf("the snapshot's roles: bad length %q", line)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(br, buf); err != nil {
		return nil, nil, fmt.Errorf("the snapshot's roles: %w", err)
	}
	var roles []snapshotRole
	if err := json.Unmarshal(buf, &roles); err != nil {
		return nil, nil, fmt.Errorf("the snapshot's roles: %w", err)
	}
	return roles, br, nil
}

// errForeignRole: a snapshot's client role exists on this server, made
// by someone else.
var errForeignRole = errors.New("exists on this server but was not made through certa")

// restoreRoles makes this server's client roles those of a snapshot, as
// the superuser (admin), before the archive is restored into database
// next (which then becomes the node's): each made or changed to the
// snapshot's attributes, memberships, settings and comment. Client
// roles the snapshot lacks are left for dropStaleRoles.
func restoreRoles(ctx context.Context, admin *pgconn.PgConn, next string, roles []snapshotRole) error {
	if len(roles) == 0 {
		return nil
	}
	if _, err := admin.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		return err
	}
	err := func() error {
		for _, r := range roles {
			res := admin.ExecParams(ctx, `SELECT `+clientRoleCond+` FROM (SELECT oid AS r FROM pg_roles WHERE rolname = $1) c`,
				[][]byte{[]byte(r.Name)}, nil, nil, nil).Read()
			if res.Err != nil {
				return res.Err
			}
			name := quoteIdent(r.Name)
			switch {
			case len(res.Rows) == 0:
				if err := execEach(ctx, admin, "CREATE ROLE "+name, "GRANT "+name+" TO certa_client GRANTED BY certa_roles"); err != nil {
					return err
				}
			case string(res.Rows[0][0]) != "t":
				return fmt.Errorf("role %s %w", name, errForeignRole)
			}
			comment := "NULL"
			if r.Comment != nil {
				comment = quoteLiteral(*r.Comment)
			}
			if err := execEach(ctx, admin, alterRoleSQL(r), "COMMENT ON ROLE "+name+" IS "+comment,
				"ALTER ROLE "+name+" RESET ALL", "ALTER ROLE "+name+" IN DATABASE "+quoteIdent(next)+" RESET ALL"); err != nil {
				return err
			}
			if err := restoreSettings(ctx, admin, name, "", r.Settings); err != nil {
				return err
			}
			if err := restoreSettings(ctx, admin, name, " IN DATABASE "+quoteIdent(next), r.DBSettings); err != nil {
				return err
			}
		}
		// Memberships once every role exists: those of the snapshot,
		// and no other between client roles.
		for _, r := range roles {
			res := admin.ExecParams(ctx, `SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
				WHERE m.member = $1::regrole`, [][]byte{[]byte(quoteIdent(r.Name))}, nil, nil, nil).Read()
			if res.Err != nil {
				return res.Err
			}
			for _, row := range res.Rows {
				if err := execEach(ctx, admin, "REVOKE "+quoteIdent(string(row[0]))+" FROM "+quoteIdent(r.Name)); err != nil {
					return err
				}
			}
			for _, m := range r.MemberOf {
				grant := "GRANT " + quoteIdent(m.Role) + " TO " + quoteIdent(r.Name)
				if m.Admin {
					grant += " WITH ADMIN OPTION"
				}
				if err := execEach(ctx, admin, grant); err != nil {
					return err
				}
			}
		}
		return nil
	}()
	if err != nil {
		admin.Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
		return fmt.Errorf("the snapshot's roles: %w", err)
	}
	_, err = admin.Exec(ctx, "COMMIT").ReadAll()
	return err
}

// alterRoleSQL sets a role's attributes to r's.
func alterRoleSQL(r snapshotRole) string {
	attr := func(on bool, name string) string {
		if on {
			return " " + name
		}
		return " NO" + name
	}
	sql := "ALTER ROLE " + quoteIdent(r.Name) + attr(r.Inherit, "INHERIT") + attr(r.CreateDB, "CREATEDB") + attr(r.Login, "LOGIN") +
		" CONNECTION LIMIT " + strconv.Itoa(r.ConnLimit)
	if r.ValidUntil != nil {
		sql += " VALID UNTIL " + quoteLiteral(*r.ValidUntil)
	}
	if r.Password != nil {
		sql += " PASSWORD " + quoteLiteral(*r.Password)
	} else {
		sql += " PASSWORD NULL"
	}
	return sql
}

// restoreSettings gives role (quoted) the settings (name=value) in scope
// ("" or " IN DATABASE d"): each set in the transaction first, which
// reads the value as the server stored it (lists as lists), then taken
// FROM CURRENT.
func restoreSettings(ctx context.Context, admin *pgconn.PgConn, role, scope string, settings []string) error {
	for _, s := range settings {
		name, value, ok := strings.Cut(s, "=")
		if !ok || name == "" {
			return fmt.Errorf("setting %q of role %s", s, role)
		}
		if r := admin.ExecParams(ctx, "SELECT set_config($1, $2, true)", [][]byte{[]byte(name), []byte(value)}, nil, nil, nil).Read(); r.Err != nil {
			return r.Err
		}
		if err := execEach(ctx, admin, "ALTER ROLE "+role+scope+" SET "+quoteIdent(name)+" FROM CURRENT"); err != nil {
			return err
		}
	}
	return nil
}

// dropStaleRoles drops the client roles a restored snapshot did not
// carry (dropped in the cluster while this node was away), once the
// database that may have held their objects is gone. A role that still
// owns something elsewhere on the server stays, with a warning.
func (e *Engine) dropStaleRoles(ctx context.Context, admin *pgconn.PgConn, keep []snapshotRole) {
	names := make([]string, len(keep))
	for i, r := range keep {
		names[i] = r.Name
	}
	res := admin.ExecParams(ctx, `SELECT rolname FROM (SELECT oid AS r, rolname FROM pg_roles) c WHERE `+clientRoleCond+`
		AND rolname <> ALL ($1::text[])`,
		[][]byte{[]byte(textArray(names))}, nil, nil, nil).Read()
	if res.Err != nil {
		e.cfg.Logger.Warn("postgres engine: list the client roles after a restore", "err", res.Err)
		return
	}
	for _, row := range res.Rows {
		if err := execEach(ctx, admin, "DROP ROLE "+quoteIdent(string(row[0]))); err != nil {
			e.cfg.Logger.Warn("postgres engine: a client role the restored snapshot does not hold stays", "role", string(row[0]), "err", err)
		}
	}
}
