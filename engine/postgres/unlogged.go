package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Unlogged tables and sequences are replicated like any others: every
// node holds their rows. But PostgreSQL empties them (and puts an
// unlogged sequence back to its start) when it restarts after a crash,
// on that node alone, which then holds other rows than the cluster and
// could hand out sequence values again. certa.intact, an unlogged table
// of one row made with certa's objects, tells: PostgreSQL empties it
// too. Whenever the engine installs its objects (it opens, or finds its
// server restarted: reconnect.go), it looks first. A node whose
// certa.intact was emptied while the database held unlogged relations
// of the client's stops with what to do, before it applies or serves
// anything; one that held none has lost nothing and goes on.

// intactSQL makes certa.intact and its row (bootstrapSQL runs it after
// checkIntact looked).
const intactSQL = `
CREATE UNLOGGED TABLE IF NOT EXISTS certa.intact (since timestamptz NOT NULL DEFAULT now());
INSERT INTO certa.intact SELECT WHERE NOT EXISTS (SELECT FROM certa.intact);
`

// lostUnloggedSQL names the client's unlogged relations if certa.intact
// is empty (none otherwise).
const lostUnloggedSQL = `SELECT string_agg(format('%I.%I', n.nspname, c.relname), ', ' ORDER BY n.nspname, c.relname)
	FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
	WHERE c.relpersistence = 'u' AND c.relkind IN ('r', 'S') AND n.nspname <> 'certa'
		AND NOT EXISTS (SELECT FROM certa.intact)`

// checkIntact returns errUnloggedLost, with the relations it names, when
// PostgreSQL emptied the client's unlogged tables or sequences since
// certa's objects were last installed.
func checkIntact(ctx context.Context, admin *pgconn.PgConn) error {
	r := admin.ExecParams(ctx, "SELECT pg_catalog.to_regclass('certa.intact') IS NOT NULL", nil, nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("look for certa.intact: %w", r.Err)
	}
	if string(r.Rows[0][0]) != "t" {
		return nil // made by the bootstrap that follows
	}
	r = admin.ExecParams(ctx, lostUnloggedSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return fmt.Errorf("look for unlogged tables PostgreSQL emptied: %w", r.Err)
	}
	if lost := r.Rows[0][0]; lost != nil {
		return fmt.Errorf("%w: %w (%s)", errUnrecoverable, errUnloggedLost, lost)
	}
	return nil
}

// errUnloggedLost says what a node whose unlogged relations were emptied
// must do.
var errUnloggedLost = fmt.Errorf("PostgreSQL restarted after a crash and emptied this node's unlogged tables and sequences: " +
	"this node's data differs from the cluster's, so it stops. Rebuild it from the other nodes: stop it, move its data directory away " +
	"and start it again with --join")
