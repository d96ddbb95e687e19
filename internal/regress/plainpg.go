package regress

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"time"

	"certa/engine/postgres/pgproc"
)

// PlainPG is a plain PostgreSQL server the tests also run against: the
// same programs and server settings as the servers under certa's postgres
// engine (pgproc), on a loopback TCP port. The tests connect as
// Target's user, a superuser as under pg_regress, to a database named as
// certa's (so names in outputs match).
type PlainPG struct {
	server *pgproc.Server
	Target Target
}

// StartPlainPG makes a database cluster in dataDir (its parent must let
// the server's user through), starts the server on port and creates
// target's role and database in it. The role is a superuser, or with
// superuser false a role that may create roles (as certa's clients may)
// and owns the database.
func StartPlainPG(ctx context.Context, env Env, dataDir string, port int, user, db string, superuser bool) (*PlainPG, error) {
	s, err := pgproc.Start(pgproc.Config{
		DataDir: dataDir,
		Settings: map[string]string{
			"listen_addresses": "127.0.0.1",
			"port":             strconv.Itoa(port),
		},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return nil, fmt.Errorf("start plain PostgreSQL: %w", err)
	}
	p := &PlainPG{server: s, Target: Target{Host: "127.0.0.1", Port: port, User: user, DB: db}}
	admin := Target{Host: "127.0.0.1", Port: port, User: pgproc.SuperUser, DB: "postgres"}
	attributes := "SUPERUSER"
	if !superuser {
		attributes = "NOSUPERUSER CREATEROLE"
	}
	for _, sql := range []string{
		fmt.Sprintf("CREATE ROLE %s %s LOGIN", user, attributes),
		// pg_regress's create_database: template0; the locale is initdb's C.
		fmt.Sprintf("CREATE DATABASE %s OWNER %s TEMPLATE template0", db, user),
	} {
		if _, err := Psql(ctx, env, admin, sql, 30*time.Second); err != nil {
			s.Stop()
			return nil, fmt.Errorf("set up plain PostgreSQL: %w", err)
		}
	}
	return p, nil
}

// PID is the server's process id (0 once stopped).
func (p *PlainPG) PID() int { return p.server.PID() }

// Log is the server's log file.
func (p *PlainPG) Log() string { return p.server.LogPath() }

// Stop shuts the server down (by its PID) and waits until it is gone.
func (p *PlainPG) Stop() { p.server.Stop() }

// plainDir is where a run keeps a plain server's data and outputs:
// "plain" for the superuser's run, "plain-client" for the client's.
func plainDir(out string, clock Clock, superuser bool) string {
	name := "plain"
	if clock.Name != "" {
		name += "-" + clock.Name
	}
	if !superuser {
		name += "-client"
	}
	return filepath.Join(out, name)
}
