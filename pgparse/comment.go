package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Comment is a COMMENT ON statement of a relation, a column or a
// sequence.
type Comment struct {
	Kind string // TABLE, VIEW, INDEX, SEQUENCE, COLUMN or SCHEMA
	// Name is the object's name (for COLUMN its table's), without a
	// public. qualifier; Schema another schema it names; Column the
	// column of COLUMN.
	Name, Schema, Column string
	// Text is the comment, "" to drop it (IS NULL or IS '', as in
	// PostgreSQL).
	Text string
}

// ParseComment returns the COMMENT ON of sql if sql is one, of a kind of
// object Comment describes; another kind (a function, a constraint ...)
// returns ok with Kind set to its kind and nothing else.
func ParseComment(sql string) (Comment, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return Comment{}, false
	}
	cs := tree.Stmts[0].Stmt.GetCommentStmt()
	if cs == nil {
		return Comment{}, false
	}
	kind := strings.ReplaceAll(strings.TrimPrefix(cs.Objtype.String(), "OBJECT_"), "_", " ")
	c := Comment{Kind: kind, Text: cs.Comment}
	var names []string
	switch cs.Objtype {
	case pg_query.ObjectType_OBJECT_TABLE, pg_query.ObjectType_OBJECT_VIEW, pg_query.ObjectType_OBJECT_INDEX,
		pg_query.ObjectType_OBJECT_SEQUENCE, pg_query.ObjectType_OBJECT_COLUMN:
		names = stringList(cs.Object.GetList().GetItems())
	case pg_query.ObjectType_OBJECT_SCHEMA:
		names = []string{cs.Object.GetString_().GetSval()}
	default:
		return Comment{Kind: kind}, true
	}
	if cs.Objtype == pg_query.ObjectType_OBJECT_COLUMN {
		if len(names) < 2 {
			return Comment{Kind: kind}, true
		}
		c.Column, names = names[len(names)-1], names[:len(names)-1]
	}
	if len(names) == 0 {
		return Comment{Kind: kind}, true
	}
	c.Name = names[len(names)-1]
	if len(names) > 1 && names[len(names)-2] != "public" {
		c.Schema = names[len(names)-2]
	}
	return c, true
}
