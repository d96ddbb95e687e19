// Package pgparse reads SQL statements with PostgreSQL's own parser
// (libpg_query, through github.com/pganalyze/pg_query_go) and describes
// what certa needs to know of them, with byte offsets into the statement's
// text so that callers can rewrite precisely the parts they must. It also
// prints queries and data changes again as SQLite SQL that means the same
// (ToSQLite, sqlite*.go), for the embedded engine. It is the only package
// of certa that imports the parser.
package pgparse

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Span is a range of bytes [Start, End) of a statement's text.
type Span struct{ Start, End int }

// CreateTable describes a CREATE TABLE statement with a column list.
type CreateTable struct {
	Table   string // as PostgreSQL folds it: unquoted names in lower case
	Columns []Column
	// NameSpan is the table's name as written; Constraints are its table
	// constraints; ListEnd is the offset of the parenthesis that closes
	// its list of columns and constraints.
	NameSpan    Span
	Constraints []Constraint
	ListEnd     int
	// Tail is the text after the list: storage parameters (WITH (...)),
	// WITHOUT OIDS, TABLESPACE, which mean nothing to SQLite. TailRefused
	// names what in it certa cannot do (INHERITS, PARTITION BY, an access
	// method, ON COMMIT), or is "".
	Tail        Span
	TailRefused string
	// Temp: a temporary table (TEMP, TEMPORARY, LOCAL TEMP, or in
	// schema pg_temp); OnCommit is then its ON COMMIT action ("DROP",
	// "DELETE ROWS", or "" to keep its rows). IfNotExists: IF NOT
	// EXISTS was written.
	Temp        bool
	OnCommit    string
	IfNotExists bool
}

// ConstraintKind is what a constraint requires.
type ConstraintKind int

const (
	ConstraintOther ConstraintKind = iota
	ConstraintCheck
	ConstraintForeignKey
	ConstraintUnique
	ConstraintPrimaryKey
	ConstraintNotNull
	ConstraintDefault
)

// Constraint is a table constraint, or one constraint of a column
// definition, with its span in the statement's text (from CONSTRAINT
// name, if named).
type Constraint struct {
	Kind ConstraintKind
	Name string // "" if unnamed
	Span
	Columns  []string // UNIQUE, PRIMARY KEY, FOREIGN KEY: the constrained columns
	NotValid bool     // NOT VALID (CHECK, FOREIGN KEY)
	// RefTable is the table a FOREIGN KEY references; Deferrable says
	// the constraint is DEFERRABLE.
	RefTable   string
	Deferrable bool
	// Default is a DEFAULT's expression, after the keyword; Condition a
	// CHECK's, inside its parentheses.
	Default, Condition Span
}

// Column is one column definition of a CREATE TABLE.
type Column struct {
	Name string
	// Type is the last part of the type's name as PostgreSQL's parser
	// leaves it: "serial", "bigserial", "int4", "int8", "text", "numeric"...
	Type string
	// TypeWord is the first word of the type as written ("serial" in
	// "id serial"): the whole name of one-word types.
	TypeWord Span
	// TypeMods are the type's integer modifiers: [20] for varchar(20),
	// [10 2] for numeric(10,2).
	TypeMods []int64
	// Array: the column holds arrays of Type (text[]).
	Array bool
	// Checks names the column's named CHECK constraints.
	Checks []string
	// TypeSpan is the whole type as written ("character varying(20)");
	// Constraints are the column's constraints, in order.
	TypeSpan    Span
	Constraints []Constraint
	// End is just past the definition's last token (before the comma or
	// parenthesis that follows it): where a constraint can be appended.
	End int
	// NotNull: declared NOT NULL. PrimaryKey: a PRIMARY KEY column, by a
	// column constraint or the table's PRIMARY KEY (...). Default: it has a
	// DEFAULT clause.
	NotNull, PrimaryKey, Default bool
	// Generated: a generated column (GENERATED ALWAYS AS (expr) STORED).
	Generated bool
	// Identity is the GENERATED ... AS IDENTITY [( ... )] clause, if any;
	// Identities counts such clauses (PostgreSQL allows one).
	Identity   *Identity
	Identities int
}

// Identity is a GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [( options )]
// clause; its Span covers the whole clause.
type Identity struct {
	Span
	Always  bool // GENERATED ALWAYS, else BY DEFAULT
	Options []SeqOption
}

// SeqOption is one sequence option of an identity column, named as
// PostgreSQL's parser names it: "start", "increment", "minvalue",
// "maxvalue", "cache", "cycle", "restart", "as", "sequence_name",
// "owned_by".
type SeqOption struct {
	Name string
	// Value is the option's number and HasValue says there is one: NO
	// MINVALUE and NO MAXVALUE have none, and neither has a number that
	// is not an integer of 64 bits. Cycle is CYCLE's value (NO CYCLE:
	// false).
	Value    int64
	HasValue bool
	Cycle    bool
}

// ParseCreateTable returns the description of sql if it is one CREATE TABLE
// statement with a column list that PostgreSQL's parser accepts, else nil.
func ParseCreateTable(sql string) *CreateTable {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	cs := tree.Stmts[0].Stmt.GetCreateStmt()
	if cs == nil || cs.Relation == nil {
		return nil
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil
	}
	toks := scan.Tokens
	ct := &CreateTable{Table: cs.Relation.Relname, ListEnd: listEnd(toks, cs.Relation.Location),
		Temp: isTemp(cs.Relation), IfNotExists: cs.IfNotExists}
	if ct.ListEnd >= 0 {
		ct.Tail = Span{ct.ListEnd + 1, ct.ListEnd + 1}
		for _, t := range toks {
			if int(t.Start) > ct.ListEnd && t.Token != pg_query.Token_ASCII_59 {
				ct.Tail.End = int(t.End)
			}
		}
	}
	likes := false
	for _, elt := range cs.TableElts {
		likes = likes || elt.GetTableLikeClause() != nil
	}
	switch {
	case likes:
		ct.TailRefused = "(LIKE ...)" // SQLite would read a column named LIKE
	case cs.OfTypename != nil:
		ct.TailRefused = "OF type"
	case len(cs.InhRelations) > 0:
		ct.TailRefused = "INHERITS"
	case cs.Partspec != nil || cs.Partbound != nil:
		ct.TailRefused = "partitioned tables"
	case cs.AccessMethod != "" && cs.AccessMethod != "heap":
		ct.TailRefused = "table access method " + cs.AccessMethod
	case ct.Temp:
		ct.OnCommit = onCommitAction(cs.Oncommit)
	case cs.Oncommit != pg_query.OnCommitAction_ONCOMMIT_NOOP && cs.Oncommit != pg_query.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED:
		ct.TailRefused = "ON COMMIT"
	}
	if t := tokenAt(toks, cs.Relation.Location); t != nil {
		ct.NameSpan = Span{int(t.Start), int(t.End)}
		if cs.Relation.Schemaname != "" {
			ct.NameSpan.End = nameEnd(toks, t)
		}
	}
	byName := map[string]int{}
	var tablePK []string
	for _, elt := range cs.TableElts {
		if c := elt.GetConstraint(); c != nil {
			if c.Contype == pg_query.ConstrType_CONSTR_PRIMARY {
				tablePK = append(tablePK, stringList(c.Keys)...)
			}
			ct.Constraints = append(ct.Constraints, constraint(toks, c, Span{int(c.Location), elementEnd(toks, c.Location)}))
			continue
		}
		cd := elt.GetColumnDef()
		if cd == nil || cd.TypeName == nil {
			continue
		}
		col := columnDef(cd, toks)
		byName[col.Name] = len(ct.Columns)
		ct.Columns = append(ct.Columns, col)
	}
	for _, name := range tablePK {
		if i, ok := byName[name]; ok {
			ct.Columns[i].PrimaryKey = true
		}
	}
	return ct
}

// columnDef describes a column definition; toks are the statement's tokens.
func columnDef(cd *pg_query.ColumnDef, toks []*pg_query.ScanToken) Column {
	col := Column{Name: cd.Colname, End: elementEnd(toks, int32(cd.Location))}
	if names := stringList(cd.TypeName.Names); len(names) > 0 {
		col.Type = strings.ToLower(names[len(names)-1])
	}
	col.Array = len(cd.TypeName.ArrayBounds) > 0
	if t := tokenAt(toks, cd.TypeName.Location); t != nil {
		col.TypeWord = Span{int(t.Start), int(t.End)}
	}
	// A constraint runs to the next one, or to the end of the column.
	var starts []int
	for _, n := range cd.Constraints {
		if c := n.GetConstraint(); c != nil {
			starts = append(starts, int(c.Location))
		}
	}
	typeEnd := col.End
	if len(starts) > 0 {
		typeEnd = starts[0]
	}
	col.TypeSpan = Span{col.TypeWord.Start, lastTokenEnd(toks, col.TypeWord.Start, typeEnd)}
	for i, n := range cd.Constraints {
		c := n.GetConstraint()
		if c == nil {
			continue
		}
		end := col.End
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		k := constraint(toks, c, Span{int(c.Location), lastTokenEnd(toks, int(c.Location), end)})
		if d := tokenIn(toks, k.Span, pg_query.Token_DEFAULT); k.Kind == ConstraintDefault && d != nil {
			k.Default = Span{int(d.End), k.End}
		}
		col.Constraints = append(col.Constraints, k)
	}
	for _, m := range cd.TypeName.Typmods {
		if c := m.GetAConst(); c != nil && c.GetIval() != nil {
			col.TypeMods = append(col.TypeMods, int64(c.GetIval().Ival))
		}
	}
	for _, n := range cd.Constraints {
		c := n.GetConstraint()
		if c == nil {
			continue
		}
		switch c.Contype {
		case pg_query.ConstrType_CONSTR_NOTNULL:
			col.NotNull = true
		case pg_query.ConstrType_CONSTR_PRIMARY:
			col.PrimaryKey = true
		case pg_query.ConstrType_CONSTR_DEFAULT:
			col.Default = true
		case pg_query.ConstrType_CONSTR_GENERATED:
			col.Generated = true
		case pg_query.ConstrType_CONSTR_CHECK:
			if c.Conname != "" {
				col.Checks = append(col.Checks, c.Conname)
			}
		case pg_query.ConstrType_CONSTR_IDENTITY:
			col.Identities++
			if col.Identity != nil {
				break
			}
			if sp := identitySpan(toks, c.Location); sp != nil {
				col.Identity = &Identity{Span: *sp, Always: c.GeneratedWhen == "a", Options: seqOptions(c.Options)}
			}
		}
	}
	return col
}

// ParseAddColumn returns the column an ALTER TABLE that adds one column
// (and does nothing else) defines, else nil.
func ParseAddColumn(sql string) *Column {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	at := tree.Stmts[0].Stmt.GetAlterTableStmt()
	if at == nil || len(at.Cmds) != 1 {
		return nil
	}
	cmd := at.Cmds[0].GetAlterTableCmd()
	if cmd == nil || cmd.Subtype != pg_query.AlterTableType_AT_AddColumn || cmd.Def == nil {
		return nil
	}
	cd := cmd.Def.GetColumnDef()
	if cd == nil || cd.TypeName == nil {
		return nil
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil
	}
	col := columnDef(cd, scan.Tokens)
	return &col
}

// seqOptions describes the sequence options of an identity constraint.
func seqOptions(nodes []*pg_query.Node) []SeqOption {
	var out []SeqOption
	for _, n := range nodes {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		o := SeqOption{Name: d.Defname}
		switch {
		case d.Arg == nil:
		case d.Arg.GetInteger() != nil:
			o.Value, o.HasValue = int64(d.Arg.GetInteger().Ival), true
		case d.Arg.GetFloat() != nil:
			// Integers beyond 32 bits come as Float, with their text.
			v, err := strconv.ParseInt(d.Arg.GetFloat().Fval, 10, 64)
			o.Value, o.HasValue = v, err == nil
		case d.Arg.GetBoolean() != nil:
			o.Cycle = d.Arg.GetBoolean().Boolval
		}
		out = append(out, o)
	}
	return out
}

// stringList returns the String nodes of a list (names, key columns).
func stringList(nodes []*pg_query.Node) []string {
	var out []string
	for _, n := range nodes {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}

func isComment(t *pg_query.ScanToken) bool {
	return t.Token == pg_query.Token_SQL_COMMENT || t.Token == pg_query.Token_C_COMMENT
}

// tokenAt returns the token starting at offset, or nil.
func tokenAt(toks []*pg_query.ScanToken, offset int32) *pg_query.ScanToken {
	for _, t := range toks {
		if t.Start == offset {
			return t
		}
	}
	return nil
}

// nextToken returns the token after t among toks, nil if none.
func nextToken(toks []*pg_query.ScanToken, t *pg_query.ScanToken) *pg_query.ScanToken {
	for i, u := range toks {
		if u == t && i+1 < len(toks) {
			return toks[i+1]
		}
	}
	return nil
}

// elementEnd returns the end of the last token of the table element that
// starts at offset: the element ends before the first comma or closing
// parenthesis outside its own parentheses.
func elementEnd(toks []*pg_query.ScanToken, offset int32) int {
	end, depth := int(offset), 0
	for _, t := range toks {
		if t.Start < offset || isComment(t) {
			continue
		}
		switch t.Token {
		case pg_query.Token_ASCII_40: // (
			depth++
		case pg_query.Token_ASCII_41: // )
			if depth == 0 {
				return end
			}
			depth--
		case pg_query.Token_ASCII_44, pg_query.Token_ASCII_59: // , ;
			if depth == 0 {
				return end
			}
		}
		end = int(t.End)
	}
	return end
}

// identitySpan returns the span of GENERATED {ALWAYS | BY DEFAULT} AS
// IDENTITY [( options )] in the constraint that starts at offset (which may
// start with CONSTRAINT name).
func identitySpan(toks []*pg_query.ScanToken, offset int32) *Span {
	i := 0
	for i < len(toks) && toks[i].Start < offset {
		i++
	}
	for ; i < len(toks) && toks[i].Token != pg_query.Token_GENERATED; i++ {
	}
	if i == len(toks) {
		return nil
	}
	sp := &Span{Start: int(toks[i].Start)}
	for ; i < len(toks) && toks[i].Token != pg_query.Token_IDENTITY_P; i++ {
	}
	if i == len(toks) {
		return nil
	}
	sp.End = int(toks[i].End)
	if j := i + 1; j < len(toks) && toks[j].Token == pg_query.Token_ASCII_40 {
		depth := 0
		for ; j < len(toks); j++ {
			switch toks[j].Token {
			case pg_query.Token_ASCII_40:
				depth++
			case pg_query.Token_ASCII_41:
				depth--
			}
			if depth == 0 {
				sp.End = int(toks[j].End)
				break
			}
		}
	}
	return sp
}
