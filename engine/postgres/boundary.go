package postgres

// boundarySQL keeps capture complete (issue 32): appended to bootstrapSQL.
// DESIGN.md, "The capture boundary", says why.
//
// What a client's write changes reaches the other nodes only through the
// capture trigger of its table, and only what the applier (which runs
// with session_replication_role = replica) leaves alone stays as the
// origin wrote it. So this holds of every replicated table (permanent,
// relkind 'r' or 'p', partitions included, outside schemas certa,
// pg_catalog, information_schema):
//
//   - a table that holds rows (relkind 'r') has its own " certa_capture",
//     AFTER INSERT OR UPDATE OR DELETE FOR EACH ROW, calling
//     the function certa.capture_fn names, enabled on the origin only ('O'), without WHEN,
//     column list or arguments;
//   - every one, 'r' and 'p', has certa_no_truncate, BEFORE TRUNCATE FOR
//     EACH STATEMENT, calling certa.refuse_truncate, enabled 'O'
//     (statement triggers are not cloned to partitions; TRUNCATE of a
//     partitioned table fires each partition's, which notes its table);
//   - a partitioned table has no " certa_capture": its partitions have their
//     own, not clones (a clone goes when its partition is detached, and a
//     table with its own " certa_capture" could not be attached: PostgreSQL
//     refuses to clone a trigger onto a table that has one of its name);
//   - no other trigger, on any relation, calls certa's trigger functions
//     (a second capture would record rows twice, a view's rows of no
//     table);
//   - no trigger (but PostgreSQL's internal ones) or rule is enabled
//     REPLICA or ALWAYS: it would fire on the applying nodes alone;
//   - no table has a column whose type PostgreSQL writes out but does not
//     read in (pg_node_tree, the statistics types; in an array, a domain,
//     a composite or a range too): its rows could not be applied.
//
// certa's two triggers are internal (tgisinternal), as PostgreSQL's
// foreign-key triggers are: psql's \d, information_schema and pg_dump
// leave them out (certa.hide_trigger; DESIGN.md says what else follows).
//
// The event trigger certa_verify_capture (ddl_command_end, every tag,
// ENABLE ALWAYS; its name sorts after certa_install_capture and
// certa_local_ddl, so it sees what they did) keeps it at the end of every
// schema statement of a client's (permitted by the engine: on its own,
// in a block, or in a function that such a statement runs), of CheckDDL
// and of the applier (which run them as certa_client), in one catalog
// query (certa.capture_faults) over the tables the statement changed:
// those it names (an index's, a trigger's or a rule's table), their
// partitions and the tables they are partitions of. What certa can mend
// without undoing what the client asked for, it mends
// (certa.equip_tables): a table without its triggers gets them (CREATE
// SCHEMA ... CREATE TABLE, which certa_install_capture does not see), and
// a " certa_capture" on a partitioned table (a client's CREATE TRIGGER, or an
// older database's) is dropped. Anything else is the statement's doing and is refused with
// 0A000 (certa.refuse_fault), which aborts it before it reaches the log
// (CheckDDL runs every statement sent on its own first; a block's is in
// the block's transaction). At CREATE TRIGGER only the trigger made is
// checked: certa_install_capture makes a new table's two triggers one
// after the other, and certa's own repairs are CREATE OR REPLACE TRIGGER
// and DROP TRIGGER. certa_verify_drop (sql_drop) refuses a statement that
// drops certa's trigger from a table that stays (DROP TRIGGER; DROP
// EXTENSION of an extension the trigger was made to depend on).
//
// Not checked: the node's own work as the superuser (bootstrap,
// pg_restore, an operator's psql), and a client's statement the engine
// did not permit (certa_refuse_ddl and certa_local_ddl keep it only if it
// changed temporary objects alone). The functions run as their owner; who
// runs the statement is the session user (certa.is_client) or the setting
// role (the applier's SET LOCAL ROLE certa_client).
//
// A database made before this existed is mended when the engine opens it
// (the last statements here): partitioned tables' row triggers go (their
// clones with them), and every table gets the triggers it lacks, enabled
// 'O'. A table's other faults (a trigger enabled ALWAYS) stay until a
// statement changes that table, which is then refused until it mends
// them too (ENABLE TRIGGER), one table at a time.
const boundarySQL = `
CREATE OR REPLACE FUNCTION certa.capture_faults(scope oid[]) RETURNS TABLE (rel oid, kind "char", fault text, trg name)
	LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $f$
BEGIN
	-- Planned once per session: a SQL function is planned at every call,
	-- and so is a PL/pgSQL query with a parameter whose custom plans
	-- look cheaper than its generic one (4 times the cost, measured).
	RETURN QUERY WITH rels AS (
		SELECT c.oid, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = ANY (scope) AND c.relkind IN ('r', 'p') AND c.relpersistence <> 't'
			AND n.nspname NOT IN ('certa', 'pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%'
	)
	SELECT r.oid, r.relkind, f.fault, f.trg
	FROM rels r
	LEFT JOIN pg_trigger cap ON cap.tgrelid = r.oid AND cap.tgname = ' certa_capture'
	LEFT JOIN pg_trigger grd ON grd.tgrelid = r.oid AND grd.tgname = 'certa_no_truncate'
	CROSS JOIN LATERAL (VALUES
		(CASE WHEN cap.oid IS NULL THEN CASE WHEN r.relkind = 'r' THEN 'no capture' END
			WHEN cap.tgfoid = ANY (certa.capture_fns()) AND cap.tgtype = 29 AND cap.tgenabled = 'O'
				AND cap.tgqual IS NULL AND cap.tgattr = '' AND cap.tgconstraint = 0 AND cap.tgnargs = 0
				THEN CASE WHEN r.relkind = 'p' THEN 'partitioned capture'
					WHEN cap.tgfoid <> certa.capture_fn(r.oid) THEN 'stale capture'
					WHEN NOT cap.tgisinternal THEN 'visible capture' END
			ELSE 'changed capture' END, ' certa_capture'::name),
		(CASE WHEN grd.oid IS NULL THEN 'no guard'
			WHEN grd.tgfoid = 'certa.refuse_truncate'::regproc AND grd.tgtype = 34 AND grd.tgenabled = 'O'
				AND grd.tgqual IS NULL AND grd.tgattr = '' AND grd.tgconstraint = 0 AND grd.tgnargs = 0
				THEN CASE WHEN NOT grd.tgisinternal THEN 'visible guard' END
			ELSE 'changed guard' END, 'certa_no_truncate')
	) f (fault, trg)
	WHERE f.fault IS NOT NULL
	UNION ALL
	SELECT r.oid, r.relkind,
		CASE WHEN (t.tgfoid = ANY (certa.capture_fns()) OR t.tgfoid = 'certa.refuse_truncate'::regproc) THEN 'borrowed'
			WHEN t.tgname < ' certa_capture' COLLATE "C" THEN 'early trigger' ELSE 'replica trigger' END,
		t.tgname
	FROM rels r JOIN pg_trigger t ON t.tgrelid = r.oid
	WHERE t.tgname NOT IN (' certa_capture', 'certa_no_truncate')
		-- certa's are internal: one renamed is still borrowed.
		AND (NOT t.tgisinternal AND t.tgenabled IN ('R', 'A') OR (t.tgfoid = ANY (certa.capture_fns()) OR t.tgfoid = 'certa.refuse_truncate'::regproc)
			OR t.tgname < ' certa_capture' COLLATE "C")
	UNION ALL
	SELECT r.oid, r.relkind, 'replica rule', w.rulename
	FROM rels r JOIN pg_rewrite w ON w.ev_class = r.oid
	WHERE w.ev_enabled IN ('R', 'A')
	UNION ALL
	-- Values PostgreSQL writes out but does not read back in: the other
	-- nodes could not apply the table's rows (nor a snapshot restore it).
	-- From each column's type down (array element, domain base, composite
	-- member, range subtype), by the catalogs' indexes: a scan of every
	-- table's columns (certa.tables_holding) made each schema statement
	-- 40 ms slower on the regression suite's database.
	SELECT r.oid, r.relkind, 'unreadable type', NULL
	FROM rels r
	WHERE EXISTS (
		WITH RECURSIVE ty (oid, depth) AS (
			SELECT a.atttypid, 0 FROM pg_attribute a WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
			UNION ALL
			SELECT n.oid, ty.depth + 1 FROM ty CROSS JOIN LATERAL (
				SELECT t.typelem FROM pg_type t WHERE t.oid = ty.oid AND t.typcategory = 'A' AND t.typelem <> 0
				UNION ALL
				SELECT t.typbasetype FROM pg_type t WHERE t.oid = ty.oid AND t.typbasetype <> 0
				UNION ALL
				SELECT a.atttypid FROM pg_type t JOIN pg_attribute a ON a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
					WHERE t.oid = ty.oid AND t.typtype = 'c'
				UNION ALL
				SELECT g.rngsubtype FROM pg_range g WHERE g.rngtypid = ty.oid
				UNION ALL
				SELECT g.rngtypid FROM pg_range g WHERE g.rngmultitypid = ty.oid
			) n (oid)
			WHERE ty.depth < 16
		)
		SELECT FROM ty JOIN pg_type t ON t.oid = ty.oid
		WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.typname IN ('pg_node_tree', 'pg_ndistinct', 'pg_dependencies',
			'pg_mcv_list', 'pg_brin_bloom_summary', 'pg_brin_minmax_multi_summary'));
END
$f$;
CREATE OR REPLACE FUNCTION certa.hide_trigger(rel oid, trg name, hidden bool) RETURNS void LANGUAGE sql
	SET search_path = pg_catalog, pg_temp AS $f$
	-- Marked internal, certa's triggers are left out of psql's \d,
	-- information_schema.triggers and pg_dump, as PostgreSQL's own are
	-- (a snapshot's tables get theirs again when the engine opens the
	-- restored database). Run by the superuser (certa.verify_capture, the
	-- bootstrap): a catalog row.
	UPDATE pg_trigger SET tgisinternal = hidden WHERE tgrelid = rel AND tgname = trg AND tgisinternal <> hidden
$f$;
REVOKE EXECUTE ON FUNCTION certa.hide_trigger(oid, name, bool) FROM PUBLIC;
CREATE OR REPLACE FUNCTION certa.equip_tables(tag text, touched oid[], scope oid[]) RETURNS void LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $f$
DECLARE
	f record;
	again oid[] := '{}';
BEGIN
	-- A partitioned table's " certa_capture" first: its clones cannot be
	-- replaced, they go with it.
	FOR f IN SELECT * FROM certa.capture_faults(scope) ORDER BY kind = 'p' AND trg = ' certa_capture' DESC LOOP
		IF f.fault NOT IN ('no capture', 'stale capture', 'no guard', 'partitioned capture', 'visible capture', 'visible guard')
			AND (f.rel = ANY (touched) OR EXISTS (SELECT 1 FROM pg_partition_ancestors(f.rel) a WHERE a.relid = ANY (touched))) THEN
			PERFORM certa.refuse_fault(tag, f.fault, f.rel, f.trg);
		END IF;
		IF f.kind = 'p' AND f.trg = ' certa_capture' THEN
			-- Its clones go with it (a partition's, when its table's went
			-- before it in this loop): the partitions get their own.
			EXECUTE format('DROP TRIGGER IF EXISTS " certa_capture" ON %s', f.rel::regclass);
			again := again || ARRAY(SELECT p.relid::oid FROM pg_partition_tree(f.rel) p);
		ELSIF f.fault IN ('visible capture', 'visible guard') THEN
			PERFORM certa.hide_trigger(f.rel, f.trg, true);
		ELSIF f.fault IN ('no capture', 'changed capture', 'stale capture') THEN
			PERFORM certa.hide_trigger(f.rel, f.trg, false); -- PostgreSQL replaces no internal trigger
			EXECUTE format('CREATE OR REPLACE TRIGGER " certa_capture" AFTER INSERT OR UPDATE OR DELETE ON %s FOR EACH ROW EXECUTE FUNCTION %s()', f.rel::regclass, certa.capture_fn(f.rel));
			PERFORM certa.hide_trigger(f.rel, f.trg, true);
		ELSIF f.fault IN ('no guard', 'changed guard') THEN
			PERFORM certa.hide_trigger(f.rel, f.trg, false);
			EXECUTE format('CREATE OR REPLACE TRIGGER certa_no_truncate BEFORE TRUNCATE ON %s FOR EACH STATEMENT EXECUTE FUNCTION certa.refuse_truncate()', f.rel::regclass);
			PERFORM certa.hide_trigger(f.rel, f.trg, true);
		END IF;
		-- Left as they are: the other faults of tables the statement did
		-- not change.
	END LOOP;
	IF cardinality(again) > 0 THEN
		PERFORM certa.equip_tables(tag, touched, again);
	END IF;
END
$f$;
REVOKE EXECUTE ON FUNCTION certa.equip_tables(text, oid[], oid[]) FROM PUBLIC;
CREATE OR REPLACE FUNCTION certa.refuse_fault(tag text, fault text, rel regclass, trg name) RETURNS void LANGUAGE plpgsql
	SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	keep constant text := 'certa''s triggers " certa_capture" and certa_no_truncate replicate the table''s changes: they stay as certa made them (not disabled, dropped, renamed, replaced, or enabled REPLICA or ALWAYS), else its changes would stay on one node.';
BEGIN
	CASE fault
	WHEN 'replica trigger', 'replica rule' THEN
		RAISE EXCEPTION 'certa: % % of table % cannot be enabled REPLICA or ALWAYS: it would fire only on the nodes that apply the table''s rows, not where they are written',
			CASE fault WHEN 'replica rule' THEN 'rule' ELSE 'trigger' END, quote_ident(trg), rel
			USING ERRCODE = '0A000', HINT = 'The other nodes apply rows as the origin wrote them. Enable it as an ordinary one (ENABLE TRIGGER, ENABLE RULE): it fires where the client writes, and what it changes is replicated.';
	WHEN 'unreadable type' THEN
		RAISE EXCEPTION 'certa: table % cannot have a column of a type whose values PostgreSQL does not read back (pg_node_tree, the statistics types): its rows could not be applied on the other nodes', rel
			USING ERRCODE = '0A000', HINT = 'Keep such values as text (cast them: relpartbound::text).';
	WHEN 'borrowed' THEN
		RAISE EXCEPTION 'certa: trigger % of table % cannot call certa''s trigger functions: they are certa''s own', quote_ident(trg), rel
			USING ERRCODE = '0A000', HINT = keep;
	WHEN 'early trigger' THEN
		RAISE EXCEPTION 'certa: trigger % of table % cannot have a name that sorts before certa''s capture trigger " certa_capture"', quote_ident(trg), rel
			USING ERRCODE = '0A000', HINT = 'PostgreSQL fires a table''s triggers in the order of their names, and certa records each row''s change before the table''s own triggers change more rows. Start the name with a letter, a digit or another printable character.';
	ELSE
		RAISE EXCEPTION 'certa: % cannot % trigger % of table %: certa''s triggers replicate the table''s rows', tag,
			CASE WHEN tag LIKE 'DROP%' THEN 'drop' ELSE 'change' END, trg, rel
			USING ERRCODE = '0A000', HINT = keep;
	END CASE;
END
$f$;
REVOKE EXECUTE ON FUNCTION certa.refuse_fault(text, text, regclass, name) FROM PUBLIC;
CREATE OR REPLACE FUNCTION certa.tables_holding(types oid[]) RETURNS SETOF oid LANGUAGE sql STABLE
	SET search_path = pg_catalog, pg_temp AS $f$
	WITH RECURSIVE ty (oid) AS (
		SELECT unnest(types)
		UNION
		SELECT n.oid FROM ty CROSS JOIN LATERAL (
			SELECT t.oid FROM pg_type t WHERE t.typelem = ty.oid AND t.typcategory = 'A' OR t.typbasetype = ty.oid
			UNION ALL
			SELECT c.reltype FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid AND c.relkind = 'c'
				WHERE a.atttypid = ty.oid AND a.attnum > 0 AND NOT a.attisdropped
			UNION ALL
			SELECT unnest(ARRAY[g.rngtypid, g.rngmultitypid]) FROM pg_range g WHERE g.rngsubtype = ty.oid
		) n (oid)
	)
	SELECT DISTINCT a.attrelid FROM ty JOIN pg_attribute a ON a.atttypid = ty.oid AND a.attnum > 0 AND NOT a.attisdropped
		JOIN pg_class c ON c.oid = a.attrelid AND c.relkind IN ('r', 'p')
$f$;
CREATE OR REPLACE FUNCTION certa.verify_capture() RETURNS event_trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET plan_cache_mode = force_generic_plan AS $f$
DECLARE
	f record;
	touched oid[];
	types oid[];
	lost oid[];
BEGIN
	-- Every session but the node's superuser's is checked: the applier's
	-- and CheckDDL's (SET LOCAL ROLE certa_client) too, whatever role the
	-- client code a statement runs sets (SET LOCAL ROLE NONE).
	IF certa.is_client() THEN
		IF NOT certa.permitted() THEN
			RETURN; -- it stays only if it changed temporary objects alone (certa.local_ddl)
		END IF;
	ELSIF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
		RETURN; -- the node's own work (bootstrap, its superuser's part of a restore)
	END IF;
	IF tg_tag = 'CREATE TRIGGER' THEN
		-- Only the trigger made can be at fault. certa_install_capture
		-- makes a new table's two one after the other: nothing else is
		-- mended here but a " certa_capture" made on a partitioned table
		-- (a client's CREATE TRIGGER), which goes.
		-- Certa's trigger functions are for certa's triggers alone, on
		-- any relation (a view's trigger that captured would put rows of
		-- no table in a write set).
		FOR f IN SELECT t.tgname, t.tgrelid, c.relkind,
				t.tgname < ' certa_capture' COLLATE "C" AND NOT (t.tgfoid = ANY (certa.capture_fns()) OR t.tgfoid = 'certa.refuse_truncate'::regproc) AS early,
				CASE WHEN t.tgname = ' certa_capture' THEN t.tgfoid = certa.capture_fn(t.tgrelid) AND t.tgtype = 29
					WHEN t.tgname = 'certa_no_truncate' THEN t.tgfoid = 'certa.refuse_truncate'::regproc AND t.tgtype = 34
					ELSE NOT (t.tgfoid = ANY (certa.capture_fns()) OR t.tgfoid = 'certa.refuse_truncate'::regproc) AND t.tgname > ' certa_capture' COLLATE "C" END
				AND (t.tgname NOT IN (' certa_capture', 'certa_no_truncate')
					OR c.relkind IN ('r', 'p') AND t.tgenabled = 'O' AND t.tgqual IS NULL AND t.tgattr = '' AND t.tgconstraint = 0 AND t.tgnargs = 0) AS ok
			FROM pg_event_trigger_ddl_commands() d JOIN pg_trigger t ON t.oid = d.objid JOIN pg_class c ON c.oid = t.tgrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE d.classid = 'pg_trigger'::regclass AND n.nspname NOT IN ('certa', 'pg_catalog', 'information_schema')
		LOOP
			IF NOT f.ok THEN
				PERFORM certa.refuse_fault(tg_tag, CASE WHEN f.tgname IN (' certa_capture', 'certa_no_truncate') THEN 'changed'
					WHEN f.early THEN 'early trigger' ELSE 'borrowed' END, f.tgrelid, f.tgname);
			ELSIF f.tgname = ' certa_capture' AND f.relkind = 'p' THEN
				EXECUTE format('DROP TRIGGER " certa_capture" ON %s', f.tgrelid::regclass);
			END IF;
		END LOOP;
		RETURN;
	END IF;
	-- The tables the statement changed: those it names (an index's, a
	-- trigger's, a rule's table), those whose columns hold a type it
	-- changed (through arrays, domains, composites, ranges: whether a
	-- table holds json decides its capture), the partitions they have and
	-- the tables they are partitions of; and the partitions of a
	-- partitioned table whose " certa_capture" it dropped (certa.verify_drop).
	-- tables_holding reads all of pg_attribute (no index on a column's
	-- type): only when the statement changed a type.
	types := ARRAY(SELECT d.objid FROM pg_event_trigger_ddl_commands() d WHERE d.classid = 'pg_type'::regclass
		UNION ALL SELECT c.reltype FROM pg_event_trigger_ddl_commands() d JOIN pg_class c ON c.oid = d.objid
			WHERE d.classid = 'pg_class'::regclass AND c.relkind = 'c');
	touched := ARRAY(SELECT DISTINCT rel FROM (SELECT CASE d.classid
			WHEN 'pg_class'::regclass THEN coalesce((SELECT i.indrelid FROM pg_index i WHERE i.indexrelid = d.objid), d.objid)
			WHEN 'pg_trigger'::regclass THEN (SELECT t.tgrelid FROM pg_trigger t WHERE t.oid = d.objid)
			WHEN 'pg_rewrite'::regclass THEN (SELECT w.ev_class FROM pg_rewrite w WHERE w.oid = d.objid) END
		FROM pg_event_trigger_ddl_commands() d
		UNION ALL
		SELECT rel FROM certa.tables_holding(types) AS h (rel) WHERE cardinality(types) > 0) AS named (rel) WHERE rel IS NOT NULL);
	lost := string_to_array(nullif(current_setting('certa.lost_capture', true), ''), ',')::oid[];
	IF lost IS NOT NULL THEN
		PERFORM set_config('certa.lost_capture', '', true);
	END IF;
	IF cardinality(touched) = 0 AND lost IS NULL THEN
		RETURN; -- a DROP, or a statement on no table
	END IF;
	PERFORM certa.equip_tables(tg_tag, touched, touched || coalesce(lost, '{}') || ARRAY(
		SELECT p.relid::oid FROM pg_class c, pg_partition_tree(c.oid) p WHERE c.oid = ANY (touched) AND c.relkind = 'p'
		UNION ALL
		SELECT a.relid::oid FROM pg_class c, pg_partition_ancestors(c.oid) a WHERE c.oid = ANY (touched) AND c.relispartition));
END
$f$;
CREATE OR REPLACE FUNCTION certa.verify_drop() RETURNS event_trigger LANGUAGE plpgsql
	SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $f$
DECLARE
	f record;
BEGIN
	IF certa.is_client() THEN
		IF NOT certa.permitted() THEN
			RETURN;
		END IF;
	ELSIF (SELECT r.rolsuper FROM pg_roles r WHERE r.rolname = session_user) THEN
		RETURN;
	END IF;
	-- A trigger dropped with its table is gone with it. A partitioned
	-- table's " certa_capture" (certa_verify_capture drops one) goes with
	-- its clones: the partitions that hold rows get their own at the end
	-- of the statement. Any other of certa's triggers stays.
	FOR f IN WITH d AS (
			SELECT o.address_names[3] AS trg, c.oid AS rel, c.relkind
			FROM pg_event_trigger_dropped_objects() o
			JOIN pg_namespace n ON n.nspname = o.address_names[1]
			JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = o.address_names[2]
			WHERE o.object_type = 'trigger' AND o.address_names[3] IN (' certa_capture', 'certa_no_truncate'))
		SELECT d.trg, d.rel, d.relkind, d.trg = 'certa_no_truncate' OR d.relkind = 'r' AND NOT EXISTS (
			SELECT 1 FROM d p JOIN pg_partition_ancestors(d.rel) a ON a.relid = p.rel WHERE p.trg = ' certa_capture' AND p.relkind = 'p') AS refused
		FROM d
	LOOP
		IF f.refused THEN
			PERFORM certa.refuse_fault(tg_tag, 'changed', f.rel, f.trg);
		END IF;
		IF f.trg = ' certa_capture' AND f.relkind = 'p' THEN
			PERFORM set_config('certa.lost_capture', concat_ws(',', nullif(current_setting('certa.lost_capture', true), ''),
				(SELECT string_agg(p.relid::oid::text, ',') FROM pg_partition_tree(f.rel) p WHERE p.isleaf)), true);
		END IF;
	END LOOP;
END
$f$;
DROP EVENT TRIGGER IF EXISTS certa_verify_capture;
CREATE EVENT TRIGGER certa_verify_capture ON ddl_command_end EXECUTE FUNCTION certa.verify_capture();
ALTER EVENT TRIGGER certa_verify_capture ENABLE ALWAYS;
DROP EVENT TRIGGER IF EXISTS certa_verify_drop;
CREATE EVENT TRIGGER certa_verify_drop ON sql_drop EXECUTE FUNCTION certa.verify_drop();
ALTER EVENT TRIGGER certa_verify_drop ENABLE ALWAYS;
-- A database made before this: certa_capture, the capture trigger's old
-- name, sorted after a client's trigger named "a..." (roworder.go), and
-- every table gets what it lacks.
DO $f$
DECLARE
	r record;
BEGIN
	FOR r IN SELECT t.tgrelid::regclass AS rel, c.relkind FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
		WHERE t.tgname = 'certa_capture' AND t.tgparentid = 0 AND t.tgfoid = ANY (certa.capture_fns())
	LOOP
		IF r.relkind = 'r' THEN
			EXECUTE format('ALTER TRIGGER certa_capture ON %s RENAME TO " certa_capture"', r.rel);
		ELSE
			EXECUTE format('DROP TRIGGER certa_capture ON %s', r.rel); -- a partitioned table's, with its clones
		END IF;
	END LOOP;
END
$f$;
SELECT certa.equip_tables('', '{}', ARRAY(SELECT oid FROM pg_class WHERE relkind IN ('r', 'p')));
`
