package pgparse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"certa/sqlerr"
)

// Function calls, printed for SQLite. Only the functions named here are
// printed: a PostgreSQL function SQLite has under the same name may not
// mean the same (random, log, substr of negative positions...), so each
// is listed after checking that it does.

// sqliteFunctions maps PostgreSQL's functions to SQLite's that take the
// same arguments and return the same values. The engine registers the
// pg_* ones and those PostgreSQL has and SQLite lacks (now, version...).
// SQLiteFunction returns the SQLite function that stands for PostgreSQL's
// function name (as written, schema.name or name), or name itself if none
// does.
func SQLiteFunction(name string) string {
	if f, ok := sqliteFunctions[name]; ok {
		return f
	}
	return name
}

var sqliteFunctions = map[string]string{
	// Aggregates.
	"count": "count", "sum": "sum", "min": "min", "max": "max", "avg": "avg",
	"string_agg": "string_agg", "bool_and": "min", "bool_or": "max", "every": "min",
	// Windows.
	"row_number": "row_number", "rank": "rank", "dense_rank": "dense_rank", "percent_rank": "percent_rank",
	"cume_dist": "cume_dist", "ntile": "ntile", "lag": "lag", "lead": "lead",
	"first_value": "first_value", "last_value": "last_value", "nth_value": "nth_value",
	// Strings.
	"lower": "lower", "upper": "upper", "length": "length", "char_length": "length", "character_length": "length",
	"octet_length": "octet_length", "replace": "replace", "concat": "concat", "concat_ws": "concat_ws",
	"strpos": "instr", "position": "instr", "substring": "substr", "substr": "substr",
	"btrim": "pg_btrim", "ltrim": "pg_ltrim", "rtrim": "pg_rtrim",
	"repeat": "pg_repeat", "lpad": "pg_lpad", "rpad": "pg_rpad", "left": "pg_left", "right": "pg_right",
	"reverse": "pg_reverse", "initcap": "pg_initcap", "split_part": "pg_split_part",
	"starts_with": "pg_starts_with", "ascii": "pg_ascii", "chr": "pg_chr",
	// Numbers.
	"abs": "abs", "round": "round", "ceil": "ceil", "ceiling": "ceil", "floor": "floor", "sign": "sign",
	"sqrt": "pg_sqrt", "power": "pg_pow", "pow": "pg_pow", "exp": "pg_exp", "ln": "pg_ln", "log10": "pg_log10", "mod": "pg_mod",
	"pi": "pi", "trunc": "trunc", "random": "pg_random", "md5": "md5",
	// PostgreSQL's own, registered by the engine.
	"now": "now", "transaction_timestamp": "now", "statement_timestamp": "now", "clock_timestamp": "now",
	"version": "version", "current_database": "current_database", "current_schema": "current_schema",
	"gen_random_uuid": "gen_random_uuid", "nextval": "nextval", "setval": "setval", "currval": "currval", "lastval": "lastval", "coalesce": "coalesce", "nullif": "nullif",
	"pg_try_advisory_xact_lock": "pg_try_advisory_xact_lock",
	// The engine's cast, which its schema's defaults call.
	"pg_cast": "pg_cast",
}

// textFunctions are the functions of sqliteFunctions whose first
// argument PostgreSQL takes as text only.
var textFunctions = map[string]bool{"lower": true, "upper": true, "length": true, "char_length": true,
	"character_length": true, "replace": true, "strpos": true, "btrim": true, "ltrim": true, "rtrim": true,
	"repeat": true, "lpad": true, "rpad": true, "left": true, "right": true, "reverse": true, "initcap": true,
	"split_part": true, "starts_with": true, "ascii": true}

// nonTextKinds are the kinds (as CastKind names them) that are no text
// and have no implicit cast to it, by PostgreSQL's name of their type.
var nonTextKinds = map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint", "numeric": "numeric",
	"float8": "double precision", "bool": "boolean", "date": "date", "timestamp": "timestamp without time zone",
	"timestamptz": "timestamp with time zone", "time": "time without time zone"}

// aggregates are the functions of sqliteFunctions that aggregate rows or
// work over windows: not scalars.
var aggregates = map[string]bool{
	"count": true, "sum": true, "min": true, "max": true, "avg": true, "string_agg": true,
	"bool_and": true, "bool_or": true, "every": true, "row_number": true, "rank": true,
	"dense_rank": true, "percent_rank": true, "cume_dist": true, "ntile": true, "lag": true,
	"lead": true, "first_value": true, "last_value": true, "nth_value": true,
}

func (p *printer) funcCall(f *pg_query.FuncCall) {
	if p.cat != nil && p.catalogFuncCall(f) {
		return
	}
	name := functionName(f.Funcname)
	fn, ok := sqliteFunctions[name]
	switch {
	case name == "generate_series":
		p.refuse("generate_series outside FROM")
		return
	case name == "log" && len(f.Args) == 1:
		fn, ok = "pg_log10", true // PostgreSQL's log(x) is base 10
	case (name == "substring" || name == "substr") && len(f.Args) >= 2:
		// SQLite counts a start before 1 differently; PostgreSQL's
		// SUBSTRING(x FROM s FOR n) is the characters s..s+n-1 that exist.
		fn = "pg_substr"
		for _, a := range f.Args[1:] {
			if c := a.GetAConst(); c != nil && c.GetSval() != nil {
				// A string where a position goes is PostgreSQL's other
				// substring, by a regular expression (FROM 'a.c', or
				// SIMILAR ... ESCAPE), which SQLite's would read as 0.
				p.refuse("substring by a regular expression (SIMILAR, or a pattern after FROM)")
				return
			}
		}
	case name == "round" && len(f.Args) == 2, name == "trunc" && len(f.Args) == 2:
	case name == "round" && len(f.Args) == 1 && p.argKind(f.Args[0]) == "float8":
		// round(double precision) rounds half to even (rint); SQLite's,
		// as numeric's, half away from zero.
		fn = "pg_rint"
	case !ok:
		err := sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", name)
		err.Hint = "The embedded engine (SQLite) has the PostgreSQL functions docs/guide.md lists; the PostgreSQL engine (--engine postgres) has them all."
		p.fail(err)
		return
	}
	if textFunctions[name] && len(f.Args) > 0 {
		if k := p.argKind(f.Args[0]); nonTextKinds[k] != "" {
			// PostgreSQL has no implicit cast to text: length(42) is
			// no function of its, where SQLite's would read "42".
			err := sqlerr.New(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, p.argTypeNames(f.Args))
			err.Hint = "No function matches the given name and argument types. You might need to add explicit type casts."
			p.fail(err)
			return
		}
	}
	switch {
	case f.AggWithinGroup:
		p.refuse("WITHIN GROUP")
	case f.FuncVariadic:
		p.refuse("VARIADIC")
	}
	for _, a := range f.Args {
		if a.GetNamedArgExpr() != nil {
			p.refuse("named arguments")
		}
	}
	p.w(fn, "(")
	switch {
	case f.AggStar:
		p.w("*")
	case f.AggDistinct:
		p.w("DISTINCT ")
		fallthrough
	default:
		p.list(f.Args, p.expr)
		if fn == "coalesce" && len(f.Args) == 1 {
			p.w(", NULL")
		}
	}
	if len(f.AggOrder) > 0 {
		p.orderBy(f.AggOrder)
	}
	p.w(")")
	if f.AggFilter != nil {
		p.w(" FILTER (WHERE ")
		p.expr(f.AggFilter)
		p.w(")")
	}
	if f.Over != nil {
		p.w(" OVER ")
		if f.Over.Name != "" {
			p.ident(f.Over.Name)
			return
		}
		p.windowSpec(f.Over)
	}
}

// argKind is the kind of a function's argument where the statement says
// it (valueKind), or a subquery's column's.
func (p *printer) argKind(n *pg_query.Node) string {
	if k, _ := valueKind(n); k != "" {
		return k
	}
	return p.knownType(n)
}

// functionName is a function's name without a pg_catalog qualifier.
func functionName(nodes []*pg_query.Node) string {
	parts := names(nodes)
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return strings.Join(parts, ".")
}

// frameNonDefault is PostgreSQL's FRAMEOPTION_NONDEFAULT: the window has a
// frame clause of its own.
const frameNonDefault = 0x1

func (p *printer) windowSpec(wd *pg_query.WindowDef) {
	if wd.FrameOptions&frameNonDefault != 0 {
		p.refuse("window frame clauses")
	}
	p.w("(")
	sep := ""
	if wd.Refname != "" {
		p.ident(wd.Refname)
		sep = " "
	}
	if len(wd.PartitionClause) > 0 {
		p.w(sep, "PARTITION BY ")
		p.list(wd.PartitionClause, p.expr)
		sep = " "
	}
	if len(wd.OrderClause) > 0 {
		p.w(sep)
		p.orderBy(wd.OrderClause)
	}
	p.w(")")
}

// rangeFunction writes a function in FROM. generate_series over integers
// is the only one: a recursive query of its rows, named as PostgreSQL
// names them.
func (p *printer) rangeFunction(rf *pg_query.RangeFunction) {
	if rf.Lateral || rf.Ordinality || rf.IsRowsfrom || len(rf.Functions) != 1 || len(rf.Coldeflist) > 0 {
		p.refuse("this function in FROM")
		return
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		p.refuse("this function in FROM")
		return
	}
	f := items[0].GetFuncCall()
	name := functionName(f.Funcname)
	// PostgreSQL names the one column after the alias, else the function.
	table, column := name, name
	if rf.Alias != nil {
		table, column = rf.Alias.Aliasname, rf.Alias.Aliasname
		if len(rf.Alias.Colnames) == 1 {
			column = rf.Alias.Colnames[0].GetString_().GetSval()
		} else if len(rf.Alias.Colnames) > 1 {
			p.refuse("more than one column name for " + name)
		}
	}
	if _, scalar := sqliteFunctions[name]; scalar && !aggregates[name] {
		// A function of one value in FROM is a table of one row.
		p.w("(SELECT ")
		p.funcCall(f)
		p.w(" AS ", quoteIdent(column), ") AS ", quoteIdent(table))
		return
	}
	if name != "generate_series" || len(f.Args) < 2 || len(f.Args) > 3 {
		p.refuse("function " + name + " in FROM")
		return
	}
	step, down := "1", false
	if len(f.Args) == 3 {
		c := f.Args[2].GetAConst()
		if c == nil || c.GetIval() == nil || c.GetIval().Ival == 0 {
			p.refuse("generate_series with a step that is not a non-zero integer constant")
			return
		}
		down = c.GetIval().Ival < 0
		p.fixed = true // the step's sign decides the comparison
		step = p.sub(func() { p.expr(f.Args[2]) })
	}
	start := p.sub(func() { p.call("pg_cast", f.Args[0], pg_query.MakeAConstStrNode("int8", 0)) })
	stop := p.sub(func() { p.call("pg_cast", f.Args[1], pg_query.MakeAConstStrNode("int8", 0)) })
	cmp := " <= "
	if down {
		cmp = " >= "
	}
	// (WITH RECURSIVE s(v) AS (SELECT start UNION ALL SELECT v+step FROM s
	// WHERE v+step <= stop) SELECT v AS column FROM s WHERE v <= stop)
	p.w("(WITH RECURSIVE \"series\"(\"v\") AS (SELECT ", start, " UNION ALL SELECT \"v\" + ", step,
		" FROM \"series\" WHERE \"v\" + ", step, cmp, stop, ") SELECT \"v\" AS ", quoteIdent(column),
		" FROM \"series\" WHERE \"v\"", cmp, stop, ") AS ", quoteIdent(table))
}

// sub returns what f prints, without printing it. Holes cannot be told
// in it: the statement gets no template.
func (p *printer) sub(f func()) string {
	p.fixed = true
	saved := p.b
	p.b = strings.Builder{}
	f()
	out := p.b.String()
	p.b = saved
	return out
}

// argTypeNames names the types of args as PostgreSQL's messages do
// (integer, unknown for a string constant), or the first alone where
// another's is not known here.
func (p *printer) argTypeNames(args []*pg_query.Node) string {
	names := make([]string, len(args))
	for i, a := range args {
		k := p.argKind(a)
		switch c := a.GetAConst(); {
		case nonTextKinds[k] != "":
			names[i] = nonTextKinds[k]
		case c != nil && c.GetSval() != nil:
			names[i] = "unknown"
		case k == "text":
			names[i] = "text"
		default:
			return nonTextKinds[p.argKind(args[0])]
		}
	}
	return strings.Join(names, ", ")
}
