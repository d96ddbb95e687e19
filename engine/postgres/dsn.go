package postgres

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine/postgres/pgproc"
)

// An engine over a PostgreSQL server the operator runs (certa node
// --postgres-dsn), instead of one the node manages (managed.go).
//
// What it needs of the server, checked by OpenDSN before anything else:
//
//   - PostgreSQL 15 or later, and pg_dump and pg_restore on the node's
//     machine of the server's version or later (state transfer);
//   - a database of the node's own, UTF8, empty on first start: a node
//     records its claim in certa.node and refuses a database another node
//     claimed (two nodes on one database would each apply the log to it);
//   - the DSN's role a superuser: certa installs event triggers, creates
//     the roles certa_client and the clients' login role, and applies rows
//     with session_replication_role = replica;
//   - that role may also connect to database postgres and to
//     <database>_restoring (state transfer restores into a new database
//     beside the node's, then swaps it in).
//
// Clients' transactions must not run as the superuser, and SET ROLE is
// no boundary (a client could RESET ROLE or set_config('role', ...)).
// They log in as a role of their own, certa_client_<database>, with a
// password: a member of certa_client (which owns the replicated objects,
// under the same name on every node, and cannot log in here), which takes
// the role certa_client at startup. The node makes a random password on
// first start, keeps it in its data directory (DSNConfig.SecretFile, mode
// 0600), and sets the role's password to its SCRAM verifier at every
// start: the server and its logs never see the password itself, and
// nothing in the database (which snapshots copy to other nodes) reveals
// it. The applier and CheckDDL log in the same way, as
// certa_applier_<database> (a member of certa_applier, a member of
// certa_client), with the same password: no connection that runs a
// client's code is the superuser's. pg_hba.conf must let both roles in
// over the DSN's host and port, to the node's database and to
// <database>_restoring (state transfer), with scram-sha-256 (or md5,
// which then uses SCRAM): a line for "+certa_client" covers the login
// roles of every node on the server.

// DSNConfig configures an engine over a database on a PostgreSQL server
// the operator runs.
type DSNConfig struct {
	// DSN connects to the node's database as a superuser: keyword/value
	// ("host=db1 port=5432 user=certa_admin dbname=certa_n1") or a
	// postgres:// URL, with PGPASSWORD, a password file and the other
	// PG* environment variables as libpq reads them. The same settings
	// reach pg_dump and pg_restore (the password through PGPASSWORD).
	DSN string
	// SecretFile holds the clients' login role's password (made on first
	// start, mode 0600); it also marks the database as this node's. It
	// belongs in the node's data directory. Required.
	SecretFile string
	// BinDir holds pg_dump and pg_restore (of the server's major version
	// or later). Empty: found as pgproc.FindClientBinDir does.
	BinDir string
	NodeID string
	// Founder: see Config.
	Founder bool
	// LockTimeout: see Config.
	LockTimeout time.Duration
	// Logger receives warnings about the server's settings. Default
	// slog.Default().
	Logger *slog.Logger
}

// Validate reports the first invalid setting.
func (c *DSNConfig) Validate() error {
	switch {
	case c.DSN == "":
		return errors.New("postgres engine: a DSN is required")
	case c.SecretFile == "":
		return errors.New("postgres engine: SecretFile is required")
	case c.NodeID == "":
		return errors.New("postgres engine: NodeID is required")
	}
	return nil
}

// ErrDatabaseInUse is wrapped by OpenDSN's error when the database is
// another node's.
var ErrDatabaseInUse = errors.New("the database belongs to another certa node")

// MinServerVersionNum is the oldest server OpenDSN accepts
// (server_version_num).
const MinServerVersionNum = pgproc.MinVersion * 10000

// OpenDSN checks what the engine needs of the server (see above) and
// opens the engine over the DSN's database. Each failed requirement is
// reported with what to change.
func OpenDSN(ctx context.Context, cfg DSNConfig) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	pc, err := pgconn.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("--postgres-dsn: %w", err)
	}
	db := pc.Database
	switch {
	case db == "":
		return nil, errors.New("--postgres-dsn names no database: name the node's own (dbname=... or postgres://host/dbname)")
	case db == "postgres" || db == "template0" || db == "template1":
		return nil, fmt.Errorf("--postgres-dsn names database %s: a node needs a database of its own (CREATE DATABASE certa_%s TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C')", db, cfg.NodeID)
	case len(db) > 53:
		return nil, fmt.Errorf("--postgres-dsn: database name %q is longer than 53 bytes: state transfer restores into %q_restoring, which must fit PostgreSQL's 63", db, db)
	}
	server := fmt.Sprintf("%s port %d", pc.Host, pc.Port)

	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	admin, err := connect(cctx, cfg.DSN, "", nil)
	if err != nil {
		return nil, connectError(err, db, pc.User, server)
	}
	defer admin.Close(context.Background())
	major, err := checkServer(cctx, admin, db, pc.User, server, cfg.Logger)
	if err != nil {
		return nil, err
	}
	maint := pc.Copy()
	maint.Database = "postgres"
	if c, err := pgconn.ConnectConfig(cctx, maint); err != nil {
		return nil, fmt.Errorf("role %s must be able to connect to database postgres on %s (state transfer makes, drops and renames the node's database from there; pg_hba.conf must also let it into %s_restoring): %w",
			pc.User, server, db, err)
	} else {
		c.Close(cctx)
	}
	bin, _, err := pgproc.FindClientBinDir(cfg.BinDir, major)
	if err != nil {
		return nil, fmt.Errorf("postgres engine: %w", err)
	}
	secret, err := loadSecret(cfg.SecretFile)
	if err != nil {
		return nil, err
	}
	login, applier := loginFor(clientRole, db), loginFor(applierRole, db)
	refused := func(role string, err error) error {
		return fmt.Errorf("the node logs in to database %s on %s as role %s (its clients' transactions) and as role %s (replication), "+
			"members of %s, with a password, and the server refused %s: %w; "+
			"pg_hba.conf needs a line such as 'host %s,%s_restoring +%s <the node's address>/32 scram-sha-256' (md5 works too) before any line that rejects it, then SELECT pg_reload_conf()",
			db, server, login, applier, clientRole, role, err, db, db, clientRole)
	}
	e, err := Open(ctx, Config{DSN: cfg.DSN, NodeID: cfg.NodeID, Founder: cfg.Founder, LockTimeout: cfg.LockTimeout, BinDir: bin,
		ClientLogin: login, ApplierLogin: applier, ClientPassword: secret, Claim: claimOf(secret)})
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) && ce.Config.User == applier {
		// Open made the applier's login and set its password before it
		// logged in with it: a refusal there is pg_hba.conf's.
		return nil, refused(applier, err)
	}
	if err != nil {
		return nil, err
	}
	// The clients' connections must get in: try one now rather than at
	// the first client's statement.
	c, err := connectAs(cctx, cfg.DSN, login, secret, map[string]string{"role": clientRole})
	if err != nil {
		e.Close()
		return nil, refused(login, err)
	}
	c.Close(cctx)
	return e, nil
}

// connectError explains a failed connection with the DSN.
func connectError(err error, db, user, server string) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "3D000":
			return fmt.Errorf("database %s does not exist on %s: make it for this node (CREATE DATABASE %s TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'): %w", db, server, sqlName(db), err)
		case "28P01", "28000":
			return fmt.Errorf("%s refused role %s in database %s: check the password (PGPASSWORD, a password file, or in --postgres-dsn) and that pg_hba.conf lets it in over this host and port: %w", server, user, db, err)
		}
	}
	return fmt.Errorf("cannot connect to the PostgreSQL server of --postgres-dsn (%s, database %s, role %s): %w", server, db, user, err)
}

// sqlName writes name for a statement in a message: as it is when it
// needs no quotes, else quoted.
func sqlName(name string) string {
	if simpleName.MatchString(name) {
		return name
	}
	return quoteIdent(name)
}

var simpleName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// checkServer checks the server's version, the role and the database,
// and returns the server's major version.
func checkServer(ctx context.Context, c *pgconn.PgConn, db, user, server string, log *slog.Logger) (int, error) {
	res, err := c.Exec(ctx, `SELECT current_setting('server_version_num'), current_setting('server_version'), r.rolsuper::text,
		pg_encoding_to_char(d.encoding), d.datcollate, current_setting('max_connections')
		FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()`).ReadAll()
	if err != nil {
		return 0, fmt.Errorf("read the settings of %s: %w", server, err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 {
		return 0, fmt.Errorf("read the settings of %s: no row for role %s in database %s", server, user, db)
	}
	row := res[0].Rows[0]
	num, _ := strconv.Atoi(string(row[0]))
	if num < MinServerVersionNum {
		return 0, fmt.Errorf("the server of --postgres-dsn (%s) runs PostgreSQL %s: certa needs PostgreSQL %d or later", server, row[1], pgproc.MinVersion)
	}
	if string(row[2]) != "true" {
		return 0, fmt.Errorf("role %s of --postgres-dsn must be a superuser (certa installs event triggers, creates roles and applies rows with session_replication_role = replica): ALTER ROLE %s SUPERUSER, or connect as one",
			user, sqlName(user))
	}
	if enc := string(row[3]); enc != "UTF8" {
		return 0, fmt.Errorf("database %s on %s has encoding %s: certa needs UTF8 (give the node a new database: CREATE DATABASE ... TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C')", db, server, enc)
	}
	if coll := string(row[4]); coll != "C" && coll != "POSIX" {
		log.Warn("the node's database sorts text by a locale's collation, which may differ from other nodes' (ORDER BY of text could then differ between nodes); LOCALE 'C' gives byte order everywhere",
			"database", db, "collation", coll)
	}
	if n, _ := strconv.Atoi(string(row[5])); n < 80 {
		log.Warn("the server's max_connections is low: a node opens up to 64 connections for its clients' transactions and a few of its own", "max_connections", n)
	}
	return num / 10000, nil
}

// loginFor is the role a node logs in as for role (clientRole,
// applierRole) on an operator's server: one per database, since nodes
// may share the server.
func loginFor(role, db string) string {
	if len(db) > 40 {
		sum := sha256.Sum256([]byte(db))
		db = db[:30] + "_" + hex.EncodeToString(sum[:4])
	}
	return role + "_" + db
}

// loadSecret reads the password in path, or makes one there.
func loadSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return makeSecret(path)
	}
	if err != nil {
		return "", fmt.Errorf("read the node's PostgreSQL secret: %w", err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s holds the password of the node's clients' PostgreSQL role and must be readable by its owner only (mode %v): chmod 600 %s", path, st.Mode().Perm(), path)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s is empty: remove it and start the node again (a node whose secret changed must get a new database, as another node would)", path)
	}
	return s, nil
}

func makeSecret(path string) (string, error) {
	s := rand.Text()
	tmp := path + ".new"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("write the node's PostgreSQL secret: %w", err)
	}
	_, err = f.WriteString(s + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		if d, derr := os.Open(filepath.Dir(path)); derr == nil {
			d.Sync()
			d.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write the node's PostgreSQL secret: %w", err)
	}
	return s, nil
}

// claimOf is what certa.node records of the node holding secret: the
// database is that node's (its data directory's).
func claimOf(secret string) string {
	sum := sha256.Sum256([]byte("certa node claim\x00" + secret))
	return hex.EncodeToString(sum[:16])
}

// checkClaim refuses a database another node claimed, and, on first
// start (no schema certa), one that holds tables or sequences certa did
// not make (they would not be captured).
func checkClaim(ctx context.Context, c *pgconn.PgConn, claim string) error {
	res, err := c.Exec(ctx, `SELECT to_regclass('certa.node') IS NOT NULL, to_regnamespace('certa') IS NOT NULL, current_database()`).ReadAll()
	if err != nil {
		return err
	}
	row := res[0].Rows[0]
	hasNode, hasSchema, db := string(row[0]) == "t", string(row[1]) == "t", string(row[2])
	if hasNode {
		res, err := c.Exec(ctx, "SELECT node, claim FROM certa.node").ReadAll()
		if err != nil {
			return err
		}
		if rows := res[0].Rows; len(rows) == 1 && string(rows[0][1]) != claim {
			return inUse(db, string(rows[0][0]))
		}
		return nil
	}
	if hasSchema {
		return nil
	}
	res, err = c.Exec(ctx, `SELECT string_agg(format('%I.%I', nspname, relname), ', ') FROM (
		SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p', 'S') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
			AND n.nspname NOT LIKE 'pg\_%'
			AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
		ORDER BY 1, 2 LIMIT 5) t`).ReadAll()
	if err != nil {
		return err
	}
	if names := res[0].Rows[0][0]; names != nil {
		return fmt.Errorf("database %s holds tables certa did not make (%s): a node starts on an empty database of its own, and its data comes through certa", db, names)
	}
	return nil
}

// claim records the database as the node's, unless another node was
// quicker.
func claim(ctx context.Context, c *pgconn.PgConn, nodeID, claim string) error {
	r := c.ExecParams(ctx, `INSERT INTO certa.node (node, claim) VALUES ($1, $2)
		ON CONFLICT (one) DO UPDATE SET node = excluded.node WHERE node.claim = excluded.claim
		RETURNING claim`, [][]byte{[]byte(nodeID), []byte(claim)}, nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("record the database as node %s's: %w", nodeID, r.Err)
	}
	if len(r.Rows) == 0 {
		res, err := c.Exec(ctx, "SELECT node, current_database() FROM certa.node").ReadAll()
		if err != nil {
			return err
		}
		return inUse(string(res[0].Rows[0][1]), string(res[0].Rows[0][0]))
	}
	return nil
}

func inUse(db, node string) error {
	return fmt.Errorf("%w: database %s is node %s's (whose data directory holds another secret): each node needs a database of its own; "+
		"give this node another (CREATE DATABASE ... TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'), or, if node %s is gone for good, drop the database and make it afresh",
		ErrDatabaseInUse, db, node, node)
}

// makeLogin makes (or updates) a role that logs in for role (clientRole
// or applierRole): a member of it with nothing of its own (but BYPASSRLS
// for the applier's, which is not inherited), whose password is set to
// password's SCRAM verifier. role itself may not log in (it has no
// password, and pg_hba.conf may trust someone).
func makeLogin(ctx context.Context, c *pgconn.PgConn, login, role, password string) error {
	verifier, err := scramVerifier(password)
	if err != nil {
		return err
	}
	rls := "NOBYPASSRLS"
	if role == applierRole {
		rls = "BYPASSRLS"
	}
	id := quoteIdent(login)
	_, err = c.Exec(ctx, `DO $r$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = `+quoteLiteral(login)+`) THEN
		CREATE ROLE `+id+` LOGIN;
	END IF;
END $r$;
ALTER ROLE `+id+` LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION `+rls+` INHERIT PASSWORD `+quoteLiteral(verifier)+`;
GRANT `+role+` TO `+id+`;
DO $r$ BEGIN
	IF (SELECT rolcanlogin FROM pg_roles WHERE rolname = `+quoteLiteral(role)+`) THEN
		ALTER ROLE `+role+` NOLOGIN;
	END IF;
END $r$`).ReadAll()
	return err
}

// scramVerifier returns password's SCRAM-SHA-256 verifier in PostgreSQL's
// format, with a random salt and PostgreSQL's default iterations.
func scramVerifier(password string) (string, error) {
	const iterations = 4096
	salt := make([]byte, 16)
	rand.Read(salt)
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", err
	}
	mac := func(msg string) []byte {
		h := hmac.New(sha256.New, salted)
		h.Write([]byte(msg))
		return h.Sum(nil)
	}
	stored := sha256.Sum256(mac("Client Key"))
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(stored[:]), b64(mac("Server Key"))), nil
}
