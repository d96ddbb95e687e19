package pgwire

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"

	"certa/result"
	"certa/sqlerr"
)

// fakeBackend opens fakeSessions and counts them, so tests can check that
// every session is closed.
type fakeBackend struct {
	// noBlock makes SLEEP return at once (the fuzz test has no one to
	// cancel it).
	noBlock bool

	mu       sync.Mutex
	opened   int
	closed   int
	sleeping chan struct{} // receives when a SLEEP starts, if set
}

func (b *fakeBackend) NewSession(ctx context.Context, user, database string, settings [][2]string) (Session, error) {
	switch user {
	case "refused":
		return nil, &sqlerr.Error{Code: "28000", Message: `role "refused" does not exist`}
	case "plainfail":
		return nil, errors.New("backend exploded")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opened++
	return &fakeSession{b: b, user: user, database: database, status: 'I'}, nil
}

func (b *fakeBackend) counts() (opened, closed int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.opened, b.closed
}

// fakeSession understands a handful of statements, separated by ';':
//
//	SELECT n           one int8 row n
//	VALUES             one row with a value of every type and a NULL
//	FLOATS             one float8 column, a row per interesting value
//	MANY n             n int8 rows (n <= 1e6)
//	BEGIN/COMMIT/ROLLBACK
//	FAIL               a sqlerr error with detail and hint (fails the tx)
//	PLAINERR           an error without SQLSTATE
//	PANIC              panics
//	SLEEP              blocks until ctx ends
//	WHOAMI             user and database
//	BADROW             breaks the Writer contract
//	UNFINISHED         a result set without Complete
//	(empty)            EmptyQueryResponse
//	anything else      syntax error
type fakeSession struct {
	b              *fakeBackend
	user, database string
	status         byte
	closed         bool
}

func (s *fakeSession) TxStatus() byte { return s.status }

func (s *fakeSession) TakeReported() [][2]string { return nil }

func (s *fakeSession) Close() {
	if s.closed {
		panic("session closed twice")
	}
	s.closed = true
	s.b.mu.Lock()
	s.b.closed++
	s.b.mu.Unlock()
}

func (s *fakeSession) Query(ctx context.Context, sql string, w result.Writer) error {
	if s.closed {
		panic("Query on closed session")
	}
	if strings.TrimSpace(sql) == "" {
		return w.Empty()
	}
	for stmt := range strings.SplitSeq(sql, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		if err := s.exec(ctx, stmt, w); err != nil {
			if s.status == 'T' {
				s.status = 'E'
			}
			return err
		}
	}
	return nil
}

func (s *fakeSession) exec(ctx context.Context, stmt string, w result.Writer) error {
	word, arg, _ := strings.Cut(strings.ToUpper(stmt), " ")
	if s.status == 'E' && word != "ROLLBACK" && word != "COMMIT" {
		return sqlerr.New(sqlerr.InFailedTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	switch word {
	case "SELECT", "MANY":
		n, err := strconv.ParseInt(arg, 10, 64)
		if err != nil || word == "MANY" && (n < 0 || n > 1e6) {
			return sqlerr.New(sqlerr.SyntaxError, "syntax error at or near %q", arg)
		}
		rows := int64(1)
		if word == "MANY" {
			rows = n
		}
		if err := w.Columns([]result.Column{{Name: "?column?", Type: result.Int8}}); err != nil {
			return err
		}
		for i := range rows {
			v := n
			if word == "MANY" {
				v = i
			}
			if err := w.Row([]result.Value{v}); err != nil {
				return err
			}
		}
		return w.Complete("SELECT " + strconv.FormatInt(rows, 10))
	case "VALUES":
		if err := w.Columns([]result.Column{
			{Name: "i", Type: result.Int8},
			{Name: "f", Type: result.Float8},
			{Name: "t", Type: result.Text},
			{Name: "b", Type: result.Bytea},
			{Name: "ok", Type: result.Bool},
			{Name: "n", Type: result.Text},
			{Name: "u", Type: result.Unknown},
			{Name: "e", Type: result.Text},
			{Name: "no", Type: result.Bool},
		}); err != nil {
			return err
		}
		if err := w.Row([]result.Value{int64(-42), 1.5, "héllo", []byte{0xde, 0xad, 0xbe, 0xef}, true, nil, "x", "", false}); err != nil {
			return err
		}
		return w.Complete("SELECT 1")
	case "FLOATS":
		if err := w.Columns([]result.Column{{Name: "f", Type: result.Float8}}); err != nil {
			return err
		}
		for _, f := range testFloats {
			if err := w.Row([]result.Value{f.f}); err != nil {
				return err
			}
		}
		return w.Complete("SELECT " + strconv.Itoa(len(testFloats)))
	case "BEGIN":
		s.status = 'T'
		return w.Complete("BEGIN")
	case "COMMIT", "ROLLBACK":
		tag := word
		if s.status == 'E' {
			tag = "ROLLBACK"
		}
		s.status = 'I'
		return w.Complete(tag)
	case "FAIL":
		return &sqlerr.Error{
			Code:    sqlerr.UniqueViolation,
			Message: `duplicate key value violates unique constraint "t_pkey"`,
			Detail:  "Key (id)=(1) already exists.",
			Hint:    "Pick another id.",
		}
	case "PLAINERR":
		return errors.New("boom")
	case "PANIC":
		panic("fake session panics")
	case "SLEEP":
		if s.b.noBlock {
			return w.Complete("SLEEP")
		}
		if s.b.sleeping != nil {
			s.b.sleeping <- struct{}{}
		}
		<-ctx.Done()
		return ctx.Err()
	case "WHOAMI":
		if err := w.Columns([]result.Column{{Name: "user", Type: result.Text}, {Name: "database", Type: result.Text}}); err != nil {
			return err
		}
		if err := w.Row([]result.Value{s.user, s.database}); err != nil {
			return err
		}
		return w.Complete("SELECT 1")
	case "BADROW":
		if err := w.Columns([]result.Column{{Name: "a", Type: result.Int8}}); err != nil {
			return err
		}
		if err := w.Row([]result.Value{int64(1), int64(2)}); err != nil {
			return err
		}
		return w.Complete("SELECT 1")
	case "UNFINISHED":
		if err := w.Columns([]result.Column{{Name: "a", Type: result.Int8}}); err != nil {
			return err
		}
		return w.Row([]result.Value{int64(1)})
	}
	return sqlerr.New(sqlerr.SyntaxError, "syntax error at or near %q", stmt)
}

// testFloats are float8 values and their PostgreSQL 16 text output.
var testFloats = []struct {
	f    float64
	text string
}{
	{0, "0"},
	{math.Copysign(0, -1), "-0"},
	{1, "1"},
	{-1.5, "-1.5"},
	{0.1, "0.1"},
	{1.0 / 3, "0.3333333333333333"},
	{1e6, "1000000"},
	{123456789012345, "123456789012345"},
	{1e15, "1e+15"},
	{1.5e16, "1.5e+16"},
	{0.0001, "0.0001"},
	{0.00001, "1e-05"},
	{1.25e-7, "1.25e-07"},
	{1e100, "1e+100"},
	{math.MaxFloat64, "1.7976931348623157e+308"},
	{5e-324, "5e-324"},
	{math.NaN(), "NaN"},
	{math.Inf(1), "Infinity"},
	{math.Inf(-1), "-Infinity"},
}

// Describe runs nothing: the fake's statements take no parameters except
// PARAMS, whose $1.. are text; columns are found by running the statement
// (SLEEP and PANIC aside), which is harmless for the fake.
func (s *fakeSession) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	stmt := strings.TrimSpace(sql)
	if n, ok := strings.CutPrefix(stmt, "PARAMS "); ok {
		count, err := strconv.Atoi(n)
		if err != nil {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "PARAMS n")
		}
		cols := make([]result.Column, count)
		for i := range cols {
			cols[i] = result.Column{Name: "p" + strconv.Itoa(i+1), Type: result.Unknown}
		}
		return make([]result.Type, count), cols, nil
	}
	if stmt == "SLEEP" || stmt == "PANIC" || stmt == "" {
		return nil, nil, nil
	}
	var buf result.Buffer
	if err := s.exec(ctx, stmt, &buf); err != nil {
		return nil, nil, err
	}
	return nil, buf.Cols, nil
}

// Execute runs one statement; PARAMS n returns its n arguments as a row,
// typed by their Go types.
func (s *fakeSession) Execute(ctx context.Context, sql string, args []any, w result.Writer) error {
	stmt := strings.TrimSpace(sql)
	if _, ok := strings.CutPrefix(stmt, "PARAMS "); ok {
		cols := make([]result.Column, len(args))
		for i, a := range args {
			t := result.Text
			switch a.(type) {
			case int64:
				t = result.Int8
			case float64:
				t = result.Float8
			case bool:
				t = result.Bool
			case []byte:
				t = result.Bytea
			}
			cols[i] = result.Column{Name: "p" + strconv.Itoa(i+1), Type: t}
		}
		if err := w.Columns(cols); err != nil {
			return err
		}
		if err := w.Row(args); err != nil {
			return err
		}
		return w.Complete("SELECT 1")
	}
	if strings.Contains(stmt, ";") {
		return sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	return s.Query(ctx, stmt, w)
}
