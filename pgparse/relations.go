package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Relations returns the relations sql names anywhere (the tables a schema
// statement makes, changes, copies LIKE, inherits or references; those
// its queries read), each as PostgreSQL would look it up: schema.name, or
// the bare name. Nil if sql does not parse.
func Relations(sql string) []string {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return nil
	}
	var out []string
	for _, st := range tree.Stmts {
		walkMessages(st.ProtoReflect(), func(m protoreflect.Message) {
			if rv, ok := m.Interface().(*pg_query.RangeVar); ok && rv.Relname != "" {
				name := quoteIdent(rv.Relname)
				if rv.Schemaname != "" {
					name = quoteIdent(rv.Schemaname) + "." + name
				}
				out = append(out, name)
			}
		})
	}
	return out
}
