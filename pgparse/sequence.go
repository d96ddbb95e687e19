package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// SequenceStmt describes a CREATE SEQUENCE or DROP SEQUENCE statement.
type SequenceStmt struct {
	Create bool
	// Alter: ALTER SEQUENCE; OwnedBy is its OWNED BY, the column's
	// table and name ([]string{} for OWNED BY NONE), nil if not given.
	Alter   bool
	OwnedBy []string
	// Names are the sequences, as PostgreSQL folds them (one to create);
	// Schema is the first one's schema, "" if not named.
	Names  []string
	Schema string
	// Missing is IF NOT EXISTS (create) or IF EXISTS (drop).
	Missing bool
	Cascade bool
	// Type is the AS type's last name ("int4"), "" if not given;
	// Options the others.
	Type    string
	Options []SeqOption
}

// ParseSequenceStmt describes sql if it is one CREATE, ALTER or DROP
// SEQUENCE statement, else returns nil.
func ParseSequenceStmt(sql string) *SequenceStmt {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	switch n := tree.Stmts[0].Stmt.Node.(type) {
	case *pg_query.Node_CreateSeqStmt:
		cs := n.CreateSeqStmt
		out := &SequenceStmt{Create: true, Names: []string{cs.Sequence.Relname}, Schema: cs.Sequence.Schemaname, Missing: cs.IfNotExists}
		for _, o := range cs.Options {
			if d := o.GetDefElem(); d != nil && d.Defname == "as" && d.Arg.GetTypeName() != nil {
				out.Type = strings.ToLower(lastName(d.Arg.GetTypeName().Names))
				continue
			}
			out.Options = append(out.Options, seqOptions([]*pg_query.Node{o})...)
		}
		return out
	case *pg_query.Node_AlterSeqStmt:
		as := n.AlterSeqStmt
		out := &SequenceStmt{Alter: true, Names: []string{as.Sequence.Relname}, Schema: as.Sequence.Schemaname, Missing: as.MissingOk}
		for _, o := range as.Options {
			if d := o.GetDefElem(); d != nil && d.Defname == "owned_by" {
				names := stringList(d.Arg.GetList().GetItems())
				if len(names) == 1 && strings.EqualFold(names[0], "none") {
					names = nil
				}
				if len(names) > 2 {
					if names[0] != "public" {
						out.Schema = names[0] // checked as the sequence's
					}
					names = names[len(names)-2:]
				}
				out.OwnedBy = append([]string{}, names...)
				continue
			}
			out.Options = append(out.Options, seqOptions([]*pg_query.Node{o})...)
		}
		return out
	case *pg_query.Node_DropStmt:
		ds := n.DropStmt
		if ds.RemoveType != pg_query.ObjectType_OBJECT_SEQUENCE {
			return nil
		}
		out := &SequenceStmt{Missing: ds.MissingOk, Cascade: ds.Behavior == pg_query.DropBehavior_DROP_CASCADE}
		for _, o := range ds.Objects {
			names := stringList(o.GetList().GetItems())
			if len(names) == 0 {
				return nil
			}
			if len(names) > 1 && out.Schema == "" {
				out.Schema = names[len(names)-2]
			}
			out.Names = append(out.Names, names[len(names)-1])
		}
		return out
	}
	return nil
}

// SequencesRebounded returns the relations (as PostgreSQL names, quoted)
// whose sequences sql may give new bounds: the sequence of an ALTER
// SEQUENCE, the table of an ALTER TABLE that changes a column's type or
// identity options (its identity or serial sequences). PostgreSQL checks
// the new bounds against where each sequence is. nil for other
// statements, and for text that does not parse.
func SequencesRebounded(sql string) []string {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	switch s := tree.Stmts[0].Stmt.Node.(type) {
	case *pg_query.Node_AlterSeqStmt:
		return rangeVarName(s.AlterSeqStmt.Sequence)
	case *pg_query.Node_AlterTableStmt:
		for _, c := range s.AlterTableStmt.Cmds {
			switch c.GetAlterTableCmd().GetSubtype() {
			case pg_query.AlterTableType_AT_AlterColumnType, pg_query.AlterTableType_AT_SetIdentity:
				return rangeVarName(s.AlterTableStmt.Relation)
			}
		}
	}
	return nil
}

// rangeVarName is rv's name, quoted, in a list (nil for none).
func rangeVarName(rv *pg_query.RangeVar) []string {
	if rv == nil || rv.Relname == "" {
		return nil
	}
	name := quoteIdent(rv.Relname)
	if rv.Schemaname != "" {
		name = quoteIdent(rv.Schemaname) + "." + name
	}
	return []string{name}
}
