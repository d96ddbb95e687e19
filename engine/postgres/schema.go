package postgres

// bootstrapSQL makes what certa keeps in a database, idempotently:
//
//   - certa.applied: one row per applied seqno, inserted by the transaction
//     that applies (or commits at) it; its largest seqno is the state a
//     snapshot reads.
//   - certa.capture: the rows a transaction changed, as its capture
//     triggers record them, read back (and deleted) before it commits.
//     UNLOGGED: nothing in it survives its transaction.
//   - certa.capture_row: the row trigger. It records nothing unless the
//     session set certa.capture to on, so that a dump restored into a plain
//     PostgreSQL, or the applier (session_replication_role = replica, under
//     which ordinary triggers do not fire anyway), captures nothing.
//   - the event trigger certa_install_capture, which gives every new
//     permanent table outside schema certa its capture trigger, whoever
//     creates it and however (CREATE TABLE AS, in a function...); ENABLE
//     ALWAYS, so that it fires for the applier's DDL too, which runs with
//     session_replication_role = replica.
const bootstrapSQL = `
CREATE SCHEMA IF NOT EXISTS certa;
CREATE TABLE IF NOT EXISTS certa.applied (seqno bigint PRIMARY KEY);
CREATE UNLOGGED TABLE IF NOT EXISTS certa.capture (
	xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
	seq bigserial NOT NULL,
	rel oid NOT NULL,
	op "char" NOT NULL,
	old jsonb,
	new jsonb,
	PRIMARY KEY (xid, seq)
);
CREATE OR REPLACE FUNCTION certa.capture_row() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
	IF current_setting('certa.capture', true) IS DISTINCT FROM 'on' THEN
		RETURN NULL;
	END IF;
	INSERT INTO certa.capture (rel, op, old, new) VALUES (TG_RELID, left(TG_OP, 1),
		CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) END,
		CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) END);
	RETURN NULL;
END
$f$;
CREATE OR REPLACE FUNCTION certa.install_capture() RETURNS event_trigger LANGUAGE plpgsql AS $f$
DECLARE
	r record;
BEGIN
	-- A table may be named more than once (CREATE TABLE with a foreign key).
	FOR r IN SELECT DISTINCT c.oid::regclass AS rel
		FROM pg_event_trigger_ddl_commands() d JOIN pg_class c ON c.oid = d.objid
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE d.object_type = 'table' AND c.relkind IN ('r', 'p') AND c.relpersistence = 'p' AND n.nspname <> 'certa'
			AND NOT EXISTS (SELECT 1 FROM pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = 'certa_capture')
	LOOP
		EXECUTE format('CREATE TRIGGER certa_capture AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION certa.capture_row()', r.rel);
	END LOOP;
END
$f$;
DROP EVENT TRIGGER IF EXISTS certa_install_capture;
CREATE EVENT TRIGGER certa_install_capture ON ddl_command_end
	WHEN TAG IN ('CREATE TABLE', 'CREATE TABLE AS', 'SELECT INTO')
	EXECUTE FUNCTION certa.install_capture();
ALTER EVENT TRIGGER certa_install_capture ENABLE ALWAYS;
`
