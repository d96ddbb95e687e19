package pgparse

import (
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// TableCopy is a CREATE TABLE AS or SELECT INTO that makes a permanent
// table and fills it, split into the two statements that do the same
// where every row the second writes is seen: one that makes the table
// empty (CREATE TABLE ... AS ... WITH NO DATA) and an INSERT of the
// query's rows into it. (Rows a CREATE TABLE AS writes itself are written
// before any trigger could see them.)
type TableCopy struct {
	Schema string // the table's schema as written ("" when unqualified)
	Name   string // the table's name, as PostgreSQL folded it
	Create Rewritten
	// A temporary table's (ParseTempCopy): its column names, if listed,
	// WITH NO DATA, and its ON COMMIT action (as CreateTable.OnCommit).
	Columns  []string
	SkipData bool
	OnCommit string

	query   string // the client's text, parts blanked, from queryAt on
	queryAt int    // bytes of the client's text before query
}

// Rewritten is a statement certa wrote from a client's: a prefix of its
// own, then the client's text from some point on (words blanked out, so
// that positions hold), then maybe a suffix of its own.
type Rewritten struct {
	SQL string

	prefix int // characters of certa's before the client's text
	at     int // characters of the client's text before the part quoted
	quoted int // characters quoted
}

// ClientPosition maps a position in SQL, as PostgreSQL's errors count
// them (characters, from 1), to the client's text; 0 when it falls in
// certa's words.
func (r Rewritten) ClientPosition(p int) int {
	if p <= r.prefix || p > r.prefix+r.quoted {
		return 0
	}
	return p - r.prefix + r.at
}

// Insert is the statement that fills the table, named as target (quoted
// and qualified by the caller as the table it made).
func (c *TableCopy) Insert(target string) Rewritten {
	prefix := "INSERT INTO " + target + " "
	return Rewritten{
		SQL:    prefix + c.query,
		prefix: utf8.RuneCountInString(prefix),
		at:     c.queryAt,
		quoted: utf8.RuneCountInString(c.query),
	}
}

// ParseTableCopy returns sql split as a TableCopy if it is one CREATE
// TABLE AS or SELECT INTO that fills a permanent or unlogged table (not
// WITH NO DATA, not of EXECUTE, not a temporary table, not a materialized
// view); ok is false otherwise. Cheap for statements that cannot be one.
func ParseTableCopy(sql string) (c *TableCopy, ok bool) { return parseTableCopy(sql, false) }

// ParseTempCopy is ParseTableCopy for a CREATE TABLE AS or SELECT INTO
// that makes a temporary table, also WITH NO DATA (Create is not set).
func ParseTempCopy(sql string) (c *TableCopy, ok bool) { return parseTableCopy(sql, true) }

// Query is the query whose rows fill the table, as the client wrote it
// (the INTO clause of a SELECT INTO blanked).
func (c *TableCopy) Query() string { return c.query }

func parseTableCopy(sql string, temp bool) (c *TableCopy, ok bool) {
	// Every statement of a transaction passes here: the text is not
	// copied to be looked at.
	switch strings.ToLower(leadingWord(sql)) {
	case "select", "with":
		if !containsFold(sql, "into") {
			return nil, false
		}
	case "create":
		if !containsFold(sql, "as") {
			return nil, false
		}
	default:
		return nil, false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, false
	}
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	toks := withoutComments(scan.Tokens)
	for len(toks) > 0 && toks[len(toks)-1].Token == pg_query.Token_ASCII_59 {
		toks = toks[:len(toks)-1] // a trailing semicolon
	}
	switch st := tree.Stmts[0].Stmt.Node.(type) {
	case *pg_query.Node_CreateTableAsStmt:
		return createTableAs(sql, toks, st.CreateTableAsStmt, temp)
	case *pg_query.Node_SelectStmt:
		return selectInto(sql, toks, st.SelectStmt, temp)
	}
	return nil, false
}

// OfPrepared reports whether sql is a CREATE TABLE AS whose query is
// EXECUTE of a prepared statement: a statement of the session's, which
// another node's run of the schema statement does not have.
func OfPrepared(sql string) bool {
	lower := strings.ToLower(sql)
	if leadingWord(lower) != "create" || !strings.Contains(lower, "execute") {
		return false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 {
		return false
	}
	st := tree.Stmts[0].Stmt.GetCreateTableAsStmt()
	return st != nil && st.GetQuery().GetExecuteStmt() != nil
}

func createTableAs(sql string, toks []*pg_query.ScanToken, st *pg_query.CreateTableAsStmt, temp bool) (*TableCopy, bool) {
	into := st.Into
	if st.Objtype != pg_query.ObjectType_OBJECT_TABLE || into == nil || into.SkipData && !temp || st.GetQuery().GetExecuteStmt() != nil ||
		isTemp(into.Rel) != temp {
		return nil, false
	}
	// The query follows the first AS outside parentheses after the name,
	// and may be followed by WITH DATA, the statement's last words.
	start, end := -1, len(sql)
	for _, t := range topLevel(toks) {
		if t.Token == pg_query.Token_AS && t.Start > into.Rel.Location {
			start = int(t.End)
			break
		}
	}
	if n := len(toks); n >= 2 && toks[n-2].Token == pg_query.Token_WITH && toks[n-1].Token == pg_query.Token_DATA_P {
		end = int(toks[n-2].Start)
	} else if n >= 3 && toks[n-3].Token == pg_query.Token_WITH && toks[n-2].Token == pg_query.Token_NO && toks[n-1].Token == pg_query.Token_DATA_P {
		end = int(toks[n-3].Start)
	}
	if start < 0 {
		return nil, false
	}
	c := &TableCopy{Schema: into.Rel.Schemaname, Name: into.Rel.Relname}
	c.query = blank(sql, end, len(sql))[start:]
	if temp {
		c.Columns, c.SkipData, c.OnCommit = stringList(into.ColNames), into.SkipData, onCommitAction(into.OnCommit)
		return c, true
	}
	c.queryAt = utf8.RuneCountInString(sql[:start])
	// A line of its own: the client's text may end in a line comment.
	create := blank(sql, end, len(sql))
	c.Create = Rewritten{SQL: create + "\nWITH NO DATA", quoted: utf8.RuneCountInString(create)}
	return c, true
}

func selectInto(sql string, toks []*pg_query.ScanToken, st *pg_query.SelectStmt, temp bool) (*TableCopy, bool) {
	into := st.IntoClause
	for leftmost := st; into == nil && leftmost.Larg != nil; leftmost = leftmost.Larg {
		into = leftmost.Larg.IntoClause
	}
	if into == nil || isTemp(into.Rel) != temp {
		return nil, false
	}
	// INTO [TEMP | UNLOGGED ...] [TABLE] name: from the first INTO outside
	// parentheses to the end of the name.
	from, to := -1, -1
	for _, t := range topLevel(toks) {
		if t.Token == pg_query.Token_INTO {
			from, to = int(t.Start), qualifiedNameEnd(toks, into.Rel.Location)
			break
		}
	}
	if from < 0 || to < 0 {
		return nil, false
	}
	persistence := ""
	if into.Rel.Relpersistence == "u" {
		persistence = "UNLOGGED "
	}
	name := quoteIdent(into.Rel.Relname)
	if into.Rel.Schemaname != "" {
		name = quoteIdent(into.Rel.Schemaname) + "." + name
	}
	query := blank(sql, from, to)
	c := &TableCopy{Schema: into.Rel.Schemaname, Name: into.Rel.Relname, query: query}
	if temp {
		c.OnCommit = onCommitAction(into.OnCommit)
		return c, true
	}
	prefix := "CREATE " + persistence + "TABLE " + name + " AS "
	c.Create = Rewritten{
		SQL:    prefix + query + "\nWITH NO DATA",
		prefix: utf8.RuneCountInString(prefix),
		quoted: utf8.RuneCountInString(query),
	}
	return c, true
}

// containsFold reports whether s contains word, an ASCII lower-case word,
// in any case.
func containsFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(word)], word) {
			return true
		}
	}
	return false
}

// qualifiedNameEnd returns the byte offset where the qualified name that starts at
// byte location ends, among toks; -1 if none starts there.
func qualifiedNameEnd(toks []*pg_query.ScanToken, location int32) int {
	for i, t := range toks {
		if t.Start < location {
			continue
		}
		if t.Start != location {
			return -1
		}
		end := int(t.End)
		for j := i + 1; j+1 < len(toks) && toks[j].Token == pg_query.Token_ASCII_46; j += 2 {
			end = int(toks[j+1].End)
		}
		return end
	}
	return -1
}

// topLevel returns the tokens of toks outside parentheses.
func topLevel(toks []*pg_query.ScanToken) []*pg_query.ScanToken {
	var out []*pg_query.ScanToken
	depth := 0
	for _, t := range toks {
		switch {
		case t.Token == pg_query.Token_ASCII_40:
			depth++
		case t.Token == pg_query.Token_ASCII_41:
			depth--
		case depth == 0:
			out = append(out, t)
		}
	}
	return out
}

// withoutComments returns toks without the comment tokens.
func withoutComments(toks []*pg_query.ScanToken) []*pg_query.ScanToken {
	out := toks[:0:0]
	for _, t := range toks {
		if !isComment(t) {
			out = append(out, t)
		}
	}
	return out
}

// blank returns sql with its bytes from to to blanked: a space for each
// character but line ends, so that positions (in characters) and line
// numbers in errors hold.
func blank(sql string, from, to int) string {
	var b strings.Builder
	b.WriteString(sql[:from])
	for _, r := range sql[from:to] {
		if r != '\n' {
			r = ' '
		}
		b.WriteRune(r)
	}
	b.WriteString(sql[to:])
	return b.String()
}

// leadingWord returns the word sql starts with, after blanks, comments
// and opening parentheses.
func leadingWord(sql string) string {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '(':
			i++
		case strings.HasPrefix(sql[i:], "--"):
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case strings.HasPrefix(sql[i:], "/*"):
			i = BlockCommentEnd(sql, i)
		default:
			j := i
			for j < len(sql) && (sql[j] >= 'a' && sql[j] <= 'z' || sql[j] >= 'A' && sql[j] <= 'Z') {
				j++
			}
			return sql[i:j]
		}
	}
	return ""
}
