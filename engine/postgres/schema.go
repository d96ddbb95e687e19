package postgres

import (
	"strconv"
	"strings"
)

// clientRole is the role clients' transactions run as: no superuser, no
// right to create roles or databases, so that nothing a client sends
// reaches past replication. It owns the replicated tables: the applier runs
// schema changes as it (SET LOCAL ROLE).
const clientRole = "certa_client"

// applierRole is the role the applier and CheckDDL log in as (or, on an
// operator's server, a member of it: dsn.go): a member of certa_client
// (it writes and alters the tables it owns) that may also set
// session_replication_role, and nothing more. Applying runs client code
// (CHECK functions, domain checks, index expressions, defaults of a
// schema change), and a superuser's session is no boundary for it (RESET
// ROLE, SET SESSION AUTHORIZATION): under this role, that code has no
// more rights than the client who wrote it. It records positions through
// certa.commit_at and certa.record_failed, with the engine's token, so
// such code cannot move them either.
const applierRole = "certa_applier"

// canonicalOutput are the settings a row is turned into JSON under, for
// the capture and for rows locked FOR UPDATE (certa.row_jsonb): a
// client's own settings (TimeZone, IntervalStyle, extra_float_digits,
// bytea_output, lc_monetary) change the text of values, and so would the
// keys certified and the values other nodes store.
const canonicalOutput = `SET TimeZone = 'UTC' SET DateStyle = 'ISO, YMD' SET IntervalStyle = 'postgres'
	SET extra_float_digits = 1 SET bytea_output = 'hex' SET lc_monetary = 'C'`

// noJIT keeps PostgreSQL from compiling the statements of a function
// that runs once per row (the capture triggers): never worth it, and a
// session that set jit_above_cost = 0 (PostgreSQL's aggregates test does)
// made each row's capture compile its INSERT, some 3.5 ms a row.
const noJIT = `SET jit = off`

// localTags are the schema statements a client may run without the
// engine's permit, on its session's backend alone, when they change
// temporary objects and nothing else (certa.local_ddl and
// certa.local_drop check it at their end): those objects are the
// session's own and are never replicated.
const localTags = `'CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO', 'CREATE VIEW', 'CREATE SEQUENCE', 'CREATE INDEX',
	'ALTER TABLE', 'ALTER VIEW', 'ALTER SEQUENCE', 'ALTER INDEX', 'DROP TABLE', 'DROP VIEW', 'DROP SEQUENCE', 'DROP INDEX', 'COMMENT',
	'CREATE RULE', 'DROP RULE', 'CREATE TRIGGER', 'ALTER TRIGGER', 'DROP TRIGGER',
	'CREATE FUNCTION', 'ALTER FUNCTION', 'DROP FUNCTION', 'CREATE PROCEDURE', 'ALTER PROCEDURE', 'DROP PROCEDURE',
	'CREATE AGGREGATE', 'ALTER AGGREGATE', 'DROP AGGREGATE', 'CREATE TYPE', 'ALTER TYPE', 'DROP TYPE',
	'CREATE DOMAIN', 'ALTER DOMAIN', 'DROP DOMAIN', 'CREATE OPERATOR', 'ALTER OPERATOR', 'DROP OPERATOR',
	'CREATE COLLATION', 'ALTER COLLATION', 'DROP COLLATION', 'CREATE STATISTICS', 'ALTER STATISTICS', 'DROP STATISTICS'`

// codeNotLocal is the SQLSTATE with which the event triggers refuse a
// client's schema statement that changes a replicated object: one of
// 0A000's class (feature not supported), so that Tx.ExecLocal tells it
// from other refusals; pgError reports it to clients as 0A000.
const codeNotLocal = "0A0C1"

// codeInSession is the SQLSTATE with which certa's trigger refuses a
// statement CheckDDL tries that must run in the client's session
// instead: a TRUNCATE of a table with a TRUNCATE trigger, which the
// applier would not fire. CheckDDL answers engine.ErrRunAsTransaction.
const codeInSession = "0A0C2"

// bootstrapSQL returns the statements that make what certa keeps in a
// database, idempotently. login is the role local transactions log in as
// when it is not certa_client itself (an operator's server: dsn.go);
// certa_client then cannot log in.
//
//   - the role certa_client (clientRole), with the rights it needs: create
//     schemas and in schema public, read certa.applied and certa.capture.
//     It owns the replicated tables, under one name on every node, so
//     snapshots restore anywhere.
//   - no client writes large objects (the lo_* functions that write are
//     revoked from PUBLIC in this database): they live outside tables, no
//     trigger captures them, and they would stay on one node.
//   - certa.is_client(): whether the session is a client's (its session
//     user, which a client cannot change, is certa_client or login).
//   - certa.node: the node whose database this is (dsn.go), which a
//     snapshot leaves out.
//   - certa.applied: one row per applied seqno, inserted by the transaction
//     that applies (or commits at) it; its largest seqno is the state a
//     snapshot reads.
//   - certa.node_slots: each node's slot, which says the blocks of
//     sequence values it hands out (sequences.go), reserved through the
//     log; certa.sequence_place and certa.place_sequences[_at] compute
//     and move to them.
//   - certa.commit_at(seqno, token): how an origin's transaction, which
//     runs as the client role, records its seqno when it commits at its
//     position; it needs the engine's token (certa.token, which only the
//     superuser reads; the engine passes it as a parameter, which
//     pg_stat_activity does not show), so a client cannot move the
//     applied seqno.
//   - certa.failed: the seqnos of write sets that failed at apply (the
//     same on every node), written in the same transaction.
//   - certa.intact: one row in an unlogged table, which PostgreSQL
//     empties with the client's unlogged tables after a crash
//     (unlogged.go).
//   - certa.capture: the rows a transaction changed, as its capture
//     triggers record them, read back before it commits. Clients may read
//     it, not change it (the trigger function is SECURITY DEFINER): a
//     client that could delete its capture rows would commit changes that
//     are never replicated. Rows of ended transactions are deleted by
//     the applier (gcCapture). UNLOGGED: nothing in it outlives a crash.
//   - certa.global_changes(): the rows of the server's shared catalogs
//     (roles, their settings, databases...) the backend changed; with
//     certa.global_marks (what permitted statements changed, by
//     transaction) certa.unpermitted_global_changes() tells WriteSet
//     whether a function changed one on this node alone (tx.go).
//   - certa.note_locked: records in the capture a row that a nested
//     SELECT locked for update (op 'L'; locking.go), as a key to certify.
//   - certa.capture_row: the row trigger. A table whose rows JSON cannot
//     carry exactly (certa.exact_rows: json keeps its text, jsonb its
//     JSON null, an array its bounds, at any depth) gets
//     certa.capture_row_exact, which adds
//     each row's record text under recordKey (rows.go). Both run under
//     fixed settings (canonicalOutput), which costs more than the rest of
//     the trigger; a table whose rows JSON writes out alike under any
//     settings (certa.capture_fn: no timestamptz, float, interval,
//     bytea...) gets certa.capture_row_invariant, which sets none.
//     certa.capture_fn names the one a table needs. All record only what clients
//     (certa.is_client) do, so a
//     dump restored into a plain PostgreSQL, or the applier, captures
//     nothing; certa.refuse_truncate refuses TRUNCATE to clients unless
//     the engine permitted it (no row trigger sees it: it replicates as a
//     statement, in total order), and notes the tables it empties.
//   - the event trigger certa_install_capture, which gives every new
//     permanent table outside schema certa its capture and TRUNCATE
//     triggers, whoever creates it and however (CREATE TABLE AS, in a
//     function...); ENABLE ALWAYS, so that it fires for the applier's DDL
//     too, which runs with session_replication_role = replica.
//   - the event triggers certa_refuse_ddl, which refuses a schema change to
//     clients (it would change this node alone; schema changes run in
//     total order, as DDL write sets) unless the engine permitted it: for a
//     schema statement of a transaction block (Tx.ExecSchema) the engine
//     calls certa.permit_ddl(token, statement), which records the
//     statement in the capture (op 'S', so it replicates in order with the
//     rows) and makes a one-statement permit (certa.permits, which clients
//     cannot read, named by the setting certa.ddl_permit), and then
//     certa.end_permit, which ends the permit and records the tables the
//     statement changed (and the statement again, if its values were
//     pinned: pinOrRefuse). Statements that copy rows into a new relation
//     (CREATE TABLE AS, SELECT INTO, materialized views) are refused even
//     then: the copy is not captured, and another node would copy other
//     rows. And certa_check_ddl and certa_dropped, which note the tables a
//     statement touches in certa.ddl_tables (CheckDDL), and the sequences
//     and views it makes or drops (they change no table: noted by their
//     own names, so that they do not count as changing every table). A
//     table without a primary key is replicated by its whole rows
//     (tables.go).
//   - certa_refuse_ddl lets a client's unpermitted statement of localTags
//     through, and the event triggers certa_local_ddl and certa_local_drop
//     keep it only if every object it changed is temporary (else
//     codeNotLocal); they refuse replicated schema changes that touch a
//     temporary object (session.go, DESIGN.md: temporary tables). A
//     temporary object may depend on a replicated one: the applier makes
//     way for a replicated change it stands in the way of (tempdeps.go).
func bootstrapSQL(login string) string {
	attr, logins := "LOGIN", "'certa_client'"
	if login != "" {
		attr, logins = "NOLOGIN", quoteLiteral(login)
	}
	return strings.NewReplacer("@LOGIN@", attr, "@CLIENT_LOGIN@", logins, "@SLOTS@", strconv.Itoa(seqSlots),
		"@BLOCKMAX@", strconv.FormatInt(maxSeqBlock, 10), "@LATE@", strconv.Itoa(lateShare), "@LOCK@", placeLock).
		Replace(bootstrapTemplate + applierSQL + boundarySQL + dropTempObjectSQL + rolesSQL)
}

// applierSQL makes applierRole (schema.go) with the rights it needs:
// BYPASSRLS, which is not inherited (rows are the origin's: a policy must
// not hide them from the applier, as it did not from the superuser).
const applierSQL = `
DO $r$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'certa_applier') THEN
		CREATE ROLE certa_applier;
	END IF;
END $r$;
ALTER ROLE certa_applier @LOGIN@ NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION BYPASSRLS INHERIT;
GRANT certa_client TO certa_applier;
DO $r$ BEGIN
	IF NOT has_parameter_privilege('certa_applier', 'session_replication_role', 'SET') THEN
		GRANT SET ON PARAMETER session_replication_role TO certa_applier;
	END IF;
END $r$;
GRANT SELECT ON certa.failed TO certa_applier;
GRANT INSERT ON certa.node_slots TO certa_applier;
GRANT EXECUTE ON FUNCTION certa.place_sequences_at(int, boolean, jsonb, oid[]), certa.sequence_floors(int, jsonb) TO certa_applier;
CREATE OR REPLACE FUNCTION certa.record_failed(seqno bigint, token text) RETURNS void LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = record_failed.token) THEN
		RAISE EXCEPTION 'certa: only the node may record failed seqnos' USING ERRCODE = '42501';
	END IF;
	INSERT INTO certa.failed VALUES (seqno);
END
$f$;
`

const bootstrapTemplate = `
DO $r$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'certa_client') THEN
		CREATE ROLE certa_client @LOGIN@ NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
	END IF;
	EXECUTE format('GRANT CREATE, TEMPORARY ON DATABASE %I TO certa_client WITH GRANT OPTION', current_database());
	-- Only certa's roles (and the superuser) connect to the node's
	-- database: a role a client makes (roles.go), LOGIN or not, must not
	-- reach it past certa, where nothing it writes would be replicated.
	EXECUTE format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', current_database());
	EXECUTE format('GRANT CONNECT ON DATABASE %I TO certa_client', current_database());
END $r$;
CREATE SCHEMA IF NOT EXISTS certa;
` + clientRoleSQL + `GRANT USAGE, CREATE ON SCHEMA public TO certa_client WITH GRANT OPTION;
GRANT USAGE ON SCHEMA certa TO certa_client;
DO $r$ BEGIN
	IF NOT has_parameter_privilege('certa_client', 'track_functions', 'SET') THEN
		GRANT SET ON PARAMETER track_functions TO certa_client;
	END IF;
END $r$;
REVOKE EXECUTE ON FUNCTION pg_catalog.lo_create(oid), pg_catalog.lo_creat(integer), pg_catalog.lo_from_bytea(oid, bytea),
	pg_catalog.lo_put(oid, bigint, bytea), pg_catalog.lo_unlink(oid), pg_catalog.lowrite(integer, bytea),
	pg_catalog.lo_truncate(integer, integer), pg_catalog.lo_truncate64(integer, bigint),
	pg_catalog.lo_import(text), pg_catalog.lo_import(text, oid) FROM PUBLIC;
CREATE TABLE IF NOT EXISTS certa.applied (seqno bigint PRIMARY KEY);
CREATE TABLE IF NOT EXISTS certa.failed (seqno bigint PRIMARY KEY);
CREATE TABLE IF NOT EXISTS certa.node_slots (node text PRIMARY KEY, slot int NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS certa.node (one boolean PRIMARY KEY DEFAULT true CHECK (one), node text NOT NULL, claim text NOT NULL);
CREATE OR REPLACE FUNCTION certa.is_client() RETURNS boolean LANGUAGE sql STABLE AS $f$
	SELECT session_user OPERATOR(pg_catalog.=) ANY (ARRAY['certa_client', @CLIENT_LOGIN@]::pg_catalog.name[])
$f$;

CREATE UNLOGGED TABLE IF NOT EXISTS certa.capture (
	xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
	seq bigint NOT NULL,
	rel oid NOT NULL,
	op "char" NOT NULL,
	old jsonb,
	new jsonb,
	PRIMARY KEY (xid, seq)
);
-- seq orders a transaction's capture rows: one more than the count of
-- rows the backend inserted into certa.capture before, which only grows
-- within a transaction (never 0: certa.permit_ddl's "no schema row").
-- Not a sequence: its nextval would be what lastval() answers the client
-- after an insert (a serial's value is taken before the capture trigger
-- fires), and a permission error at that.
DO $r$ BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
			WHERE d.adrelid = 'certa.capture'::regclass AND a.attname = 'seq'
				AND pg_get_expr(d.adbin, d.adrelid) LIKE '%pg_stat_get_xact_tuples_inserted%+ 1%') THEN
		ALTER TABLE certa.capture ALTER COLUMN seq SET DEFAULT pg_catalog.pg_stat_get_xact_tuples_inserted('certa.capture'::regclass) + 1;
	END IF;
END $r$;
DROP SEQUENCE IF EXISTS certa.capture_seq_seq;
GRANT SELECT ON certa.applied, certa.capture, certa.node_slots TO certa_client;
CREATE TABLE IF NOT EXISTS certa.token (token text NOT NULL);
` + intactSQL + `CREATE UNLOGGED TABLE IF NOT EXISTS certa.permits (xid xid8 NOT NULL DEFAULT pg_current_xact_id(), nonce text NOT NULL);
CREATE UNLOGGED TABLE IF NOT EXISTS certa.global_marks (
	xid xid8 PRIMARY KEY DEFAULT pg_current_xact_id(),
	permitted bigint NOT NULL DEFAULT 0,
	started bigint NOT NULL DEFAULT 0
);
CREATE OR REPLACE FUNCTION certa.global_changes() RETURNS bigint LANGUAGE sql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
	SELECT sum(pg_stat_get_xact_tuples_inserted(r) + pg_stat_get_xact_tuples_updated(r) + pg_stat_get_xact_tuples_deleted(r))::bigint
	FROM unnest(ARRAY['pg_authid', 'pg_auth_members', 'pg_database', 'pg_db_role_setting', 'pg_tablespace',
		'pg_shdescription', 'pg_shseclabel', 'pg_parameter_acl', 'pg_replication_origin', 'pg_subscription']::regclass[]) AS r
$f$;
CREATE OR REPLACE FUNCTION certa.uncaptured_tables() RETURNS text LANGUAGE plpgsql VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	-- The transaction's xid, to tell its own rows of pg_class by their
	-- xmin (its subtransactions' too: a visible row whose xmin is in
	-- progress is this transaction's). _if_assigned: asking for it would
	-- give every read an xid, and its COMMIT a WAL flush.
	cur bigint;
	epoch bigint;
BEGIN
	-- Every permanent table has certa_no_truncate (boundary.go); one
	-- without it was made where no event trigger fired. A materialized
	-- view has no trigger to miss: one this transaction made is its own
	-- doing only where certa permitted no schema statement in it. Looked
	-- for only when the backend made a relation since it last sent its
	-- statistics (its count of pg_class rows inserted, mostly 0).
	IF pg_stat_get_xact_tuples_inserted('pg_class'::regclass) = 0 THEN
		RETURN NULL;
	END IF;
	cur := pg_current_xact_id_if_assigned()::text::bigint; -- NULL: it wrote no catalog row
	epoch := (cur >> 32) << 32;
	RETURN (SELECT string_agg(CASE c.relkind WHEN 'm' THEN 'materialized view ' ELSE 'table ' END || c.oid::regclass::text, ', ' ORDER BY c.oid)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relpersistence = 'p'
			AND n.nspname NOT IN ('certa', 'pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_%'
			AND (c.relkind IN ('r', 'p')
				AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'certa_no_truncate')
			OR c.relkind = 'm'
				AND pg_xact_status((epoch + c.xmin::text::bigint - CASE WHEN epoch + c.xmin::text::bigint > cur THEN 4294967296 ELSE 0 END)::text::xid8) = 'in progress'
				AND NOT EXISTS (SELECT 1 FROM certa.global_marks m WHERE m.xid::text::bigint = cur)));
END
$f$;
CREATE OR REPLACE FUNCTION certa.refuse_uncaptured() RETURNS void LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	made text := certa.uncaptured_tables();
BEGIN
	IF made IS NOT NULL THEN
		RAISE EXCEPTION 'certa: this transaction made % where certa cannot see it (EXPLAIN ANALYZE of CREATE TABLE AS, SELECT INTO or CREATE MATERIALIZED VIEW): it and its rows would stay on this node', made
			USING ERRCODE = '0A000', HINT = 'Send CREATE TABLE ... AS (or SELECT ... INTO) as a statement of its own, without EXPLAIN: it then runs on every node.';
	END IF;
END
$f$;
CREATE OR REPLACE FUNCTION certa.unpermitted_global_changes() RETURNS bigint LANGUAGE sql VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
	SELECT certa.global_changes() - coalesce((SELECT m.permitted FROM certa.global_marks m
		WHERE m.xid = pg_current_xact_id_if_assigned()), 0)
$f$;
CREATE OR REPLACE FUNCTION certa.permit_ddl(token text, stmt text) RETURNS bigint LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	nonce text := md5(random()::text || clock_timestamp()::text);
	at bigint := 0;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = permit_ddl.token) THEN
		RAISE EXCEPTION 'certa: only the node may permit schema changes' USING ERRCODE = '42501';
	END IF;
	INSERT INTO certa.global_marks (started) VALUES (certa.global_changes())
		ON CONFLICT (xid) DO UPDATE SET started = excluded.started;
	IF stmt IS NOT NULL THEN
		INSERT INTO certa.capture (rel, op, new) VALUES (0, 'S', to_jsonb(stmt)) RETURNING capture.seq INTO at;
	END IF;
	INSERT INTO certa.permits (nonce) VALUES (nonce);
	PERFORM set_config('certa.ddl_permit', nonce, true);
	RETURN at;
END
$f$;
DROP FUNCTION IF EXISTS certa.end_permit(text, bigint, jsonb);
CREATE OR REPLACE FUNCTION certa.end_permit(token text, after bigint, tables jsonb, stmt text) RETURNS bigint LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = end_permit.token) THEN
		RAISE EXCEPTION 'certa: only the node may permit schema changes' USING ERRCODE = '42501';
	END IF;
	DELETE FROM certa.permits WHERE xid = pg_current_xact_id();
	PERFORM set_config('certa.ddl_permit', '', true);
	UPDATE certa.global_marks m SET permitted = m.permitted + certa.global_changes() - m.started
		WHERE m.xid = pg_current_xact_id();
	UPDATE certa.capture SET old = tables, new = coalesce(to_jsonb(stmt), new)
		WHERE xid = pg_current_xact_id() AND seq = after AND op = 'S';
	RETURN (SELECT count(*) FROM certa.capture WHERE xid = pg_current_xact_id() AND seq > after);
END
$f$;
CREATE OR REPLACE FUNCTION certa.commit_at(seqno bigint, token text) RETURNS void LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = commit_at.token) THEN
		RAISE EXCEPTION 'certa: only the node may record applied seqnos' USING ERRCODE = '42501';
	END IF;
	INSERT INTO certa.applied VALUES (seqno);
END
$f$;
CREATE OR REPLACE FUNCTION certa.capture_row() RETURNS trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp ` + canonicalOutput + ` ` + noJIT + ` AS $f$
BEGIN
	IF NOT certa.is_client() THEN
		RETURN NULL;
	END IF;
	INSERT INTO certa.capture (rel, op, old, new) VALUES (TG_RELID, left(TG_OP, 1),
		CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END, CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END);
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION certa.capture_row_exact() RETURNS trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp ` + canonicalOutput + ` ` + noJIT + ` AS $f$
BEGIN
	IF NOT certa.is_client() THEN
		RETURN NULL;
	END IF;
	INSERT INTO certa.capture (rel, op, old, new) VALUES (TG_RELID, left(TG_OP, 1),
		CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) || jsonb_build_object('` + recordKey + `', OLD::text) END,
		CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) || jsonb_build_object('` + recordKey + `', NEW::text) END);
	RETURN NULL;
END
$f$;
-- capture_row without the output settings, for tables whose rows JSON
-- writes out the same under any settings (certa.capture_fn): setting
-- seven parameters at every call tripled the cost of a row. Without a
-- search_path of its own it names everything with its schema.
CREATE OR REPLACE FUNCTION certa.capture_row_invariant() RETURNS trigger LANGUAGE plpgsql
	SECURITY DEFINER ` + noJIT + ` AS $f$
BEGIN
	IF NOT certa.is_client() THEN
		RETURN NULL;
	END IF;
	INSERT INTO certa.capture (rel, op, old, new) VALUES (TG_RELID, pg_catalog.left(TG_OP, 1),
		CASE WHEN TG_OP OPERATOR(pg_catalog.<>) 'INSERT' THEN pg_catalog.to_jsonb(OLD) END,
		CASE WHEN TG_OP OPERATOR(pg_catalog.<>) 'DELETE' THEN pg_catalog.to_jsonb(NEW) END);
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION certa.capture_all_rows(token text, tab regclass) RETURNS bigint LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp ` + canonicalOutput + ` AS $f$
DECLARE
	r oid;
	k bigint;
	n bigint := 0;
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = capture_all_rows.token) THEN
		RAISE EXCEPTION 'certa: only the node may capture a table''s rows' USING ERRCODE = '42501';
	END IF;
	-- Every row of the table, its partitions and children, as an UPDATE
	-- to the values it has (a schema statement's, which travel: pinOrRefuse).
	FOR r IN WITH RECURSIVE tree (rel) AS (
			SELECT tab::oid UNION SELECT i.inhrelid FROM pg_inherits i JOIN tree ON i.inhparent = tree.rel)
		SELECT tree.rel FROM tree JOIN pg_class c ON c.oid = tree.rel WHERE c.relkind = 'r' ORDER BY 1
	LOOP
		EXECUTE format('INSERT INTO certa.capture (rel, op, old, new) SELECT %s, ''U'', j, j FROM (SELECT %s AS j FROM ONLY %s p) s',
			r, CASE WHEN certa.exact_rows(r) THEN 'to_jsonb(p) || jsonb_build_object(''` + recordKey + `'', p::text)' ELSE 'to_jsonb(p)' END,
			r::regclass);
		GET DIAGNOSTICS k = ROW_COUNT;
		n := n + k;
	END LOOP;
	RETURN n;
END
$f$;
CREATE OR REPLACE FUNCTION certa.column_types(rel oid) RETURNS TABLE (oid oid, depth int) LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	WITH RECURSIVE ty (oid, depth) AS (
		SELECT a.atttypid, 0 FROM pg_attribute a WHERE a.attrelid = rel AND a.attnum > 0 AND NOT a.attisdropped
		UNION ALL
		SELECT s.oid, ty.depth + 1 FROM ty JOIN pg_type t ON t.oid = ty.oid
		CROSS JOIN LATERAL (
			SELECT t.typbasetype WHERE t.typtype = 'd'
			UNION ALL SELECT t.typelem WHERE t.typcategory = 'A' AND t.typelem <> 0
			UNION ALL SELECT a.atttypid FROM pg_attribute a
				WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
			UNION ALL SELECT g.rngsubtype FROM pg_range g WHERE t.oid IN (g.rngtypid, g.rngmultitypid)
		) s (oid)
		WHERE ty.depth < 8
	)
	SELECT oid, depth FROM ty
$f$;
CREATE OR REPLACE FUNCTION certa.exact_rows(rel oid) RETURNS boolean LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	-- JSON keeps neither json's text nor an array's bounds ([0:2]={1,2,3}).
	SELECT EXISTS (SELECT 1 FROM certa.column_types(rel) ty JOIN pg_type t ON t.oid = ty.oid
		WHERE ty.oid IN ('json'::regtype, 'jsonb'::regtype) OR t.typcategory = 'A' AND t.typelem <> 0)
$f$;
-- The capture trigger a table needs: certa.capture_row_exact where JSON
-- cannot carry its rows exactly (exact_rows), certa.capture_row_invariant
-- where to_jsonb writes them out the same under any settings (every
-- column of a built-in type whose JSON depends on no setting, or a
-- domain or composite of such: not timestamptz (TimeZone), float
-- (extra_float_digits), interval, bytea, money...; not an enum, whose
-- cast to json a client may make later and which would run under its
-- settings), else certa.capture_row. One reading of the column types.
CREATE OR REPLACE FUNCTION certa.capture_fn(rel oid) RETURNS regproc LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	WITH ty AS (SELECT ty.oid, ty.depth, t.typtype, t.typcategory, t.typelem
		FROM certa.column_types(rel) ty JOIN pg_type t ON t.oid = ty.oid)
	SELECT CASE
		WHEN EXISTS (SELECT 1 FROM ty WHERE ty.oid IN ('json'::regtype, 'jsonb'::regtype) OR ty.typcategory = 'A' AND ty.typelem <> 0)
			THEN 'certa.capture_row_exact'::regproc
		WHEN EXISTS (SELECT 1 FROM ty WHERE NOT (ty.typtype IN ('d', 'c') AND ty.depth < 7 OR ty.oid IN ('bool'::regtype,
			'int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'oid'::regtype, 'numeric'::regtype, 'text'::regtype,
			'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype, '"char"'::regtype, 'uuid'::regtype, 'date'::regtype,
			'timestamp'::regtype, 'time'::regtype, 'timetz'::regtype, 'inet'::regtype, 'cidr'::regtype,
			'macaddr'::regtype, 'macaddr8'::regtype, 'bit'::regtype, 'varbit'::regtype)))
			THEN 'certa.capture_row'::regproc
		ELSE 'certa.capture_row_invariant'::regproc END
$f$;
-- All of them, for the checks that no other trigger calls one.
CREATE OR REPLACE FUNCTION certa.capture_fns() RETURNS regproc[] LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	SELECT ARRAY['certa.capture_row'::regproc, 'certa.capture_row_exact'::regproc, 'certa.capture_row_invariant'::regproc]
$f$;
CREATE OR REPLACE FUNCTION certa.row_text(r anyelement) RETURNS text LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp ` + canonicalOutput + ` AS 'SELECT r::text';
CREATE OR REPLACE FUNCTION certa.permitted() RETURNS boolean LANGUAGE sql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
	SELECT EXISTS (SELECT 1 FROM certa.permits p WHERE p.xid = pg_current_xact_id()
		AND p.nonce = current_setting('certa.ddl_permit', true));
$f$;
CREATE OR REPLACE FUNCTION certa.row_jsonb(r anyelement) RETURNS jsonb LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp ` + canonicalOutput + ` AS 'SELECT pg_catalog.to_jsonb(r)';
CREATE OR REPLACE FUNCTION certa.note_locked(rel oid, locked jsonb) RETURNS boolean LANGUAGE plpgsql VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF rel IS NOT NULL THEN
		INSERT INTO certa.capture (rel, op, new) VALUES (rel, 'L', locked);
	END IF;
	RETURN true;
END
$f$;
CREATE OR REPLACE FUNCTION certa.sequence_place(seq oid, slot int, v numeric, early boolean) RETURNS numeric LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	SELECT coalesce((SELECT CASE WHEN slot < 0 OR c.relpersistence = 't' THEN v
			WHEN b.owner <> slot THEN s.seqstart + (b.n + mod(slot - b.owner + @SLOTS@, @SLOTS@)) * k.step
			WHEN early AND b.late AND s.seqstart + (b.n + @SLOTS@) * k.step BETWEEN s.seqmin AND s.seqmax
				THEN s.seqstart + (b.n + @SLOTS@) * k.step
			ELSE v END
		FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid,
			LATERAL (SELECT greatest(1, least(@BLOCKMAX@, floor((s.seqmax::numeric - s.seqmin) / abs(s.seqincrement) / @SLOTS@))) AS size) z,
			LATERAL (SELECT z.size * s.seqincrement AS step) k,
			LATERAL (SELECT (v - s.seqstart) / k.step AS pos) p,
			LATERAL (SELECT floor(p.pos) AS n, mod(mod(floor(p.pos), @SLOTS@) + @SLOTS@, @SLOTS@)::int AS owner,
				z.size >= @LATE@ AND p.pos - floor(p.pos) >= 1 - 1.0 / @LATE@ AS late) b
		WHERE s.seqrelid = seq), v)
$f$;
CREATE OR REPLACE FUNCTION certa.sequence_floors(slot int, known jsonb) RETURNS jsonb LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE r record; far numeric; out jsonb := coalesce(known, '{}');
BEGIN
	FOR r IN SELECT s.seqstart, s.seqincrement AS inc, d.refobjid::regclass AS tab, a.attname AS col,
			quote_ident(ns.nspname) || '.' || quote_ident(sc.relname) AS name,
			greatest(1, least(@BLOCKMAX@, floor((s.seqmax::numeric - s.seqmin) / abs(s.seqincrement) / @SLOTS@))) * s.seqincrement AS step
		FROM pg_sequence s JOIN pg_class sc ON sc.oid = s.seqrelid JOIN pg_namespace ns ON ns.oid = sc.relnamespace
			JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = s.seqrelid
				AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
			JOIN pg_attribute a ON a.attrelid = d.refobjid AND a.attnum = d.refobjsubid
		WHERE slot >= 0 AND sc.relpersistence <> 't' AND ns.nspname NOT IN ('pg_catalog', 'information_schema', 'certa')
	LOOP
		BEGIN
			EXECUTE format('SELECT max((%1$I - $1) * sign($2)) FROM %2$s WHERE mod(mod(floor((%1$I - $1) / $3), @SLOTS@) + @SLOTS@, @SLOTS@) = $4',
				r.col, r.tab) INTO far USING r.seqstart::numeric, r.inc::numeric, r.step, slot;
		EXCEPTION WHEN OTHERS THEN -- a column whose values are not numbers
			far := NULL;
		END;
		far := r.seqstart + far * sign(r.inc);
		IF far IS NOT NULL AND (NOT out ? r.name OR (far - (out ->> r.name)::numeric) * sign(r.inc) > 0) THEN
			out := out || jsonb_build_object(r.name, far);
		END IF;
	END LOOP;
	RETURN out;
END
$f$;
REVOKE EXECUTE ON FUNCTION certa.sequence_floors(int, jsonb) FROM PUBLIC;
CREATE OR REPLACE FUNCTION certa.place_sequences_at(slot int, fresh boolean, floors jsonb, seqs oid[]) RETURNS void LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE r record; last bigint; called boolean; n numeric; f numeric; target numeric; done boolean;
BEGIN
	PERFORM pg_advisory_lock(@LOCK@);
	BEGIN
		FOR r IN SELECT s.seqrelid AS seq, s.seqstart, s.seqincrement AS inc, s.seqmin, s.seqmax,
				quote_ident(ns.nspname) || '.' || quote_ident(c.relname) AS name
			FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
			WHERE c.relpersistence <> 't' AND ns.nspname NOT IN ('pg_catalog', 'information_schema', 'certa')
				AND (seqs IS NULL OR s.seqrelid = ANY (seqs))
		LOOP
			BEGIN
				done := false;
				IF slot < 0 THEN -- no slot: it hands out nothing
					target := CASE WHEN r.inc > 0 THEN r.seqmax ELSE r.seqmin END;
				ELSE
					EXECUTE format('SELECT last_value, is_called FROM %s', r.seq::regclass) INTO last, called;
					n := CASE WHEN fresh THEN r.seqstart WHEN called THEN last::numeric + r.inc ELSE last END;
					f := (floors ->> r.name)::numeric + r.inc;
					IF f IS NOT NULL AND (f - n) * sign(r.inc) > 0 THEN
						n := f;
					END IF;
					target := certa.sequence_place(r.seq, slot, n, true);
					done := target = n AND NOT fresh AND f IS NULL;
				END IF;
				IF done THEN
					CONTINUE;
				ELSIF target BETWEEN r.seqmin AND r.seqmax AND slot >= 0 THEN
					PERFORM setval(r.seq, target::bigint, false);
				ELSE -- used up, or parked
					PERFORM setval(r.seq, CASE WHEN r.inc > 0 THEN r.seqmax ELSE r.seqmin END, true);
				END IF;
			EXCEPTION WHEN insufficient_privilege THEN
				-- Left where it is: the check at the end of a transaction
				-- that takes its values moves it.
			END;
		END LOOP;
	EXCEPTION WHEN OTHERS THEN
		PERFORM pg_advisory_unlock(@LOCK@);
		RAISE;
	END;
	PERFORM pg_advisory_unlock(@LOCK@);
END
$f$;
REVOKE EXECUTE ON FUNCTION certa.place_sequences_at(int, boolean, jsonb, oid[]) FROM PUBLIC;
CREATE OR REPLACE FUNCTION certa.place_sequences(token text, slot int) RETURNS void LANGUAGE plpgsql VOLATILE
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM certa.token t WHERE t.token = place_sequences.token) THEN
		RAISE EXCEPTION 'certa: only the node may move sequences' USING ERRCODE = '42501';
	END IF;
	-- Only the sequences this transaction made or changed: a row it wrote
	-- has an xmin no older than its own xid (age <= 0; a later one's,
	-- committed since, may pass too). Reading every sequence would cost
	-- each schema change a lock and a read per sequence, which a client
	-- sees in pg_locks and waits for as the schema grows.
	PERFORM certa.place_sequences_at(slot, false, '{}', ARRAY(SELECT s.seqrelid
		FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
		WHERE age(c.xmin) <= 0 OR age(s.xmin) <= 0));
END
$f$;
CREATE OR REPLACE FUNCTION certa.hold_sequences(seqs oid[]) RETURNS jsonb LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE r record; last bigint; called boolean; held jsonb := '{}';
BEGIN
	FOR r IN SELECT q.seqrelid AS seq, q.seqstart FROM pg_sequence q JOIN pg_class c ON c.oid = q.seqrelid
		WHERE c.relpersistence <> 't' AND (q.seqrelid = ANY (seqs) OR q.seqrelid IN (SELECT d.objid FROM pg_depend d
			WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')
				AND d.refobjid = ANY (seqs)))
	LOOP
		EXECUTE format('SELECT last_value, is_called FROM %s', r.seq::regclass) INTO last, called;
		held := held || jsonb_build_object(r.seq::text, jsonb_build_array(last, called, r.seqstart));
		PERFORM setval(r.seq, r.seqstart, true);
	END LOOP;
	RETURN held;
END
$f$;
CREATE OR REPLACE FUNCTION certa.release_sequences(held jsonb) RETURNS void LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE k text; v jsonb; last bigint; called boolean; q record;
BEGIN
	FOR k, v IN SELECT * FROM jsonb_each(held) LOOP
		SELECT * INTO q FROM pg_sequence WHERE seqrelid = k::oid;
		IF NOT FOUND THEN
			CONTINUE; -- dropped
		END IF;
		EXECUTE format('SELECT last_value, is_called FROM %s', k::oid::regclass) INTO last, called;
		IF last <> (v ->> 2)::bigint OR NOT called THEN
			CONTINUE; -- the statement moved it (RESTART)
		END IF;
		IF (v ->> 0)::bigint BETWEEN q.seqmin AND q.seqmax THEN
			PERFORM setval(k::oid, (v ->> 0)::bigint, (v ->> 1)::boolean);
		ELSE -- past its new bounds: this node's values of it are used up
			-- (what it handed out before may lie within them)
			PERFORM setval(k::oid, CASE WHEN q.seqincrement > 0 THEN q.seqmax ELSE q.seqmin END, true);
		END IF;
	END LOOP;
END
$f$;
CREATE OR REPLACE FUNCTION certa.sequence_values(seqs oid[], last boolean) RETURNS TABLE (seq oid, value bigint) LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE s oid;
BEGIN
	FOREACH s IN ARRAY seqs LOOP
		BEGIN
			seq := s; value := currval(s); RETURN NEXT;
			last := true;
		EXCEPTION WHEN object_not_in_prerequisite_state OR insufficient_privilege OR undefined_table THEN
		END;
	END LOOP;
	IF last THEN -- a value was taken: lastval is defined, perhaps by another sequence
		BEGIN
			seq := 0; value := lastval(); RETURN NEXT;
		EXCEPTION WHEN object_not_in_prerequisite_state OR insufficient_privilege THEN
		END;
	END IF;
END
$f$;
CREATE OR REPLACE FUNCTION certa.forget_prepared(fns oid[]) RETURNS void LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE n text;
BEGIN
	IF EXISTS (SELECT 1 FROM unnest(fns) f WHERE pg_stat_get_xact_function_calls(f) IS NOT NULL) THEN
		FOR n IN SELECT p.name FROM pg_prepared_statements p WHERE p.from_sql LOOP
			EXECUTE format('DEALLOCATE %I', n);
		END LOOP;
	END IF;
END
$f$;
CREATE OR REPLACE FUNCTION certa.currval(seq regclass, known jsonb) RETURNS bigint LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	RETURN currval(seq);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	IF known ? seq::oid::text THEN
		RETURN (known ->> seq::oid::text)::bigint;
	END IF;
	RAISE;
END
$f$;
CREATE OR REPLACE FUNCTION certa.current_setting(shown text) RETURNS text LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$ SELECT shown $f$;
DROP FUNCTION IF EXISTS certa.lastval(bigint);
DROP FUNCTION IF EXISTS certa.place_sequences();
CREATE OR REPLACE FUNCTION certa.lastval(known bigint, seq oid) RETURNS bigint LANGUAGE plpgsql VOLATILE
	SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	RETURN lastval();
EXCEPTION WHEN object_not_in_prerequisite_state THEN
	-- As PostgreSQL: lastval is the currval of the sequence that gave
	-- the last value (a setval moves it), and undefined once it is gone.
	IF seq IS NOT NULL AND EXISTS (SELECT FROM pg_class WHERE oid = seq) THEN
		BEGIN
			RETURN currval(seq);
		EXCEPTION WHEN object_not_in_prerequisite_state THEN
			RETURN known;
		END;
	ELSIF seq IS NULL AND known IS NOT NULL THEN
		RETURN known;
	END IF;
	RAISE;
END
$f$;
CREATE OR REPLACE FUNCTION certa.refuse_truncate() RETURNS trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF certa.is_client() AND NOT certa.permitted() THEN
		RAISE EXCEPTION 'certa: TRUNCATE cannot run here: it is replicated as a statement of its own'
			USING ERRCODE = '` + codeNotLocal + `', HINT = 'Send TRUNCATE as a statement of its own (not inside a function or DO block).';
	END IF;
	-- Tried by CheckDDL, TRUNCATE runs on every node as the applier,
	-- whose session fires no user trigger: a TRUNCATE trigger would fire
	-- nowhere. It runs in the client's session instead, as in a block
	-- (a schema statement that writes rows is refused there).
	IF NOT certa.is_client() AND EXISTS (SELECT 1 FROM pg_trigger t
			WHERE t.tgrelid = TG_RELID AND NOT t.tgisinternal AND t.tgname NOT LIKE 'certa\_%' AND t.tgtype & 32 <> 0 AND t.tgenabled <> 'D') THEN
		RAISE EXCEPTION 'certa: TRUNCATE of %.% must run in the session: the table has a TRUNCATE trigger', TG_TABLE_SCHEMA, TG_TABLE_NAME
			USING ERRCODE = '` + codeInSession + `';
	END IF;
	PERFORM certa.note_tables(ARRAY[CASE WHEN TG_TABLE_SCHEMA = 'public' THEN TG_TABLE_NAME ELSE TG_TABLE_SCHEMA || '.' || TG_TABLE_NAME END]);
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION certa.install_capture() RETURNS event_trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	r record;
BEGIN
	IF certa.is_client() AND NOT certa.permitted() THEN
		RETURN; -- it stays only if it made temporary tables (certa.local_ddl), which get no triggers
	END IF;
	-- A table may be named more than once (CREATE TABLE with a foreign key).
	-- Rows live in tables and partitions (relkind 'r'), each with its own
	-- capture trigger; a partitioned table gets the TRUNCATE guard alone
	-- (boundary.go).
	FOR r IN SELECT DISTINCT c.oid::regclass AS rel, c.relkind,
			EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = ' certa_capture') AS captures,
			EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'certa_no_truncate') AS guarded
		FROM pg_event_trigger_ddl_commands() d JOIN pg_class c ON c.oid = d.objid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE d.object_type = 'table' AND c.relkind IN ('r', 'p') AND c.relpersistence <> 't' AND n.nspname <> 'certa'
	LOOP
		IF r.relkind = 'r' AND NOT r.captures THEN
			EXECUTE format('CREATE TRIGGER " certa_capture" AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()', r.rel, certa.capture_fn(r.rel));
		END IF;
		IF NOT r.guarded THEN
			EXECUTE format('CREATE TRIGGER certa_no_truncate BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION certa.refuse_truncate()', r.rel);
		END IF;
		-- A client's are made internal by certa.verify_capture, which runs
		-- as the superuser; the superuser's own session, unchecked, here.
		IF (SELECT u.rolsuper FROM pg_roles u WHERE u.rolname = current_user) THEN
			PERFORM certa.hide_trigger(r.rel, ' certa_capture', true), certa.hide_trigger(r.rel, 'certa_no_truncate', true);
		END IF;
	END LOOP;
END
$f$;
CREATE OR REPLACE FUNCTION certa.refuse_ddl() RETURNS event_trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT certa.is_client() THEN
		RETURN;
	END IF;
	IF NOT certa.permitted() THEN
		IF tg_tag IN (` + localTags + `) THEN
			RETURN; -- it runs here if it changes temporary objects alone (certa.local_ddl)
		END IF;
		-- codeNotLocal: a schema statement of the client's that Tx.ExecLocal
		-- tried here (its text names a temporary object: CREATE FUNCTION
		-- whose body makes a temporary table) is then replicated instead.
		RAISE EXCEPTION 'certa: % cannot run here: schema changes are replicated as statements of their own', tg_tag
			USING ERRCODE = '` + codeNotLocal + `',
			HINT = 'Send the schema change as a statement of its own (not inside a function or DO block).';
	END IF;
	-- A login role other than certa_client acts as it, or as a client
	-- role (roles.go), through the setting role (this function runs as
	-- its owner: current_user is not the client's).
	IF session_user <> 'certa_client' AND current_setting('role') <> 'certa_client'
		AND NOT EXISTS (SELECT 1 FROM pg_roles r WHERE r.rolname = current_setting('role') AND certa.client_role(r.oid)) THEN
		RAISE EXCEPTION 'certa: schema changes run as role certa_client, which owns the replicated objects, or as a role made through certa, not as %', session_user
			USING ERRCODE = '42501', HINT = 'RESET ROLE first.';
	END IF;
	IF tg_tag IN ('CREATE MATERIALIZED VIEW', 'REFRESH MATERIALIZED VIEW') THEN
		RAISE EXCEPTION 'certa: % cannot run inside a transaction block: the rows it copies are not replicated, and another node would copy other rows', tg_tag
			USING ERRCODE = '0A000',
			HINT = 'Run it on its own, outside a transaction block: it then runs in total order on every node.';
	END IF;
END
$f$;
CREATE OR REPLACE FUNCTION certa.note_tables(names text[]) RETURNS void LANGUAGE sql
	SET search_path = pg_catalog, pg_temp AS $f$
	SELECT set_config('certa.ddl_tables', concat_ws(chr(1), nullif(current_setting('certa.ddl_tables', true), ''),
		(SELECT string_agg(n, chr(1)) FROM unnest(names) n)), true);
$f$;
CREATE OR REPLACE FUNCTION certa.check_ddl() RETURNS event_trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	r record;
	filled boolean;
BEGIN
	-- The engine runs a client's CREATE TABLE AS and SELECT INTO WITH NO
	-- DATA, then inserts the rows (tablecopy.go): rows the statement wrote
	-- itself were written before any capture could see them.
	IF tg_tag IN ('CREATE TABLE AS', 'SELECT INTO') AND certa.is_client() AND certa.permitted() THEN
		FOR r IN SELECT d.objid FROM pg_event_trigger_ddl_commands() d WHERE d.classid = 'pg_class'::regclass LOOP
			EXECUTE format('SELECT EXISTS (SELECT FROM %s)', r.objid::regclass) INTO filled;
			IF filled THEN
				RAISE EXCEPTION 'certa: % cannot fill a table here: the rows it copies are not replicated, and another node would copy other rows', tg_tag
					USING ERRCODE = '0A000',
					HINT = 'Send it as a statement of its own, or create the table WITH NO DATA and fill it with INSERT ... SELECT.';
			END IF;
		END LOOP;
	END IF;
	FOR r IN SELECT DISTINCT c.oid, n.nspname, c.relname, c.relkind, c.relpersistence
		FROM pg_event_trigger_ddl_commands() d
		JOIN pg_class c ON c.oid = CASE WHEN d.object_type = 'index' THEN (SELECT indrelid FROM pg_index WHERE indexrelid = d.objid) ELSE d.objid END
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE d.classid = 'pg_class'::regclass AND c.relkind IN ('r', 'p', 'S', 'v', 'm', 'f') AND n.nspname <> 'certa'
			AND c.relpersistence <> 't'
	LOOP
		PERFORM certa.note_tables(ARRAY[CASE WHEN r.nspname = 'public' THEN r.relname ELSE r.nspname || '.' || r.relname END]);
	END LOOP;
END
$f$;
CREATE OR REPLACE FUNCTION certa.dropped() RETURNS event_trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	PERFORM certa.note_tables(array_agg(CASE WHEN d.schema_name = 'public' THEN d.object_name ELSE d.schema_name || '.' || d.object_name END))
		FROM pg_event_trigger_dropped_objects() d
		WHERE d.object_type IN ('table', 'sequence', 'view', 'materialized view', 'foreign table') AND d.original AND NOT d.is_temporary;
END
$f$;
DROP EVENT TRIGGER IF EXISTS certa_refuse_ddl;
CREATE EVENT TRIGGER certa_refuse_ddl ON ddl_command_start EXECUTE FUNCTION certa.refuse_ddl();
ALTER EVENT TRIGGER certa_refuse_ddl ENABLE ALWAYS;
DROP EVENT TRIGGER IF EXISTS certa_check_ddl;
CREATE EVENT TRIGGER certa_check_ddl ON ddl_command_end EXECUTE FUNCTION certa.check_ddl();
ALTER EVENT TRIGGER certa_check_ddl ENABLE ALWAYS;
DROP EVENT TRIGGER IF EXISTS certa_dropped;
CREATE EVENT TRIGGER certa_dropped ON sql_drop EXECUTE FUNCTION certa.dropped();
ALTER EVENT TRIGGER certa_dropped ENABLE ALWAYS;
CREATE OR REPLACE FUNCTION certa.local_ddl() RETURNS event_trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	dropped boolean := current_setting('certa.local_drop', true) = 'on';
	made text;
	tmp text;
BEGIN
	PERFORM set_config('certa.local_drop', '', true);
	IF NOT certa.is_client() AND current_user <> 'certa_client' AND NOT certa.client_role(current_user::regrole::oid) THEN
		RETURN; -- the node's own work
	END IF;
	-- An object outside pg_temp that depends on a temporary one (a
	-- function taking a temporary table's row type) goes with the
	-- session here, as in PostgreSQL, but the other nodes cannot make it,
	-- and this node's checks of later statements would find it.
	SELECT d.object_identity, pg_describe_object(p.refclassid, p.refobjid, 0) INTO made, tmp
		FROM pg_event_trigger_ddl_commands() d
		JOIN pg_depend p ON p.classid = d.classid AND p.objid = d.objid AND p.deptype IN ('n', 'a')
		WHERE d.schema_name <> 'pg_temp' -- rules and triggers have none: their table's counts
			AND (pg_identify_object(p.refclassid, p.refobjid, 0)).schema LIKE 'pg\_temp\_%'
		LIMIT 1;
	IF made IS NOT NULL THEN
		RAISE EXCEPTION 'certa: % depends on %, which is temporary: it cannot be replicated', made, tmp
			USING ERRCODE = '0A000',
			HINT = 'Make it temporary too (in schema pg_temp), or make what it depends on permanent.';
	END IF;
	IF NOT certa.is_client() OR certa.permitted() THEN
		-- Replicated (CheckDDL, the applier, a schema statement of a
		-- block): a temporary object would be another backend's on each node.
		IF EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() d WHERE d.schema_name = 'pg_temp') THEN
			RAISE EXCEPTION 'certa: % of a temporary object cannot be replicated: temporary objects belong to one session of one node', tg_tag
				USING ERRCODE = '0A000', HINT = 'Send it on its own, or in a transaction block, as a statement of its own.';
		END IF;
		RETURN;
	END IF;
	-- A DROP ... IF EXISTS that dropped nothing (no sql_drop fired) in a
	-- client's function or DO block changed nothing. Not certa's try of a
	-- client's statement (Tx.ExecLocal): that one goes on to every node,
	-- where a relation made elsewhere may exist at its position.
	IF tg_tag LIKE 'DROP %' AND NOT dropped AND NOT EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands())
		AND coalesce(current_setting('certa.local_try', true), '') <> 'on' THEN
		RETURN;
	END IF;
	-- A client's statement that certa did not permit: it stays on this
	-- node, in this session, only if it changed temporary objects alone.
	-- A rule or a trigger has no schema of its own: its table's counts.
	IF NOT dropped AND NOT EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands())
		OR EXISTS (SELECT 1 FROM pg_event_trigger_ddl_commands() d WHERE CASE d.classid
			WHEN 'pg_rewrite'::regclass THEN NOT EXISTS (SELECT 1 FROM pg_rewrite r JOIN pg_class c ON c.oid = r.ev_class
				WHERE r.oid = d.objid AND c.relnamespace = pg_my_temp_schema())
			WHEN 'pg_trigger'::regclass THEN NOT EXISTS (SELECT 1 FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
				WHERE g.oid = d.objid AND c.relnamespace = pg_my_temp_schema())
			ELSE d.schema_name IS DISTINCT FROM 'pg_temp' END) THEN
		RAISE EXCEPTION 'certa: % cannot run here: schema changes are replicated as statements of their own', tg_tag
			USING ERRCODE = '` + codeNotLocal + `',
			HINT = 'Send the schema change as a statement of its own (not inside a function or DO block).';
	END IF;
	-- A statement prepared on this backend (conn.clientStatement) finds
	-- its tables again: a new temporary one may now come first.
	EXECUTE 'DISCARD PLANS';
END
$f$;
CREATE OR REPLACE FUNCTION certa.local_drop() RETURNS event_trigger LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
BEGIN
	IF NOT certa.is_client() AND current_user <> 'certa_client' AND NOT certa.client_role(current_user::regrole::oid) THEN
		RETURN;
	END IF;
	IF NOT certa.is_client() OR certa.permitted() THEN
		-- The checker and the appliers have no temporary objects but those
		-- the statement made itself (REFRESH MATERIALIZED VIEW
		-- CONCURRENTLY's, which it drops): only a block's statement, in
		-- the client's session, could drop one of the session's.
		IF certa.is_client() AND EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects() d WHERE d.original AND d.is_temporary) THEN
			RAISE EXCEPTION 'certa: % of a temporary object cannot be replicated: temporary objects belong to one session of one node', tg_tag
				USING ERRCODE = '0A000', HINT = 'Send it on its own, or in a transaction block, as a statement of its own.';
		END IF;
		RETURN;
	END IF;
	-- A dropped rule names no schema and is never temporary: its
	-- identity names its table's ("r on pg_temp.t").
	IF EXISTS (SELECT 1 FROM pg_event_trigger_dropped_objects() d
		WHERE CASE WHEN d.object_type = 'rule' THEN d.object_identity !~ ' on pg_temp\.[^.]+$'
			ELSE d.schema_name IS NOT NULL AND NOT d.is_temporary END) THEN
		RAISE EXCEPTION 'certa: % cannot run here: schema changes are replicated as statements of their own', tg_tag
			USING ERRCODE = '` + codeNotLocal + `',
			HINT = 'Send the schema change as a statement of its own (not inside a function or DO block).';
	END IF;
	PERFORM set_config('certa.local_drop', 'on', true);
END
$f$;
DROP EVENT TRIGGER IF EXISTS certa_local_ddl;
CREATE EVENT TRIGGER certa_local_ddl ON ddl_command_end EXECUTE FUNCTION certa.local_ddl();
ALTER EVENT TRIGGER certa_local_ddl ENABLE ALWAYS;
DROP EVENT TRIGGER IF EXISTS certa_local_drop;
CREATE EVENT TRIGGER certa_local_drop ON sql_drop EXECUTE FUNCTION certa.local_drop();
ALTER EVENT TRIGGER certa_local_drop ENABLE ALWAYS;
DROP EVENT TRIGGER IF EXISTS certa_install_capture;
CREATE EVENT TRIGGER certa_install_capture ON ddl_command_end
	WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO')
	EXECUTE FUNCTION certa.install_capture();
ALTER EVENT TRIGGER certa_install_capture ENABLE ALWAYS;
`
