package sqlite

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/sqlerr"
	"certa/writeset"
)

// Sequences give SERIAL, BIGSERIAL, SMALLSERIAL and identity columns their
// values (createtable.go makes their DEFAULT nextval('table_column_seq')),
// and no two nodes ever hand out the same value:
//
//   - _certa_sequences, replicated like any table, holds each sequence with
//     the first value no node has reserved yet. Schema statements keep it in
//     step with the columns whose default calls nextval (syncSequences).
//   - A node hands out values only from blocks of sequenceBlock values it
//     reserved through the log: the reservation is an ordinary write set
//     that moves the sequence's row forward by a block, so two nodes
//     reserving at once conflict in certification and one tries again
//     (ReserveSequence; replica commits it and calls GrantSequence).
//   - A node asks for a block before it runs out (SequencesWanted); one
//     that has none fails the statement with engine.ErrNoSequenceValues
//     (40001), which the session retries once values are there. SQLite
//     evaluates defaults while the statement holds the write lock, so the
//     statement cannot wait for a reservation, which the applier must apply.
//   - Values are not transactional, as in PostgreSQL: a rolled-back insert
//     leaves a gap, and so does a restart (the rest of its blocks).
//   - A transaction re-run after parking (moveforward.go) takes again the
//     values it took the first time (seqLog), so that what it returned to
//     the client (INSERT ... RETURNING id) stays true.
//
// Values are increasing on each node, not across nodes: node A may hand out
// 1, 2, 3 while node B hands out 1001, 1002.

// sequenceBlock is how many values one reservation gives a node at first.
// A statement that runs out of values (a bulk INSERT or COPY of more rows
// than a block) makes the next blocks of its sequence sequenceGrowth times
// larger, up to maxSequenceBlock, so that when it runs again it finds
// enough: it could never finish if each try found one block.
// A block takes at most 1/maxBlockShare of the values a sequence has left
// (at least one).
const maxBlockShare = 8

const (
	sequenceBlock    = 1000
	sequenceGrowth   = 4
	maxSequenceBlock = 1 << 20
)

// sequences is what an engine knows of its sequences and the values it
// holds. Safe for concurrent use.
type sequences struct {
	mu      sync.Mutex
	known   map[string]seqInfo                // by name, as _certa_sequences says
	blocks  map[string][]engine.SequenceBlock // values not handed out yet
	pending map[string]bool                   // asked for, not granted yet
	size    map[string]int64                  // the size of the next block, if not sequenceBlock
	served  map[string]bool                   // had a block: running out of it makes the next larger
	grown   map[string]bool                   // made larger since the last grant
	// exhausted holds the sequences that reached their largest value
	// (with the seqno that made them, as seqInfo.created): a statement
	// that needs one more fails with 2200H instead of waiting for a block
	// that will never come.
	exhausted map[string]uint64
	// awaiting holds the sequences another node's schema change made, with
	// the first value not reserved yet when this node learnt of them:
	// load asks for their values only once that has moved (the node that
	// made them reserved its first block), so that the client that made
	// the table takes the first values. take asks at once.
	awaiting map[string]int64
	wanted   chan string
	granted  chan struct{} // closed (and replaced) when values are granted
}

type seqInfo struct {
	created  uint64
	max      int64
	reserved int64 // the first value no node has reserved
}

func newSequences() *sequences {
	return &sequences{
		known: map[string]seqInfo{}, blocks: map[string][]engine.SequenceBlock{}, pending: map[string]bool{}, size: map[string]int64{}, served: map[string]bool{}, grown: map[string]bool{},
		exhausted: map[string]uint64{}, awaiting: map[string]int64{}, wanted: make(chan string, 256), granted: make(chan struct{}),
	}
}

// load reads the sequences from _certa_sequences on c (outside a
// transaction, or in the one whose view it should take), drops the blocks
// of sequences gone or made again, and asks for values of those without.
func (s *sequences) load(c *conn) error {
	if err := s.refresh(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.askMissing()
	return nil
}

// askMissing asks for values of the sequences this node holds none of,
// but those awaiting another node's first reservation. s.mu is held.
func (s *sequences) askMissing() {
	for name := range s.known {
		if _, wait := s.awaiting[name]; len(s.blocks[name]) == 0 && !wait {
			s.ask(name)
		}
	}
}

// loadOthers is load after another node's schema change: the sequences
// it made wait for that node's first reservation (awaiting) before this
// one asks for values.
func (s *sequences) loadOthers(c *conn) error {
	s.mu.Lock()
	before := maps.Clone(s.known)
	s.mu.Unlock()
	if err := s.refresh(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, info := range s.known {
		if was, ok := before[name]; !ok || was.created != info.created {
			s.awaiting[name] = info.reserved
		}
	}
	s.askMissing()
	return nil
}

// refresh is load without asking for values: after a write set that
// changed sequences' rows (a reservation, setval), every node applies,
// and only the node that runs out asks (take), or one that awaited the
// sequence's first reservation (awaiting).
func (s *sequences) refresh(c *conn) error {
	known := map[string]seqInfo{}
	err := c.execResult("SELECT name, created, maxval, reserved FROM _certa_sequences", func(st *sqlite.Stmt) {
		known[st.ColumnText(0)] = seqInfo{created: uint64(st.ColumnInt64(1)), max: st.ColumnInt64(2), reserved: st.ColumnInt64(3)}
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known = known
	for name, bs := range s.blocks {
		if info, ok := known[name]; !ok || len(bs) > 0 && bs[0].Created != info.created {
			delete(s.blocks, name)
		}
	}
	for name, at := range s.awaiting {
		if info, ok := known[name]; !ok || info.reserved != at {
			// The node that made it has its first block: this one asks
			// for its own now, as it would have at the schema change.
			delete(s.awaiting, name)
			if ok && len(s.blocks[name]) == 0 {
				s.ask(name)
			}
		}
	}
	for name, created := range s.exhausted {
		if info, ok := known[name]; !ok || info.created != created {
			delete(s.exhausted, name)
		}
	}
	return nil
}

// exhaust records that sequence name, made at seqno created, has no value
// left to reserve.
func (s *sequences) exhaust(name string, created uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exhausted[name] = created
}

// isExhausted reports whether name has no value left to reserve. s.mu is
// held.
func (s *sequences) isExhausted(name string) bool {
	created, ok := s.exhausted[name]
	return ok && s.known[name].created == created
}

// ask names a sequence on the wanted channel unless it was already asked
// for. s.mu is held.
func (s *sequences) ask(name string) {
	if s.pending[name] || s.isExhausted(name) {
		return
	}
	select {
	case s.wanted <- name:
		s.pending[name] = true
	default: // full: asked again at the next take
	}
}

// take hands out the next value of sequence name.
func (s *sequences) take(name string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info, ok := s.known[name]
	if !ok {
		return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	bs := s.blocks[name]
	if len(bs) == 0 && s.isExhausted(name) {
		return 0, sqlerr.New(sqlerr.SequenceLimitExceeded, "nextval: reached maximum value of sequence %q (%d)", name, info.max)
	}
	if len(bs) == 0 {
		if s.served[name] && !s.grown[name] { // once per shortage, however many statements meet it
			s.size[name] = min(s.blockSize(name)*sequenceGrowth, maxSequenceBlock)
			s.grown[name] = true
		}
		s.ask(name)
		return 0, sqlerr.Wrap(&engine.NoSequenceValuesError{Sequence: name}, sqlerr.SerializationFailure,
			"could not serialize access: no values of sequence %q are reserved on this node yet; retry the transaction", name)
	}
	b := &bs[0]
	v := b.First
	b.First++
	b.Count--
	if b.Count == 0 {
		s.blocks[name] = bs[1:]
	}
	if left := s.left(name); left < s.blockSize(name)/2 {
		s.ask(name)
	}
	if v > info.max {
		return 0, sqlerr.New(sqlerr.SequenceLimitExceeded, "nextval: reached maximum value of sequence %q (%d)", name, info.max)
	}
	return v, nil
}

// knows reports whether name is a sequence of the applied state.
func (s *sequences) knows(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.known[name]
	return ok
}

// takenValue is a value a statement took of a sequence.
type takenValue struct {
	name string
	v    int64
}

// giveBack makes values a failed statement took (in the order taken) the
// next ones handed out again. They were never seen: the statement failed
// before it returned anything.
func (s *sequences) giveBack(taken []takenValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(taken) - 1; i >= 0; i-- { // the last first: each goes in front
		t := taken[i]
		info, ok := s.known[t.name]
		if !ok {
			continue
		}
		bs := s.blocks[t.name]
		if len(bs) > 0 && bs[0].First == t.v+1 && bs[0].Created == info.created {
			bs[0].First, bs[0].Count = t.v, bs[0].Count+1
			continue
		}
		b := engine.SequenceBlock{Name: t.name, Created: info.created, First: t.v, Count: 1}
		s.blocks[t.name] = append([]engine.SequenceBlock{b}, bs...)
	}
}

// runsAgain reports whether a statement that failed with err (from
// SQLite) or fe (from a function of ours) is run again by certa itself:
// it found no values reserved (the session retries it once they are), its
// snapshot went stale, or the applier stopped it. One that failed on its
// own (a constraint, a division by zero) is not, and keeps the values it
// took, as in PostgreSQL, where a failed statement's nextval is not undone
// (currval tells it) and the next statement takes the next value.
func runsAgain(err error, fe *sqlerr.Error) bool {
	if fe != nil {
		return errors.Is(fe, engine.ErrNoSequenceValues)
	}
	switch sqlite.ErrCode(err).ToPrimary() {
	case sqlite.ResultBusy, sqlite.ResultLocked, sqlite.ResultInterrupt:
		return true
	}
	return false
}

// giveBackValues gives back the values of sequences the statement that
// just failed on c took, if it returned no row and certa runs it again
// (runsAgain): nobody saw them, and run again it takes the same ones, so
// rows get the values they would have in PostgreSQL. The Tx's log of
// values forgets them too, or a re-run of its statements would take them
// a second time.
func (c *conn) giveBackValues(s *sequences, rows int) {
	if len(c.stmtTaken) == 0 || rows > 0 {
		return
	}
	s.giveBack(c.stmtTaken)
	if c.seqLog != nil {
		c.seqLog.forget(c.stmtTaken)
	}
	c.stmtTaken = c.stmtTaken[:0]
}

// blockSize is the size of name's next block. s.mu is held.
func (s *sequences) blockSize(name string) int64 {
	if n, ok := s.size[name]; ok {
		return n
	}
	return sequenceBlock
}

// nextBlockSize is blockSize for ReserveSequence.
func (s *sequences) nextBlockSize(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.blockSize(name)
}

// left counts the values of name not handed out. s.mu is held.
func (s *sequences) left(name string) int64 {
	var n int64
	for _, b := range s.blocks[name] {
		n += b.Count
	}
	return n
}

// grant adds a committed block and clears the request for its sequence
// (a block of no values only clears the request: the reservation failed).
func (s *sequences) grant(b engine.SequenceBlock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, b.Name)
	if info, ok := s.known[b.Name]; ok && info.created == b.Created && b.Count > 0 {
		s.blocks[b.Name] = append(s.blocks[b.Name], b)
		s.served[b.Name], s.grown[b.Name] = true, false
	}
	close(s.granted)
	s.granted = make(chan struct{})
}

// wait waits until every known sequence (or name, if not empty) has values.
func (s *sequences) wait(ctx context.Context, name string) error {
	for {
		s.mu.Lock()
		ready := true
		for n := range s.known {
			if (name == "" || n == name) && s.left(n) == 0 && !s.isExhausted(n) {
				ready = false
				s.ask(n)
			}
		}
		granted := s.granted
		s.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-granted:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// seqLog is the values one transaction took, by sequence, so that a re-run
// takes the same ones. It is used by the transaction's goroutine only.
type seqLog struct {
	taken  map[string][]int64
	pos    map[string]int // next value to take again, while replaying
	replay bool
}

func (l *seqLog) startReplay() {
	l.replay = true
	clear(l.pos)
}

func (l *seqLog) stopReplay() { l.replay = false }

// next returns the value name took at this point the first time, if any.
func (l *seqLog) next(name string) (int64, bool) {
	if !l.replay {
		return 0, false
	}
	i := l.pos[name]
	if i >= len(l.taken[name]) {
		return 0, false
	}
	if l.pos == nil {
		l.pos = map[string]int{}
	}
	l.pos[name] = i + 1
	return l.taken[name][i], true
}

// forget takes out values recorded last (taken, in the order taken).
func (l *seqLog) forget(taken []takenValue) {
	for i := len(taken) - 1; i >= 0; i-- {
		t := taken[i]
		vals := l.taken[t.name]
		if n := len(vals); n > 0 && vals[n-1] == t.v {
			l.taken[t.name] = vals[:n-1]
			if l.pos[t.name] > n-1 {
				l.pos[t.name] = n - 1
			}
		}
	}
}

func (l *seqLog) record(name string, v int64) {
	if l.taken == nil {
		l.taken = map[string][]int64{}
	}
	l.taken[name] = append(l.taken[name], v)
	if l.replay {
		if l.pos == nil {
			l.pos = map[string]int{}
		}
		l.pos[name] = len(l.taken[name])
	}
}

// registerNextval makes nextval(name) on c hand out values of e's
// sequences. A failure is kept on c (funcErr) and nextval returns NULL: an
// error returned by a Go function does not fail the statement through
// zombiezen.com/go/sqlite v1.4.2 (the statement goes on with the error's
// text as the value), so the statement's runner reports it (execOnce), and
// NULL makes the column's NOT NULL stop the row first.
func (e *Engine) registerNextval(c *conn) error {
	return c.c.CreateFunction("nextval", &sqlite.FunctionImpl{
		// One argument, the sequence; an identity column's default gives
		// three more that describe the column (createtable.go) and do not
		// change what nextval does.
		NArgs: -1,
		// Column defaults call it; only certa's own DDL can put it there.
		AllowIndirect: true,
		Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
			if len(args) == 0 {
				if c.funcErr == nil {
					c.funcErr = sqlerr.New(sqlerr.UndefinedFunction, "function nextval() does not exist")
				}
				return sqlite.Value{}, nil
			}
			if c.funcErr != nil {
				// The statement failed at an earlier row (SQLite goes
				// on): PostgreSQL would have stopped there, taking no
				// more values.
				return sqlite.Value{}, nil
			}
			name := sequenceName(args[0].Text())
			if c.newSeqs[name] {
				v, err := c.takeNewSequenceValue(name)
				if err != nil {
					if c.funcErr == nil {
						c.funcErr = err
					}
					return sqlite.Value{}, nil
				}
				c.took(name, v)
				return sqlite.IntegerValue(v), nil
			}
			if c.seqLog != nil {
				if v, ok := c.seqLog.next(name); ok {
					c.took(name, v)
					return sqlite.IntegerValue(v), nil
				}
			}
			v, err := e.seqs.take(name)
			if err != nil {
				if c.funcErr == nil {
					c.funcErr = err.(*sqlerr.Error)
				}
				return sqlite.Value{}, nil // NULL
			}
			c.stmtTaken = append(c.stmtTaken, takenValue{name, v})
			if c.seqLog != nil {
				c.seqLog.record(name, v)
			}
			c.took(name, v)
			return sqlite.IntegerValue(v), nil
		},
	})
}

// takeNewSequenceValue hands out the next value of a sequence made by
// the running transaction, which no node has reserved values of: the
// transaction takes them from the sequence's row, whose change its write
// set carries, so that every node's reservations start after them once
// it has committed.
func (c *conn) takeNewSequenceValue(name string) (int64, *sqlerr.Error) {
	var v, max int64
	found := false
	err := c.execResult("SELECT reserved, maxval FROM _certa_sequences WHERE name = ?", func(s *sqlite.Stmt) {
		v, max, found = s.ColumnInt64(0), s.ColumnInt64(1), true
	}, name)
	switch {
	case err != nil:
		return 0, mapErr(err).(*sqlerr.Error)
	case !found:
		return 0, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	case v > max:
		return 0, sqlerr.New(sqlerr.SequenceLimitExceeded, "nextval: reached maximum value of sequence %q (%d)", name, max)
	}
	if err := c.exec("UPDATE _certa_sequences SET reserved = ? WHERE name = ?", v+1, name); err != nil {
		return 0, mapErr(err).(*sqlerr.Error)
	}
	return v, nil
}

// sequenceName is a sequence's name as nextval's argument gives it:
// 'public.t_id_seq' and '"t_id_seq"' name t_id_seq; unquoted names fold to
// lower case, as in PostgreSQL.
func sequenceName(arg string) string {
	arg = strings.TrimSpace(arg)
	if strings.HasSuffix(arg, `"`) && len(arg) >= 2 {
		// The last part is quoted: find its opening quote ("" is a quote).
		i := len(arg) - 2
		for i >= 0 {
			if arg[i] == '"' {
				if i > 0 && arg[i-1] == '"' {
					i -= 2
					continue
				}
				break
			}
			i--
		}
		if i >= 0 {
			return strings.ReplaceAll(arg[i+1:len(arg)-1], `""`, `"`)
		}
	}
	if i := strings.LastIndexByte(arg, '.'); i >= 0 {
		arg = arg[i+1:]
	}
	return strings.ToLower(arg)
}

// nextvalDefault matches a column default that calls nextval: that of a
// SERIAL column, nextval('t_c_seq'), or that of an identity column,
// nextval('t_c_seq', 'always' or 'by default', first value, largest value)
// (createtable.go).
var nextvalDefault = regexp.MustCompile(`^\(?\s*nextval\s*\(\s*'((?:[^']|'')*)'\s*(?:,\s*'(always|by default)'\s*,\s*(-?\d+)\s*,\s*(-?\d+)\s*)?\)\s*\)?$`)

// seqDefault is what a column default that calls nextval says.
type seqDefault struct {
	seq string // the sequence
	// identity is "always" or "by default" for an identity column, ""
	// for SERIAL; start and max are then its first and largest value.
	identity   string
	start, max int64
}

// parseSequenceDefault reads a column default (as PRAGMA table_info gives
// it) that calls nextval; ok is false for any other.
func parseSequenceDefault(dflt string) (d seqDefault, ok bool) {
	m := nextvalDefault.FindStringSubmatch(dflt)
	if m == nil {
		return d, false
	}
	d.seq = sequenceName(strings.ReplaceAll(m[1], "''", "'"))
	if m[2] != "" {
		start, err1 := strconv.ParseInt(m[3], 10, 64)
		max, err2 := strconv.ParseInt(m[4], 10, 64)
		if err1 != nil || err2 != nil {
			return d, false
		}
		d.identity, d.start, d.max = m[2], start, max
	}
	return d, true
}

// syncSequences makes _certa_sequences hold exactly the sequences that
// column defaults call and those CREATE SEQUENCE made (createsequence.go),
// with the column that owns each, after a schema statement that changed
// the tables touched (as finishDDL finds them: made, altered, renamed or
// dropped; the others' columns and defaults are as they were, so only
// these are read, and a statement costs the same in a large schema as in
// a small one). created is the seqno of that statement (0 when it is only
// tried). It runs in the statement's transaction, on every node alike.
func syncSequences(c *conn, created uint64, touched []string) error {
	want, columns, err := columnSequences(c, touched)
	if err != nil {
		return err
	}
	// have holds the sequences there are, by whether a column owns them
	// (those of CREATE SEQUENCE do not, and stay as they are, unless
	// ALTER SEQUENCE ... OWNED BY gave them one). Those whose owning
	// column no longer exists go with it, as in PostgreSQL.
	type owner struct{ table, column string }
	have := map[string]owner{}
	err = c.execResult("SELECT name, tbl, col FROM _certa_sequences", func(s *sqlite.Stmt) {
		have[s.ColumnText(0)] = owner{s.ColumnText(1), s.ColumnText(2)}
	})
	if err != nil {
		return err
	}
	for name, o := range have {
		if _, ok := want[name]; ok || o.table == "" {
			continue
		}
		cols, ok := columns[strings.ToLower(o.table)]
		if !ok || cols[strings.ToLower(o.column)] {
			continue // a table the statement left alone, or the column is there
		}
		if err := c.exec("DELETE FROM _certa_sequences WHERE name = ?", name); err != nil {
			return err
		}
	}
	for name, o := range want {
		h, ok := have[name]
		if ok && h.table == "" {
			continue
		}
		if ok {
			err = c.exec("UPDATE _certa_sequences SET tbl = ?, col = ?, maxval = ? WHERE name = ?", o.table, o.column, o.max, name)
		} else {
			err = c.exec("INSERT INTO _certa_sequences (name, tbl, col, reserved, created, maxval) VALUES (?, ?, ?, ?, ?, ?)",
				name, o.table, o.column, o.start, int64(created), o.max)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// seqOwner is the column whose default calls a sequence, with the
// sequence's first and largest value.
type seqOwner struct {
	table, column string
	start, max    int64
}

// columnSequences returns the sequences that the column defaults of the
// tables named call, by name, and the columns of each of those tables
// that exists (lower-cased, by lower-cased table name; a table that does
// not exist has none: nil).
func columnSequences(c *conn, tables []string) (map[string]seqOwner, map[string]map[string]bool, error) {
	want := map[string]seqOwner{}
	columns := map[string]map[string]bool{}
	for _, t := range tables {
		columns[strings.ToLower(t)] = nil
		if isInternalTable(t) || isSQLiteTable(t) {
			continue
		}
		name, found := "", false
		err := c.execResult("SELECT name FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE",
			func(s *sqlite.Stmt) { name, found = s.ColumnText(0), true }, t)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			continue
		}
		cols := map[string]bool{}
		err = c.execResult("SELECT name, type, dflt_value FROM pragma_table_info(?)", func(s *sqlite.Stmt) {
			cols[strings.ToLower(s.ColumnText(0))] = true
			if d, ok := parseSequenceDefault(s.ColumnText(2)); ok {
				o := seqOwner{name, s.ColumnText(0), 1, maxOfType(s.ColumnText(1))}
				if d.identity != "" {
					o.start, o.max = d.start, min(d.max, o.max)
				}
				want[d.seq] = o
			}
		}, name)
		if err != nil {
			return nil, nil, err
		}
		columns[strings.ToLower(t)] = cols
	}
	return want, columns, nil
}

// userTables returns the names of the clients' tables.
func userTables(c *conn) ([]string, error) {
	var tables []string
	err := c.execResult("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_certa\\_%' ESCAPE '\\'",
		func(s *sqlite.Stmt) { tables = append(tables, s.ColumnText(0)) })
	return tables, err
}

// maxOfType is the largest value a column of this declared type holds in
// PostgreSQL.
func maxOfType(decl string) int64 {
	switch strings.ToUpper(strings.TrimSpace(decl)) {
	case "SMALLINT", "INT2":
		return 1<<15 - 1
	case "INT", "INTEGER", "INT4":
		return 1<<31 - 1
	}
	return 1<<63 - 1
}

// ReserveSequence implements engine.Engine.
func (e *Engine) ReserveSequence(ctx context.Context, name string) (*writeset.WriteSet, engine.SequenceBlock, error) {
	tx, err := e.beginTx(ctx, nil)
	if err != nil {
		return nil, engine.SequenceBlock{}, err
	}
	defer tx.Rollback()
	var row []rowValue
	err = tx.conn.execResult("SELECT name, tbl, col, reserved, created, maxval FROM _certa_sequences WHERE name = ?",
		func(s *sqlite.Stmt) {
			row = []rowValue{textValue(s.ColumnText(0)), textValue(s.ColumnText(1)), textValue(s.ColumnText(2)),
				{kind: kindInt, i: s.ColumnInt64(3)}, {kind: kindInt, i: s.ColumnInt64(4)}, {kind: kindInt, i: s.ColumnInt64(5)}}
		}, name)
	if err != nil || row == nil {
		return nil, engine.SequenceBlock{}, mapErr(err)
	}
	first, max, created := row[3].i, row[5].i, uint64(row[4].i)
	// A block holds no value past max (uint64: the true difference, even
	// from a negative first value). The row must say where the next
	// block starts, so a block that would end at the largest int64 stops
	// before it: that one value is never handed out.
	count := e.seqs.nextBlockSize(name)
	if left := uint64(max) - uint64(first); first <= max && left/maxBlockShare < uint64(count) {
		// Near its end a sequence hands out small blocks, so that one
		// node does not take all that is left (a MAXVALUE 1000 identity
		// would give values on one node only).
		count = int64(left/maxBlockShare) + 1
	}
	if first > math.MaxInt64-count {
		count--
	}
	if first > max || count <= 0 {
		e.seqs.exhaust(name, created)
		return nil, engine.SequenceBlock{}, sqlerr.New(sqlerr.SequenceLimitExceeded,
			"nextval: reached maximum value of sequence %q (%d)", name, max)
	}
	after := append([]rowValue(nil), row...)
	after[3] = rowValue{kind: kindInt, i: first + count}
	// created too (unchanged): the update then finds no row of a
	// sequence made anew under the same name, and applies as nothing.
	changed := []bool{false, false, false, true, true, false}
	pkPos := []byte{1, 0, 0, 0, 0, 0}
	b := []byte{'T'}
	b = putVarint(b, uint64(len(row)))
	b = append(b, pkPos...)
	b = append(b, "_certa_sequences"...)
	b = append(b, 0, opUpdate, 0)
	b = appendUpdateOld(b, row, changed, pkPos)
	b = appendRecord(b, after, changed)
	ws := &writeset.WriteSet{Snapshot: tx.snapshot.Load(), Changes: b}
	if err := changesetKeys(ws, nil); err != nil {
		return nil, engine.SequenceBlock{}, fmt.Errorf("reserve sequence %s: %w", name, err)
	}
	ws.Normalize()
	return ws, engine.SequenceBlock{Name: name, Created: created, First: first, Count: count}, nil
}

func textValue(s string) rowValue { return rowValue{kind: kindText, bytes: []byte(s)} }

// SequencesWanted implements engine.Engine.
func (e *Engine) SequencesWanted() <-chan string { return e.seqs.wanted }

// GrantSequence implements engine.Engine.
func (e *Engine) GrantSequence(b engine.SequenceBlock) { e.seqs.grant(b) }

// WaitSequenceValues implements engine.Engine.
func (e *Engine) WaitSequenceValues(ctx context.Context, name string) error {
	return e.seqs.wait(ctx, name)
}
