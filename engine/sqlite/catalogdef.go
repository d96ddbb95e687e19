package sqlite

import (
	"fmt"
	"strings"

	"certa/pgparse"
)

// The relations of the emulated catalogs: their names, and their columns
// with PostgreSQL's types (typnames; "_x" is an array of x). Each is a
// table of the in-memory catalog database (catalogdb.go), named
// information_schema_x for information_schema.x. Arrays are held as JSON
// arrays, booleans as 0 and 1, oids as integers.
const catalogDefs = `
pg_namespace: oid oid, nspname name, nspowner oid, nspacl _aclitem
pg_class: oid oid, relname name, relnamespace oid, reltype oid, reloftype oid, relowner oid, relam oid,
  relfilenode oid, reltablespace oid, relpages int4, reltuples float4, relallvisible int4, reltoastrelid oid,
  relhasindex bool, relisshared bool, relpersistence char, relkind char, relnatts int2, relchecks int2,
  relhasrules bool, relhastriggers bool, relhassubclass bool, relrowsecurity bool, relforcerowsecurity bool,
  relispopulated bool, relreplident char, relispartition bool, relrewrite oid, relfrozenxid int8, relminmxid int8,
  relacl _aclitem, reloptions _text, relpartbound pg_node_tree
pg_am: oid oid, amname name, amhandler regproc, amtype char
pg_attribute: attrelid oid, attname name, atttypid oid, attlen int2, attnum int2, attcacheoff int4,
  atttypmod int4, attndims int2, attbyval bool, attalign char, attstorage char, attcompression char,
  attnotnull bool, atthasdef bool, atthasmissing bool, attidentity char, attgenerated char, attisdropped bool,
  attislocal bool, attinhcount int2, attstattarget int2, attcollation oid, attacl _aclitem, attoptions _text,
  attfdwoptions _text, attmissingval anyarray
pg_attrdef: oid oid, adrelid oid, adnum int2, adbin pg_node_tree
pg_index: indexrelid oid, indrelid oid, indnatts int2, indnkeyatts int2, indisunique bool,
  indnullsnotdistinct bool, indisprimary bool, indisexclusion bool, indimmediate bool, indisclustered bool,
  indisvalid bool, indcheckxmin bool, indisready bool, indislive bool, indisreplident bool, indkey int2vector,
  indcollation oidvector, indclass oidvector, indoption int2vector, indexprs pg_node_tree, indpred pg_node_tree
pg_constraint: oid oid, conname name, connamespace oid, contype char, condeferrable bool, condeferred bool,
  convalidated bool, conrelid oid, contypid oid, conindid oid, conparentid oid, confrelid oid,
  confupdtype char, confdeltype char, confmatchtype char, conislocal bool, coninhcount int2,
  connoinherit bool, conkey _int2, confkey _int2, conpfeqop _oid, conppeqop _oid, conffeqop _oid,
  confdelsetcols _int2, conexclop _oid, conbin pg_node_tree
pg_type: oid oid, typname name, typnamespace oid, typowner oid, typlen int2, typbyval bool, typtype char,
  typcategory char, typispreferred bool, typisdefined bool, typdelim char, typrelid oid, typsubscript regproc,
  typelem oid, typarray oid, typinput regproc, typoutput regproc, typreceive regproc, typsend regproc,
  typmodin regproc, typmodout regproc, typanalyze regproc, typalign char, typstorage char, typnotnull bool,
  typbasetype oid, typtypmod int4, typndims int4, typcollation oid, typdefaultbin pg_node_tree,
  typdefault text, typacl _aclitem
pg_enum: oid oid, enumtypid oid, enumsortorder float4, enumlabel name
pg_collation: oid oid, collname name, collnamespace oid, collowner oid, collprovider char,
  collisdeterministic bool, collencoding int4, collcollate text, collctype text, colliculocale text,
  collversion text
pg_database: oid oid, datname name, datdba oid, encoding int4, datlocprovider char, datistemplate bool,
  datallowconn bool, datconnlimit int4, datfrozenxid int8, datminmxid int8, dattablespace oid,
  datcollate text, datctype text, daticulocale text, daticurules text, datlocale text, datcollversion text,
  datacl _aclitem
pg_inherits: inhrelid oid, inhparent oid, inhseqno int4, inhdetachpending bool
pg_trigger: oid oid, tgrelid oid, tgparentid oid, tgname name, tgfoid oid, tgtype int2, tgenabled char,
  tgisinternal bool, tgconstrrelid oid, tgconstrindid oid, tgconstraint oid, tgdeferrable bool,
  tginitdeferred bool, tgnargs int2, tgattr int2vector, tgargs bytea, tgqual pg_node_tree, tgoldtable name,
  tgnewtable name
pg_policy: oid oid, polname name, polrelid oid, polcmd char, polpermissive bool, polroles _oid,
  polqual pg_node_tree, polwithcheck pg_node_tree
pg_statistic_ext: oid oid, stxrelid oid, stxname name, stxnamespace oid, stxowner oid, stxstattarget int4,
  stxkeys int2vector, stxkind _char, stxexprs pg_node_tree
pg_publication: oid oid, pubname name, pubowner oid, puballtables bool, pubinsert bool, pubupdate bool,
  pubdelete bool, pubtruncate bool, pubviaroot bool
pg_publication_rel: oid oid, prpubid oid, prrelid oid, prqual pg_node_tree, prattrs int2vector
pg_publication_namespace: oid oid, pnpubid oid, pnnspid oid
pg_roles: oid oid, rolname name, rolsuper bool, rolinherit bool, rolcreaterole bool, rolcreatedb bool,
  rolcanlogin bool, rolreplication bool, rolconnlimit int4, rolpassword text, rolvaliduntil timestamptz,
  rolbypassrls bool, rolconfig _text
pg_user: usename name, usesysid oid, usecreatedb bool, usesuper bool, userepl bool, usebypassrls bool,
  passwd text, valuntil timestamptz, useconfig _text
pg_auth_members: oid oid, roleid oid, member oid, grantor oid, admin_option bool
pg_settings: name text, setting text, unit text, category text, short_desc text, extra_desc text,
  context text, vartype text, source text, min_val text, max_val text, enumvals _text, boot_val text,
  reset_val text, sourcefile text, sourceline int4, pending_restart bool
pg_description: objoid oid, classoid oid, objsubid int4, description text
pg_shdescription: objoid oid, classoid oid, description text
pg_tablespace: oid oid, spcname name, spcowner oid, spcacl _aclitem, spcoptions _text
pg_proc: oid oid, proname name, pronamespace oid, proowner oid, prolang oid, procost float4, prorows float4,
  provariadic oid, prosupport regproc, prokind char, prosecdef bool, proleakproof bool, proisstrict bool,
  proretset bool, provolatile char, proparallel char, pronargs int2, pronargdefaults int2, prorettype oid,
  proargtypes oidvector, proallargtypes _oid, proargmodes _char, proargnames _text, proargdefaults pg_node_tree,
  protrftypes _oid, prosrc text, probin text, prosqlbody pg_node_tree, proconfig _text, proacl _aclitem
pg_language: oid oid, lanname name, lanowner oid, lanispl bool, lanpltrusted bool, lanplcallfoid oid, laninline oid,
  lanvalidator oid, lanacl _aclitem
pg_extension: oid oid, extname name, extowner oid, extnamespace oid, extrelocatable bool, extversion text,
  extconfig _oid, extcondition _text
pg_foreign_table: ftrelid oid, ftserver oid, ftoptions _text
pg_foreign_server: oid oid, srvname name, srvowner oid, srvfdw oid, srvtype text, srvversion text, srvacl _aclitem,
  srvoptions _text
pg_foreign_data_wrapper: oid oid, fdwname name, fdwowner oid, fdwhandler oid, fdwvalidator oid, fdwacl _aclitem,
  fdwoptions _text
pg_partitioned_table: partrelid oid, partstrat char, partnatts int2, partdefid oid, partattrs int2vector,
  partclass oidvector, partcollation oidvector, partexprs pg_node_tree
pg_rewrite: oid oid, rulename name, ev_class oid, ev_type char, ev_enabled char, is_instead bool, ev_qual pg_node_tree,
  ev_action pg_node_tree
pg_sequence: seqrelid oid, seqtypid oid, seqstart int8, seqincrement int8, seqmax int8, seqmin int8,
  seqcache int8, seqcycle bool
pg_range: rngtypid oid, rngsubtype oid, rngmultitypid oid, rngcollation oid, rngsubopc oid,
  rngcanonical regproc, rngsubdiff regproc
pg_depend: classid oid, objid oid, objsubid int4, refclassid oid, refobjid oid, refobjsubid int4, deptype char
pg_event_trigger: oid oid, evtname name, evtevent name, evtowner oid, evtfoid oid, evtenabled char, evttags _text
pg_opclass: oid oid, opcmethod oid, opcname name, opcnamespace oid, opcowner oid, opcfamily oid,
  opcintype oid, opcdefault bool, opckeytype oid
pg_operator: oid oid, oprname name, oprnamespace oid, oprowner oid, oprkind char, oprcanmerge bool,
  oprcanhash bool, oprleft oid, oprright oid, oprresult oid, oprcom oid, oprnegate oid, oprcode regproc,
  oprrest regproc, oprjoin regproc
pg_cast: oid oid, castsource oid, casttarget oid, castfunc oid, castcontext char, castmethod char
pg_conversion: oid oid, conname name, connamespace oid, conowner oid, conforencoding int4, contoencoding int4,
  conproc regproc, condefault bool
pg_init_privs: objoid oid, classoid oid, objsubid int4, privtype char, initprivs _aclitem
pg_seclabel: objoid oid, classoid oid, objsubid int4, provider text, label text
pg_transform: oid oid, trftype oid, trflang oid, trffromsql regproc, trftosql regproc
pg_seclabels: objoid oid, classoid oid, objsubid int4, objtype text, objnamespace oid, objname text, provider text,
  label text
pg_largeobject_metadata: oid oid, lomowner oid, lomacl _aclitem
pg_shseclabel: objoid oid, classoid oid, provider text, label text
pg_db_role_setting: setdatabase oid, setrole oid, setconfig _text
pg_subscription: oid oid, subdbid oid, subskiplsn pg_lsn, subname name, subowner oid, subenabled bool, subbinary bool,
  substream bool, subtwophasestate char, subdisableonerr bool, subconninfo text, subslotname name,
  subsynccommit text, subpublications _text
pg_aggregate: aggfnoid regproc, aggkind char, aggnumdirectargs int2, aggtransfn regproc, aggfinalfn regproc,
  aggcombinefn regproc, aggserialfn regproc, aggdeserialfn regproc, aggmtransfn regproc, aggminvtransfn regproc,
  aggmfinalfn regproc, aggfinalextra bool, aggmfinalextra bool, aggfinalmodify char, aggmfinalmodify char,
  aggsortop oid, aggtranstype oid, aggtransspace int4, aggmtranstype oid, aggmtransspace int4, agginitval text,
  aggminitval text
pg_amop: oid oid, amopfamily oid, amoplefttype oid, amoprighttype oid, amopstrategy int2, amoppurpose char,
  amopopr oid, amopmethod oid, amopsortfamily oid
pg_amproc: oid oid, amprocfamily oid, amproclefttype oid, amprocrighttype oid, amprocnum int2, amproc regproc
pg_opfamily: oid oid, opfmethod oid, opfname name, opfnamespace oid, opfowner oid
pg_default_acl: oid oid, defaclrole oid, defaclnamespace oid, defaclobjtype char, defaclacl _aclitem
pg_ts_config: oid oid, cfgname name, cfgnamespace oid, cfgowner oid, cfgparser oid
pg_ts_dict: oid oid, dictname name, dictnamespace oid, dictowner oid, dicttemplate oid, dictinitoption text
pg_ts_parser: oid oid, prsname name, prsnamespace oid, prsstart regproc, prstoken regproc, prsend regproc,
  prsheadline regproc, prslextype regproc
pg_ts_template: oid oid, tmplname name, tmplnamespace oid, tmplinit regproc, tmpllexize regproc
pg_tables: schemaname name, tablename name, tableowner name, tablespace name, hasindexes bool,
  hasrules bool, hastriggers bool, rowsecurity bool
pg_policies: schemaname name, tablename name, policyname name, permissive text, roles _name, cmd text, qual text,
  with_check text
pg_views: schemaname name, viewname name, viewowner name, definition text
pg_matviews: schemaname name, matviewname name, matviewowner name, tablespace name, hasindexes bool,
  ispopulated bool, definition text
pg_indexes: schemaname name, tablename name, indexname name, tablespace name, indexdef text
pg_sequences: schemaname name, sequencename name, sequenceowner name, data_type regtype, start_value int8,
  min_value int8, max_value int8, increment_by int8, cycle bool, cache_size int8, last_value int8
pg_stat_user_tables: relid oid, schemaname name, relname name, n_live_tup int8, n_dead_tup int8
pg_statio_user_tables: relid oid, schemaname name, relname name
pg_stat_all_tables: relid oid, schemaname name, relname name, n_live_tup int8, n_dead_tup int8
pg_statio_all_tables: relid oid, schemaname name, relname name, heap_blks_read int8, heap_blks_hit int8
pg_stat_user_indexes: relid oid, indexrelid oid, schemaname name, relname name, indexrelname name, idx_scan int8
pg_stat_all_indexes: relid oid, indexrelid oid, schemaname name, relname name, indexrelname name, idx_scan int8
pg_get_keywords: word text, catcode char, barelabel bool, catdesc text, baredesc text
pg_locks: locktype text, database oid, relation oid, pid int4, mode text, granted bool
pg_stat_activity: datid oid, datname name, pid int4, usename name, application_name text, state text, query text
information_schema.tables: table_catalog name, table_schema name, table_name name, table_type varchar,
  self_referencing_column_name name, reference_generation varchar, user_defined_type_catalog name,
  user_defined_type_schema name, user_defined_type_name name, is_insertable_into varchar, is_typed varchar,
  commit_action varchar
information_schema.views: table_catalog name, table_schema name, table_name name, view_definition varchar,
  check_option varchar, is_updatable varchar, is_insertable_into varchar, is_trigger_updatable varchar,
  is_trigger_deletable varchar, is_trigger_insertable_into varchar
information_schema.columns: table_catalog name, table_schema name, table_name name, column_name name,
  ordinal_position int4, column_default varchar, is_nullable varchar, data_type varchar,
  character_maximum_length int4, character_octet_length int4, numeric_precision int4,
  numeric_precision_radix int4, numeric_scale int4, datetime_precision int4, interval_type varchar,
  interval_precision int4, character_set_catalog name, character_set_schema name, character_set_name name,
  collation_catalog name, collation_schema name, collation_name name, domain_catalog name,
  domain_schema name, domain_name name, udt_catalog name, udt_schema name, udt_name name,
  scope_catalog name, scope_schema name, scope_name name, maximum_cardinality int4, dtd_identifier name,
  is_self_referencing varchar, is_identity varchar, identity_generation varchar, identity_start varchar,
  identity_increment varchar, identity_maximum varchar, identity_minimum varchar, identity_cycle varchar,
  is_generated varchar, generation_expression varchar, is_updatable varchar
information_schema.schemata: catalog_name name, schema_name name, schema_owner name,
  default_character_set_catalog name, default_character_set_schema name, default_character_set_name name,
  sql_path varchar
information_schema.table_constraints: constraint_catalog name, constraint_schema name, constraint_name name,
  table_catalog name, table_schema name, table_name name, constraint_type varchar, is_deferrable varchar,
  initially_deferred varchar, enforced varchar, nulls_distinct varchar
information_schema.key_column_usage: constraint_catalog name, constraint_schema name, constraint_name name,
  table_catalog name, table_schema name, table_name name, column_name name, ordinal_position int4,
  position_in_unique_constraint int4
information_schema.constraint_column_usage: table_catalog name, table_schema name, table_name name,
  column_name name, constraint_catalog name, constraint_schema name, constraint_name name
information_schema.referential_constraints: constraint_catalog name, constraint_schema name,
  constraint_name name, unique_constraint_catalog name, unique_constraint_schema name,
  unique_constraint_name name, match_option varchar, update_rule varchar, delete_rule varchar
information_schema.check_constraints: constraint_catalog name, constraint_schema name, constraint_name name,
  check_clause varchar
information_schema.sequences: sequence_catalog name, sequence_schema name, sequence_name name,
  data_type varchar, numeric_precision int4, numeric_precision_radix int4, numeric_scale int4,
  start_value varchar, minimum_value varchar, maximum_value varchar, increment varchar, cycle_option varchar
information_schema.routines: specific_catalog name, specific_schema name, specific_name name,
  routine_catalog name, routine_schema name, routine_name name, routine_type varchar, data_type varchar,
  routine_definition varchar, external_language varchar
information_schema.triggers: trigger_catalog name, trigger_schema name, trigger_name name,
  event_manipulation varchar, event_object_catalog name, event_object_schema name, event_object_table name,
  action_statement varchar, action_orientation varchar, action_timing varchar
information_schema.character_sets: character_set_catalog name, character_set_schema name,
  character_set_name name, character_repertoire name, form_of_use name, default_collate_catalog name,
  default_collate_schema name, default_collate_name name
information_schema.enabled_roles: role_name name
information_schema.element_types: object_catalog name, object_schema name, object_name name,
  object_type varchar, collection_type_identifier name, data_type varchar, udt_name name
`

// catalogRelation is one relation of the emulated catalogs.
type catalogRelation struct {
	schema, name string
	table        string // in the catalog database
	cols         []pgparse.CatalogColumn
	// oid is a catalog table's own (pg_class's is 1259), 0 for a view.
	// A table has the system column tableoid, which is oid in every row:
	// pg_dump names its objects by (tableoid, oid) and matches tableoid
	// with pg_depend's classid.
	oid int64
	// named are the columns a query may name: cols, and tableoid.
	named []pgparse.CatalogColumn
}

// catalogRelations are catalogDefs read, by schema-qualified name.
var catalogRelations, catalogOrder = readCatalogDefs(catalogDefs)

func readCatalogDefs(defs string) (map[string]*catalogRelation, []*catalogRelation) {
	byName := map[string]*catalogRelation{}
	var order []*catalogRelation
	for _, def := range strings.Split(strings.ReplaceAll(defs, "\n  ", " "), "\n") {
		name, cols, ok := strings.Cut(def, ":")
		if !ok {
			continue
		}
		r := &catalogRelation{schema: "pg_catalog", name: name, table: name}
		if s, n, ok := strings.Cut(name, "."); ok {
			r.schema, r.name, r.table = s, n, s+"_"+n
		}
		for _, c := range strings.Split(cols, ",") {
			f := strings.Fields(c)
			if len(f) != 2 {
				panic(fmt.Sprintf("catalogDefs: column %q of %s", c, name))
			}
			if _, ok := pgparse.LookupType(f[1]); !ok {
				panic(fmt.Sprintf("catalogDefs: type %q of %s.%s", f[1], name, f[0]))
			}
			r.cols = append(r.cols, pgparse.CatalogColumn{Name: f[0], Type: f[1]})
		}
		r.named = r.cols
		if r.schema == "pg_catalog" {
			r.oid = catalogRelationOIDs[r.name]
		}
		if r.oid != 0 {
			r.named = append(r.cols[:len(r.cols):len(r.cols)], pgparse.CatalogColumn{Name: "tableoid", Type: "oid", System: true})
		}
		byName[r.schema+"."+r.name] = r
		order = append(order, r)
	}
	return byName, order
}

// catalogNames implements pgparse.CatalogRelations: the relations of
// pg_catalog, which is first on the search path, and of
// information_schema.
type catalogNames struct{}

func (catalogNames) Relation(schema, name string) (string, []pgparse.CatalogColumn, bool) {
	if schema == "" {
		schema = "pg_catalog"
	}
	r, ok := catalogRelations[schema+"."+name]
	if !ok {
		return "", nil, false
	}
	return r.table, r.named, true
}

// createSQL is the SQLite table of r: columns of oid, integer and boolean
// types have INTEGER affinity so that comparisons with parameters (text)
// compare numbers; the others are TEXT or REAL.
func (r *catalogRelation) createSQL() string {
	var b strings.Builder
	b.WriteString("CREATE TABLE " + r.table + " (")
	for i, c := range r.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		t, _ := pgparse.LookupType(c.Type)
		affinity := "TEXT"
		switch {
		case t.Elem != 0:
		case t.Category == 'N' && t.Typname != "numeric" && t.Typname != "float4" && t.Typname != "float8", t.Typname == "bool":
			affinity = "INTEGER"
		case t.Typname == "float4" || t.Typname == "float8":
			affinity = "REAL"
		}
		b.WriteString(`"` + c.Name + `" ` + affinity)
	}
	if r.oid != 0 {
		fmt.Fprintf(&b, `, "tableoid" INTEGER DEFAULT %d`, r.oid)
	}
	b.WriteString(")")
	return b.String()
}
