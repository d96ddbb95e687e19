package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// SchemaTag returns the command tag PostgreSQL completes a schema
// statement with: CREATE TABLE for CREATE UNIQUE INDEX's CREATE INDEX,
// CREATE TEMP TABLE's CREATE TABLE, DROP VIEW, TRUNCATE TABLE. Statements
// whose tag is their first two words (CREATE FUNCTION) are read from
// their words, so text the parser refuses still gets a tag.
func SchemaTag(sql string) string {
	if tree, err := pg_query.Parse(sql); err == nil && len(tree.Stmts) == 1 {
		if tag := treeTag(tree.Stmts[0].Stmt); tag != "" {
			return tag
		}
	}
	return leadingWords(sql, true)
}

// leadingWords returns the first two words of sql, upper case, skipping
// comments: keywords, and identifiers too if identifiers is set; it stops
// at anything else.
func leadingWords(sql string, identifiers bool) string {
	var words []string
	if scan, err := pg_query.Scan(sql); err == nil {
		for _, t := range scan.Tokens {
			if isComment(t) {
				continue
			}
			if len(words) == 1 && words[0] == "CREATE" && createQualifiers[t.Token] {
				continue // CREATE OR REPLACE AGGREGATE is tagged CREATE AGGREGATE
			}
			if len(words) == 2 || t.KeywordKind == pg_query.KeywordKind_NO_KEYWORD && !(identifiers && t.Token == pg_query.Token_IDENT) {
				break
			}
			words = append(words, strings.ToUpper(sql[t.Start:t.End]))
		}
	}
	return strings.Join(words, " ")
}

// createQualifiers are the words between CREATE and the kind of object
// that PostgreSQL's command tags leave out.
var createQualifiers = map[pg_query.Token]bool{pg_query.Token_OR: true, pg_query.Token_REPLACE: true,
	pg_query.Token_TRUSTED: true, pg_query.Token_PROCEDURAL: true, pg_query.Token_DEFAULT: true}

func treeTag(n *pg_query.Node) string {
	switch n := n.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return "CREATE TABLE"
	case *pg_query.Node_IndexStmt:
		return "CREATE INDEX"
	case *pg_query.Node_RefreshMatViewStmt:
		return "REFRESH MATERIALIZED VIEW"
	case *pg_query.Node_CreateTableAsStmt:
		// PostgreSQL's tag once it made a table or view without rows
		// (WITH NO DATA; IF NOT EXISTS that found one).
		if n.CreateTableAsStmt.Objtype == pg_query.ObjectType_OBJECT_MATVIEW {
			return "CREATE MATERIALIZED VIEW"
		}
		return "CREATE TABLE AS"
	case *pg_query.Node_ViewStmt:
		return "CREATE VIEW"
	case *pg_query.Node_CreateFunctionStmt:
		if n.CreateFunctionStmt.IsProcedure {
			return "CREATE PROCEDURE"
		}
		return "CREATE FUNCTION"
	case *pg_query.Node_CreateTrigStmt:
		return "CREATE TRIGGER" // also CREATE CONSTRAINT TRIGGER, OR REPLACE
	case *pg_query.Node_RuleStmt:
		return "CREATE RULE"
	case *pg_query.Node_CreateSeqStmt:
		return "CREATE SEQUENCE"
	case *pg_query.Node_AlterTableStmt:
		return "ALTER " + objectWords(n.AlterTableStmt.Objtype)
	case *pg_query.Node_RenameStmt:
		if t := n.RenameStmt.RenameType; t == pg_query.ObjectType_OBJECT_COLUMN || t == pg_query.ObjectType_OBJECT_ATTRIBUTE {
			return "ALTER " + objectWords(n.RenameStmt.RelationType) // the relation's, as PostgreSQL tags it
		}
		return "ALTER " + objectWords(n.RenameStmt.RenameType)
	case *pg_query.Node_DropStmt:
		return "DROP " + objectWords(n.DropStmt.RemoveType)
	case *pg_query.Node_TruncateStmt:
		return "TRUNCATE TABLE"
	case *pg_query.Node_CommentStmt:
		return "COMMENT"
	case *pg_query.Node_GrantStmt:
		if n.GrantStmt.IsGrant {
			return "GRANT"
		}
		return "REVOKE"
	}
	return ""
}

// objectWords names an object type as command tags do: OBJECT_MATVIEW is
// MATERIALIZED VIEW, OBJECT_FOREIGN_TABLE is FOREIGN TABLE.
func objectWords(t pg_query.ObjectType) string {
	if words, ok := tagWords[t]; ok {
		return words
	}
	return strings.ReplaceAll(strings.TrimPrefix(t.String(), "OBJECT_"), "_", " ")
}

// tagWords are the object types command tags name otherwise than by
// their constant's words.
var tagWords = map[pg_query.ObjectType]string{
	pg_query.ObjectType_OBJECT_MATVIEW:         "MATERIALIZED VIEW",
	pg_query.ObjectType_OBJECT_STATISTIC_EXT:   "STATISTICS",
	pg_query.ObjectType_OBJECT_TSCONFIGURATION: "TEXT SEARCH CONFIGURATION",
	pg_query.ObjectType_OBJECT_TSDICTIONARY:    "TEXT SEARCH DICTIONARY",
	pg_query.ObjectType_OBJECT_TSPARSER:        "TEXT SEARCH PARSER",
	pg_query.ObjectType_OBJECT_TSTEMPLATE:      "TEXT SEARCH TEMPLATE",
	pg_query.ObjectType_OBJECT_FDW:             "FOREIGN DATA WRAPPER",
	pg_query.ObjectType_OBJECT_FOREIGN_SERVER:  "SERVER",
	pg_query.ObjectType_OBJECT_OPCLASS:         "OPERATOR CLASS",
	pg_query.ObjectType_OBJECT_OPFAMILY:        "OPERATOR FAMILY",
	pg_query.ObjectType_OBJECT_TABCONSTRAINT:   "TABLE",
	pg_query.ObjectType_OBJECT_DOMCONSTRAINT:   "DOMAIN",
}

// IsRoutineDefinition reports whether sql is CREATE [OR REPLACE]
// FUNCTION or PROCEDURE.
func IsRoutineDefinition(sql string) bool {
	switch SchemaTag(sql) {
	case "CREATE FUNCTION", "CREATE PROCEDURE":
		return true
	}
	return false
}

// CopiesRows reports whether a schema statement also writes rows: CREATE
// TABLE AS, SELECT INTO, CREATE MATERIALIZED VIEW.
func CopiesRows(sql string) bool {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return false
	}
	for _, s := range tree.Stmts {
		switch n := s.Stmt.Node.(type) {
		case *pg_query.Node_CreateTableAsStmt:
			return true
		case *pg_query.Node_SelectStmt:
			if n.SelectStmt.IntoClause != nil {
				return true
			}
		}
	}
	return false
}

// Drop describes a DROP statement: the kind of object (TABLE, INDEX,
// VIEW, SEQUENCE ...), the objects' names (without a public. qualifier;
// Schema is another schema named, if any), IF EXISTS and CASCADE.
type Drop struct {
	Kind     string
	Names    []string
	Schema   string
	IfExists bool
	Cascade  bool
}

// ParseDrop describes sql if it is one DROP statement, else returns nil.
func ParseDrop(sql string) *Drop {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	ds := tree.Stmts[0].Stmt.GetDropStmt()
	if ds == nil {
		return nil
	}
	d := &Drop{Kind: objectWords(ds.RemoveType), IfExists: ds.MissingOk, Cascade: ds.Behavior == pg_query.DropBehavior_DROP_CASCADE}
	for _, o := range ds.Objects {
		names := stringList(o.GetList().GetItems())
		if len(names) == 0 {
			return nil // not a name (DROP FUNCTION f(int) and the like)
		}
		if len(names) > 1 && names[len(names)-2] != "public" {
			d.Schema = names[len(names)-2]
		}
		d.Names = append(d.Names, names[len(names)-1])
	}
	return d
}

// Truncate describes a TRUNCATE statement: its tables (without a public.
// qualifier; Schema is another schema named, if any), RESTART IDENTITY
// and CASCADE.
type Truncate struct {
	Tables          []string
	Schema          string
	RestartIdentity bool
	Cascade         bool
}

// ParseTruncate describes sql if it is one TRUNCATE statement, else
// returns nil.
func ParseTruncate(sql string) *Truncate {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil
	}
	ts := tree.Stmts[0].Stmt.GetTruncateStmt()
	if ts == nil {
		return nil
	}
	t := &Truncate{RestartIdentity: ts.RestartSeqs, Cascade: ts.Behavior == pg_query.DropBehavior_DROP_CASCADE}
	for _, n := range ts.Relations {
		rv := n.GetRangeVar()
		if rv == nil {
			return nil
		}
		if rv.Schemaname != "" && rv.Schemaname != "public" {
			t.Schema = rv.Schemaname
		}
		t.Tables = append(t.Tables, rv.Relname)
	}
	return t
}
