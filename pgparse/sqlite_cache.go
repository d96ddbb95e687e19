package pgparse

import (
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Printed statements are cached, because PostgreSQL's parser costs more
// than running a short statement (some 37 µs for a point select, on a
// core that runs it in 15). Clients that prepare their statements send
// the same text again and again: that is cached by text. Clients that
// write their values into the text (psql, the simple protocol) send a
// new text each time: those are cached as templates, by the statement
// with its constants taken out (its shape), and a new text of a known
// shape is printed by putting its constants into the template, which
// only needs the scanner (some 7 µs). A statement whose printing depends
// on its constants' values (an array constant it reads, a type modifier)
// gets no template.

// maxCached bounds each cache; when full it is emptied rather than tracked
// for recency.
const maxCached = 4096

// SQLiteCache is ToSQLite with caches. Its methods may be called
// concurrently.
type SQLiteCache struct {
	mu        sync.Mutex
	texts     map[string]printed
	templates map[string]*template
}

type printed struct {
	s   *SQLite
	err error
}

// template is a printed statement with holes for its constants: parts[0]
// hole 0 parts[1] hole 1 ... parts[n]. Hole i takes constant consts[i] of
// the statement (by order in the text), with a minus before it if neg[i].
type template struct {
	s      SQLite // SQL unset
	parts  []string
	consts []int
	neg    []bool
}

// ToSQLite is ToSQLite, through the caches.
func (c *SQLiteCache) ToSQLite(sql string) (*SQLite, error) {
	c.mu.Lock()
	p, ok := c.texts[sql]
	c.mu.Unlock()
	if ok {
		return p.s, p.err
	}
	shape, consts, shaped := shapeOf(sql)
	if shaped {
		c.mu.Lock()
		t := c.templates[shape]
		c.mu.Unlock()
		if t != nil {
			return t.fill(consts), nil
		}
	}
	s, t, err := toSQLite(sql, shaped, consts)
	c.mu.Lock()
	defer c.mu.Unlock()
	if t != nil && len(consts) > 0 {
		if len(c.templates) >= maxCached || c.templates == nil {
			c.templates = make(map[string]*template)
		}
		c.templates[shape] = t
		return s, err
	}
	if len(c.texts) >= maxCached || c.texts == nil {
		c.texts = make(map[string]printed)
	}
	c.texts[sql] = printed{s, err}
	return s, err
}

// constant is one constant of a statement's text, as its scanner reads it.
type constant struct {
	start int
	text  string
}

// shapeOf returns sql's shape (its text with each constant replaced by a
// mark of its kind) and its constants. ok is false when sql has a
// constant a template cannot take verbatim (escape, dollar-quoted and
// Unicode strings, bit strings, numbers SQLite does not read as PostgreSQL
// does), or when the scanner fails.
func shapeOf(sql string) (shape string, consts []constant, ok bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return "", nil, false
	}
	var b strings.Builder
	last := 0
	for _, tok := range scan.Tokens {
		var mark string
		text := sql[tok.Start:tok.End]
		switch tok.Token {
		case pg_query.Token_ICONST:
			if strings.Trim(text, "0123456789") != "" {
				return "", nil, false // 0x1F, 1_000
			}
			mark = "\x00i"
		case pg_query.Token_FCONST:
			if strings.Trim(text, "0123456789.eE+-") != "" {
				return "", nil, false
			}
			mark = "\x00f" // a fraction or exponent: numeric
			if strings.Trim(text, "0123456789") == "" {
				mark = "\x00I" // an integer beyond int4
			}
		case pg_query.Token_SCONST:
			if text[0] != '\'' {
				return "", nil, false // $$...$$
			}
			mark = "\x00s"
		case pg_query.Token_USCONST, pg_query.Token_BCONST, pg_query.Token_XCONST:
			return "", nil, false
		default:
			continue
		}
		b.WriteString(sql[last:tok.Start])
		b.WriteString(mark)
		last = int(tok.End)
		consts = append(consts, constant{int(tok.Start), text})
	}
	b.WriteString(sql[last:])
	return b.String(), consts, true
}

// fill prints the statement of t's shape whose constants are consts.
func (t *template) fill(consts []constant) *SQLite {
	var b strings.Builder
	for i, part := range t.parts {
		b.WriteString(part)
		if i < len(t.consts) {
			if t.neg[i] {
				b.WriteString("-")
			}
			b.WriteString(consts[t.consts[i]].text)
		}
	}
	s := t.s
	s.SQL = b.String()
	return &s
}

// hole is where the printer wrote a constant: bytes [start, end) of its
// output, for the constant at loc in the statement's text.
type hole struct {
	start, end int
	loc        int
}

// toSQLite is ToSQLite that also returns the statement's template when
// asked for one (consts: sql's constants, as shapeOf returns them) and the
// statement can have one.
func toSQLite(sql string, wantTemplate bool, consts []constant) (*SQLite, *template, error) {
	s, p, err := print(sql, wantTemplate, nil)
	if err != nil || !wantTemplate || p.fixed || s.Rest != "" {
		return s, nil, err
	}
	index := make(map[int]int, len(consts))
	for i, c := range consts {
		index[c.start] = i
	}
	t := &template{s: *s}
	t.s.SQL = ""
	last := 0
	for _, h := range p.holes {
		i, ok := index[h.loc]
		neg := false
		if !ok && h.loc >= 0 && h.loc < len(sql) && sql[h.loc] == '-' {
			// A negative number: the parser makes "- 5" one constant,
			// located at its minus.
			for j, c := range consts {
				if c.start > h.loc {
					if strings.TrimSpace(sql[h.loc+1:c.start]) == "" {
						i, ok, neg = j, true, true
					}
					break
				}
			}
		}
		if !ok {
			return s, nil, nil // a constant the scanner did not see as one
		}
		t.parts = append(t.parts, s.SQL[last:h.start])
		t.consts = append(t.consts, i)
		t.neg = append(t.neg, neg)
		last = h.end
	}
	t.parts = append(t.parts, s.SQL[last:])
	if len(t.consts) != len(consts) {
		return s, nil, nil // a constant printed other than as a hole
	}
	return s, t, nil
}
