package postgres

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"

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
	e    *Engine
	conn *pgconn.PgConn // holds the exporting transaction
	id   string
	once sync.Once
}

// Snapshot exports the current applied state.
func (e *Engine) Snapshot(ctx context.Context) (engine.Snapshot, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	conn, err := connect(ctx, e.cfg.DSN, "", nil)
	if err != nil {
		return nil, pgError(err)
	}
	res, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT pg_export_snapshot()").ReadAll()
	if err != nil {
		conn.Close(ctx)
		return nil, pgError(err)
	}
	return &snapshot{e: e, conn: conn, id: string(res[1].Rows[0][0])}, nil
}

// WriteTo writes the database at the snapshot, as pg_dump's custom format.
func (s *snapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	// The capture rows name transactions and tables of this server: on
	// another they could be taken for a local transaction's (xids are
	// per server). The token is this node's secret. certa.node says
	// whose database this is: the restoring node claims its own.
	cmd, err := s.e.tool("pg_dump", "--format=custom", "--snapshot="+s.id,
		"--exclude-table-data=certa.capture", "--exclude-table-data=certa.token", "--exclude-table-data=certa.node")
	if err != nil {
		return 0, err
	}
	cmd.Stdout = cw
	err = runTool(cmd)
	return cw.n, err
}

// Release ends the exporting transaction.
func (s *snapshot) Release() {
	s.once.Do(func() { s.conn.Close(context.Background()) })
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
func (e *Engine) Restore(ctx context.Context, r io.Reader) error {
	e.applyMu.Lock()
	defer e.applyMu.Unlock()
	if e.closed.Load() {
		return errClosed
	}
	cfg, err := pgconn.ParseConfig(e.cfg.DSN)
	if err != nil {
		return err
	}
	maint := *cfg
	maint.Database = "postgres"
	admin, err := pgconn.ConnectConfig(ctx, &maint)
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	defer admin.Close(ctx)
	db, next := quoteIdent(cfg.Database), quoteIdent(cfg.Database+"_restoring")
	if err := execEach(ctx, admin, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)", "CREATE DATABASE "+next); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	cmd, err := e.tool("pg_restore", "--exit-on-error", "--single-transaction", "--dbname="+cfg.Database+"_restoring")
	if err != nil {
		return err
	}
	cmd.Stdin = r
	if err := runTool(cmd); err != nil {
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+next+" WITH (FORCE)").ReadAll()
		return fmt.Errorf("restore: %w", err)
	}

	// The sequences go on from the last values either node handed out.
	floor := map[string]int64{}
	if seqs, err := listSequences(ctx, e.applier); err == nil {
		for _, sq := range seqs {
			if sq.last != nil {
				floor[sq.name] = *sq.last
			}
		}
	}
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
		return fmt.Errorf("restore: replace the database: %w", err)
	}
	if err := e.openAdmin(ctx); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	// A snapshot from an older version may hold another server's capture
	// rows (see WriteTo).
	e.gcMu.Lock()
	_, err = e.gcConn.Exec(ctx, "TRUNCATE certa.capture").ReadAll()
	e.gcMu.Unlock()
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	if err := restartSequences(ctx, e.applier, e.slot.Load(), floor, restartAll); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	e.applyTS.reset()
	e.schemaEpoch.Add(1)
	e.pool.Store(newPool(e.cfg, &e.schemaEpoch))
	return nil
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
	cfg, err := pgconn.ParseConfig(e.cfg.DSN)
	if err != nil {
		return nil, err
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
	if cfg.Password != "" {
		// Not on the command line, which other users may read.
		cmd.Env = append(os.Environ(), "PGPASSWORD="+cfg.Password)
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
