package postgres

import (
	"context"
	"fmt"
	"log/slog"

	"certa/pgparse"

	"github.com/jackc/pgx/v5/pgconn"
)

// Temporary objects may depend on replicated ones (a temporary table with
// a column of a replicated type, an index on a replicated function, a
// temporary view of a replicated table): they are the session's, on its
// node. A replicated schema change that PostgreSQL refuses because of
// them (DROP TYPE, ALTER TABLE ... ALTER COLUMN TYPE of a column a
// temporary view reads) would then fail on that node alone. On the node
// of the client that sent it, it fails for the client, as in PostgreSQL
// (CheckDDL, or the client's block). On a node that applies it, the
// statement wins: the other sessions' temporary objects that depend on
// replicated ones are dropped and it runs again (execSchemaStatement),
// so every node applies what the origin committed. Those sessions find
// their objects gone, as after a DROP ... CASCADE.

// tempDependentsSQL lists the objects of other sessions' temporary
// schemas that depend on an object outside them (not PostgreSQL's own):
// a temporary relation (also for its columns' defaults, constraints,
// rules and triggers), type, function or operator, as (catalog, oid).
// It runs on a connection of its own, in a snapshot of its own: the
// applier's transaction took its snapshot before the objects may have
// been made.
const tempDependentsSQL = `WITH deps AS (
	SELECT CASE d.classid
			WHEN 'pg_catalog.pg_attrdef'::pg_catalog.regclass THEN 'pg_catalog.pg_class'::pg_catalog.regclass
			WHEN 'pg_catalog.pg_constraint'::pg_catalog.regclass THEN CASE WHEN k.conrelid <> 0 THEN 'pg_catalog.pg_class'::pg_catalog.regclass ELSE 'pg_catalog.pg_type'::pg_catalog.regclass END
			WHEN 'pg_catalog.pg_rewrite'::pg_catalog.regclass THEN 'pg_catalog.pg_class'::pg_catalog.regclass
			WHEN 'pg_catalog.pg_trigger'::pg_catalog.regclass THEN 'pg_catalog.pg_class'::pg_catalog.regclass
			ELSE d.classid END AS classid,
		CASE d.classid
			WHEN 'pg_catalog.pg_attrdef'::pg_catalog.regclass THEN a.adrelid
			WHEN 'pg_catalog.pg_constraint'::pg_catalog.regclass THEN CASE WHEN k.conrelid <> 0 THEN k.conrelid ELSE k.contypid END
			WHEN 'pg_catalog.pg_rewrite'::pg_catalog.regclass THEN r.ev_class
			WHEN 'pg_catalog.pg_trigger'::pg_catalog.regclass THEN g.tgrelid
			ELSE d.objid END AS objid
	FROM pg_catalog.pg_depend d
	LEFT JOIN pg_catalog.pg_attrdef a ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND a.oid = d.objid
	LEFT JOIN pg_catalog.pg_constraint k ON d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND k.oid = d.objid
	LEFT JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND r.oid = d.objid
	LEFT JOIN pg_catalog.pg_trigger g ON d.classid = 'pg_catalog.pg_trigger'::pg_catalog.regclass AND g.oid = d.objid
	WHERE d.deptype IN ('n', 'a')
		AND (pg_catalog.pg_identify_object(d.refclassid, d.refobjid, 0)).schema !~ '^(pg_temp_[0-9]+|pg_toast.*|pg_catalog|information_schema)$'
)
SELECT DISTINCT deps.classid::oid, deps.objid
FROM deps
WHERE deps.classid IN ('pg_catalog.pg_class'::pg_catalog.regclass, 'pg_catalog.pg_type'::pg_catalog.regclass,
	'pg_catalog.pg_proc'::pg_catalog.regclass, 'pg_catalog.pg_operator'::pg_catalog.regclass)
	AND (pg_catalog.pg_identify_object(deps.classid, deps.objid, 0)).schema ~ '^pg_temp_[0-9]+$'`

// dropTempObjectSQL makes certa.drop_temp_object(catalog, oid), which
// drops the object if it is in a temporary schema (a session's), with
// CASCADE, and returns the statement it ran (NULL: gone already). It
// runs as the superuser, who alone may reach another session's
// temporary schema, for the applier alone.
const dropTempObjectSQL = `
CREATE OR REPLACE FUNCTION certa.drop_temp_object(catalog oid, obj oid) RETURNS text LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	id record;
	kind text;
	stmt text;
BEGIN
	id := pg_identify_object(catalog, obj, 0);
	IF id.schema IS NULL OR id.schema !~ '^pg_temp_[0-9]+$' THEN
		RETURN NULL;
	END IF;
	-- By the object's identity (the catalog caches), not a scan of the
	-- catalogs, which the applier's snapshot may predate.
	kind := CASE id.type
		WHEN 'table' THEN 'TABLE' WHEN 'partitioned table' THEN 'TABLE' WHEN 'foreign table' THEN 'FOREIGN TABLE'
		WHEN 'view' THEN 'VIEW' WHEN 'materialized view' THEN 'MATERIALIZED VIEW'
		WHEN 'index' THEN 'INDEX' WHEN 'partitioned index' THEN 'INDEX' WHEN 'sequence' THEN 'SEQUENCE'
		WHEN 'type' THEN 'TYPE' WHEN 'composite type' THEN 'TYPE'
		WHEN 'function' THEN 'FUNCTION' WHEN 'procedure' THEN 'PROCEDURE' WHEN 'aggregate' THEN 'AGGREGATE'
		WHEN 'operator' THEN 'OPERATOR'
		END;
	IF kind IS NULL THEN
		RETURN NULL;
	END IF;
	stmt := format('DROP %s IF EXISTS %s CASCADE', kind, id.identity);
	EXECUTE stmt;
	RETURN stmt;
END
$f$;
REVOKE EXECUTE ON FUNCTION certa.drop_temp_object(oid, oid) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION certa.drop_temp_object(oid, oid) TO certa_applier;
`

// tempWay lets the applier's schema statements drop other sessions'
// temporary objects that stand in their way.
type tempWay struct {
	log *slog.Logger
	// list runs tempDependentsSQL on a connection of its own.
	list func(ctx context.Context) ([][2]string, error)
}

// listTempDependents runs tempDependentsSQL as the superuser, on a
// connection of its own.
func (e *Engine) listTempDependents(ctx context.Context) ([][2]string, error) {
	c, err := connect(ctx, e.cfg.DSN, "", nil)
	if err != nil {
		return nil, err
	}
	defer c.Close(context.WithoutCancel(ctx))
	r := c.ExecParams(ctx, tempDependentsSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	objs := make([][2]string, len(r.Rows))
	for i, row := range r.Rows {
		objs[i] = [2]string{string(row[0]), string(row[1])}
	}
	return objs, nil
}

// drop drops what list finds, in the transaction open on conn (the
// applier's, as its own role: the watcher ends a local transaction that
// holds one of them), and logs each.
func (w *tempWay) drop(ctx context.Context, conn *pgconn.PgConn) error {
	objs, err := w.list(ctx)
	if err != nil {
		return fmt.Errorf("list other sessions' temporary objects: %w", err)
	}
	for _, o := range objs {
		r := conn.ExecParams(ctx, "SELECT certa.drop_temp_object($1, $2)", [][]byte{[]byte(o[0]), []byte(o[1])}, nil, nil, nil).Read()
		if r.Err != nil {
			return fmt.Errorf("drop another session's temporary object: %w", r.Err)
		}
		if stmt := r.Rows[0][0]; stmt != nil {
			w.log.Warn("postgres engine: dropped another session's temporary object that a replicated schema change could not run beside", "statement", string(stmt))
		}
	}
	return nil
}

// execSchemaStatement runs a schema statement on conn, as the client
// role; with makeWay, in a savepoint, and once more if it failed, after
// the temporary objects of other sessions that depend on replicated ones
// were dropped (runAgainWithoutTemps).
func execSchemaStatement(ctx context.Context, conn *pgconn.PgConn, token string, sc schemaChange, makeWay *tempWay) error {
	sql := sc.SQL
	if rs, ok := pgparse.ParseRoleStatement(sql); ok {
		return execRoleStatement(ctx, conn, token, sc.role(), sql, rs) // no temporary object depends on a role
	}
	if makeWay == nil {
		return conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
	}
	if _, err := conn.Exec(ctx, "SAVEPOINT certa_schema").ReadAll(); err != nil {
		return err
	}
	err := conn.ExecParams(ctx, sql, nil, nil, nil, nil).Read().Err
	if err != nil && !connLost(err) {
		err = runAgainWithoutTemps(ctx, conn, sc, makeWay)
	}
	if err != nil {
		return err
	}
	_, err = conn.Exec(ctx, "RELEASE SAVEPOINT certa_schema").ReadAll()
	return err
}

// runAgainWithoutTemps runs sql, which failed after the savepoint
// certa_schema, once more after way dropped what stood in its way. It
// runs again even if way found nothing: a session in the way may have
// been ended meanwhile (the watcher ends one whose transaction held a
// lock the statement waited for), and its temporary objects were going
// as the statement failed.
func runAgainWithoutTemps(ctx context.Context, conn *pgconn.PgConn, sc schemaChange, way *tempWay) error {
	if _, err := conn.Exec(ctx, "ROLLBACK TO SAVEPOINT certa_schema; RESET ROLE").ReadAll(); err != nil {
		return err
	}
	if err := way.drop(ctx, conn); err != nil {
		way.log.Warn("postgres engine: could not drop the temporary objects of other sessions", "err", err)
		if _, err := conn.Exec(ctx, "ROLLBACK TO SAVEPOINT certa_schema").ReadAll(); err != nil {
			return err
		}
	}
	if _, err := conn.Exec(ctx, "SET LOCAL ROLE "+quoteIdent(sc.role())).ReadAll(); err != nil {
		return err
	}
	return conn.ExecParams(ctx, sc.SQL, nil, nil, nil, nil).Read().Err
}
