package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// AlterTable describes an ALTER TABLE statement's commands.
type AlterTable struct {
	Table    string // as PostgreSQL folds it
	IfExists bool
	Cmds     []AlterCmd
}

// AlterKind is what one command of an ALTER TABLE does.
type AlterKind int

const (
	AlterOther          AlterKind = iota // any command not below
	AlterType                            // ALTER COLUMN c [SET DATA] TYPE t [USING e]
	AlterSetDefault                      // ALTER COLUMN c SET DEFAULT e
	AlterDropDefault                     // ALTER COLUMN c DROP DEFAULT
	AlterSetNotNull                      // ALTER COLUMN c SET NOT NULL
	AlterDropNotNull                     // ALTER COLUMN c DROP NOT NULL
	AlterAddConstraint                   // ADD [CONSTRAINT name] ...
	AlterDropConstraint                  // DROP CONSTRAINT [IF EXISTS] name
	AlterDropColumn                      // DROP [COLUMN] [IF EXISTS] c [CASCADE | RESTRICT]
	AlterAddIdentity                     // ALTER COLUMN c ADD GENERATED {ALWAYS | BY DEFAULT} AS IDENTITY [(options)]
)

// AlterCmd is one command of an ALTER TABLE, with the parts of its text
// the embedded engine writes into the table's definition.
type AlterCmd struct {
	Kind AlterKind
	Span // the command's text, after the table's name

	Column string // the column of ALTER COLUMN
	// AlterType: the new type as written and as a column of it is
	// described (Type, TypeMods: see Column), and the USING expression
	// as written, if any.
	TypeText string
	Type     string
	TypeMods []int64
	Array    bool
	Using    string
	// AlterSetDefault: the expression as written.
	Default string
	// AlterAddIdentity: the identity, and its SEQUENCE NAME option (the
	// sequence's name, without a public. qualifier; not in
	// Identity.Options).
	Identity *Identity
	SeqName  string
	// AlterAddConstraint: the constraint, its text as written (from
	// CONSTRAINT name, without NOT VALID).
	Constraint     Constraint
	ConstraintText string
	// AlterDropConstraint: the constraint's name; IF EXISTS; CASCADE
	// (also of AlterDropColumn).
	Name      string
	MissingOK bool
	Cascade   bool
}

// ParseAlterTable describes sql if it is one ALTER TABLE statement (not
// of an index, view or sequence) that PostgreSQL's parser accepts, else
// returns nil.
func ParseAlterTable(sql string) *AlterTable {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	at := tree.Stmts[0].Stmt.GetAlterTableStmt()
	if at == nil || at.Relation == nil || at.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return nil
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil
	}
	pieces := commandSpans(scan.Tokens, at.Relation.Location, len(sql))
	if len(pieces) != len(at.Cmds) {
		return nil
	}
	out := &AlterTable{Table: at.Relation.Relname, IfExists: at.MissingOk}
	for i, n := range at.Cmds {
		c := n.GetAlterTableCmd()
		if c == nil {
			return nil
		}
		out.Cmds = append(out.Cmds, alterCmd(sql, scan.Tokens, c, pieces[i]))
	}
	return out
}

func alterCmd(sql string, toks []*pg_query.ScanToken, c *pg_query.AlterTableCmd, piece Span) AlterCmd {
	cmd := AlterCmd{Span: piece}
	switch c.Subtype {
	case pg_query.AlterTableType_AT_AlterColumnType, pg_query.AlterTableType_AT_ColumnDefault,
		pg_query.AlterTableType_AT_SetNotNull, pg_query.AlterTableType_AT_DropNotNull, pg_query.AlterTableType_AT_DropColumn,
		pg_query.AlterTableType_AT_AddIdentity:
		cmd.Column = c.Name
	}
	switch c.Subtype {
	case pg_query.AlterTableType_AT_AlterColumnType:
		cd := c.Def.GetColumnDef()
		if cd == nil || cd.TypeName == nil {
			return AlterCmd{Span: piece}
		}
		cmd.Kind = AlterType
		col := columnDef(cd, toks)
		cmd.Type, cmd.TypeMods, cmd.Array = col.Type, col.TypeMods, col.Array
		typeEnd := piece.End
		if u := tokenIn(toks, piece, pg_query.Token_USING); u != nil {
			typeEnd = int(u.Start)
			cmd.Using = strings.TrimSpace(sql[u.End:piece.End])
		}
		cmd.TypeText = strings.TrimSpace(sql[cd.TypeName.Location:lastTokenEnd(toks, int(cd.TypeName.Location), typeEnd)])
	case pg_query.AlterTableType_AT_ColumnDefault:
		if c.Def == nil {
			cmd.Kind = AlterDropDefault
			break
		}
		d := tokenIn(toks, piece, pg_query.Token_DEFAULT)
		if d == nil {
			return AlterCmd{Span: piece}
		}
		cmd.Kind, cmd.Default = AlterSetDefault, strings.TrimSpace(sql[d.End:piece.End])
	case pg_query.AlterTableType_AT_SetNotNull:
		cmd.Kind = AlterSetNotNull
	case pg_query.AlterTableType_AT_DropNotNull:
		cmd.Kind = AlterDropNotNull
	case pg_query.AlterTableType_AT_AddConstraint:
		k := c.Def.GetConstraint()
		if k == nil {
			return AlterCmd{Span: piece}
		}
		cmd.Kind = AlterAddConstraint
		cmd.Constraint = constraint(toks, k, Span{int(k.Location), piece.End})
		cmd.ConstraintText = withoutNotValid(sql, toks, cmd.Constraint.Span)
	case pg_query.AlterTableType_AT_AddIdentity:
		k := c.Def.GetConstraint()
		if k == nil || k.Contype != pg_query.ConstrType_CONSTR_IDENTITY {
			return AlterCmd{Span: piece}
		}
		cmd.Kind, cmd.Identity = AlterAddIdentity, &Identity{Always: k.GeneratedWhen == "a"}
		for _, o := range k.Options {
			if d := o.GetDefElem(); d != nil && d.Defname == "sequence_name" {
				names := stringList(d.Arg.GetList().GetItems())
				if len(names) > 1 && names[len(names)-2] != "public" {
					return AlterCmd{Span: piece} // another schema: refused as any other command
				}
				if len(names) > 0 {
					cmd.SeqName = names[len(names)-1]
				}
				continue
			}
			cmd.Identity.Options = append(cmd.Identity.Options, seqOptions([]*pg_query.Node{o})...)
		}
	case pg_query.AlterTableType_AT_DropColumn:
		cmd.Kind, cmd.MissingOK = AlterDropColumn, c.MissingOk
		cmd.Cascade = c.Behavior == pg_query.DropBehavior_DROP_CASCADE
	case pg_query.AlterTableType_AT_DropConstraint:
		cmd.Kind, cmd.Name, cmd.MissingOK = AlterDropConstraint, c.Name, c.MissingOk
		cmd.Cascade = c.Behavior == pg_query.DropBehavior_DROP_CASCADE
	}
	return cmd
}

// commandSpans splits the commands of an ALTER TABLE, which follow the
// table's name (at offset name), at the commas outside parentheses.
func commandSpans(toks []*pg_query.ScanToken, name int32, end int) []Span {
	var out []Span
	start, depth, last := -1, 0, 0
	for i, t := range toks {
		if t.Start <= name || isComment(t) {
			continue
		}
		if start < 0 {
			if t.Token == pg_query.Token_ASCII_46 || i > 0 && toks[i-1].Token == pg_query.Token_ASCII_46 && toks[i-1].Start > name {
				continue // the rest of a qualified name
			}
			start = int(t.Start)
		}
		switch t.Token {
		case pg_query.Token_ASCII_40:
			depth++
		case pg_query.Token_ASCII_41:
			depth--
		case pg_query.Token_ASCII_44, pg_query.Token_ASCII_59:
			if depth == 0 {
				out = append(out, Span{start, last})
				start = -1
				if t.Token == pg_query.Token_ASCII_59 {
					return out
				}
				continue
			}
		}
		last = int(t.End)
	}
	if start >= 0 {
		out = append(out, Span{start, min(last, end)})
	}
	return out
}

// tokenIn returns the first token of kind tok in sp, or nil.
func tokenIn(toks []*pg_query.ScanToken, sp Span, tok pg_query.Token) *pg_query.ScanToken {
	for _, t := range toks {
		if int(t.Start) >= sp.Start && int(t.Start) < sp.End && t.Token == tok {
			return t
		}
	}
	return nil
}

// withoutNotValid returns the text of sp without a NOT VALID.
func withoutNotValid(sql string, toks []*pg_query.ScanToken, sp Span) string {
	text := sql[sp.Start:sp.End]
	for i, t := range toks {
		if int(t.Start) >= sp.Start && int(t.Start) < sp.End && t.Token == pg_query.Token_NOT &&
			i+1 < len(toks) && toks[i+1].Token == pg_query.Token_VALID {
			text = sql[sp.Start:t.Start] + sql[toks[i+1].End:sp.End]
		}
	}
	return strings.TrimSpace(text)
}

// IsColumnCast reports whether expr is column itself, or a cast of it
// (what ALTER COLUMN TYPE ... USING does without one).
func IsColumnCast(expr, column string) bool {
	tree, err := pg_query.Parse("SELECT " + expr)
	if err != nil || len(tree.Stmts) != 1 {
		return false
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || sel.FromClause != nil {
		return false
	}
	n := sel.TargetList[0].GetResTarget().GetVal()
	for n.GetTypeCast() != nil {
		n = n.GetTypeCast().Arg
	}
	ref := n.GetColumnRef()
	if ref == nil {
		return false
	}
	names := stringList(ref.Fields)
	return len(names) == 1 && len(ref.Fields) == 1 && names[0] == column
}
