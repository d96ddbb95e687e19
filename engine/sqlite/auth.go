package sqlite

import (
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// authMode says which policy the authorizer applies.
type authMode int

const (
	modeInternal authMode = iota // our own statements: everything allowed
	modeLocal                    // client statements in a local transaction
	modeDDL                      // a schema statement (CheckDDL, Apply)
	modeTemp                     // a statement on the session's temporary objects (temp.go)
)

// record is what the authorizer saw while SQLite prepared one statement.
// SQLite calls the authorizer for every table and column a statement reads or
// writes, so this is exact, with no SQL parsing of ours.
type record struct {
	reads   []string      // tables read (main database)
	writes  []string      // tables inserted into, updated or deleted from
	firstOp sqlite.OpType // first write action, for the command tag of WITH ... INSERT
	denied  *sqlerr.Error // why the statement was refused, if it was
	// deniedKind is set when denied refuses the kind of statement (DDL,
	// transaction control...): that reason is clearer than a refused write
	// the same statement also does (DDL writes sqlite_master first).
	deniedKind bool
	// schemaWrite is set when a client statement writes the schema table.
	schemaWrite bool
	// nextval: the statement calls nextval (set by prepareCached; the
	// authorizer is not told function names), which takes values.
	nextval bool
	// numericParams are the parameters a client statement gives numeric
	// columns, whose values are checked when bound (numeric.go).
	numericParams []int
	// columns are the result columns as PostgreSQL names and types them,
	// when the statement was printed from PostgreSQL's parse tree and
	// they are known from it (pgparse.SQLite.Columns).
	columns []pgparse.ResultColumn
	// noColumns: a query of no columns, whose one SQLite column (a NULL)
	// the result leaves out (pgparse.SQLite.NoColumns).
	noColumns bool
	// names are the result columns' names where SQLite's names were
	// lost (conn.sharedNames).
	names []string
	// sources names the source columns of renamed column references,
	// by result column name (pgparse.SQLite.Sources).
	sources map[string]string
	// params and paramTables describe the parameters of a printed
	// statement (pgparse.SQLite.Params and Tables), for Describe.
	params      []pgparse.Param
	paramTables []string
	// keyRead says whether the statement reads its one table by key
	// conditions (reads.go), worked out when first needed; shared by the
	// copies of a cached record.
	keyRead *lazyKeyRead
	// schemaObjects are the tables and views a schema statement creates,
	// alters or drops (or whose indexes it creates or drops).
	schemaObjects []string
	// uncached: the statement must be prepared again each time (it reads
	// a sequence as a relation, seqrelation.go).
	uncached bool
	// tempWrites: a client statement writes temporary tables (temp.go);
	// notLocal: a statement on temporary objects (modeTemp) would
	// change the main database.
	tempWrites, notLocal bool
	// tempReads: a client statement reads temporary tables.
	tempReads bool
}

// tables returns the tables r read or wrote, lower-cased.
func (r *record) tables() map[string]struct{} {
	m := make(map[string]struct{}, len(r.reads)+len(r.writes))
	for _, t := range lowerAll(r.reads) {
		m[t] = struct{}{}
	}
	for _, t := range lowerAll(r.writes) {
		m[t] = struct{}{}
	}
	return m
}

func addName(list []string, name string) []string {
	for _, n := range list {
		if strings.EqualFold(n, name) {
			return list
		}
	}
	return append(list, name)
}

// deny records the first reason a statement is refused.
func (r *record) deny(code, format string, args ...any) sqlite.AuthResult {
	if r.denied == nil {
		r.denied = sqlerr.New(code, format, args...)
	}
	return sqlite.AuthResultDeny
}

// denyKind records that the kind of statement is refused; it takes
// precedence over a refused write.
func (r *record) denyKind(code, format string, args ...any) sqlite.AuthResult {
	if !r.deniedKind {
		r.denied = sqlerr.New(code, format, args...)
		r.deniedKind = true
	}
	return sqlite.AuthResultDeny
}

// tempHint explains why the SQLite engine refuses temporary tables.
const tempHint = "The SQLite engine's sessions share its connections, so a temporary table would not be one session's alone; " +
	"nodes run with --engine postgres support temporary tables, local to the session that makes them."

// isInternalTable reports whether name is one of certa's own tables, which
// clients may read but never write.
func isInternalTable(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "_certa_")
}

func isSchemaTable(name string) bool {
	switch strings.ToLower(name) {
	case "sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema":
		return true
	}
	return false
}

func isSQLiteTable(name string) bool {
	return strings.HasPrefix(strings.ToLower(name), "sqlite_")
}

// readOnlyPragmas are the introspection pragmas a client may run: they only
// describe the schema.
var readOnlyPragmas = map[string]bool{
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true,
}

const ddlInTxMsg = "schema changes must be sent as their own statement outside a transaction block"

// authorizeLocal is the policy for client statements in a local transaction:
// reads and row writes to replicated tables; no schema changes, transaction
// control, ATTACH or writing pragmas.
func (r *record) authorizeLocal(a sqlite.Action) sqlite.AuthResult {
	switch a.Type() {
	case sqlite.OpSelect, sqlite.OpFunction, sqlite.OpRecursive:
		return sqlite.AuthResultOK
	case sqlite.OpRead:
		if t := a.Table(); t != "" && a.Database() != "temp" {
			r.reads = addName(r.reads, t)
		} else if t != "" && !strings.HasPrefix(t, "certa_") {
			r.tempReads = true
		}
		return sqlite.AuthResultOK
	case sqlite.OpInsert, sqlite.OpUpdate, sqlite.OpDelete:
		t := a.Table()
		if isSchemaTable(t) {
			// Only schema statements (and ANALYZE) write the schema
			// table, and SQLite asks about that before the statement's
			// own action, whose refusal says more: refuse after prepare.
			r.schemaWrite = true
			return sqlite.AuthResultOK
		}
		if isInternalTable(t) || isSQLiteTable(t) {
			return r.deny(sqlerr.FeatureNotSupported, "table %q is internal and cannot be written", t)
		}
		if a.Database() == "temp" {
			// The session's own (temp.go): not replicated, not locked.
			r.tempWrites = true
			return sqlite.AuthResultOK
		}
		if len(r.writes) == 0 {
			r.firstOp = a.Type()
		}
		r.writes = addName(r.writes, t)
		if a.Type() == sqlite.OpDelete {
			// A DELETE without WHERE compiled while no session watched the
			// connection (a statement prepared, and cached, before the
			// Tx's session began) would empty the table by SQLite's
			// truncate optimization, which no session records: the rows
			// would come back at commit. Ignore disables it; the DELETE
			// runs row by row. (It is the one plan SQLite picks by
			// whether a preupdate hook is set, ANALYZE's aside.)
			return sqlite.AuthResultIgnore
		}
		return sqlite.AuthResultOK
	case sqlite.OpPragma:
		if readOnlyPragmas[strings.ToLower(a.Pragma())] {
			return sqlite.AuthResultOK
		}
		return r.denyKind(sqlerr.FeatureNotSupported, "PRAGMA %s is not supported", a.Pragma())
	case sqlite.OpTransaction:
		return r.denyKind(sqlerr.FeatureNotSupported, "transaction control (%s) is handled by the session, not inside a statement", a.Operation())
	case sqlite.OpSavepoint:
		return r.denyKind(sqlerr.FeatureNotSupported, "savepoints are not supported")
	case sqlite.OpAttach, sqlite.OpDetach:
		return r.denyKind(sqlerr.FeatureNotSupported, "ATTACH and DETACH are not supported")
	case sqlite.OpAnalyze:
		return r.denyKind(sqlerr.FeatureNotSupported, "ANALYZE is not supported")
	case sqlite.OpCreateTable:
		if strings.HasPrefix(strings.ToLower(a.Table()), "sqlite_stat") {
			// The first ANALYZE creates its statistics table.
			return r.denyKind(sqlerr.FeatureNotSupported, "ANALYZE is not supported")
		}
		return r.denyKind(sqlerr.FeatureNotSupported, ddlInTxMsg)
	case sqlite.OpReindex:
		return r.denyKind(sqlerr.FeatureNotSupported, "REINDEX is not supported")
	case sqlite.OpCreateIndex, sqlite.OpCreateTempIndex, sqlite.OpCreateTempTable,
		sqlite.OpCreateTempTrigger, sqlite.OpCreateTempView, sqlite.OpCreateTrigger, sqlite.OpCreateView,
		sqlite.OpDropIndex, sqlite.OpDropTable, sqlite.OpDropTempIndex, sqlite.OpDropTempTable,
		sqlite.OpDropTempTrigger, sqlite.OpDropTempView, sqlite.OpDropTrigger, sqlite.OpDropView,
		sqlite.OpAlterTable, sqlite.OpCreateVTable, sqlite.OpDropVTable:
		return r.denyKind(sqlerr.FeatureNotSupported, ddlInTxMsg)
	default:
		return r.denyKind(sqlerr.FeatureNotSupported, "statement not supported (%s)", a.Type())
	}
}

// authorizeDDL is the policy for schema statements executed in total order:
// CREATE/ALTER/DROP of tables, indexes and views in the main database. What
// cannot be replicated faithfully is refused: TEMP objects (they would exist
// on one node), triggers (they would run again on replicas, which already
// receive the rows a trigger changed), virtual tables and AUTOINCREMENT
// (sqlite_sequence is not replicated).
func (r *record) authorizeDDL(a sqlite.Action) sqlite.AuthResult {
	switch a.Type() {
	case sqlite.OpSelect, sqlite.OpFunction, sqlite.OpRecursive, sqlite.OpRead, sqlite.OpReindex:
		// CREATE INDEX reads its table and reindexes; ALTER reads the schema.
		return sqlite.AuthResultOK
	case sqlite.OpPragma:
		// ALTER TABLE ... ADD COLUMN with a CHECK constraint checks the
		// table's rows with pragma_quick_check.
		if strings.EqualFold(a.Pragma(), "quick_check") {
			return sqlite.AuthResultOK
		}
		return r.denyKind(sqlerr.FeatureNotSupported, "PRAGMA is not supported in a schema statement")
	case sqlite.OpInsert, sqlite.OpUpdate, sqlite.OpDelete:
		// Schema statements write sqlite_master, DROP TABLE deletes the
		// table's rows, CREATE TABLE AS inserts. runDDL refuses statements
		// that are not CREATE, ALTER or DROP.
		return sqlite.AuthResultOK
	case sqlite.OpCreateTable:
		if strings.EqualFold(a.Table(), "sqlite_sequence") {
			return r.denyKind(sqlerr.FeatureNotSupported, "AUTOINCREMENT is not supported: sqlite_sequence is not replicated; an INTEGER PRIMARY KEY alone assigns ids")
		}
		return r.schema(a.Table())
	case sqlite.OpCreateIndex, sqlite.OpDropIndex, sqlite.OpDropTable, sqlite.OpAlterTable:
		return r.schema(a.Table())
	case sqlite.OpCreateView, sqlite.OpDropView:
		return r.schema(a.View())
	case sqlite.OpDropTrigger:
		// Dropping is harmless (and lets a database restored from elsewhere
		// be cleaned up).
		return r.schema("")
	case sqlite.OpCreateTrigger, sqlite.OpCreateTempTrigger:
		return r.denyKind(sqlerr.FeatureNotSupported, "triggers are not supported: they would run twice on replicas, which already receive the rows a trigger changes")
	case sqlite.OpDropTempTrigger:
		if strings.HasPrefix(a.Trigger(), "certa_touch_") {
			// Dropping a table drops the connection's touch trigger on
			// it (touched.go).
			return sqlite.AuthResultOK
		}
		return r.denyKind(sqlerr.FeatureNotSupported, "TEMP tables, views and indexes are not supported: they would exist on one node only")
	case sqlite.OpCreateTempTable, sqlite.OpCreateTempIndex, sqlite.OpCreateTempView,
		sqlite.OpDropTempTable, sqlite.OpDropTempIndex, sqlite.OpDropTempView:
		r.denyKind(sqlerr.FeatureNotSupported, "TEMP tables, views and indexes are not supported by the SQLite engine")
		if r.denied.Hint == "" {
			r.denied.Hint = tempHint
		}
		return sqlite.AuthResultDeny
	case sqlite.OpCreateVTable, sqlite.OpDropVTable:
		return r.denyKind(sqlerr.FeatureNotSupported, "virtual tables are not supported")
	case sqlite.OpTransaction, sqlite.OpSavepoint:
		return r.denyKind(sqlerr.FeatureNotSupported, "transaction control is not allowed in a schema statement")
	case sqlite.OpAttach, sqlite.OpDetach:
		return r.denyKind(sqlerr.FeatureNotSupported, "ATTACH and DETACH are not supported")
	default:
		return r.denyKind(sqlerr.FeatureNotSupported, "only CREATE, ALTER and DROP of tables, indexes and views are supported as schema changes (%s)", a.Type())
	}
}

// schema allows a schema action on name, refusing certa's own tables.
func (r *record) schema(name string) sqlite.AuthResult {
	if isInternalTable(name) {
		return r.deny(sqlerr.FeatureNotSupported, "table %q is internal to certa and cannot be changed", name)
	}
	if name != "" {
		r.schemaObjects = addName(r.schemaObjects, name)
	}
	return sqlite.AuthResultOK
}
