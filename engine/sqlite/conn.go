package sqlite

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"
	"zombiezen.com/go/sqlite/sqlitex"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// conn is one SQLite connection of an engine with its authorizer. It is used
// by one goroutine at a time (its owner: a Tx, the applier, or whoever holds
// it out of the pool).
type conn struct {
	c      *sqlite.Conn
	closed bool

	// mode says how the authorizer treats the statement being prepared, and
	// rec is what it saw. Our own statements run in modeInternal.
	mode authMode
	rec  record

	// tables caches what PRAGMA table_info says, for the schema version
	// schemaVersion (the cache is dropped when the schema changes).
	tables        map[string]*tableInfo
	schemaVersion int64
	// refs holds the foreign keys of all tables by the lower-cased name
	// of the table they reference, for the same schema version as
	// tables; nil until read (fkeys.go: loadForeignKeys).
	refs map[string][]foreignKey

	// cache holds prepared client statements by their text, for the
	// schema version schemaVersion (stmtcache.go); cached is its set of
	// statements.
	cache  map[string]*cachedStmt
	cached map[*sqlite.Stmt]struct{}

	// seqLog is the values of sequences the transaction using c took
	// (sequence.go), nil when no Tx uses it; funcErr is the first error of
	// our SQL functions in the running statement (see registerNextval).
	seqLog  *seqLog
	funcErr *sqlerr.Error
	// funcInput is the constant whose reading made funcErr, if one did
	// (funcError finds it in the statement).
	funcInput constantInput
	// stmtTaken are the values the running statement took from the node's
	// blocks: one that fails for want of more gives them back (giveBack).
	stmtTaken []takenValue
	// upsertKeys are the conflict keys of the rows the running INSERT ...
	// ON CONFLICT DO UPDATE proposed so far (pg_upsert_key).
	upsertKeys map[string]bool
	// touched collects the keys of rows UPDATEs touch, for the Tx using c
	// (touched.go); nil when no Tx uses it.
	touched *[]writeset.Key
	// advisory holds the advisory locks of the Tx using c (advisory.go).
	advisory *advisoryHold
	// touchVersion is the schema version c's touch triggers were made for
	// (0: none yet); touch holds them by the name of their table.
	touchVersion int64
	touch        map[string]touchTrigger
	// lingering: c holds a touch trigger of a table dropped or renamed
	// elsewhere, which it cannot drop (syncTouchTriggers): c is closed
	// before its next Begin or schema statement.
	lingering bool
	// user is the session user of the transaction or read using c
	// (CURRENT_USER).
	user string
	// newSeqs are the sequences the transaction using c made, which no
	// node has reserved values of (txschema.go, takeNewSequenceValue).
	newSeqs map[string]bool
	// lastValues are the values the session using c took last, for
	// currval and lastval (setval.go); nil for the engine's own work.
	lastValues *engine.SequenceValues
	// temps are the objects of c's temp database by lower-cased name
	// and their types ("table", "view", "index"): a session's
	// temporary objects (temp.go); onCommit the ON COMMIT actions of
	// its temporary tables, "DROP" or "DELETE ROWS", by name.
	temps    map[string]string
	onCommit map[string]string
	hidden   []string // temporary tables and views whose names replicated ones have
}

// forgetSchema drops the caches of the schema: the schema version they
// are for may come to mean another schema (a transaction that changed the
// schema rolled back).
func (c *conn) forgetSchema() { c.tables, c.refs = nil, nil }

// takeFuncErr returns (and forgets) the first error of our SQL functions
// since it was last called: the statement that ran them failed with it,
// whatever SQLite said.
func (c *conn) takeFuncErr() *sqlerr.Error {
	fe := c.funcErr
	c.funcErr, c.funcInput = nil, constantInput{}
	c.stmtTaken = c.stmtTaken[:0]
	clear(c.upsertKeys)
	return fe
}

// constantInput is a text a function of ours could not read as a value:
// given to a cast to kind (pgparse.CastKind's), or, with kind "", read as
// a column's type (registerTypedConst).
type constantInput struct {
	set         bool
	kind, value string
}

// failInput keeps err as the running statement's failure (the first
// one), made by reading in as a value.
func (c *conn) failInput(err *sqlerr.Error, in constantInput) {
	if c.funcErr == nil {
		c.funcErr, c.funcInput = err, in
	}
}

// funcError is takeFuncErr, with the position in sql (the client's
// statement) of the constant that could not be read, where it is a
// constant of sql and there is one such (pgparse.LiteralPosition), as
// PostgreSQL's parser gives it.
func (c *conn) funcError(sql string) *sqlerr.Error {
	in := c.funcInput
	fe := c.takeFuncErr()
	if fe == nil || fe.Position != 0 || !in.set {
		return fe
	}
	return atPosition(fe, pgparse.LiteralPosition(sql, in.kind, in.value)).(*sqlerr.Error)
}

// tableInfo is what we need to know of one table.
type tableInfo struct {
	exists bool
	hasPK  bool
	types  map[string]result.Type // lower-cased column name -> declared type, if any
	mods   map[string]int32       // lower-cased column name -> PostgreSQL type modifier, if any (declaredMod)
	// charOIDs: lower-cased column name -> 1043 (varchar) or 1042 (char)
	// for columns declared so, whose values are text like text's but
	// whose result columns are reported with their own type and length.
	charOIDs map[string]uint32
	columns  []string // column names in table order
	name     string   // the table's name as the schema spells it
	pk       []string // primary-key columns in key order
	pkCols   []int    // their indexes in columns
	// rowid, for a table without a primary key, is a name that reaches
	// its rowid, which is its key (rowid.go); "" for any other table.
	rowid string
	// rowSQL caches the applier's statements for this table (see rowapply.go).
	rowSQL map[rowStmtKey]string
	// keyProblem, when set, says why the table's primary key cannot be
	// certified (keys.go); writes to the table are refused.
	keyProblem string
	// hasRowid: the table has a rowid no column hides (rowimage.go); known
	// once rowidChecked.
	hasRowid, rowidChecked bool
	// fks are the table's foreign keys, refs those of other tables (or its
	// own) that reference it (fkeys.go).
	fks, refs []foreignKey
	// indexCols are the columns that lead its indexes, by position
	// (indexkeys.go); nil until read.
	indexCols map[int]string
	// defaults holds the columns' defaults as SQLite's expressions, by
	// lower-cased name (none: no default), and identity the identity
	// columns' kinds, identityAlways or identityByDefault (identity.go).
	defaults map[string]string
	identity map[string]string
}

// keyColumns names the columns that key the table's rows for
// certification: its primary key, or its rowid.
func (ti *tableInfo) keyColumns() []string {
	if ti.rowid != "" {
		return []string{ti.rowid}
	}
	return ti.pk
}

// changeColumns names the columns of the table's change records: a rowid
// table's start with the rowid.
func (ti *tableInfo) changeColumns() []string {
	if ti.rowid != "" {
		return append([]string{ti.rowid}, ti.columns...)
	}
	return ti.columns
}

// openConn opens a connection to path with the pragmas every connection
// needs. WAL is a property of the file, set once by Open. foreignKeys is
// true for connections that run client statements: foreign keys are checked
// and their ON DELETE/ON UPDATE actions run in the origin's local
// transaction, whose session records the rows the actions change. The
// applier's connection has them off: it applies those recorded rows exactly,
// and the actions must not run a second time (fkeys.go).
func openConn(path string, foreignKeys bool) (*conn, error) {
	sc, err := sqlite.OpenConn(path, sqlite.OpenReadWrite|sqlite.OpenCreate)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	c := &conn{c: sc}
	// synchronous=NORMAL: in WAL mode a crash may lose the last commits but
	// never corrupts; the fsync'd Raft log is the source of truth and the
	// node replays it from the recorded applied seqno. No mmap: SQLite
	// unmaps the whole file at every read transaction after a commit
	// elsewhere, and A/B runs showed no gain over pread.
	fk := "PRAGMA foreign_keys=OFF"
	if foreignKeys {
		fk = "PRAGMA foreign_keys=ON"
	}
	for _, p := range []string{"PRAGMA synchronous=NORMAL", fk} {
		if err := c.exec(p); err != nil {
			sc.Close()
			return nil, fmt.Errorf("open %s: %s: %w", path, p, err)
		}
	}
	if err := sc.SetAuthorizer(c); err != nil {
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerPGFunctions(sc); err != nil {
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerCast(c); err != nil {
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerTypedConst(c); err != nil { // storedform.go
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerCastKind(c); err != nil { // storedform.go
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerMath(c); err != nil { // pgmath.go
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerPGOperators(c); err != nil { // pgops.go
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := registerTouch(c); err != nil {
		sc.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for name := range byteOrderCollations {
		if err := sc.SetCollation(name, strings.Compare); err != nil {
			sc.Close()
			return nil, fmt.Errorf("open %s: collation %s: %w", path, name, err)
		}
	}
	return c, nil
}

// byteOrderCollations are PostgreSQL's collations that compare strings by
// their bytes, as SQLite's BINARY does (for UTF-8, also by code point):
// a column or an ORDER BY may name them.
var byteOrderCollations = map[string]bool{"C": true, "POSIX": true}

// close closes the connection. Safe to call more than once.
func (c *conn) close() {
	if c.closed {
		return
	}
	c.closed = true
	c.dropCache()
	c.c.Close()
}

// Authorize is called by SQLite while it prepares a statement on c.
func (c *conn) Authorize(a sqlite.Action) sqlite.AuthResult {
	switch c.mode {
	case modeLocal:
		return c.rec.authorizeLocal(a)
	case modeDDL:
		return c.rec.authorizeDDL(a)
	case modeTemp:
		return c.rec.authorizeTemp(a)
	default:
		return sqlite.AuthResultOK
	}
}

// prepare prepares one client or schema statement in mode and returns what
// the authorizer recorded. A statement the authorizer denied returns the
// denial (a *sqlerr.Error). trailing is the unparsed rest of sql.
//
// The connection stays in mode until the caller calls endStatement, so that
// a re-prepare by SQLite while stepping is checked the same way; our own
// statements in between switch to modeInternal (see internal).
func (c *conn) prepare(sql string, mode authMode) (stmt *sqlite.Stmt, rec record, trailing string, err error) {
	var printed *pgparse.SQLite
	text := sql
	if mode == modeLocal {
		if err := checkNumbers(sql); err != nil { // numeric.go
			return nil, record{}, "", err
		}
		if err := c.refuseHidden(sql); err != nil { // temp.go
			return nil, record{}, "", err
		}
		// A query or data change runs as PostgreSQL's parser reads it,
		// printed for SQLite (pgparse/sqlite.go); other statements go
		// their own ways.
		printed, err = toSQLite(sql)
		if err != nil && !errors.Is(err, pgparse.ErrNotPrinted) {
			return nil, record{}, "", err
		}
		if printed == nil {
			if err := refuseExplain(sql); err != nil {
				return nil, record{}, "", err
			}
		}
	}
	if printed != nil && printed.UpsertColumnsOf != "" {
		if printed, err = c.withInsertColumns(sql, printed); err != nil {
			return nil, record{}, "", err
		}
	}
	if printed != nil {
		c.cacheTables(printed)
		if err := c.checkTypedConsts(text, printed); err != nil {
			return nil, record{}, "", err
		}
		sql = printed.SQL
	} else if sql, err = rewriteCasts(sql); err != nil { // casts.go
		return nil, record{}, "", err
	}
	c.rec = record{}
	c.mode = mode
	stmt, n, err := c.c.PrepareTransient(sql)
	// A query that reads a sequence as a relation (seqrelation.go) is
	// printed again; its sequences' rows may go without a schema change,
	// so it is never cached.
	var rels map[string]string
	for err != nil && printed != nil && len(rels) < maxSequenceRelations {
		if rels == nil {
			rels = map[string]string{}
		}
		again, ok := c.readingSequences(text, err, rels)
		if !ok {
			break
		}
		printed, sql = again, again.SQL
		c.rec = record{}
		stmt, n, err = c.c.PrepareTransient(sql)
	}
	if err != nil && printed != nil {
		err = missingColumn(text, err)
	}
	if err != nil {
		err = notEmbedded(text, printed != nil, err)
	}
	rec = c.rec
	rec.uncached = len(rels) > 0
	if err == nil && rec.denied == nil {
		rec.names = c.sharedNames(stmt, sql[:len(sql)-n])
	}
	if mode == modeLocal && rec.schemaWrite && rec.denied == nil {
		rec.denied = sqlerr.New(sqlerr.FeatureNotSupported, ddlInTxMsg)
	}
	if rec.denied != nil || err != nil {
		c.endStatement()
		if stmt != nil {
			stmt.Finalize()
		}
		if rec.denied != nil {
			return nil, rec, "", rec.denied
		}
		return nil, rec, "", err
	}
	if printed != nil {
		for _, col := range printed.Arithmetic {
			if err := pgparse.ArithmeticOperand(c.columnKind(col.Tables, col.Column)); err != nil {
				c.endStatement()
				stmt.Finalize()
				return nil, rec, "", err
			}
		}
		if err := c.checkGrouping(printed.Ungrouped); err != nil {
			c.endStatement()
			stmt.Finalize()
			return nil, rec, "", err
		}
		rec.columns, rec.params, rec.paramTables = printed.Columns, printed.Params, printed.Tables
		rec.noColumns = printed.NoColumns
		rec.sources = printed.Sources
		return stmt, rec, printed.Rest + sql[len(sql)-n:], nil
	}
	return stmt, rec, sql[len(sql)-n:], nil
}

// sharedNames returns the names of stmt's result columns, prepared from
// sql, when two of them share a name (a join's "id"s); nil otherwise.
// zombiezen's Stmt.ColumnName answers "" for all but one column of a
// name (it keeps names in a map); SQLite numbers such names apart in a
// subquery ("id", "id:1"), so the query is prepared once more inside
// one and the numbers dropped. A statement that cannot be a subquery
// (INSERT ... RETURNING) keeps "" for the lost names.
func (c *conn) sharedNames(stmt *sqlite.Stmt, sql string) []string {
	lost := false
	for i := range stmt.ColumnCount() {
		lost = lost || stmt.ColumnName(i) == ""
	}
	if !lost {
		return nil
	}
	defer c.internal()()
	query := strings.TrimRight(strings.TrimSpace(sql), ";")
	outer, _, err := c.c.PrepareTransient("SELECT * FROM (" + query + "\n)")
	if err != nil {
		return nil
	}
	defer outer.Finalize()
	if outer.ColumnCount() != stmt.ColumnCount() {
		return nil
	}
	names := make([]string, stmt.ColumnCount())
	for i := range names {
		names[i] = stmt.ColumnName(i)
		if names[i] == "" {
			names[i] = numberedName.ReplaceAllString(outer.ColumnName(i), "")
		}
	}
	return names
}

// numberedName is the number SQLite gives a subquery's column whose name
// another column has.
var numberedName = regexp.MustCompile(`:[0-9]+$`)

// withInsertColumns prints again an INSERT printed as p that needs its
// table's columns listed (pgparse.SQLite.UpsertColumnsOf), or returns p
// where they cannot be (the table does not exist: SQLite says so).
func (c *conn) withInsertColumns(sql string, p *pgparse.SQLite) (*pgparse.SQLite, error) {
	if err := c.refreshSchema(); err != nil {
		return nil, err
	}
	ti, err := c.table(p.UpsertColumnsOf)
	if err != nil || !ti.exists {
		return p, err
	}
	listed, ok := pgparse.InsertWithColumns(sql, ti.columns)
	if !ok {
		return p, nil
	}
	return toSQLite(listed)
}

// endStatement returns c to modeInternal after a client or schema statement.
func (c *conn) endStatement() {
	c.mode = modeInternal
	c.rec = record{}
}

// internal switches c to modeInternal for one of our own statements and
// returns the function that restores the previous mode.
func (c *conn) internal() (restore func()) {
	prev := c.mode
	c.mode = modeInternal
	return func() { c.mode = prev }
}

// exec runs one of our own statements to completion.
func (c *conn) exec(query string, args ...any) error {
	defer c.internal()()
	return sqlitex.Execute(c.c, query, &sqlitex.ExecOptions{Args: args})
}

// execResult runs one of our own statements, calling fn for each row.
func (c *conn) execResult(query string, fn func(*sqlite.Stmt), args ...any) error {
	defer c.internal()()
	return execResult(c.c, query, fn, args...)
}

func execResult(c *sqlite.Conn, query string, fn func(*sqlite.Stmt), args ...any) error {
	return sqlitex.Execute(c, query, &sqlitex.ExecOptions{
		Args:       args,
		ResultFunc: func(s *sqlite.Stmt) error { fn(s); return nil },
	})
}

// execScript runs several of our own statements in one transaction.
func execScript(c *sqlite.Conn, script string) error {
	return sqlitex.ExecuteScript(c, script, nil)
}

// queryInt runs one of our own statements and returns the first column of
// its first row (ok false if there is no row).
func (c *conn) queryInt(query string, args ...any) (v int64, ok bool, err error) {
	err = c.execResult(query, func(s *sqlite.Stmt) {
		if !ok {
			v, ok = s.ColumnInt64(0), true
		}
	}, args...)
	return v, ok, err
}

// errNoTransaction refuses to write on a connection whose transaction has
// ended: outside one, SQLite would commit the write at once, on this node
// alone, and its data would differ from the cluster's for good.
var errNoTransaction = &sqlerr.Error{Code: sqlerr.SerializationFailure,
	Message: "could not serialize access: the transaction's work on this node ended unexpectedly (a statement was interrupted); retry the transaction"}

// requireTx returns errNoTransaction unless c is inside a transaction. Every
// write of a local transaction or of the applier checks it first: whatever
// path led there (an interrupted statement ends SQLite's whole transaction),
// a write outside a transaction is never made.
func (c *conn) requireTx() error {
	if c.c.AutocommitEnabled() {
		return errNoTransaction
	}
	return nil
}

// rollback ends any open transaction on c.
func (c *conn) rollback() error {
	if c.c.AutocommitEnabled() {
		return nil
	}
	return c.exec("ROLLBACK")
}

// refreshSchema drops the table cache if the schema changed. It reads the
// schema version of the connection's current snapshot, so the cache always
// matches what the connection's statements see.
func (c *conn) refreshSchema() error {
	v, _, err := c.queryInt("PRAGMA schema_version")
	if err != nil {
		return err
	}
	if v != c.schemaVersion || c.tables == nil {
		c.tables, c.refs = make(map[string]*tableInfo), nil
		c.dropCache()
		c.schemaVersion = v
		if len(c.temps) > 0 {
			return c.loadTemps() // which of them the schema's tables hide
		}
	}
	return nil
}

// table returns what PRAGMA table_info says of table name, cached for the
// current schema version (call refreshSchema first): the session's
// temporary table of that name, which hides the replicated one as in
// PostgreSQL (temp.go), else the main database's.
func (c *conn) table(name string) (*tableInfo, error) {
	return c.tableIn(name, c.isTemp(name, "table"))
}

// tableOf is table for a result column SQLite says comes from database
// db ("main" or "temp").
func (c *conn) tableOf(db, name string) (*tableInfo, error) {
	return c.tableIn(name, db == "temp")
}

// tableIn is table in the temp database, or in the main one.
func (c *conn) tableIn(name string, temp bool) (*tableInfo, error) {
	key := strings.ToLower(name)
	schema, schemaTable := "main", "sqlite_schema"
	if temp {
		key = "temp." + key
		schema, schemaTable = "temp", "sqlite_temp_schema"
	}
	if ti := c.tables[key]; ti != nil {
		return ti, nil
	}
	ti := &tableInfo{types: make(map[string]result.Type)}
	pkPos := map[int64]string{}
	pkCol := map[int64]int{}
	nullable := map[string]bool{}
	err := c.execResult("SELECT name, type, pk, \"notnull\", dflt_value FROM pragma_table_info(?1, ?2)", func(s *sqlite.Stmt) {
		ti.exists = true
		ti.columns = append(ti.columns, s.ColumnText(0))
		if s.ColumnType(4) != sqlite.TypeNull {
			if ti.defaults == nil {
				ti.defaults = map[string]string{}
			}
			col := strings.ToLower(s.ColumnText(0))
			ti.defaults[col] = s.ColumnText(4)
			if d, ok := parseSequenceDefault(s.ColumnText(4)); ok && d.identity != "" {
				if ti.identity == nil {
					ti.identity = map[string]string{}
				}
				ti.identity[col] = d.identity
			}
		}
		if decl := s.ColumnText(1); decl != "" {
			// Columns declared without a type are typed by their values.
			ti.types[strings.ToLower(s.ColumnText(0))] = declaredType(decl)
			if oid := declaredCharOID(decl); oid != 0 {
				if ti.charOIDs == nil {
					ti.charOIDs = map[string]uint32{}
				}
				ti.charOIDs[strings.ToLower(s.ColumnText(0))] = oid
			}
			if mod := declaredMod(decl); mod != 0 {
				if ti.mods == nil {
					ti.mods = map[string]int32{}
				}
				ti.mods[strings.ToLower(s.ColumnText(0))] = mod
			}
		}
		if p := s.ColumnInt64(2); p > 0 {
			ti.hasPK = true
			pkPos[p] = s.ColumnText(0)
			pkCol[p] = len(ti.columns) - 1
			nullable[s.ColumnText(0)] = s.ColumnInt64(3) == 0
		}
	}, name, schema)
	if err != nil {
		return nil, err
	}
	for p := int64(1); p <= int64(len(pkPos)); p++ {
		ti.pk = append(ti.pk, pkPos[p])
		ti.pkCols = append(ti.pkCols, pkCol[p])
	}
	if ti.exists {
		err = c.execResult("SELECT name FROM "+schemaTable+" WHERE type = 'table' AND name = ? COLLATE NOCASE",
			func(s *sqlite.Stmt) { ti.name = s.ColumnText(0) }, name)
		if err != nil {
			return nil, err
		}
	}
	if schema == "temp" {
		c.tables[key] = ti // not replicated: no keys, no foreign keys
		return ti, nil
	}
	if ti.exists && ti.hasPK {
		if ti.keyProblem, err = c.keyProblem(ti, nullable); err != nil {
			return nil, err
		}
	}
	if ti.exists && !ti.hasPK {
		if ti.rowid = rowidAlias(ti.columns); ti.rowid == "" {
			ti.keyProblem = fmt.Sprintf("table %q has no primary key, and its column _rowid_ hides the rowid by which certa replicates such a table: add a PRIMARY KEY or rename the column", ti.name)
		}
	}
	if ti.exists {
		if err := c.loadForeignKeys(ti); err != nil {
			return nil, err
		}
	}
	c.tables[key] = ti
	return ti, nil
}

// declaredMod returns PostgreSQL's type modifier of a declared numeric(p,s)
// or decimal(p,s) (p alone: scale 0), varchar(n) or char(n) (n + 4; char
// alone is char(1)); 0 for any other type.
func declaredMod(decl string) int32 {
	open := strings.IndexByte(decl, '(')
	end := strings.LastIndexByte(decl, ')')
	if open < 0 || end < open {
		if d := strings.ToUpper(strings.TrimSpace(decl)); d == "CHAR" || d == "CHARACTER" {
			return 1 + 4 // SQL's char is char(1)
		}
		return 0
	}
	var mods []int32
	for _, m := range strings.Split(decl[open+1:end], ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(m), 10, 32)
		if err != nil || n < 0 || n > 0xffff {
			return 0
		}
		mods = append(mods, int32(n))
	}
	switch name := strings.ToUpper(strings.TrimSpace(decl[:open])); {
	case isNumericDecl(name) && len(mods) == 1:
		return mods[0]<<16 + 4
	case isNumericDecl(name) && len(mods) == 2:
		return mods[0]<<16 | mods[1] + 4
	case declaredCharOID(decl) != 0 && len(mods) == 1:
		return mods[0] + 4
	}
	return 0
}

// declaredCharOID returns 1043 for a column declared varchar or character
// varying, 1042 for char, character or bpchar (with a length or not), else
// 0.
func declaredCharOID(decl string) uint32 {
	d := strings.ToUpper(strings.TrimSpace(decl))
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	switch d {
	case "VARCHAR", "CHARACTER VARYING":
		return varcharOID
	case "CHAR", "CHARACTER", "BPCHAR":
		return bpcharOID
	}
	return 0
}

// The OIDs of varchar and char(n) (bpchar).
const (
	varcharOID = 1043
	bpcharOID  = 1042
)

// isNumericDecl: an upper-cased declared type name is numeric's.
func isNumericDecl(name string) bool {
	return name == "NUMERIC" || name == "DECIMAL" || name == strings.ToUpper(numericType)
}

// declaredType maps a column's declared type to the type certa reports,
// following SQLite's affinity rules where they apply and PostgreSQL's type
// names where a client would expect its own type back.
func declaredType(decl string) result.Type {
	d := strings.ToUpper(strings.TrimSpace(decl))
	if strings.HasSuffix(d, "]") {
		// An array column (text[]), whose values are its text form.
		if t, ok := pgparse.LookupType(strings.ReplaceAll(d, " ", "")); ok {
			return result.TypeOf(t.OID)
		}
	}
	if i := strings.IndexByte(d, '('); i >= 0 {
		d = strings.TrimSpace(d[:i]) // varchar(20), numeric(10,2)
	}
	if refusedTypes[strings.ToLower(d)] {
		return result.Text // made before they were refused: their text as kept
	}
	switch d {
	case "DATE":
		return result.Date
	case "TIME", "TIME WITHOUT TIME ZONE":
		return result.Time
	case "TIMESTAMP", "TIMESTAMP WITHOUT TIME ZONE", "DATETIME":
		return result.Timestamp
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return result.Timestamptz
	case "UUID":
		return result.UUID
	case "JSON":
		return result.JSON
	case "JSONB":
		return result.JSONB
	case "NUMERIC", "DECIMAL", "NUMERIC_REAL":
		return result.Numeric
	case "INT", "INTEGER", "INT4", "SERIAL", "MEDIUMINT":
		return result.Int4
	case "SMALLINT", "INT2", "SMALLSERIAL", "TINYINT":
		return result.Int2
	case "REAL", "FLOAT4":
		return result.Float4
	}
	switch {
	case strings.Contains(d, "BOOL"):
		return result.Bool
	case strings.Contains(d, "INT"):
		return result.Int8
	case strings.Contains(d, "REAL"), strings.Contains(d, "FLOA"), strings.Contains(d, "DOUB"):
		return result.Float8
	case strings.Contains(d, "BLOB"), strings.Contains(d, "BYTEA"):
		return result.Bytea
	default:
		return result.Text
	}
}
