package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/engine"
	"certa/engine/postgres/pgproc"
	"certa/sqlerr"
)

// State transfer: a snapshot is the database as pg_dump writes it
// (custom format) at a snapshot exported by a REPEATABLE READ transaction
// that stays open until the snapshot is released; certa.applied and
// certa.failed travel inside it, so the restored database says which
// seqno it holds. Restore replaces the database with pg_restore.

// snapshot is an exported PostgreSQL snapshot held open.
type snapshot struct {
	e     *Engine
	conn  *pgconn.PgConn // holds the exporting transaction
	id    string
	roles []byte // the client roles, as JSON (snapshotroles.go)
	once  sync.Once
}

// Snapshot exports the current applied state. It takes applyMu while it
// exports: the reconnect after a server restart (reconnect.go) applies
// again, under applyMu, the commits the server lost, and a snapshot taken
// before that would miss them.
func (e *Engine) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	conn, err := connect(ctx, e.cfg.DSN, "", nil)
	if err != nil {
		return nil, pgError(err)
	}
	res, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT pg_export_snapshot()").ReadAll()
	if err != nil {
		conn.Close(ctx)
		return nil, pgError(err)
	}
	roles, err := readRoles(ctx, conn)
	if err != nil {
		conn.Close(ctx)
		return nil, pgError(err)
	}
	e.dumping.RLock() // until Release: no schema change is applied meanwhile
	return &snapshot{e: e, conn: conn, id: string(res[1].Rows[0][0]), roles: roles}, nil
}

// WriteTo writes the database at the snapshot, as pg_dump's custom format.
func (s *snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	if _, err := writeRoles(cw, s.roles); err != nil {
		return cw.n, err
	}
	// The capture rows, global marks and permits name transactions and
	// tables of this server: on another they could be taken for a local
	// transaction's (xids are per server). The token is this node's secret. certa.node says
	// whose database this is: the restoring node claims its own.
	cmd, err := s.e.tool("pg_dump", "--format=custom", "--snapshot="+s.id,
		"--exclude-table-data=certa.capture", "--exclude-table-data=certa.global_marks",
		"--exclude-table-data=certa.permits", "--exclude-table-data=certa.token", "--exclude-table-data=certa.node")
	if err != nil {
		return 0, err
	}
	cmd.Stdout = cw
	err = runTool(cmd)
	return cw.n, err
}

// Release ends the exporting transaction.
func (s *snapshot) Release() {
	s.once.Do(func() {
		s.conn.Close(context.Background())
		s.e.dumping.RUnlock()
	})
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Restore replaces the database with a snapshot's: pg_restore fills a new
// database beside it (a snapshot that does not restore changes nothing);
// then the local work on the old one is aborted (40001), the old database
// dropped, the new one takes its name, and the engine's connections are
// opened again.
//
// A snapshot holds the client's code (CHECK and index expressions, their
// functions, foreign keys, materialized views), which restoring runs: it
// is restored by the applier's login as certa_client, never by the
// superuser (a superuser's session is no boundary for it, SET ROLE or
// not). So the snapshot is spooled to a private temporary file and
// restored in two parts (splitTOC): first as the superuser what the
// client does not own (certa's schema and its rows, the ACL of schema
// public, an operator's untrusted extensions), without event triggers,
// which openAdmin makes again; then as the applier's login (applierTool)
// with --role=certa_client the rest: what certa_client owns (or a role
// acting as it), what the client roles own (made first, from the
// snapshot's header: snapshotroles.go; certa_client is a member of each,
// so it gives them their objects), and the entries without owner (the
// client's trusted extensions, casts). Each part runs in a transaction
// of its own on the new database, which any failure drops.
func (e *Engine) Restore(ctx context.Context, r io.Reader) error {
	if e.closed.Load() {
		return errClosed
	}
	cfg, err := pgconn.ParseConfig(e.cfg.DSN)
	if err != nil {
		return err
	}
	// Spooled before applyMu is taken: reading the snapshot may take a
	// while, and applying can go on meanwhile.
	dir, err := os.MkdirTemp("", "certa-restore-") // mode 0700
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer os.RemoveAll(dir)
	roles, r, err := readRolesHeader(r)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	archive, err := spool(dir, r)
	if err != nil {
		return fmt.Errorf("restore: spool the snapshot: %w", err)
	}
	list, err := e.tool("pg_restore", "--list", archive)
	if err != nil {
		return err
	}
	var toc strings.Builder
	list.Stdout = &toc
	if err := runTool(list); err != nil {
		return fmt.Errorf("restore: %w", err)
	}

	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed.Load() {
		return errClosed
	}
	maint := *cfg
	maint.Database = "postgres"
	admin, err := pgconn.ConnectConfig(ctx, &maint)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer admin.Close(ctx)
	owners, extensions, err := clientOwned(ctx, admin)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	for _, r := range roles {
		owners[r.Name] = true
	}
	adminTOC, clientTOC, err := splitTOC(toc.String(), owners, extensions)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	adminList := filepath.Join(dir, "admin.list")
	lists := map[string][]string{adminList: adminTOC}
	var clientLists []string
	for i, stage := range clientStages(clientTOC) {
		path := filepath.Join(dir, fmt.Sprintf("client%d.list", i))
		lists[path] = stage
		clientLists = append(clientLists, path)
	}
	for path, lines := range lists {
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}

	db, next := quoteIdent(cfg.Database), quoteIdent(cfg.Database+"_restoring")
	// certa_client makes its schemas in the new database (bootstrapSQL
	// grants the same on the node's).
	if err := execEach(ctx, admin, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)", "CREATE DATABASE "+next,
		"GRANT CREATE, TEMPORARY ON DATABASE "+next+" TO "+clientRole+" WITH GRANT OPTION"); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := restoreRoles(ctx, admin, cfg.Database+"_restoring", roles); err != nil {
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)").ReadAll()
		return fmt.Errorf("restore: %w", err)
	}
	run := func(tool func(string, ...string) (*exec.Cmd, error), args ...string) error {
		cmd, err := tool("pg_restore", slices.Concat([]string{"--exit-on-error", "--single-transaction",
			"--dbname=" + cfg.Database + "_restoring"}, args, []string{archive})...)
		if err != nil {
			return err
		}
		return runTool(cmd)
	}
	err = run(e.tool, "--use-list="+adminList)
	if err != nil {
		err = fmt.Errorf("certa's objects: %w", err)
	}
	for _, list := range clientLists {
		if err != nil {
			break
		}
		if err = run(e.applierTool, "--role="+clientRole, "--use-list="+list); err != nil {
			err = fmt.Errorf("the client's objects, as %s: %w", clientRole, err)
		}
	}
	if err != nil {
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)").ReadAll()
		return fmt.Errorf("restore: %w", err)
	}

	// The sequences go on from the last values either node handed out.
	seqs, err := listSequences(ctx, e.applier)
	if err != nil {
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)").ReadAll()
		return fmt.Errorf("restore: read this node's sequences: %w", err)
	}
	floor := map[string]int64{}
	for _, sq := range seqs {
		if sq.last != nil {
			floor[sq.name] = *sq.last
		}
	}
	// From here the node's database is replaced: what the caller's ctx
	// does no longer stops it halfway, and if it fails all the same, the
	// engine is left to recover (reconnect) with a pool open to clients.
	swapCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), swapTimeout)
	defer cancel()
	if err := e.swapDatabase(swapCtx, admin, db, next, floor); err != nil {
		e.pool.Store(newPool(e.cfg, &e.schemaEpoch))
		e.broken.Store(true)
		return fmt.Errorf("restore: %w", err)
	}
	if roles != nil { // a snapshot of an older node says nothing of roles
		e.dropStaleRoles(swapCtx, admin, roles)
	}
	return nil
}

// swapTimeout bounds swapDatabase, which no caller's context stops.
const swapTimeout = 2 * time.Minute

// swapDatabase ends what runs on the node's database db, puts the
// restored next in its place and opens the engine on it again, its
// sequences going on past floor. The caller holds applyMu.
func (e *Engine) swapDatabase(ctx context.Context, admin *pgconn.PgConn, db, next string, floor map[string]int64) error {
	e.localMu.Lock()
	for _, aborted := range e.local {
		aborted.Store(true)
	}
	e.localMu.Unlock()
	e.heldMu.Lock()
	clear(e.held)
	e.heldMu.Unlock()
	e.pool.Load().close()
	e.closeAdmin()
	if err := execEach(ctx, admin, "DROP DATABASE "+db+" WITH (FORCE)", "ALTER DATABASE "+next+" RENAME TO "+db); err != nil {
		return fmt.Errorf("replace the database: %w", err)
	}
	// openAdmin's bootstrap (install) makes certa's event triggers, which
	// the restore left out.
	if err := e.openAdmin(ctx); err != nil {
		return err
	}
	// A snapshot from an older version may hold another server's capture
	// rows (see WriteTo).
	e.gcMu.Lock()
	_, err := e.gcConn.Exec(ctx, "TRUNCATE certa.capture").ReadAll()
	e.gcMu.Unlock()
	if err != nil {
		return err
	}
	if err := placeSequences(ctx, e.applier, e.slot.Load(), false, floor, nil); err != nil {
		return err
	}
	e.applyTS.reset()
	e.schemaEpoch.Add(1)
	e.pool.Store(newPool(e.cfg, &e.schemaEpoch))
	return nil
}

// spool copies the snapshot into a new file in dir (mode 0600), which
// pg_restore can list and then read twice, and returns its path.
func spool(dir string, r io.Reader) (string, error) {
	f, err := os.CreateTemp(dir, "snapshot-*.dump")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// clientOwned returns what restoreTOC gives the client role: the roles
// whose objects a snapshot restores as certa_client (certa_client, and
// the roles of this server that act as it: its members that are no
// superusers, certa_applier and the login roles of an operator's server,
// which own nothing: certa_client cannot give them an object, and the
// restore fails if the snapshot says they own one), and the extensions
// this server lets certa_client make (trusted).
func clientOwned(ctx context.Context, admin *pgconn.PgConn) (owners, extensions map[string]bool, err error) {
	res, err := admin.Exec(ctx, "SELECT rolname FROM pg_roles WHERE NOT rolsuper AND pg_has_role(oid, "+quoteLiteral(clientRole)+", 'MEMBER');"+
		"SELECT DISTINCT name FROM pg_available_extension_versions WHERE trusted").ReadAll()
	if err != nil {
		return nil, nil, err
	}
	owners, extensions = map[string]bool{clientRole: true}, map[string]bool{}
	for _, row := range res[0].Rows {
		owners[string(row[0])] = true
	}
	for _, row := range res[1].Rows {
		extensions[string(row[0])] = true
	}
	return owners, extensions, nil
}

// splitTOC splits an archive's table of contents, as pg_restore --list
// prints it (one entry a line: "id; tableoid oid TYPE schema name
// owner", names on one line), into the entries the superuser restores
// and those the client role restores. The client's are those of the
// owners given, and those without an owner (casts, transforms, comments
// on them; certa makes none), but for extensions, which go by the
// extensions given (trusted here: the client made them, in its schemas
// perhaps; another was made by a superuser). Event triggers (and comments
// on them) are left out: certa's are made again by the bootstrap, and no
// one else's may run on the node. Comment lines (';') are dropped; a line
// that is no entry, or an entry listed twice, makes it refuse the
// archive.
//
// The superuser's part runs first, on a database that holds none of the
// client's objects yet: what it restores cannot reach the client's code.
func splitTOC(toc string, owners, extensions map[string]bool) (admin, client []string, err error) {
	seen := map[string]bool{}
	for line := range strings.Lines(toc) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" || strings.HasPrefix(line, ";") {
			continue
		}
		id, rest, ok := strings.Cut(line, "; ")
		at := strings.LastIndexByte(rest, ' ')
		if !ok || id == "" || strings.Trim(id, "0123456789") != "" || at < 0 || len(strings.Fields(rest[:at])) < 4 {
			return nil, nil, fmt.Errorf("the snapshot's table of contents holds a line that is no entry: %q", line)
		}
		body, owner := strings.Fields(rest[:at]), rest[at+1:] // the owner may be empty
		if seen[id] {
			return nil, nil, fmt.Errorf("the snapshot's table of contents lists entry %s twice", id)
		}
		seen[id] = true
		what := strings.Join(body[2:], " ")
		switch {
		case strings.HasPrefix(what, "EVENT TRIGGER "), strings.HasPrefix(what, "COMMENT - EVENT TRIGGER "),
			strings.HasPrefix(what, "SECURITY LABEL - EVENT TRIGGER "):
		case owners[owner]:
			client = append(client, line)
		case owner == "":
			ext, isExt := extensionOf(what)
			if isExt && !extensions[ext] {
				admin = append(admin, line)
			} else {
				client = append(client, line)
			}
		default:
			admin = append(admin, line)
		}
	}
	if len(admin) == 0 {
		return nil, nil, errors.New("the snapshot holds none of certa's objects")
	}
	return admin, client, nil
}

// clientStages splits the client's entries of a table of contents into
// the runs of pg_restore that restore them, in order: its schemas, the
// privileges on them (ACL - SCHEMA), the rest. The client role restores
// them, and ALTER ... OWNER TO a role needs that role's CREATE on the
// object's schema (a superuser's restore skips the check), while
// pg_restore grants privileges after every object. Empty runs are left
// out.
func clientStages(lines []string) [][]string {
	var schemas, acls, rest []string
	for _, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) > 5 && f[3] == "ACL" && f[4] == "-" && f[5] == "SCHEMA":
			acls = append(acls, line)
		case len(f) > 4 && f[3] == "SCHEMA" && f[4] == "-":
			schemas = append(schemas, line)
		default:
			rest = append(rest, line)
		}
	}
	var stages [][]string
	for _, st := range [][]string{schemas, acls, rest} {
		if len(st) > 0 {
			stages = append(stages, st)
		}
	}
	return stages
}

// extensionOf returns the extension an entry (without its id, oids and
// owner) makes or comments.
func extensionOf(what string) (string, bool) {
	for _, p := range []string{"EXTENSION - ", "COMMENT - EXTENSION ", "SECURITY LABEL - EXTENSION "} {
		if ext, ok := strings.CutPrefix(what, p); ok {
			return ext, true
		}
	}
	return "", false
}

// execEach runs statements one by one (DROP DATABASE runs outside any
// transaction, also an implicit one).
func execEach(ctx context.Context, c *pgconn.PgConn, stmts ...string) error {
	for _, s := range stmts {
		if _, err := c.Exec(ctx, s).ReadAll(); err != nil {
			return err
		}
	}
	return nil
}

// tool returns the command running a PostgreSQL client program on the
// engine's database, as the superuser of its DSN.
func (e *Engine) tool(name string, args ...string) (*exec.Cmd, error) {
	return e.toolAs("", "", name, args...)
}

// applierTool is tool as the applier's login (certa_applier, or
// Config.ApplierLogin with ClientPassword), as openAdmin connects it:
// for what runs a client's code.
func (e *Engine) applierTool(name string, args ...string) (*exec.Cmd, error) {
	login, password := applierRole, ""
	if e.cfg.ApplierLogin != "" {
		login, password = e.cfg.ApplierLogin, e.cfg.ClientPassword
	}
	return e.toolAs(login, password, name, args...)
}

// toolAs is tool as user (empty: the DSN's) with password (empty: the
// DSN's), as connectAs connects, with the DSN's TLS settings (toolEnv).
func (e *Engine) toolAs(user, password, name string, args ...string) (*exec.Cmd, error) {
	cfg, err := pgconn.ParseConfig(e.cfg.DSN)
	if err != nil {
		return nil, err
	}
	if user != "" {
		cfg.User = user
		if password != "" {
			cfg.Password = password
		}
	}
	bin := e.cfg.BinDir
	if bin == "" {
		if bin, _, err = pgproc.FindBinDir(""); err != nil {
			return nil, err
		}
	}
	conn := []string{"--host=" + cfg.Host, "--port=" + strconv.Itoa(int(cfg.Port)), "--username=" + cfg.User, "--no-password"}
	if name == "pg_dump" {
		conn = append(conn, "--dbname="+cfg.Database)
	}
	cmd := exec.Command(bin+"/"+name, append(conn, args...)...)
	env, err := toolEnv(e.cfg.DSN) // TLS and authentication settings (toolenv.go)
	if err != nil {
		return nil, err
	}
	cmd.Env = append(os.Environ(), env...)
	if cfg.Password != "" {
		// Not on the command line, which other users may read.
		cmd.Env = append(cmd.Env, "PGPASSWORD="+cfg.Password)
	}
	return cmd, nil
}

// runTool runs cmd, with what it wrote to stderr in the error.
func runTool(cmd *exec.Cmd) error {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return sqlerr.Wrap(err, sqlerr.Internal, "certa: %s: %v: %s", cmd.Path, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
