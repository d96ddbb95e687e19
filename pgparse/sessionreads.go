package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Rewrites of calls that read the session's state, which a session of
// certa's keeps where the server's backend does not: sequence values
// (currval, lastval) and the isolation level in force.

// SequenceReads is how RewriteSequenceReads rewrites currval and lastval.
type SequenceReads struct {
	Currval string // the function currval(seq) becomes: Currval(seq, Known)
	Lastval string // the function lastval() becomes: Lastval(Last, LastSeq)
	Known   string // a jsonb literal's text: the session's values by sequence
	Last    string // a bigint literal's text, or "" for NULL
	LastSeq string // the oid of the sequence Last is of, or "" for NULL
}

// RewriteSequenceReads returns sql with every call of currval(seq) and
// lastval() (bare or qualified with pg_catalog) replaced by r's
// functions, which pass on the session's values when the backend has
// none of its own; ok is false (and sql unchanged) when sql calls
// neither or cannot be parsed.
func RewriteSequenceReads(sql string, r SequenceReads) (string, bool) {
	lower := strings.ToLower(sql)
	if !strings.Contains(lower, "currval") && !strings.Contains(lower, "lastval") {
		return sql, false // cheap: almost no statement does
	}
	return rewriteCalls(sql, func(fc *pg_query.FuncCall) bool {
		if fc.AggStar || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
			return false
		}
		switch name := sequenceFuncName(fc.Funcname); {
		case name == "currval" && len(fc.Args) == 1:
			fc.Funcname = qualifiedName(r.Currval)
			fc.Args = append(fc.Args, pg_query.MakeAConstStrNode(r.Known, -1))
		case name == "lastval" && len(fc.Args) == 0:
			fc.Funcname = qualifiedName(r.Lastval)
			fc.Args = []*pg_query.Node{constOrNull(r.Last), constOrNull(r.LastSeq)}
		default:
			return false
		}
		return true
	})
}

// constOrNull is a constant of text s, or NULL if s is "".
func constOrNull(s string) *pg_query.Node {
	if s == "" {
		return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}
	}
	return pg_query.MakeAConstStrNode(s, -1)
}

// rewriteCalls parses sql, lets change rewrite each function call in it
// (true: it did), and returns the statements printed again if one was;
// sql itself and false if none was or sql does not parse.
func rewriteCalls(sql string, change func(*pg_query.FuncCall) bool) (string, bool) {
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return sql, false
	}
	changed := false
	for _, raw := range tree.Stmts {
		walkMessages(raw.Stmt.ProtoReflect(), func(m protoreflect.Message) {
			if fc, is := m.Interface().(*pg_query.FuncCall); is && change(fc) {
				changed = true
			}
		})
	}
	if !changed {
		return sql, false
	}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return sql, false
	}
	return out, true
}

// sequenceFuncName returns "currval" or "lastval" for a call of either
// (bare or pg_catalog's), else "".
func sequenceFuncName(names []*pg_query.Node) string {
	var parts []string
	for _, n := range names {
		parts = append(parts, n.GetString_().GetSval())
	}
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	if len(parts) == 1 && (parts[0] == "currval" || parts[0] == "lastval") {
		return parts[0]
	}
	return ""
}

// qualifiedName is a function name "schema.name" as the parse tree has it.
func qualifiedName(name string) []*pg_query.Node {
	var out []*pg_query.Node
	for _, p := range strings.Split(name, ".") {
		out = append(out, pg_query.MakeStrNode(p))
	}
	return out
}

// RewriteSettingReads returns sql with every call of current_setting(name
// [, missing_ok]) (bare or pg_catalog's) of a parameter that shown holds
// (by its name in lower case, as PostgreSQL matches parameters) replaced
// by fn(value): the answer the session gives where the server's backend
// would answer otherwise. ok is false (and sql unchanged) when there is
// none.
func RewriteSettingReads(sql, fn string, shown map[string]string) (string, bool) {
	lower := strings.ToLower(sql)
	if !strings.Contains(lower, "current_setting") {
		return sql, false // cheap: almost no statement does
	}
	return rewriteCalls(sql, func(fc *pg_query.FuncCall) bool {
		if functionName(fc.Funcname) != "current_setting" || len(fc.Args) == 0 || len(fc.Args) > 2 {
			return false
		}
		c := fc.Args[0].GetAConst()
		if c == nil || c.GetSval() == nil {
			return false
		}
		value, ok := shown[strings.ToLower(c.GetSval().Sval)]
		if !ok {
			return false
		}
		fc.Funcname = qualifiedName(fn)
		fc.Args = []*pg_query.Node{pg_query.MakeAConstStrNode(value, -1)}
		return true
	})
}
