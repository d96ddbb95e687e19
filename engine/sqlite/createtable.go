package sqlite

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/sqlerr"
)

// translateCreateTable rewrites a PostgreSQL CREATE TABLE so that SQLite
// means by it what PostgreSQL does where replication depends on it:
//
//   - every primary-key column gets NOT NULL, which PostgreSQL implies and
//     SQLite does not (keys.go: a row whose key holds NULL is never
//     replicated);
//   - a key column declared "integer" is declared INT: SQLite makes an
//     INTEGER PRIMARY KEY the rowid, which takes a NULL or omitted key as a
//     request for the next free value (two nodes would hand out the same),
//     where PostgreSQL refuses it with 23502;
//   - columns whose values PostgreSQL generates (SERIAL, BIGSERIAL,
//     SMALLSERIAL, GENERATED ... AS IDENTITY) become integer columns with
//     NOT NULL DEFAULT (nextval('table_column_seq')), whose values no two
//     nodes hand out twice (sequence.go). An identity column's default
//     says more: nextval('table_column_seq', 'always' or 'by default',
//     first value, maximum value). The schema is then all there is to
//     know about it, on every node and in every snapshot: the sequence
//     starts at the first value (syncSequences), and statements that give
//     a GENERATED ALWAYS column a value of their own are refused
//     (identity.go). The identity options are checked as PostgreSQL does;
//     those certa's sequences cannot honour are refused (identityBounds).
//
// Statements PostgreSQL's parser does not read as a CREATE TABLE with
// columns are returned unchanged; keys.go checks the table they make. The
// rewrite is idempotent, so a translated statement may be translated again
// (and is, when the log replicates it to the other nodes).
func translateCreateTable(sql string) (string, error) {
	ct := pgparse.ParseCreateTable(sql)
	if ct == nil {
		return sql, nil
	}
	type edit struct {
		at, end int // replace sql[at:end]
		text    string
	}
	var edits []edit
	if ct.TailRefused != "" {
		return "", sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TABLE with %s is not supported by the embedded SQLite engine (the PostgreSQL engine supports it)", ct.TailRefused)
	}
	if ct.Temp {
		// SQLite knows CREATE TEMP TABLE, not LOCAL nor schema pg_temp.
		prefix := "CREATE TEMP TABLE "
		if ct.IfNotExists {
			prefix += "IF NOT EXISTS "
		}
		edits = append(edits, edit{0, ct.NameSpan.End, prefix + quoteIdent(ct.Table)})
	}
	if ct.Tail.End > ct.Tail.Start {
		// Storage parameters and TABLESPACE: PostgreSQL's storage, which
		// SQLite has no part of.
		edits = append(edits, edit{ct.Tail.Start, ct.Tail.End, ""})
	}
	fullChecks, err := matchFullChecks(sql, ct.Table)
	if err != nil {
		return "", err
	}
	for _, col := range ct.Columns {
		if err := refusedColumn(col); err != nil {
			return "", err
		}
		notNull := col.PrimaryKey
		seq := ""
		_, serial := generatedTypes[col.Type]
		switch {
		case col.Identities > 1:
			return "", sqlerr.New(sqlerr.SyntaxError, "multiple identity specifications for column %q of table %q", col.Name, ct.Table)
		case col.Identity != nil && (col.Default || serial):
			return "", sqlerr.New(sqlerr.SyntaxError, "both default and identity specified for column %q of table %q", col.Name, ct.Table)
		}
		if ct.Temp && (serial || col.Identity != nil) {
			return "", sqlerr.New(sqlerr.FeatureNotSupported, "serial and identity columns of temporary tables are not supported by the SQLite engine (column %q)", col.Name)
		}
		if typ, ok := generatedTypes[col.Type]; ok {
			seq = sequenceFor(ct.Table, col.Name)
			edits = append(edits, edit{col.TypeWord.Start, col.TypeWord.End, typ})
			edits = append(edits, edit{col.End, col.End, " DEFAULT (nextval(" + seq + "))"})
			notNull = true
		}
		if id := col.Identity; id != nil {
			start, max, err := identityBounds(col.Type, id.Options)
			if err != nil {
				return "", err
			}
			seq = sequenceFor(ct.Table, col.Name)
			kind := identityByDefault
			if id.Always {
				kind = identityAlways
			}
			edits = append(edits, edit{id.Start, id.End, fmt.Sprintf("DEFAULT (nextval(%s, '%s', %d, %d))", seq, kind, start, max)})
			notNull = true
		}
		if w := col.TypeWord; col.PrimaryKey && !serial && strings.EqualFold(sql[w.Start:w.End], "integer") {
			edits = append(edits, edit{w.Start, w.End, "INT"})
		}
		if w, ok := numericWord(sql, col); ok {
			edits = append(edits, edit{w.Start, w.End, numericType})
		}
		if notNull && !col.NotNull {
			edits = append(edits, edit{col.End, col.End, " NOT NULL"})
		}
		for _, c := range append(typeChecks(col), missingChecks(col, fullChecks[col.Name])...) {
			edits = append(edits, edit{col.End, col.End, c})
		}
		if d, ok, err := columnDefault(sql, col); err != nil {
			return "", err
		} else if ok {
			edits = append(edits, edit{d.Start, d.End, d.text})
		}
	}
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
	for _, e := range edits {
		sql = sql[:e.at] + e.text + sql[e.end:]
	}
	return sql, nil
}

// translateChecks writes the conditions of a client's CREATE TABLE's CHECK
// constraints in SQLite's SQL (pgparse.CheckToSQLite), once, where the
// statement comes in: the statement replicated holds them translated, and
// so does a definition read back from SQLite.
//
// An unnamed CHECK gets the name PostgreSQL would give it (CheckBaseName,
// then a number where taken): SQLite reports a violated constraint by its
// name, and one it has none for by the name of a column constraint
// before it (a type's check: the wrong error).
func translateChecks(sql string) (string, error) {
	ct := pgparse.ParseCreateTable(sql)
	if ct == nil {
		return sql, nil
	}
	var checks []pgparse.Constraint
	taken := map[string]bool{}
	for _, col := range ct.Columns {
		for _, k := range col.Constraints {
			taken[k.Name] = true
			if k.Kind == pgparse.ConstraintCheck {
				checks = append(checks, k)
			}
		}
	}
	for _, k := range ct.Constraints {
		taken[k.Name] = true
		if k.Kind == pgparse.ConstraintCheck {
			checks = append(checks, k)
		}
	}
	names := map[int]string{} // by the offset of an unnamed CHECK
	for _, k := range checks {
		if k.Name != "" || k.Condition.End <= k.Condition.Start || len(sql)-k.Start < 5 || !strings.EqualFold(sql[k.Start:k.Start+5], "check") {
			continue // named, or its span is not the CHECK itself
		}
		base := pgparse.CheckBaseName(ct.Table, sql[k.Condition.Start:k.Condition.End])
		name := base
		for n := 1; taken[name]; n++ {
			name = fmt.Sprintf("%s%d", base, n)
		}
		taken[name], names[k.Start] = true, name
	}
	sort.Slice(checks, func(i, j int) bool { return checks[i].Start > checks[j].Start })
	for _, k := range checks {
		c := k.Condition
		if c.End <= c.Start {
			continue
		}
		text, err := pgparse.CheckToSQLite(sql[c.Start:c.End])
		if err != nil {
			return "", err
		}
		sql = sql[:c.Start] + text + sql[c.End:]
		if name, ok := names[k.Start]; ok {
			sql = sql[:k.Start] + "CONSTRAINT " + quoteIdent(name) + " " + sql[k.Start:]
		}
	}
	return sql, nil
}

// refusedTypes are PostgreSQL types whose names SQLite's affinity reads
// as integer ones (INTERVAL and POINT hold INT): a column of one, made
// before columns of types outside keptTypes were refused, is read as
// text (declaredType).
var refusedTypes = map[string]bool{
	"interval": true, "money": true, "point": true, "line": true, "lseg": true, "box": true, "path": true,
	"polygon": true, "circle": true, "int4range": true, "int8range": true, "numrange": true,
	"tsrange": true, "tstzrange": true, "daterange": true, "int4multirange": true, "int8multirange": true,
}

// keptTypes are the column types (pgparse.Column.Type) whose values the
// embedded engine keeps as PostgreSQL does: what PostgreSQL's input
// refuses is refused (typeChecks), and each value is kept in one form
// (storedform.go), so that it compares, sorts and reads back as in
// PostgreSQL. A column of any other type is refused: SQLite would keep
// whatever text it is given, unchecked, and compare it as text (an inet
// '10.0.0.1/32' apart from '10.0.0.1'), or compute with it as another
// type (real is float8 in SQLite, with other results than float4's).
var keptTypes = map[string]bool{
	"bool": true, "int2": true, "int4": true, "int8": true, "numeric": true, "float8": true,
	"serial": true, "serial2": true, "serial4": true, "serial8": true, "smallserial": true, "bigserial": true,
	"text": true, "varchar": true, "bpchar": true, "bytea": true, "uuid": true, "json": true, "jsonb": true,
	"date": true, "time": true, "timestamp": true, "timestamptz": true,
	strings.ToLower(numericType): true, // numeric as translateCreateTable writes it
}

// otherTypes are PostgreSQL 15's other built-in types a column may have,
// which the engine refuses as not supported (0A000) rather than as
// unknown (42704).
var otherTypes = strings.Fields(`char name int2vector regproc oid tid xid cid oidvector xml pg_node_tree
	pg_ndistinct pg_dependencies pg_mcv_list xid8 point lseg path box polygon line float4 circle money
	macaddr inet cidr macaddr8 aclitem interval timetz bit varbit refcursor regprocedure regoper
	regoperator regclass regcollation regtype regrole regnamespace pg_lsn tsvector gtsvector tsquery
	regconfig regdictionary jsonpath txid_snapshot pg_snapshot int4range numrange tsrange tstzrange
	daterange int8range int4multirange nummultirange tsmultirange tstzmultirange datemultirange
	int8multirange`)

// typeNames are the SQL names of types whose internal names a client may
// not know (real for float4).
var typeNames = map[string]string{"float4": "real", "timetz": "time with time zone", "varbit": "bit varying", "bpchar": "character"}

// keptArrays are the element types of the array columns the engine
// keeps, as their text; without a length (varchar[]): one per element
// would go unchecked.
var keptArrays = map[string]bool{"text": true, "varchar": true}

// timePrecision is the only fractional precision of time, timestamp and
// timestamptz columns the engine keeps: PostgreSQL's default
// (microseconds). A column of less would round what it is given.
const timePrecision = 6

// refusedType refuses a column of col's type unless the engine keeps it
// (keptTypes): 42704 for a name that is no PostgreSQL type (SQLite's
// BLOB or DATETIME), 0A000 for one the engine does not keep.
func refusedType(col pgparse.Column) error {
	typ := col.Type
	if col.Array {
		typ += "[]"
	}
	switch {
	case col.Array && keptArrays[col.Type] && len(col.TypeMods) == 0, !col.Array && keptTypes[col.Type] && !timeRounds(col):
		return nil
	case !col.Array && keptTypes[col.Type]:
		err := sqlerr.New(sqlerr.FeatureNotSupported, "columns of type %s(%d) are not supported by the embedded SQLite engine: it keeps %d fractional digits of seconds", col.Type, col.TypeMods[0], timePrecision)
		err.Hint = fmt.Sprintf("Declare the column %s (or %s(%d)), and round values where they are written.", col.Type, col.Type, timePrecision)
		return err
	}
	if !keptTypes[col.Type] && !slices.Contains(otherTypes, col.Type) {
		return sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", col.Type)
	}
	if name, ok := typeNames[col.Type]; ok && !col.Array {
		typ = name
	}
	err := sqlerr.New(sqlerr.FeatureNotSupported, "columns of type %s are not supported by the embedded SQLite engine", typ)
	err.Hint = "Its types are boolean, smallint, integer, bigint, numeric, double precision, text, varchar, char, bytea, uuid, json, jsonb, date, time, timestamp, timestamptz, and arrays of text. The PostgreSQL engine (--engine postgres) has every PostgreSQL type."
	return err
}

// timeRounds reports whether col is a time, timestamp or timestamptz
// column of another precision than timePrecision.
func timeRounds(col pgparse.Column) bool {
	switch col.Type {
	case "time", "timestamp", "timestamptz":
		return len(col.TypeMods) == 1 && col.TypeMods[0] != timePrecision
	}
	return false
}

// refusedAddColumn refuses an ALTER TABLE ... ADD COLUMN of a column the
// engine does not keep (refusedColumn).
func refusedAddColumn(sql string) error {
	if col := pgparse.ParseAddColumn(sql); col != nil {
		return refusedColumn(*col)
	}
	return nil
}

// refusedColumn refuses a column the engine does not keep as PostgreSQL
// does: one of a type it does not keep (refusedType), or a generated
// column. SQLite's generated columns differ from PostgreSQL's where
// clients see it: they may read other generated columns, are left out of
// an INSERT's rows without a column list, and take no DEFAULT.
func refusedColumn(col pgparse.Column) error {
	if col.Generated {
		err := sqlerr.New(sqlerr.FeatureNotSupported, "generated columns (column %q) are not supported by the embedded SQLite engine", col.Name)
		err.Hint = "Compute the value in the statements that write the row, or in a view. The PostgreSQL engine (--engine postgres) has generated columns."
		return err
	}
	return refusedType(col)
}

// translateAddColumn gives a column that ALTER TABLE ... ADD COLUMN adds
// the CHECK constraints of its type (typeChecks), as CREATE TABLE does.
// Other statements are returned unchanged; so is one translated already.
func translateAddColumn(sql string) string {
	col := pgparse.ParseAddColumn(sql)
	if col == nil {
		return sql
	}
	// Edits from the end: each leaves the places before it as they were.
	out := sql[:col.End] + strings.Join(typeChecks(*col), "") + sql[col.End:]
	if d, ok, err := columnDefault(sql, *col); err == nil && ok {
		out = out[:d.Start] + d.text + out[d.End:]
	}
	if w, ok := numericWord(sql, *col); ok {
		out = out[:w.Start] + numericType + out[w.End:]
	}
	return out
}

// defaultEdit is a column default printed for SQLite, and where it goes.
type defaultEdit struct {
	pgparse.Span
	text string
}

// columnDefault prints col's DEFAULT expression for SQLite (pgparse's
// DefaultToSQLite), converted to the column's type; ok is false when it
// stays as written.
func columnDefault(sql string, col pgparse.Column) (defaultEdit, bool, error) {
	for _, k := range col.Constraints {
		if k.Kind != pgparse.ConstraintDefault || k.Default.End <= k.Default.Start {
			continue
		}
		expr := sql[k.Default.Start:k.Default.End]
		kind, mods, err := pgparse.CastKind(col.Type)
		if err != nil {
			kind = ""
		}
		if lit, ok, err := defaultString(expr, kind, mods); err != nil || ok {
			return defaultEdit{k.Default, " " + lit}, ok, err
		}
		text, err := pgparse.DefaultToSQLite(expr, kind)
		if err != nil || text == expr {
			return defaultEdit{}, false, err
		}
		return defaultEdit{k.Default, " " + text}, true, nil
	}
	return defaultEdit{}, false, nil
}

// defaultString reads a default that is a string constant as its
// column's type (kind, with mods) reads it, as PostgreSQL does when the
// default is made: it returns the value as SQL that SQLite and the
// catalog (pg_get_expr, pg_dump) both read as that value (' 7 ' for an
// integer is 7, 'yes' for a boolean true), or the refusal of text the
// type does not read ('wrong' for an integer: 22P02), rather than fail
// when a row first takes it. ok is false for any other default.
func defaultString(expr, kind string, mods []int64) (sql string, ok bool, err error) {
	text, ok := pgparse.DefaultString(expr)
	if !ok || kind == "" || kind == "text" {
		return "", false, nil
	}
	v, err := castValue(sqlite.TextValue(text), castTarget{kind: kind, mods: mods})
	if err != nil {
		return "", false, err
	}
	switch {
	case kind == "bool" && v.Type() == sqlite.TypeInteger:
		return strconv.FormatBool(v.Int64() != 0), true, nil
	case v.Type() == sqlite.TypeInteger:
		return strconv.FormatInt(v.Int64(), 10), true, nil
	case v.Type() == sqlite.TypeFloat && !math.IsInf(v.Float(), 0) && !math.IsNaN(v.Float()):
		return strconv.FormatFloat(v.Float(), 'g', -1, 64), true, nil
	case v.Type() == sqlite.TypeText:
		return quoteLiteral(v.Text()), true, nil
	}
	// Infinity, bytea: converted when used, shown as 'x'::kind.
	return "(pg_cast(" + quoteLiteral(text) + ", " + quoteLiteral(kind) + "))", true, nil
}

// numericWord returns the span of a numeric or decimal column's type name,
// which SQLite is given as numericType (numeric.go).
func numericWord(sql string, col pgparse.Column) (pgparse.Span, bool) {
	w := col.TypeWord
	word := strings.ToLower(sql[w.Start:w.End])
	return w, col.Type == "numeric" && (word == "numeric" || word == "decimal")
}

// typeChecks returns the CHECK constraints that make SQLite refuse what
// PostgreSQL's column type refuses and SQLite would store: a string longer
// than varchar(n) or char(n) allows (22001), an integer out of the range of
// smallint or integer (22003; SQLite's integers are all 64 bits), a
// numeric that is no number (22P02) or too large for numeric(p,s) (22003).
// SQLite keeps a numeric with a fraction as a double, so values it cannot
// keep exactly are refused too (0A000; PostgreSQL would keep them): more
// than 15 significant digits, or more decimals than numeric(p,s)'s scale
// (PostgreSQL rounds those; here the client must round). Each
// constraint is named with PostgreSQL's message, which SQLite reports and
// mapErr turns back into its SQLSTATE (typeCheckCode). A column that
// already has the constraint (a statement translated again) gets none.
func typeChecks(col pgparse.Column) []string {
	return missingChecks(col, typeConditions(col))
}

// typeConditions returns typeChecks' constraints as (name, condition).
func typeConditions(col pgparse.Column) [][2]string {
	if col.Array {
		return nil // kept as their text
	}
	q := quoteIdent(col.Name)
	var named [][2]string // name, condition
	switch {
	case col.Type == "bool":
		// A boolean is kept as 1 or 0 (storedform.go writes constants so);
		// anything else would compare unequal to true and false both.
		named = append(named, [2]string{boolKept,
			fmt.Sprintf("typeof(%s) = 'null' OR (typeof(%s) = 'integer' AND %s IN (0, 1))", q, q, q)})
	case col.Type == "float8":
		// SQLite's REAL affinity keeps text that is no number as text.
		named = append(named, [2]string{"invalid input syntax for type double precision", fmt.Sprintf("typeof(%s) IN ('real', 'integer', 'null')", q)})
	case col.Type == "json" || col.Type == "jsonb":
		named = append(named, [2]string{"invalid input syntax for type json", fmt.Sprintf("%s IS NULL OR json_valid(%s)", q, q)})
	case col.Type == "varchar" && len(col.TypeMods) == 1:
		n := col.TypeMods[0]
		named = append(named, [2]string{fmt.Sprintf("value too long for type character varying(%d)", n), fmt.Sprintf("length(%s) <= %d", q, n)})
	case col.Type == "bpchar" && len(col.TypeMods) == 1:
		n := col.TypeMods[0]
		named = append(named, [2]string{fmt.Sprintf("value too long for type character(%d)", n), fmt.Sprintf("length(%s) <= %d", q, n)})
	case col.Type == "int4" || col.Type == "serial" || col.Type == "serial4":
		named = append(named, integerSyntax(q, "integer"),
			[2]string{"integer out of range", fmt.Sprintf("typeof(%s) <> 'integer' OR %s BETWEEN %d AND %d", q, q, math.MinInt32, math.MaxInt32)})
	case col.Type == "int2" || col.Type == "smallserial" || col.Type == "serial2":
		named = append(named, integerSyntax(q, "smallint"),
			[2]string{"smallint out of range", fmt.Sprintf("typeof(%s) <> 'integer' OR %s BETWEEN %d AND %d", q, q, math.MinInt16, math.MaxInt16)})
	case col.Type == "int8" || col.Type == "bigserial" || col.Type == "serial8":
		named = append(named, integerSyntax(q, "bigint"))
	case col.Type == "date":
		// SQLite keeps any text; PostgreSQL keeps a date (and reads more
		// forms of one than the embedded engine does).
		named = append(named, [2]string{dateForm, fmt.Sprintf("%s IS NULL OR %s IN ('infinity', '-infinity') OR date(%s) IS %s", q, q, q, q)})
	case col.Type == "bytea":
		// Text given for a bytea column would be kept as text, not as
		// the bytes PostgreSQL reads from it.
		named = append(named, [2]string{byteaText, fmt.Sprintf("typeof(%s) <> 'text'", q)})
	case col.Type == "numeric" || col.Type == numericType:
		named = append(named,
			[2]string{numericSyntax, fmt.Sprintf("%s IS NULL OR typeof(%s) IN ('integer', 'real')", q, q)},
			[2]string{numericDigits, fmt.Sprintf("typeof(%s) <> 'real' OR %s = printf('%%.15g', %s) + 0", q, q, q)})
		// Every integer below 2^53 is a double exactly; a larger one given
		// (an integer of 16 or more digits, from anywhere) may have become
		// another number before the check above sees it.
		magnitude := [2]string{numericMagnitude, fmt.Sprintf("typeof(%s) <> 'real' OR abs(%s) < 9007199254740992", q, q)}
		if len(col.TypeMods) == 0 {
			named = append(named, magnitude)
			break
		}
		p, scale := col.TypeMods[0], int64(0)
		if len(col.TypeMods) > 1 {
			scale = col.TypeMods[1]
		}
		if p-scale > 15 {
			named = append(named, magnitude)
		}
		if p-scale <= 308 { // a double has no larger magnitudes
			named = append(named, [2]string{numericOverflow, fmt.Sprintf("%s IS NULL OR abs(%s) < 1e%d", q, q, p-scale)})
		}
		named = append(named, [2]string{fmt.Sprintf("%s%d,%d) keeps: round it to %d places first", numericScalePrefix, p, scale, scale),
			fmt.Sprintf("typeof(%s) <> 'real' OR %s = round(%s, %d)", q, q, q, scale)})
	}
	return named
}

// integerSyntax is the constraint that refuses what an integer column's
// affinity left a fraction or text ('34.5', 'abc'), which PostgreSQL's
// integer input refuses: SQLite would keep it as it came.
func integerSyntax(q, typ string) [2]string {
	return [2]string{"invalid input syntax for type " + typ, fmt.Sprintf("typeof(%s) IN ('integer', 'null')", q)}
}

// boolKept names a boolean column's constraint (typeChecks): a string
// or a number other than 0 and 1 that reached it other than as a
// constant of VALUES or SET or a parameter (INSERT ... SELECT 'yes').
const boolKept = "boolean value that is not true or false: the embedded engine reads a string as a boolean only as a constant in VALUES or SET, or as a parameter"

// dateForm names a date column's constraint (typeChecks).
const dateForm = "date value not in the form the embedded engine keeps: write it as YYYY-MM-DD (a valid date)"

// byteaText names a bytea column's constraint (typeChecks).
const byteaText = `bytea value given as text: write '\\x…'::bytea, or send it as a bytea parameter`

// Names of the numeric column's constraints (typeChecks).
const (
	numericSyntax      = "invalid input syntax for type numeric"
	numericOverflow    = "numeric field overflow"
	numericDigits      = "numeric value with more than 15 significant digits: the embedded engine keeps no more exactly"
	numericMagnitude   = "numeric value of 2^53 (9007199254740992) or more: the embedded engine keeps no larger exactly"
	numericScalePrefix = "numeric value with more decimal places than numeric("
)

// truncatedIdent is name as PostgreSQL's parser reads it: at most 63
// bytes, cut at a character boundary. (SQLite keeps, and reports, the
// whole name.)
func truncatedIdent(name string) string {
	if len(name) <= 63 {
		return name
	}
	n := 63
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// missingChecks returns the column constraints that declare named's
// (name, condition) CHECK constraints, but for those col has already.
func missingChecks(col pgparse.Column, named [][2]string) []string {
	var out []string
	for _, nc := range named {
		if !slices.Contains(col.Checks, nc[0]) && !slices.Contains(col.Checks, truncatedIdent(nc[0])) {
			out = append(out, fmt.Sprintf(" CONSTRAINT %s CHECK (%s)", quoteIdent(nc[0]), nc[1]))
		}
	}
	return out
}

// typeCheckCode is the SQLSTATE of a constraint typeChecks made, given
// its name, or "".
func typeCheckCode(name string) string {
	switch {
	case strings.HasPrefix(name, "value too long for type "):
		return sqlerr.StringDataRightTruncation
	case name == "integer out of range", name == "smallint out of range", name == numericOverflow:
		return sqlerr.NumericValueOutOfRange
	case name == numericSyntax, strings.HasPrefix(name, "invalid input syntax for type "):
		return sqlerr.InvalidTextRepresentation
	case name == numericDigits, name == numericMagnitude, strings.HasPrefix(name, numericScalePrefix), name == byteaText, name == dateForm, name == boolKept:
		return sqlerr.FeatureNotSupported
	}
	return ""
}

// The kinds of identity column, as an identity column's default names
// them (createtable.go writes them, parseSequenceDefault reads them).
const (
	identityAlways    = "always"
	identityByDefault = "by default"
)

// identityBounds checks an identity column's type and sequence options as
// PostgreSQL does (22023 for values it refuses) and returns the sequence's
// first and largest value. certa's sequences count up by one from their
// first value, in blocks each node reserves (sequence.go), so options that
// would change that are refused (0A000, naming the option); MINVALUE only
// bounds START, and CACHE changes nothing a client can tell (PostgreSQL's
// cache, like certa's blocks, only leaves gaps).
func identityBounds(typ string, opts []pgparse.SeqOption) (start, max int64, err error) {
	var min int64 = 1
	switch typ {
	case "int2":
		max = math.MaxInt16
	case "int4":
		max = math.MaxInt32
	case "int8":
		max = math.MaxInt64
	default:
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
	}
	typeName := map[string]string{"int2": "smallint", "int4": "integer", "int8": "bigint"}[typ]
	typeMin := -max - 1
	seen := map[string]bool{}
	hasStart := false
	for _, o := range opts {
		if seen[o.Name] {
			return 0, 0, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options")
		}
		seen[o.Name] = true
		switch o.Name {
		case "start", "increment", "minvalue", "maxvalue", "cache":
			if !o.HasValue && (o.Name != "minvalue" && o.Name != "maxvalue") {
				return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "identity option %s needs an integer value", strings.ToUpper(o.Name))
			}
		}
		switch o.Name {
		case "start":
			start, hasStart = o.Value, true
		case "increment":
			if o.Value == 0 {
				return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "INCREMENT must not be zero")
			}
			if o.Value != 1 {
				return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported,
					"identity option INCREMENT BY %d is not supported: certa's sequences count up by 1", o.Value)
			}
		case "minvalue":
			if o.HasValue {
				if o.Value < typeMin || o.Value > max {
					return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "MINVALUE (%d) is out of range for sequence data type %s", o.Value, typeName)
				}
				min = o.Value
			}
		case "maxvalue":
			if o.HasValue {
				if o.Value < typeMin || o.Value > max {
					return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "MAXVALUE (%d) is out of range for sequence data type %s", o.Value, typeName)
				}
				max = o.Value
			}
		case "cache":
			if o.Value <= 0 {
				return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "CACHE (%d) must be greater than zero", o.Value)
			}
		case "cycle":
			if o.Cycle {
				return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported,
					"identity option CYCLE is not supported: certa's sequences never hand out a value twice")
			}
		case "as":
			// The column's type is the sequence's: PostgreSQL refuses
			// another.
			return 0, 0, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options")
		default:
			name := map[string]string{"sequence_name": "SEQUENCE NAME", "owned_by": "OWNED BY"}[o.Name]
			if name == "" {
				name = strings.ToUpper(o.Name)
			}
			return 0, 0, sqlerr.New(sqlerr.FeatureNotSupported, "identity option %s is not supported", name)
		}
	}
	if min >= max {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", min, max)
	}
	if !hasStart {
		start = min
	}
	if start < min {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "START value (%d) cannot be less than MINVALUE (%d)", start, min)
	}
	if start > max {
		return 0, 0, sqlerr.New(sqlerr.InvalidParameterValue, "START value (%d) cannot be greater than MAXVALUE (%d)", start, max)
	}
	return start, max, nil
}

// generatedTypes maps PostgreSQL's type names that give a column a
// sequence to the integer type it has. INT, not INTEGER: an INTEGER PRIMARY
// KEY would be SQLite's rowid, which fills in a NULL itself.
var generatedTypes = map[string]string{
	"serial": "INT", "serial4": "INT", "bigserial": "BIGINT", "serial8": "BIGINT",
	"smallserial": "SMALLINT", "serial2": "SMALLINT",
}

// sequenceFor is the quoted name of the sequence of a generated column, as
// PostgreSQL names it.
func sequenceFor(table, column string) string {
	return "'" + strings.ReplaceAll(table+"_"+column+"_seq", "'", "''") + "'"
}
