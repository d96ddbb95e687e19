package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// LiteralPosition returns where in sql, the statement the embedded engine
// ran, the string constant value stands that the engine could not read as
// a value of its type: the argument of a cast to kind (as CastKind names
// kinds: 'x'::int, int4 'x'), or, with kind "", a constant read as its
// column's type (WHERE a = 'x'). The position counts characters from 1,
// as PostgreSQL's errors do (LINE and the caret under the constant). It is
// 0 unless exactly one constant of sql fits: no position is better than a
// wrong one.
func LiteralPosition(sql, kind, value string) int {
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) == 0 {
		return 0
	}
	root := tree.Stmts[0].Stmt.ProtoReflect()
	casted := map[*pg_query.A_Const]bool{}
	var found []int32
	walkMessages(root, func(m protoreflect.Message) {
		tc, ok := m.Interface().(*pg_query.TypeCast)
		if !ok {
			return
		}
		c := tc.Arg.GetAConst()
		if c == nil || c.GetSval() == nil {
			return
		}
		casted[c] = true
		if k, _, err := CastKind(typeString(tc.TypeName)); kind != "" && err == nil && k == kind && c.GetSval().Sval == value {
			found = append(found, c.Location)
		}
	})
	if kind == "" {
		walkMessages(root, func(m protoreflect.Message) {
			if c, ok := m.Interface().(*pg_query.A_Const); ok && !casted[c] && c.GetSval() != nil && c.GetSval().Sval == value {
				found = append(found, c.Location)
			}
		})
	}
	if len(found) != 1 {
		return 0
	}
	return charPosition(sql, found[0])
}
