package pgparse

import (
	"slices"
	"strconv"
	"strings"

	"certa/pgtext"
	"certa/sqlerr"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Copy is a COPY statement whose data travels to or from the client
// (FROM STDIN, TO STDOUT).
type Copy struct {
	From    bool     // FROM STDIN; else TO STDOUT
	Binary  bool     // in binary format; else text or csv
	Schema  string   // the table's schema as written ("" : the search path); empty with Query
	Table   string   // the table; empty for COPY (query) TO STDOUT
	Columns []string // the columns listed (none: every column of the table)
	Query   string   // the query of COPY (query) TO STDOUT
	// Options are the options as written, in order (TextFormat reads them).
	Options []CopyOption
	Where   bool // COPY FROM ... WHERE
}

// CopyOption is one option of a COPY: its name, and its value as text or
// as a list of column names (FORCE_QUOTE *: List is ["*"]).
type CopyOption struct {
	Name  string
	Value string
	List  []string
}

// Freeze reports whether the COPY has the FREEZE option (unless set off).
func (c Copy) Freeze() bool {
	for _, o := range c.Options {
		if strings.EqualFold(o.Name, "freeze") {
			switch strings.ToLower(o.Value) {
			case "false", "off", "0", "no":
				return false
			}
			return true
		}
	}
	return false
}

// ParseCopy returns the COPY of sql if sql is one COPY statement to or
// from the client; ok is false for anything else (a COPY of a file or a
// program is the server's). Cheap for other statements: COPY must come
// first.
func ParseCopy(sql string) (c Copy, ok bool) {
	s := strings.TrimLeft(sql, " \t\r\n")
	if len(s) < 4 || !strings.EqualFold(s[:4], "copy") {
		return c, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return c, false
	}
	cs := tree.Stmts[0].Stmt.GetCopyStmt()
	if cs == nil || cs.Filename != "" || cs.IsProgram {
		return c, false
	}
	c = Copy{From: cs.IsFrom, Where: cs.WhereClause != nil}
	for _, a := range cs.Attlist {
		c.Columns = append(c.Columns, a.GetString_().GetSval())
	}
	for _, o := range cs.Options {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		opt := CopyOption{Name: d.Defname, Value: optionText(d.Arg)}
		for _, item := range d.Arg.GetList().GetItems() {
			opt.List = append(opt.List, item.GetString_().GetSval())
		}
		if d.Arg.GetAStar() != nil {
			opt.List = []string{"*"}
		}
		if opt.Name == "format" && strings.EqualFold(opt.Value, "binary") {
			c.Binary = true
		}
		c.Options = append(c.Options, opt)
	}
	if cs.Relation != nil {
		c.Schema, c.Table = cs.Relation.Schemaname, cs.Relation.Relname
	}
	if cs.Query != nil {
		q, err := pg_query.Deparse(&pg_query.ParseResult{Version: tree.Version, Stmts: []*pg_query.RawStmt{{Stmt: cs.Query}}})
		if err != nil {
			return Copy{}, false
		}
		c.Query = q
	}
	return c, true
}

// optionText is an option's value as text: a string, a number, or a
// boolean as "true"/"false"; "" for none or a list.
func optionText(n *pg_query.Node) string {
	switch {
	case n == nil:
		return ""
	case n.GetString_() != nil:
		return n.GetString_().GetSval()
	case n.GetBoolean() != nil:
		return strconv.FormatBool(n.GetBoolean().GetBoolval())
	case n.GetInteger() != nil:
		return strconv.Itoa(int(n.GetInteger().GetIval()))
	}
	return ""
}

// TextFormat returns the row format of a COPY in text or CSV form whose
// columns are columns (those listed, or the table's), as PostgreSQL reads
// its options, or the error PostgreSQL gives for them. Options of
// PostgreSQL's that change nothing here (FREEZE, ENCODING 'UTF8') are
// accepted.
func (c Copy) TextFormat(columns []string) (pgtext.CopyFormat, error) {
	var f pgtext.CopyFormat
	var delim, null, quote, escape *string
	var forceQuote, forceNotNull, forceNull []string
	seen := map[string]bool{}
	for _, o := range c.Options {
		if seen[o.Name] {
			return f, sqlerr.New(sqlerr.SyntaxError, "conflicting or redundant options")
		}
		seen[o.Name] = true
		v := o.Value
		switch o.Name {
		case "format":
			switch strings.ToLower(v) {
			case "text":
			case "csv":
				f.CSV = true
			case "binary":
				return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY TO in binary format is not supported by the embedded SQLite engine: use text or csv (the PostgreSQL engine supports it)")
			default:
				return f, sqlerr.New(sqlerr.InvalidParameterValue, "COPY format %q not recognized", v)
			}
		case "delimiter":
			delim = &v
		case "null":
			null = &v
		case "quote":
			quote = &v
		case "escape":
			escape = &v
		case "header":
			switch strings.ToLower(v) {
			case "", "true", "on", "1":
				f.Header = true
			case "false", "off", "0":
			case "match":
				f.Header, f.HeaderMatch = true, true
			default:
				return f, sqlerr.New(sqlerr.InvalidParameterValue, "header requires a Boolean value or \"match\"")
			}
		case "force_quote":
			forceQuote = o.List
		case "force_not_null":
			forceNotNull = o.List
		case "force_null":
			forceNull = o.List
		case "freeze":
		case "encoding":
			if n := strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(v)); n != "utf8" && n != "unicode" {
				return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY encoding %q is not supported: certa speaks UTF8 only", v)
			}
		default:
			return f, sqlerr.New(sqlerr.SyntaxError, "option %q not recognized", o.Name)
		}
	}
	f.Delimiter, f.Null = '\t', `\N`
	if f.CSV {
		f.Delimiter, f.Null, f.Quote = ',', "", '"'
	}
	csvOnly := func(what string, set bool) error {
		if set && !f.CSV {
			return sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s available only in CSV mode", what)
		}
		return nil
	}
	for _, e := range []error{csvOnly("quote", quote != nil), csvOnly("escape", escape != nil),
		csvOnly("force quote", forceQuote != nil), csvOnly("force not null", forceNotNull != nil), csvOnly("force null", forceNull != nil)} {
		if e != nil {
			return f, e
		}
	}
	if delim != nil {
		if len(*delim) != 1 {
			return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must be a single one-byte character")
		}
		f.Delimiter = (*delim)[0]
	}
	if f.Delimiter == '\n' || f.Delimiter == '\r' {
		return f, sqlerr.New(sqlerr.InvalidParameterValue, "COPY delimiter cannot be newline or carriage return")
	}
	if !f.CSV && strings.IndexByte("\\.abcdefghijklmnopqrstuvwxyz0123456789", f.Delimiter) >= 0 {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter cannot be %q", string(f.Delimiter))
	}
	if null != nil {
		if strings.ContainsAny(*null, "\r\n") {
			return f, sqlerr.New(sqlerr.InvalidParameterValue, "COPY null representation cannot use newline or carriage return")
		}
		f.Null = *null
	}
	if strings.IndexByte(f.Null, f.Delimiter) >= 0 {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter must not appear in the NULL specification")
	}
	if quote != nil {
		if len(*quote) != 1 {
			return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY quote must be a single one-byte character")
		}
		f.Quote = (*quote)[0]
	}
	f.Escape = f.Quote
	if escape != nil {
		if len(*escape) != 1 {
			return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY escape must be a single one-byte character")
		}
		f.Escape = (*escape)[0]
	}
	if f.CSV && f.Delimiter == f.Quote {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "COPY delimiter and quote must be different")
	}
	if f.HeaderMatch && !c.From {
		return f, sqlerr.New(sqlerr.FeatureNotSupported, "cannot use \"match\" with HEADER in COPY TO")
	}
	force := func(what string, names []string, allowed bool) ([]bool, error) {
		if names == nil {
			return nil, nil
		}
		if !allowed {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY %s only available using COPY %s", what, map[bool]string{true: "TO", false: "FROM"}[c.From])
		}
		out := make([]bool, len(columns))
		for _, n := range names {
			if n == "*" {
				for i := range out {
					out[i] = true
				}
				continue
			}
			i := slices.Index(columns, n)
			if i < 0 {
				return nil, sqlerr.New(sqlerr.InvalidColumnReference, "%s column %q not referenced by COPY", strings.ToUpper(what), n)
			}
			out[i] = true
		}
		return out, nil
	}
	var err error
	if f.ForceQuote, err = force("force quote", forceQuote, !c.From); err != nil {
		return f, err
	}
	if f.ForceNotNull, err = force("force not null", forceNotNull, c.From); err != nil {
		return f, err
	}
	if f.ForceNull, err = force("force null", forceNull, c.From); err != nil {
		return f, err
	}
	return f, nil
}

// CheckBinary returns PostgreSQL's error for an option a COPY in binary
// format cannot have, or nil.
func (c Copy) CheckBinary() error {
	for _, o := range c.Options {
		switch o.Name {
		case "format", "freeze":
		case "encoding":
			if _, err := (Copy{Options: []CopyOption{o}}).TextFormat(nil); err != nil {
				return err
			}
		default:
			return sqlerr.New(sqlerr.FeatureNotSupported, "cannot specify %s in BINARY mode", strings.ToUpper(o.Name))
		}
	}
	return nil
}
