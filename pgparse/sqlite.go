package pgparse

import (
	"errors"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// The SQLite printer. The embedded engine runs PostgreSQL's SQL on SQLite:
// each client query or data change is read here with PostgreSQL's parser
// and printed again as SQLite SQL that means the same (sqlite_*.go). What
// has no faithful SQLite form is refused with 0A000 naming it, never
// passed through to mean something else: the printer knows every node it
// prints, and any other is a refusal.

// SQLite is one statement of PostgreSQL's SQL printed for SQLite.
type SQLite struct {
	SQL string // the statement as SQLite runs it
	// Rest is the text after this statement in the caller's sql: the
	// statements that follow it, or blanks.
	Rest string
	// Columns are the statement's result columns as PostgreSQL names and
	// types them, one per result column; nil when that is not known from
	// the statement alone (a * among its targets) or it returns none.
	Columns []ResultColumn
	// Sources names the column each result column that is a plain column
	// reference renamed by AS takes its values from, by the result
	// column's name: known also where a * leaves Columns nil.
	Sources map[string]string
	// Params describes $1 .. $n, n the highest parameter number the
	// statement uses: what the statement says of each one's type.
	Params []Param
	// Tables are the tables the statement names, for Param.Column
	// without a table.
	Tables []string
	// Locking is set for a SELECT with FOR UPDATE, FOR SHARE and the like:
	// the clause is not printed (SQLite has no row locks; the engine
	// decides what it means).
	Locking bool
	// NoColumns is set for a query of no columns (SELECT;, SELECT FROM
	// t): SQLite selects a NULL for each row, which the result leaves
	// out.
	NoColumns bool
	// Arithmetic are the table columns the statement does arithmetic on:
	// the engine refuses it unless each is a number (ArithmeticOperand).
	Arithmetic []KindPart
	// Ungrouped are the columns grouped queries read outside their
	// aggregates: the engine refuses one that is not grouped and whose
	// table's primary key is not either (GroupCheck).
	Ungrouped []GroupCheck
	// UpsertColumnsOf names the table of an INSERT of several VALUES
	// rows ... ON CONFLICT DO UPDATE without a column list: the engine
	// prints it again with the table's columns listed
	// (InsertWithColumns), so that the rows' conflict keys can be
	// checked (upsertKeyCheck).
	UpsertColumnsOf string
}

// ResultColumn is one result column of a printed statement.
type ResultColumn struct {
	Name string // as PostgreSQL names it
	// Source is the column a plain column reference names (with or
	// without AS), "" for any other expression.
	Source string
	// Cast is the kind of PostgreSQL type (as CastKind returns) the
	// column's values have when the statement says so (a cast, a
	// comparison, a boolean constant), else "". Mods are its modifiers.
	Cast string
	Mods []int64
	// Type is the column's type's typname in a catalog query's result
	// (CatalogToSQLite), "" when not known.
	Type string
	// Common, where Cast is "" because the column is a CASE, COALESCE,
	// NULLIF, GREATEST or LEAST of table columns, are its parts: the
	// engine reads the columns' kinds at run time and combines them
	// (CommonKind). Arithmetic of them (+ - * / %) has their kind only if
	// it is an integer's (IntegerOnly): the engine computes numerics in
	// doubles.
	Common      []KindPart
	IntegerOnly bool
}

// KindPart is one part of an expression whose kind is its parts' common
// one: a kind the statement says, or a table column's.
type KindPart struct {
	Kind   string // as CastKind names kinds; "unknown" for a string constant
	Tables string // for a column: the tables it may be of, comma-separated
	Column string // the column, "" for a Kind
}

// Param is what a statement says of one parameter's type, as PostgreSQL
// infers it: a cast or its place (Kind), else the column it is compared
// with, assigned to or inserted into.
type Param struct {
	// Kind is the kind of type (as CastKind returns) of a cast of the
	// parameter ($1::int4), or of its place: "int8" in LIMIT and OFFSET,
	// "text" in LIKE.
	Kind string
	// Table and Column name the column (Table "" when the statement
	// does not say which of its tables has it); Table and Position the
	// column of an INSERT without a column list, by its place in the
	// table (-1 otherwise).
	Table, Column string
	Position      int
	// Arithmetic: the parameter is an operand of arithmetic with the
	// column, which gives it the column's type only for numbers.
	Arithmetic bool
}

// ErrNotPrinted is returned for a statement the printer does not print
// (schema and utility statements): the caller runs it its own way.
var ErrNotPrinted = errors.New("pgparse: not a query or data change")

// ToSQLite prints the first statement of sql for SQLite. Text PostgreSQL
// cannot parse is a syntax error (42601) with PostgreSQL's message; a
// construct SQLite cannot do as PostgreSQL does is refused (0A000); a
// statement that is not a query or data change returns ErrNotPrinted.
func ToSQLite(sql string) (*SQLite, error) {
	s, _, err := print(sql, false, nil)
	return s, err
}

// ToSQLiteReplacing is ToSQLite, but a relation of rels (by name, of
// public) in FROM is read as the SQLite query rels gives for it: the
// embedded engine's sequences, which are no SQLite tables, read as
// relations (SELECT last_value, is_called FROM s). Not cached.
func ToSQLiteReplacing(sql string, rels map[string]string) (*SQLite, error) {
	s, _, err := print(sql, false, rels)
	return s, err
}

// print is ToSQLite that also returns its printer, which notes where the
// constants went if holes is set (sqlite_cache.go), and reads rels as
// ToSQLiteReplacing says.
func print(sql string, holes bool, rels map[string]string) (s *SQLite, p *printer, err error) {
	defer func() {
		// A bug of the printer fails the statement, not the session
		// (pgwire closes a connection whose handler panicked).
		if r := recover(); r != nil {
			s, p, err = nil, nil, sqlerr.New(sqlerr.Internal, "certa could not translate this statement for the embedded engine (a bug; please report it): %v", r)
		}
	}()
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil, nil, parseError(err)
	}
	if len(tree.Stmts) == 0 {
		return nil, nil, ErrNotPrinted
	}
	raw := tree.Stmts[0]
	rest := ""
	if len(tree.Stmts) > 1 {
		end := int(raw.StmtLocation + raw.StmtLen)
		if raw.StmtLen == 0 || end > len(sql) {
			end = len(sql)
		}
		rest = sql[end:]
		rest = strings.TrimPrefix(strings.TrimLeft(rest, " \t\r\n"), ";")
	}
	p = &printer{src: sql, recordHoles: holes, replaced: rels, columnTypes: true, root: raw.Stmt}
	out := &SQLite{Rest: rest}
	switch n := raw.Stmt.Node.(type) {
	case *pg_query.Node_SelectStmt:
		out.Locking = len(n.SelectStmt.LockingClause) > 0
		out.NoColumns = noColumns(n.SelectStmt)
		p.selectStmt(n.SelectStmt, true)
		out.Columns = p.resultColumns(n.SelectStmt)
		out.Sources = renamedSources(n.SelectStmt)
	case *pg_query.Node_InsertStmt:
		p.insertStmt(n.InsertStmt)
		out.Columns = p.returningCommon(p.returningColumns(n.InsertStmt.ReturningList), n.InsertStmt.ReturningList)
	case *pg_query.Node_UpdateStmt:
		p.updateStmt(n.UpdateStmt)
		out.Columns = p.returningCommon(p.returningColumns(n.UpdateStmt.ReturningList), n.UpdateStmt.ReturningList)
	case *pg_query.Node_DeleteStmt:
		p.deleteStmt(n.DeleteStmt)
		out.Columns = p.returningCommon(p.returningColumns(n.DeleteStmt.ReturningList), n.DeleteStmt.ReturningList)
	default:
		return nil, nil, ErrNotPrinted
	}
	if p.err != nil {
		return nil, nil, p.err
	}
	out.SQL, out.Params, out.Tables, out.Arithmetic = p.b.String(), p.params, p.tables, p.arithColumns
	out.Ungrouped, out.UpsertColumnsOf = p.ungrouped, p.upsertColumnsOf
	return out, p, nil
}

// noColumns reports whether s is a query of no columns: a SELECT without
// targets, or a set operation of such (its left operand says).
func noColumns(s *pg_query.SelectStmt) bool {
	for s.Op != pg_query.SetOperation_SETOP_NONE && s.Larg != nil {
		s = s.Larg
	}
	return s.Op == pg_query.SetOperation_SETOP_NONE && len(s.TargetList) == 0 && len(s.ValuesLists) == 0
}

// parseError is PostgreSQL's parser's error as a client error.
func parseError(err error) error {
	msg := err.Error()
	if strings.Contains(msg, "not yet implemented") || strings.Contains(msg, "not supported") {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s", msg)
	}
	return syntaxError(err)
}

// printer writes one statement. The first failure is kept in err and
// printing goes on (its output is then discarded): no error checks at
// every step.
type printer struct {
	// src is the statement's text, as parsed (errors' positions).
	src    string
	b      strings.Builder
	err    error
	params []Param
	// arithColumns: SQLite.Arithmetic.
	arithColumns []KindPart
	// ungrouped: SQLite.Ungrouped.
	ungrouped []GroupCheck
	// upsertKeys: the value of a VALUES row that is printed as the
	// engine's check of the row's conflict key (upsertKeyCheck).
	upsertKeys map[*pg_query.Node][]*pg_query.Node
	// upsertColumnsOf: SQLite.UpsertColumnsOf.
	upsertColumnsOf string
	// aliases maps the names a statement's tables go by (their aliases,
	// or their names) to the tables; tables lists them.
	aliases map[string]string
	tables  []string
	// columnTypes: the statement is a client's (not a CHECK or a
	// default of the schema), which runs where the engine knows its
	// columns' types: string constants compared with a column are
	// printed in TypedConstFunction, a cast of a column names its kind
	// through CastKindFunction. typedConsts are those constants, with
	// the tables the column may be of and its name.
	columnTypes bool
	typedConsts map[*pg_query.A_Const][2]string
	// numberConsts are string constants compared with an expression
	// (not a column) of a kind of number, by that kind: PostgreSQL reads
	// them as such numbers (numberConstant).
	numberConsts map[*pg_query.A_Const]string
	// subqueryKinds are the kinds of the columns of the subqueries (and
	// VALUES lists) in FROM, by alias and column, where their
	// expressions say them (valueKind): what a result column that names
	// one has, which SQLite's value does not say (a boolean is 1).
	subqueryKinds map[string]map[string]string
	// root is the statement printed, for references.
	root *pg_query.Node
	// scopes are the FROM lists of the SELECTs being printed, innermost
	// last; derived names the WITH queries and the subqueries and
	// functions in FROM: columnOf types no column of theirs.
	scopes  []fromScope
	derived map[string]bool
	// recordHoles asks for holes: where each constant was written. fixed
	// is set when the output depends on a constant's value otherwise
	// than by writing it (no template can be made of it).
	recordHoles bool
	holes       []hole
	fixed       bool
	// sortPositions are ORDER BY items written as the position of the
	// output column they name (outputPositions).
	sortPositions map[*pg_query.SortBy]int

	// cat is set for a query over the system catalogs (catalog.go):
	// scope and ctes are what names mean where the printer is, nested
	// counts the queries it is inside, topColumns are the result's.
	cat        CatalogRelations
	scope      *scope
	ctes       map[string][]CatalogColumn
	nested     int
	topColumns []CatalogColumn
	// srfs are what the set-returning functions of target lists print
	// (catalog_print.go, targetSRFs).
	srfs map[*pg_query.FuncCall]string
	// replaced are the relations read as queries (ToSQLiteReplacing).
	replaced map[string]string
}

func (p *printer) w(ss ...string) {
	for _, s := range ss {
		p.b.WriteString(s)
	}
}

// refuse fails the statement with 0A000 for a construct SQLite cannot do.
func (p *printer) refuse(what string) {
	p.fail(sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by the embedded engine (SQLite); the PostgreSQL engine (--engine postgres) supports it", what))
}

func (p *printer) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}

// position is the place of a parse node's location loc (a byte offset in
// the statement) as errors give it: characters from 1, 0 for none.
func (p *printer) position(loc int32) int32 { return int32(charPosition(p.src, loc)) }

// charPosition is the place of byte offset loc of sql as PostgreSQL's
// errors give it (LINE and the caret): characters from 1, 0 for none.
func charPosition(sql string, loc int32) int {
	if loc < 0 || int(loc) > len(sql) {
		return 0
	}
	return utf8.RuneCountInString(sql[:loc]) + 1
}

// ident writes a quoted identifier: quoted, it keeps the case PostgreSQL's
// parser gave it and cannot collide with SQLite's keywords.
func (p *printer) ident(name string) {
	p.w(quoteIdent(name))
}

func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// literal writes a string constant.
func (p *printer) literal(s string) {
	p.w("'", strings.ReplaceAll(s, "'", "''"), "'")
}

// list writes each of nodes with f, separated by commas.
func (p *printer) list(nodes []*pg_query.Node, f func(*pg_query.Node)) {
	for i, n := range nodes {
		if i > 0 {
			p.w(", ")
		}
		f(n)
	}
}

// names returns the strings of a list of String nodes (a qualified name).
func names(nodes []*pg_query.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}
